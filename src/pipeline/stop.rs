//! Stopping the loops: a shared flag set by Ctrl-C / SIGTERM, by a [`StopWhen`] condition or by
//! an error in the other half.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// When a loop stops by itself (besides Ctrl-C / a kill).
#[derive(Clone, Debug, Default)]
pub struct StopWhen {
    /// Stop once this generation is published.
    pub generation: Option<u64>,
    /// Stop after this many minutes of wall-clock time.
    pub minutes: Option<f64>,
    /// Self-play only: stop after this many games.
    pub games: Option<u64>,
}

/// Shared stop flag, set by Ctrl-C, by a [`StopWhen`] condition or by an error.
#[derive(Clone, Default)]
pub struct Stop(Arc<AtomicBool>);

impl Stop {
    /// Sets the flag: every loop sharing it stops at its next check.
    pub fn set(&self) {
        self.0.store(true, Ordering::SeqCst);
    }
    /// Whether the flag is set.
    pub fn is_set(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }
    /// The underlying flag, for library loops that take an `&AtomicBool`.
    pub fn flag(&self) -> &AtomicBool {
        &self.0
    }
    /// A stop flag that Ctrl-C or SIGTERM sets (a second one exits at once with status 130).
    pub fn on_ctrl_c() -> Stop {
        let stop = Stop::default();
        let s = stop.clone();
        let _ = ctrlc::set_handler(move || {
            if s.is_set() {
                std::process::exit(130);
            }
            eprintln!("\nstopping: finishing the current step, writing a checkpoint (Ctrl-C again to quit at once)");
            s.set();
        });
        stop
    }
}
