//! What the loops report while they run: each half's status and the lines worth showing. The
//! library only hands [`Report`]s to a [`Reporter`]; the binary renders them (progress lines on a
//! terminal). `train.log` in the run directory remains the record.

use renju_selfplay::worker::Progress;
use renju_trainer::TrainMetrics;
use std::time::Duration;

/// One of the two halves of a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Half {
    Selfplay,
    Trainer,
}

/// An event of a running loop.
#[derive(Clone, Copy, Debug)]
pub enum Report<'a> {
    /// A half has started (its status follows).
    Started(Half),
    /// Self-play's totals this session and the generation it plays with.
    Selfplay { generation: i64, progress: &'a Progress },
    /// The trainer waits for self-play samples: `samples` so far, for `waited`; `last` are the
    /// metrics of its latest training call.
    Waiting { generation: u64, step: u64, samples: u64, waited: Duration, last: &'a TrainMetrics },
    /// The trainer took steps: the metrics of its latest training call and the replay window's
    /// size.
    Training { generation: u64, last: &'a TrainMetrics, window_samples: u64 },
    /// A `train.log` line worth showing (a published generation, where the trainer stopped).
    Line(&'a str),
    /// A half has stopped (its last status stands).
    Stopped(Half),
}

/// Receives the [`Report`]s of both halves (from their threads).
pub trait Reporter: Sync {
    fn report(&self, report: Report<'_>);
}
