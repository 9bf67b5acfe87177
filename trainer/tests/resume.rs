//! Exact resume: a trainer reopened from its checkpoint reproduces the losses of the steps that
//! followed it, bit for bit. Its own test binary, so its own process: libtorch's intra-op thread
//! pool is process-wide, and tests training beside it in one process change how its parallel
//! regions split their sums (the losses then differ in the last bits).

mod common;

use common::{tiny_config, write_shard};
use renju_trainer::{RunDir, Trainer};

#[test]
fn resume_after_checkpoint_reproduces_the_next_losses() {
    let run = tempfile::tempdir().unwrap();
    write_shard(&RunDir::new(run.path()).selfplay(), 0..40);
    write_shard(&RunDir::new(run.path()).selfplay(), 40..64);
    let cfg = tiny_config();
    let after = {
        let mut t = Trainer::open_or_resume(&RunDir::new(run.path()), cfg.clone()).unwrap();
        t.refresh_window().unwrap();
        t.train_steps(4).unwrap();
        t.checkpoint().unwrap();
        t.train_steps(4).unwrap().step_losses
        // Dropped here without another checkpoint: a kill after step 8.
    };
    let mut t = Trainer::open_or_resume(&RunDir::new(run.path()), cfg).unwrap();
    assert_eq!(t.step(), 4);
    assert_eq!(t.samples_trained(), 4 * 16);
    t.refresh_window().unwrap();
    let resumed = t.train_steps(4).unwrap().step_losses;
    assert_eq!(after.len(), 4);
    assert_eq!(resumed, after, "resumed losses differ");
}
