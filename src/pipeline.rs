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

use crate::runconfig::{append_line, RunConfig, RunDir};
use anyhow::{Context, Result};
use indicatif::{MultiProgress, ProgressBar, ProgressStyle};
use renju_selfplay::record::{list_shards, read_shard};
use renju_selfplay::selfplay::{run_selfplay, Progress, ShardSink};
use renju_selfplay::server::InferenceServer;
use renju_trainer::model::{list_generations, ModelEvaluator};
use renju_trainer::trainer::{TrainMetrics, Trainer};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

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
    pub fn set(&self) {
        self.0.store(true, Ordering::SeqCst);
    }
    pub fn is_set(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }
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

fn bar(multi: &MultiProgress, template: &str) -> ProgressBar {
    let pb = multi.add(ProgressBar::new_spinner());
    pb.set_style(ProgressStyle::with_template(template).expect("valid template"));
    pb.enable_steady_tick(Duration::from_millis(250));
    pb
}

/// The tch device the run's config asks for.
fn device(cfg: &RunConfig) -> Result<tch::Device> {
    cfg.training.device.resolve()
}

/// Reports and removes what a kill may have left half-written.
fn sweep(run: &RunDir) -> Result<()> {
    for p in run.sweep_partial_files()? {
        let line = format!("ignored and removed a partial file left by an interrupted run: {}", p.display());
        eprintln!("{line}");
        run.note(&line)?;
    }
    Ok(())
}

/// The newest published generation and its directory, if any.
fn latest_generation(models: &Path) -> Result<Option<(u64, PathBuf)>> {
    Ok(list_generations(models)?
        .last()
        .map(|&g| (g, models.join(renju_trainer::model::generation_dir_name(g)))))
}

/// Self-play half: serves the newest generation, follows newly published ones, writes shards.
/// Returns the self-play totals when `stop` is set (or `when` is reached).
pub fn selfplay_loop(cfg: &RunConfig, run: &RunDir, when: &StopWhen, stop: &Stop, multi: &MultiProgress) -> Result<Progress> {
    let device = device(cfg)?;
    let (mut gen, dir) = wait_for_generation(run, stop)?.context("stopped before any generation was published")?;
    let evaluator = ModelEvaluator::load(&dir, device)?;
    let server = InferenceServer::spawn(Box::new(evaluator), gen as i64, cfg.server.clone());
    let handle = server.handle();
    let current = Arc::new(AtomicI64::new(gen as i64));
    let t0 = Instant::now();
    let pb = bar(multi, "{spinner} self-play  {msg}");
    let result = std::thread::scope(|scope| -> Result<Progress> {
        // Watcher: hand each newly published generation to the running server.
        let watcher = {
            let (handle, current) = (handle.clone(), current.clone());
            let poll = Duration::from_millis(cfg.pipeline.model_poll_ms.max(10));
            scope.spawn(move || -> Result<()> {
                while !stop.is_set() {
                    std::thread::sleep(poll);
                    if let Some((g, dir)) = latest_generation(&run.models())? {
                        if g > gen {
                            let ev = ModelEvaluator::load(&dir, device)?;
                            handle.publish(Box::new(ev), g as i64)?;
                            current.store(g as i64, Ordering::SeqCst);
                            gen = g;
                        }
                    }
                }
                Ok(())
            })
        };
        let mut sp = cfg.selfplay.clone();
        // A resumed run must not replay the games of the previous session.
        sp.seed = sp.seed.wrapping_add(list_shards_or_empty(&run.selfplay())?.len() as u64 * 0x9E37_79B9);
        let mut sink = ShardSink::new(
            &run.selfplay(),
            &sp,
            &renju_selfplay::record::default_writer_id(&host_tag()),
            cfg.pipeline.games_per_shard,
        );
        let mut on_progress = |p: &Progress| {
            pb.set_message(format!(
                "gen {} | games {} | positions {} | {:.0} pos/s | {:.0} playouts/s | W/D/L first {}/{}/{}",
                current.load(Ordering::SeqCst),
                p.games,
                p.positions,
                p.positions as f64 / p.seconds.max(1e-9),
                p.playouts as f64 / p.seconds.max(1e-9),
                p.wins_first,
                p.draws,
                p.wins_second
            ));
            let timed_out = when.minutes.is_some_and(|m| t0.elapsed().as_secs_f64() > m * 60.0);
            if timed_out {
                stop.set();
            }
        };
        let r = run_selfplay(&sp, &handle, when.games, stop.flag(), &mut sink, &mut on_progress);
        // Whatever ended self-play ends the watcher too.
        stop.set();
        let w = watcher.join().map_err(|_| anyhow::anyhow!("the model watcher panicked"))?;
        let progress = r?;
        w?;
        Ok(progress)
    });
    drop(handle);
    server.join();
    pb.finish();
    result
}

