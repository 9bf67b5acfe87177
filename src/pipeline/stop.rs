//! Stopping the loops: a shared flag set by SIGINT / SIGTERM / SIGHUP, by a [`StopWhen`]
//! condition or by an error in the other half; and [`say`], the one way the pipeline prints.
//!
//! What a stop does: the trainer finishes the step it is in (it checks the flag between steps)
//! and writes a checkpoint; self-play writes the games it has finished as one last whole shard
//! (temp file + rename) and drops the games still in progress, so a stop never leaves a half
//! shard.

use anyhow::{Context, Result};
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

/// Shared stop flag, set by a signal ([`Stop::on_signals`]), by a [`StopWhen`] condition or by
/// an error.
#[derive(Clone, Default)]
pub struct Stop(Arc<AtomicBool>);

/// The signals that stop `train`, `trainer` and `selfplay --run`.
pub const STOP_SIGNALS: [i32; 3] =
    [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM, signal_hook::consts::SIGHUP];

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
    /// A stop flag that SIGINT, SIGTERM or SIGHUP sets; a second such signal ends the process at
    /// once with status 130 (`_exit`: no clean-up, like a kill). The handlers are signal-hook's
    /// flag actions: they only store to atomics (async-signal-safe), so nothing in them can fail
    /// or block; the notice is printed by a separate thread through [`say`]. Errors: a signal
    /// that cannot be registered (named).
    pub fn on_signals() -> Result<Stop> {
        use signal_hook::flag;
        let stop = Stop::default();
        // Set by signals only: the loops also set the stop flag themselves, which must not turn
        // the user's first Ctrl-C into an immediate exit.
        let signalled = Arc::new(AtomicBool::new(false));
        for sig in STOP_SIGNALS {
            let name = signal_hook::low_level::signal_name(sig).unwrap_or("signal");
            // Actions run in registration order: exit if an earlier signal came, then record this one.
            flag::register_conditional_shutdown(sig, 130, signalled.clone())
                .with_context(|| format!("registering {name}"))?;
            flag::register(sig, signalled.clone()).with_context(|| format!("registering {name}"))?;
            flag::register(sig, stop.0.clone()).with_context(|| format!("registering {name}"))?;
        }
        let mut signals = signal_hook::iterator::Signals::new(STOP_SIGNALS).context("registering the stop signals")?;
        std::thread::Builder::new()
            .name("stop-notice".into())
            .spawn(move || {
                if let Some(sig) = signals.forever().next() {
                    let name = signal_hook::low_level::signal_name(sig).unwrap_or("signal");
                    say(&format!("\n{name}: stopping: finishing the current step, writing a checkpoint (a second signal quits at once)"));
                }
            })
            .context("starting the stop-notice thread")?;
        Ok(stop)
    }
}

/// Writes `line` and a newline to stderr, ignoring errors: progress and log echo must survive a
/// closed terminal or pipe (a `| tee` ended by the same Ctrl-C); `train.log` in the run directory
/// remains the record.
pub fn say(line: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}
