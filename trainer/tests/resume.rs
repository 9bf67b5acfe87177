//! Resume: a trainer reopened from its checkpoint reproduces the losses of the steps that
//! followed it, to float rounding. Its own test binary, so its own process: libtorch's intra-op
//! thread pool is process-wide, and tests training beside it change how its sums are split.

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
    // Equal to float rounding: a clean build has been seen to differ in the last bits of one
    // step (5e-7 of 6.3). A wrong resume (optimiser state, replay RNG or step lost) moves the
    // losses by orders of magnitude more than this bound.
    for (r, a) in resumed.iter().zip(&after) {
        assert!((r - a).abs() <= 1e-5 * a.abs().max(1.0), "resumed losses differ: {resumed:?} vs {after:?}");
    }
}