/// This machine's host name, reduced to `[A-Za-z0-9]`, for shard names that stay unique when
/// self-play processes on several machines share one run directory.
fn host_tag() -> String {
    let name = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_default();
    let tag: String = name.trim().chars().filter(|c| c.is_ascii_alphanumeric()).take(24).collect();
    if tag.is_empty() {
        "local".into()
    } else {
        tag
    }
}

fn list_shards_or_empty(dir: &Path) -> Result<Vec<PathBuf>> {
    if dir.exists() {
        list_shards(dir)
    } else {
        Ok(Vec::new())
    }
}

/// Waits until a generation is published (a self-play process may start before its trainer).
fn wait_for_generation(run: &RunDir, stop: &Stop) -> Result<Option<(u64, PathBuf)>> {
    let mut announced = false;
    let started = Instant::now();
    loop {
        if let Some(found) = latest_generation(&run.models())? {
            return Ok(Some(found));
        }
        if stop.is_set() {
            return Ok(None);
        }
        if !announced && started.elapsed() > Duration::from_secs(5) {
            eprintln!("waiting for a trainer to publish generation 0 in {}", run.models().display());
            announced = true;
        }
        std::thread::sleep(Duration::from_millis(500));
    }
}

/// One line of `generations.jsonl`.
#[derive(Serialize)]
struct GenerationLine {
    generation: u64,
    step: u64,
    samples_trained: u64,
    total_samples: u64,
    window_samples: u64,
    /// Recorded positions in `selfplay/` by the generation that played them.
    samples_by_generation: BTreeMap<i64, u64>,
    loss: f64,
    policy_loss: f64,
    value_loss: f64,
    minutes: f64,
}

/// Per-shard generation counts, read once per shard.
#[derive(Default)]
struct GenerationTally {
    seen: BTreeMap<PathBuf, BTreeMap<i64, u64>>,
}

impl GenerationTally {
    fn update(&mut self, dir: &Path) -> Result<BTreeMap<i64, u64>> {
        for p in list_shards_or_empty(dir)? {
            if !self.seen.contains_key(&p) {
                // A shard that does not read is the replay window's to reject and report.
                let Ok(shard) = read_shard(&p) else { continue };
                let mut counts = BTreeMap::new();
                for g in shard.generation.iter() {
                    *counts.entry(*g).or_insert(0) += 1;
                }
                self.seen.insert(p, counts);
            }
        }
        let mut total = BTreeMap::new();
        for counts in self.seen.values() {
            for (g, n) in counts {
                *total.entry(*g).or_insert(0) += n;
            }
        }
        Ok(total)
    }
}

