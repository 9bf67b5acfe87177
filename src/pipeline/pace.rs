//! Self-play paced by the trainer (`pipeline.selfplay_waits_for_trainer`, `train` only): the
//! trainer takes at most `training.samples_per_new_sample` samples per new sample, and on a
//! machine where it shares the cores with self-play it would otherwise take fewer.
//!
//! Invariant: self-play writes positions only while it has *room*, counted in positions: at
//! each look at the replay window the trainer sets the room to what `pipeline.steps_per_round`
//! steps of backlog leave (`batch_size / samples_per_new_sample` positions a step), every step
//! it takes adds a step's worth, and every finished game takes its positions away. The workers
//! wait (before their next evaluation) while the room is used up. Positions written but not
//! yet in a shard the trainer has read are counted against the room until its next look, so
//! self-play runs at most a shard ahead of what the trainer has seen.

use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The room and the pause flag the workers follow.
pub struct Pace {
    pause: AtomicBool,
    room: AtomicI64,
    positions_per_step: f64,
    behind: u64,
    /// Nanoseconds since `t0`: when the pause began, and the pauses that have ended.
    t0: Instant,
    paused_at: AtomicU64,
    paused_ns: AtomicU64,
}

impl Pace {
    /// Starts paused with no room: self-play plays once the trainer has looked at the window.
    pub fn new(batch_size: usize, samples_per_new_sample: f64, steps_per_round: u64) -> Pace {
        Pace {
            pause: AtomicBool::new(true),
            room: AtomicI64::new(0),
            positions_per_step: batch_size as f64 / samples_per_new_sample,
            behind: steps_per_round,
            t0: Instant::now(),
            paused_at: AtomicU64::new(0),
            paused_ns: AtomicU64::new(0),
        }
    }

    fn now_ns(&self) -> u64 {
        self.t0.elapsed().as_nanos() as u64
    }

    fn set(&self, pause: bool) {
        if self.pause.swap(pause, Ordering::SeqCst) != pause {
            let now = self.now_ns();
            if pause {
                self.paused_at.store(now, Ordering::SeqCst);
            } else {
                let began = self.paused_at.load(Ordering::SeqCst);
                self.paused_ns.fetch_add(now.saturating_sub(began), Ordering::SeqCst);
            }
        }
    }

    /// How long self-play has been paused in all, up to now.
    pub fn paused_time(&self) -> Duration {
        let mut ns = self.paused_ns.load(Ordering::SeqCst);
        if self.paused() {
            ns += self.now_ns().saturating_sub(self.paused_at.load(Ordering::SeqCst));
        }
        Duration::from_nanos(ns)
    }

    /// The flag the workers wait on.
    pub fn flag(&self) -> &AtomicBool {
        &self.pause
    }

    /// Whether self-play is paused now.
    pub fn paused(&self) -> bool {
        self.pause.load(Ordering::SeqCst)
    }

    /// The trainer's look: `allowed` steps may be taken on what it has read.
    pub fn look(&self, allowed: u64) {
        // Negative while the trainer is more than `behind` steps behind.
        let room = ((self.behind as f64 - allowed as f64) * self.positions_per_step).ceil() as i64;
        self.room.store(room, Ordering::SeqCst);
        self.set(room <= 0);
    }

    /// The trainer took `steps` steps since its look.
    pub fn trained(&self, steps: u64) {
        let add = (steps as f64 * self.positions_per_step).ceil() as i64;
        if self.room.fetch_add(add, Ordering::SeqCst) + add > 0 {
            self.set(false);
        }
    }

    /// Self-play finished games holding `positions` recorded positions.
    pub fn wrote(&self, positions: u64) {
        if self.room.fetch_sub(positions as i64, Ordering::SeqCst) - positions as i64 <= 0 {
            self.set(true);
        }
    }

    /// The trainer stopped: self-play no longer waits.
    pub fn release(&self) {
        self.room.store(i64::MAX / 2, Ordering::SeqCst);
        self.set(false);
    }
}

#[cfg(test)]
mod tests {
    use super::Pace;

    #[test]
    fn self_play_writes_only_into_the_room_the_trainer_leaves() {
        // 64 samples a step at 4 samples per new sample: 16 positions a step; 20 steps behind.
        let p = Pace::new(64, 4.0, 20);
        assert!(p.paused(), "paced self-play starts paused");
        p.look(0); // nothing to train: room for 20 steps, 320 positions
        assert!(!p.paused());
        p.wrote(300);
        assert!(!p.paused());
        p.wrote(20); // 320 written: the room is used up
        assert!(p.paused());
        p.trained(1); // a step frees 16 positions
        assert!(!p.paused());
        p.look(25); // 25 steps allowed, 5 more than 20 behind: no room
        assert!(p.paused());
        p.trained(4);
        assert!(p.paused(), "after 4 of the 25 steps the trainer is still 21 behind");
        p.trained(2);
        assert!(!p.paused(), "19 behind: one step of room");
        p.look(19); // one step of room
        assert!(!p.paused());
        p.wrote(16);
        assert!(p.paused());
        p.release();
        assert!(!p.paused());
        p.wrote(1_000_000);
        assert!(!p.paused(), "a stopped trainer does not pause self-play");
        assert!(p.paused_time() > std::time::Duration::ZERO);
    }
}
