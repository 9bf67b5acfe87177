//! The self-play half of a run: serves the newest generation, follows newly published ones and
//! writes shards into the run's `selfplay/`.
//!
//! Phases: [`wait_for_generation`] (a self-play process may start before its trainer), then one
//! inference server with two threads around it: [`follow_generations`] hands each newly
//! published generation to the server, and [`run_selfplay`] plays games into a [`ShardSink`].
//! A line-pattern run has no server: each worker thread evaluates the generation's table itself
//! (`ServerHandle::per_thread`), and new generations are handed to the workers the same way.

use super::config::RunConfig;
use super::generation_log::list_shards_or_empty;
use super::pace::Pace;
use super::report::{Half, Report, Reporter};
use super::stop::{say, Stop, StopWhen};
use anyhow::{Context, Result};
use renju_selfplay::server::{InferenceServer, ServerHandle};
use renju_selfplay::worker::{run_selfplay_paced, Progress, ShardSink};
use renju_trainer::model::load_line_table;
use renju_trainer::{ModelEvaluator, NetKind, RunDir};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::time::{Duration, Instant};

/// Self-play half: serves the newest generation, follows newly published ones, writes shards,
/// within the room `pace` leaves when given. Returns the self-play totals when `stop` is set (or `when` is
/// reached).
pub fn selfplay_loop(
    cfg: &RunConfig,
    run: &RunDir,
    when: &StopWhen,
    stop: &Stop,
    pace: Option<&Pace>,
    reporter: &dyn Reporter,
) -> Result<Progress> {
    let device = cfg.training.device.resolve()?;
    let (gen, dir) = wait_for_generation(run, stop)?.context("stopped before any generation was published")?;
    let threads = cfg.server.intra_op_threads;
    let per_thread = cfg.training.net.kind == NetKind::Linepattern;
    let (server, handle) = if per_thread {
        // The line-pattern table evaluator runs inside every worker thread; no inference server.
        (None, ServerHandle::per_thread(load_line_table(&dir)?.factory(), gen as i64, cfg.game.size))
    } else {
        let evaluator = ModelEvaluator::load(&dir, device)?.with_intra_op_threads(threads);
        let server = InferenceServer::spawn(Box::new(evaluator), gen as i64, cfg.server.clone());
        let handle = server.handle();
        (Some(server), handle)
    };
    let current = AtomicI64::new(gen as i64);
    let t0 = Instant::now();
    reporter.report(Report::Started(Half::Selfplay));
    let result = std::thread::scope(|scope| -> Result<Progress> {
        let watcher = {
            let (handle, current) = (handle.clone(), &current);
            let poll = Duration::from_millis(cfg.pipeline.model_poll_ms.max(10));
            scope.spawn(move || follow_generations(run, &handle, per_thread, current, poll, (device, threads), stop))
        };
        let mut sp = cfg.selfplay.clone();
        // A resumed run must not replay the games of the previous session.
        sp.seed = sp.seed.wrapping_add(list_shards_or_empty(&run.selfplay())?.len() as u64 * 0x9E37_79B9);
        let mut sink = ShardSink::new(
            &run.selfplay(),
            &sp,
            &renju_selfplay::record::default_writer_id(&renju_trainer::process::host_tag()),
            cfg.pipeline.games_per_shard,
        );
        let mut written = 0;
        let mut on_progress = |p: &Progress| {
            if let Some(pace) = pace {
                pace.wrote(p.positions - written);
                written = p.positions;
            }
            reporter.report(Report::Selfplay { generation: current.load(Ordering::SeqCst), progress: p });
            let timed_out = when.minutes.is_some_and(|m| t0.elapsed().as_secs_f64() > m * 60.0);
            if timed_out {
                stop.set();
            }
        };
        let uploader = scope.spawn(|| upload_shards(run, stop));
        let unpaced = AtomicBool::new(false);
        let pause = pace.map_or(&unpaced, |p| p.flag());
        let r = run_selfplay_paced(&sp, &handle, when.games, stop.flag(), pause, &mut sink, &mut on_progress);
        // Whatever ended self-play ends the watcher and the uploader too.
        stop.set();
        let w = watcher.join().map_err(|_| anyhow::anyhow!("the model watcher panicked"))?;
        let u = uploader.join().map_err(|_| anyhow::anyhow!("the shard uploader panicked"))?;
        let progress = r?;
        w?;
        u?;
        // The last shard, flushed when self-play stopped.
        run.sync_shards_out()?;
        Ok(progress)
    });
    drop(handle);
    if let Some(server) = server {
        server.join();
    }
    reporter.report(Report::Stopped(Half::Selfplay));
    result
}

/// Polls `models/` every `poll` until `stop` and hands each generation newer than `current` to
/// the running server, or to the worker threads' evaluators when `per_thread` (`current` is
/// updated to it).
fn follow_generations(
    run: &RunDir,
    handle: &ServerHandle,
    per_thread: bool,
    current: &AtomicI64,
    poll: Duration,
    (device, threads): (tch::Device, usize),
    stop: &Stop,
) -> Result<()> {
    while !stop.is_set() {
        std::thread::sleep(poll);
        if let Some((g, dir)) = run.latest_generation()? {
            if g as i64 > current.load(Ordering::SeqCst) {
                if per_thread {
                    handle.publish_factory(load_line_table(&dir)?.factory(), g as i64)?;
                } else {
                    let ev = ModelEvaluator::load(&dir, device)?.with_intra_op_threads(threads);
                    handle.publish(Box::new(ev), g as i64)?;
                }
                current.store(g as i64, Ordering::SeqCst);
            }
        }
    }
    Ok(())
}

/// Remote run: uploads new shards about once a second until `stop`.
fn upload_shards(run: &RunDir, stop: &Stop) -> Result<()> {
    if run.remote.is_none() {
        return Ok(());
    }
    while !stop.is_set() {
        std::thread::sleep(Duration::from_secs(1));
        run.sync_shards_out()?;
    }
    Ok(())
}

/// Waits until a generation is published (a self-play process may start before its trainer).
fn wait_for_generation(run: &RunDir, stop: &Stop) -> Result<Option<(u64, PathBuf)>> {
    let mut announced = false;
    let started = Instant::now();
    loop {
        if let Some(found) = run.latest_generation()? {
            return Ok(Some(found));
        }
        if stop.is_set() {
            return Ok(None);
        }
        if !announced && started.elapsed() > Duration::from_secs(5) {
            say(&format!("waiting for a trainer to publish generation 0 in {}", run.name()));
            announced = true;
        }
        std::thread::sleep(Duration::from_millis(500));
    }
}