/// Trainer half: trains within the samples-per-new-sample budget and publishes generations.
pub fn trainer_loop(cfg: &RunConfig, run: &RunDir, when: &StopWhen, stop: &Stop, multi: &MultiProgress) -> Result<()> {
    let mut trainer = Trainer::open_or_resume(&run.root, cfg.training.clone())
        .with_context(|| format!("opening the trainer of {}", run.root.display()))?;
    let t0 = Instant::now();
    let k = cfg.pipeline.steps_per_generation;
    let pb = bar(multi, "{spinner} training   {msg}");
    let mut tally = GenerationTally::default();
    let mut last = TrainMetrics::default();
    let mut waiting_since: Option<Instant> = None;
    let mut gen = latest_generation(&run.models())?.map_or(0, |(g, _)| g);
    recover_generation_lines(run, gen)?;
    // The step at which the next candidate is due (later than `(gen + 1) * k` after rejections).
    let mut due = (gen + 1) * k;
    run.note(&format!("trainer at step {} with generation {gen} published", trainer.step()))?;
    if when.generation.is_some_and(|g| gen >= g) {
        stop.set();
    }
    while !stop.is_set() {
        if when.minutes.is_some_and(|m| t0.elapsed().as_secs_f64() > m * 60.0) {
            break;
        }
        if trainer.step() < due {
            let status = trainer.refresh_window()?;
            for (path, err) in trainer.take_rejected_shards() {
                let line = format!("rejected a shard (moved to {}): {err}", path.display());
                eprintln!("{line}");
                run.note(&line)?;
            }
            let allowed = trainer.steps_allowed();
            if allowed == 0 {
                let since = *waiting_since.get_or_insert_with(Instant::now);
                pb.set_message(format!(
                    "gen {gen} | step {} | waiting for self-play samples ({} so far, {:.0}s) | loss {:.3} (policy {:.3}, value {:.3})",
                    trainer.step(),
                    status.total_samples,
                    since.elapsed().as_secs_f64(),
                    last.loss,
                    last.policy_loss,
                    last.value_loss
                ));
                std::thread::sleep(Duration::from_millis(200));
                continue;
            }
            waiting_since = None;
            let n = allowed.min(cfg.pipeline.steps_per_round).min(due - trainer.step());
            last = trainer.train_steps(n)?;
            pb.set_message(format!(
                "gen {gen} | step {} | loss {:.3} (policy {:.3}, value {:.3}) | lr {:.4} | {:.0} samples/s | window {}",
                last.step,
                last.loss,
                last.policy_loss,
                last.value_loss,
                last.lr,
                last.samples_per_sec,
                status.window_samples
            ));
        }
        if trainer.step() >= due {
            trainer.checkpoint()?;
            due = trainer.step() + k;
            if cfg.pipeline.gate {
                let (pass, reason) = gate_candidate(cfg, run, &trainer, gen)?;
                run.note(&format!("gate at step {}: {} ({reason})", trainer.step(), if pass { "pass" } else { "rejected" }))?;
                if !pass {
                    continue;
                }
            }
            gen = trainer.publish()?;
            let status = trainer.window_status();
            let line = GenerationLine {
                generation: gen,
                step: trainer.step(),
                samples_trained: trainer.samples_trained(),
                total_samples: status.total_samples,
                window_samples: status.window_samples,
                samples_by_generation: tally.update(&run.selfplay())?,
                loss: last.loss,
                policy_loss: last.policy_loss,
                value_loss: last.value_loss,
                minutes: t0.elapsed().as_secs_f64() / 60.0,
            };
            append_line(&run.root.join("generations.jsonl"), &serde_json::to_string(&line)?)?;
            let summary = format!(
                "generation {gen} published at step {} | loss {:.4} (policy {:.4}, value {:.4}) | samples {} (window {}) | by generation {:?}",
                line.step, line.loss, line.policy_loss, line.value_loss, line.total_samples, line.window_samples, line.samples_by_generation
            );
            run.note(&summary)?;
            if multi.is_hidden() {
                eprintln!("{summary}");
            } else {
                multi.println(&summary).ok();
            }
            if when.generation.is_some_and(|g| gen >= g) {
                break;
            }
        }
    }
    trainer.checkpoint()?;
    run.note(&format!("trainer stopped at step {} (generation {gen})", trainer.step()))?;
    pb.finish();
    Ok(())
}

/// Plays the trainer's current network against generation `incumbent` (see
/// [`crate::runconfig::PipelineConfig::gate`]). The candidate is written to
/// `candidates/step-N/` (a model directory like a generation's) so the arena can load it.
fn gate_candidate(cfg: &RunConfig, run: &RunDir, trainer: &Trainer, incumbent: u64) -> Result<(bool, String)> {
    use renju_arena::agent::PlayerSpec;
    use renju_arena::gate::{gate, GateConfig};
    let candidates = run.root.join("candidates");
    let dir = candidates.join(format!("step-{:09}", trainer.step()));
    if dir.exists() {
        std::fs::remove_dir_all(&dir).with_context(|| format!("removing {}", dir.display()))?;
    }
    std::fs::create_dir_all(&candidates).with_context(|| format!("creating {}", candidates.display()))?;
    let mut mc = renju_trainer::ModelConfig::new(incumbent + 1, cfg.game.rule, cfg.game.size, cfg.training.net.clone());
    mc.trained_steps = trainer.step();
    // publish_model writes into `<candidates>/gen-NNNNNN` atomically; rename it to the step.
    let written = renju_trainer::model::publish_model(&candidates, trainer.var_store(), &mc)?;
    std::fs::rename(&written, &dir).with_context(|| format!("renaming {} to {}", written.display(), dir.display()))?;
    let _ = std::fs::remove_file(candidates.join("LATEST"));
    let incumbent_dir = run.models().join(renju_trainer::model::generation_dir_name(incumbent));
    let spec = |name: &str, d: &Path| PlayerSpec::parse(name, &format!("model:{},playouts={}", d.display(), cfg.pipeline.gate_playouts));
    let gc = GateConfig {
        enabled: true,
        games: cfg.pipeline.gate_games,
        min_score: cfg.pipeline.gate_min_score,
        sprt: if cfg.pipeline.gate_sprt { GateConfig::default().sprt } else { None },
        arena: renju_arena::arena::ArenaConfig {
            size: cfg.game.size,
            rule: cfg.game.rule,
            stone_cap: cfg.game.stone_cap,
            seed: trainer.step(),
            threads: 1,
            ..Default::default()
        },
        ..Default::default()
    };
    let loader = |d: &Path, _size: usize| -> Result<Box<dyn renju_selfplay::eval::Evaluator>> {
        Ok(Box::new(ModelEvaluator::load(d, tch::Device::cuda_if_available())?))
    };
    let decision = gate(&spec("candidate", &dir)?, &spec("incumbent", &incumbent_dir)?, &gc, &loader)?;
    std::fs::remove_dir_all(&dir).ok();
    Ok((decision.pass, decision.reason))
}

