//! The main job: self-play, training and publishing as one resumable loop (`renju-zero train`),
//! and its two halves as separate processes on a shared run directory (`renju-zero selfplay
//! --run DIR`, `renju-zero trainer --run DIR`).
//!
//! Data flow (AlphaZero's loop, with KataGo's replay window and samples-per-sample balance):
//! 1. The trainer opens or resumes the run (`checkpoints/LATEST`) and publishes generation 0 in a
//!    new run.
//! 2. Self-play loads the newest generation into the batching inference server, plays games and
//!    writes shards into `selfplay/`; a watcher thread polls `models/LATEST` and hands each newly
//!    published generation to the running server, so workers switch as soon as it exists.
//! 3. The trainer takes steps only while the samples-per-new-sample budget allows (it waits for
//!    new shards otherwise), and publishes generation `g` after `g * steps_per_generation` steps:
//!    checkpoint first, then the model, so a kill never loses a published generation and a
//!    restart publishes any generation that was due.
//!
//! Every generation appends a JSON line to `generations.jsonl` (step, losses, and how many
//! recorded positions each generation's self-play has produced so far) and a summary line to
//! `train.log`.
//!
//! Modules: [`config`] (the TOML run config, opening a run directory with it), [`defaults`] (the
//! documented defaults, `configs/defaults.toml`), [`stop`] (the stop flag and conditions,
//! signals), [`report`] (what the loops report while they run; the binary renders it),
//! [`check`] (a run directory's invariants, `renju-zero check-run`), the self-play half
//! (`selfplay_half`), the trainer half (`trainer_half`, in named phases), the gate match (`gate`)
//! and `generations.jsonl` (`generation_log`). The run directory's layout belongs to [`RunDir`],
//! the generation lifecycle (`gen-NNNNNN`, `LATEST`, publishing, pruning) to
//! `renju_trainer::generations`.
//!
//! The loops, the gate, `check-run` and the reports need the `torch` feature; the run config and
//! the stop flag are built without it.

#[cfg(feature = "torch")]
pub mod check;
pub mod config;
pub mod defaults;
#[cfg(feature = "torch")]
mod gate;
#[cfg(feature = "torch")]
mod generation_log;
#[cfg(feature = "torch")]
mod pace;
#[cfg(feature = "torch")]
pub mod report;
#[cfg(feature = "torch")]
mod selfplay_half;
pub mod stop;
#[cfg(feature = "torch")]
mod trainer_half;

pub use config::{check_config, open_run, RunConfig};
pub use renju_trainer::RunDir;
#[cfg(feature = "torch")]
pub use report::{Half, Report, Reporter};
#[cfg(feature = "torch")]
pub use selfplay_half::selfplay_loop;
pub use stop::{say, Stop, StopWhen};
#[cfg(feature = "torch")]
pub use trainer_half::trainer_loop;

#[cfg(feature = "torch")]
use anyhow::Result;
#[cfg(feature = "torch")]
use pace::Pace;
#[cfg(feature = "torch")]
use renju_selfplay::worker::Progress;

#[cfg(feature = "torch")]
/// Reports and removes what a kill may have left half-written, and repairs a `models/LATEST`
/// that a kill left naming an older generation.
fn sweep(run: &RunDir) -> Result<()> {
    for p in run.sweep_partial_files()? {
        let line = format!("ignored and removed a partial file left by an interrupted run: {}", p.display());
        say(&line);
        run.note(&line)?;
    }
    if let Some(g) = renju_trainer::generations::repair_latest(&run.models())? {
        let line =
            format!("models/LATEST pointed at an older generation (a kill after publishing); now generation {g}");
        say(&line);
        run.note(&line)?;
    }
    Ok(())
}

#[cfg(feature = "torch")]
/// `renju-zero train`: both halves in one process until `when` or a stop signal, reporting to
/// `reporter`.
pub fn train(cfg: &RunConfig, run: &RunDir, when: &StopWhen, stop: &Stop, reporter: &dyn Reporter) -> Result<()> {
    sweep(run)?;
    run.note(&format!("train started (pid {})", std::process::id()))?;
    // The trainer must exist (generation 0 published) before self-play can load a model.
    let selfplay_stop = Stop::default();
    let pace = cfg
        .pipeline
        .selfplay_waits_for_trainer
        .then(|| Pace::new(cfg.training.batch_size, cfg.training.samples_per_new_sample, cfg.pipeline.steps_per_round));
    let pace = pace.as_ref();
    let result = std::thread::scope(|scope| -> Result<()> {
        let sp = scope.spawn(|| {
            let r = selfplay_loop(cfg, run, &StopWhen::default(), &selfplay_stop, pace, reporter);
            if r.is_err() {
                stop.set(); // the trainer would otherwise wait for samples forever
            }
            r
        });
        let tr = trainer_loop(cfg, run, when, stop, reporter, pace);
        // Self-play runs as long as the trainer does, then flushes its last shard.
        selfplay_stop.set();
        let sp = sp.join().map_err(|_| anyhow::anyhow!("self-play panicked"))?;
        tr?;
        let p = sp?;
        run.note(&format!("self-play stopped: {} games, {} recorded positions this session", p.games, p.positions))?;
        Ok(())
    });
    if let Err(e) = &result {
        run.note(&format!("train failed: {e:#}")).ok();
    }
    result
}

#[cfg(feature = "torch")]
/// `renju-zero trainer --run DIR`: the training half alone (self-play comes from other
/// processes writing into the same `selfplay/`).
pub fn trainer_only(
    cfg: &RunConfig,
    run: &RunDir,
    when: &StopWhen,
    stop: &Stop,
    reporter: &dyn Reporter,
) -> Result<()> {
    sweep(run)?;
    trainer_loop(cfg, run, when, stop, reporter, None)
}

#[cfg(feature = "torch")]
/// `renju-zero selfplay --run DIR`: the self-play half alone, following the run's published
/// generations.
pub fn selfplay_only(
    cfg: &RunConfig,
    run: &RunDir,
    when: &StopWhen,
    stop: &Stop,
    reporter: &dyn Reporter,
) -> Result<Progress> {
    let p = selfplay_loop(cfg, run, when, stop, None, reporter)?;
    let (pid, games, positions) = (std::process::id(), p.games, p.positions);
    let line = format!("self-play process {pid} stopped: {games} games, {positions} recorded positions");
    run.note(&line)?;
    // Also on stderr: without a terminal (or with --quiet) the process would otherwise end silently.
    say(&line);
    Ok(p)
}