/// A kill between publishing generation `g` and appending its line to `generations.jsonl` leaves
/// the line missing; add a `"recovered": true` line for each such generation, so the file names
/// every published generation once, in order.
fn recover_generation_lines(run: &RunDir, newest: u64) -> Result<()> {
    let path = run.root.join("generations.jsonl");
    let text = if path.exists() {
        std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?
    } else {
        String::new()
    };
    let mut have = std::collections::BTreeSet::new();
    for (i, l) in text.lines().enumerate() {
        let v: serde_json::Value = serde_json::from_str(l)
            .with_context(|| format!("{} line {}: not JSON", path.display(), i + 1))?;
        if let Some(g) = v["generation"].as_u64() {
            have.insert(g);
        }
    }
    let last = have.iter().next_back().copied().unwrap_or(0);
    for g in (last + 1)..=newest {
        append_line(&path, &serde_json::json!({"generation": g, "recovered": true}).to_string())?;
        run.note(&format!("generation {g} was published by an interrupted session; its summary line is recovered"))?;
    }
    Ok(())
}

/// `renju-zero train`: both halves in one process until `when` or Ctrl-C.
pub fn train(cfg: &RunConfig, run: &RunDir, when: &StopWhen, stop: &Stop) -> Result<()> {
    sweep(run)?;
    run.note(&format!("train started (pid {})", std::process::id()))?;
    let multi = MultiProgress::new();
    // The trainer must exist (generation 0 published) before self-play can load a model.
    let selfplay_stop = Stop::default();
    let result = std::thread::scope(|scope| -> Result<()> {
        let sp = scope.spawn(|| {
            let r = selfplay_loop(cfg, run, &StopWhen::default(), &selfplay_stop, &multi);
            if r.is_err() {
                stop.set(); // the trainer would otherwise wait for samples forever
            }
            r
        });
        let tr = trainer_loop(cfg, run, when, stop, &multi);
        // Self-play runs as long as the trainer does, then flushes its last shard.
        selfplay_stop.set();
        let sp = sp.join().map_err(|_| anyhow::anyhow!("self-play panicked"))?;
        tr?;
        let p = sp?;
        run.note(&format!(
            "self-play stopped: {} games, {} recorded positions this session",
            p.games, p.positions
        ))?;
        Ok(())
    });
    if let Err(e) = &result {
        run.note(&format!("train failed: {e:#}")).ok();
    }
    result
}

/// `renju-zero trainer --run DIR`: the training half alone (self-play comes from other
/// processes writing into the same `selfplay/`).
pub fn trainer_only(cfg: &RunConfig, run: &RunDir, when: &StopWhen, stop: &Stop, multi: &MultiProgress) -> Result<()> {
    sweep(run)?;
    trainer_loop(cfg, run, when, stop, multi)
}

/// `renju-zero selfplay --run DIR`: the self-play half alone, following the run's published
/// generations.
pub fn selfplay_only(cfg: &RunConfig, run: &RunDir, when: &StopWhen, stop: &Stop) -> Result<Progress> {
    let multi = MultiProgress::new();
    let p = selfplay_loop(cfg, run, when, stop, &multi)?;
    run.note(&format!("self-play process {} stopped: {} games, {} recorded positions", std::process::id(), p.games, p.positions))?;
    Ok(p)
}
