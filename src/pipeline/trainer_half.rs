//! The trainer half of a run: trains within the samples-per-new-sample budget and publishes
//! generations.
//!
//! Phases of [`trainer_loop`], one method of [`TrainerLoop`] each: [`TrainerLoop::open`] (open or
//! resume the trainer, recover missing `generations.jsonl` lines), [`TrainerLoop::train_round`]
//! (refresh the replay window, then wait for samples or take steps up to the next due
//! candidate), [`TrainerLoop::candidate`] (checkpoint, optional gate match, publish, log the
//! generation) and [`TrainerLoop::close`] (final checkpoint).

use super::config::RunConfig;
use super::gate::gate_candidate;
use super::generation_log::{
    append_generation_line, newest_generations, recover_generation_lines, GenerationLine, GenerationTally,
    SelfplayLine, BY_GENERATION_KEPT,
};
use super::pace::Pace;
use super::report::{Half, Report, Reporter};
use super::stop::{say, Stop, StopWhen};
use anyhow::{Context, Result};
use renju_selfplay::gamestats::GameStats;
use renju_trainer::generations::prune_generations;
use renju_trainer::RunDir;
use renju_trainer::{TrainMetrics, Trainer};
use std::time::{Duration, Instant};

/// Trainer half: trains within the samples-per-new-sample budget and publishes generations until
/// `stop` is set or `when` is reached. With `pace`, self-play in the same process writes only
/// what keeps the trainer within `pipeline.steps_per_round` steps of that budget ([`Pace`]),
/// and is released when the loop ends.
pub fn trainer_loop(
    cfg: &RunConfig,
    run: &RunDir,
    when: &StopWhen,
    stop: &Stop,
    reporter: &dyn Reporter,
    pace: Option<&Pace>,
) -> Result<()> {
    let result = trainer_rounds(cfg, run, when, stop, reporter, pace);
    if let Some(p) = pace {
        p.release();
    }
    result
}

/// [`trainer_loop`] but the release of paced self-play.
fn trainer_rounds<'a>(
    cfg: &'a RunConfig,
    run: &'a RunDir,
    when: &StopWhen,
    stop: &Stop,
    reporter: &'a dyn Reporter,
    pace: Option<&'a Pace>,
) -> Result<()> {
    let mut tl = TrainerLoop::open(cfg, run, reporter)?;
    tl.pace = pace;
    if when.generation.is_some_and(|g| tl.gen >= g) {
        stop.set();
    }
    while !stop.is_set() {
        if when.minutes.is_some_and(|m| tl.t0.elapsed().as_secs_f64() > m * 60.0) {
            break;
        }
        if tl.trainer.step() < tl.due {
            tl.train_round(stop)?;
        }
        if tl.trainer.step() >= tl.due && tl.candidate()? && when.generation.is_some_and(|g| tl.gen >= g) {
            break;
        }
    }
    tl.close()
}

/// Remote run, with the trainer lease held: brings the trainer's state from the store into the
/// cache, so that a trainer on a fresh machine continues the run where a lost one left it: the
/// logs ([`RunDir::sync_logs_in`]), the store's newest checkpoint when newer than the cache's
/// ([`RunDir::sync_checkpoint_in`]) and the newest published generation, the one
/// `models/LATEST` names or a newer one with its manifest (the next one is numbered after it). A store with generations but no checkpoint cannot be resumed without
/// training from step 0 again under published generation numbers: an error.
fn resume_from_store(run: &RunDir) -> Result<()> {
    let Some(remote) = &run.remote else { return Ok(()) };
    run.sync_logs_in()?;
    if let Some(step) = run.sync_checkpoint_in()? {
        run.note(&format!("downloaded the checkpoint at step {step} from {}", run.name()))?;
    }
    let latest = run.latest_generation()?.map(|(g, _)| g);
    // A generation whose manifest is there but which `models/LATEST` does not name yet (a kill
    // in between) is published: resume after it, and the next upload moves `LATEST` to it.
    let complete = remote.newest_manifest_generation()?;
    if let Some(g) = complete.filter(|&g| latest.is_none_or(|l| g > l)) {
        remote.pull_generation(g, &run.root)?;
    }
    if let Some(g) = latest.max(complete) {
        anyhow::ensure!(
            run.checkpoints().join(renju_trainer::generations::LATEST_FILE).exists(),
            "{}: generation {g} is published but neither the store nor the cache {} holds a checkpoint to \
             resume from; start the trainer on the machine whose cache holds it",
            run.name(),
            run.root.display()
        );
    }
    Ok(())
}

/// The state of the trainer half between its phases.
struct TrainerLoop<'a> {
    cfg: &'a RunConfig,
    run: &'a RunDir,
    reporter: &'a dyn Reporter,
    trainer: Trainer,
    t0: Instant,
    tally: GenerationTally,
    /// When the previous generation line was written (or the trainer opened).
    last_line: Instant,
    /// Metrics of the latest training call (shown while waiting, logged per generation).
    last: TrainMetrics,
    waiting_since: Option<Instant>,
    /// When a remote run's shards were last listed (at most once a second).
    last_pull: Option<Instant>,
    /// The newest published generation.
    gen: u64,
    /// The step at which the next candidate is due (later than `(gen + 1) * k` after rejections).
    due: u64,
    /// Self-play, when the trainer paces it.
    pace: Option<&'a Pace>,
}

impl<'a> TrainerLoop<'a> {
    /// Opens or resumes the run's trainer and recovers `generations.jsonl` lines a kill lost.
    fn open(cfg: &'a RunConfig, run: &'a RunDir, reporter: &'a dyn Reporter) -> Result<TrainerLoop<'a>> {
        run.take_trainer_lease()?;
        resume_from_store(run)?;
        let trainer = Trainer::open_or_resume(run, cfg.training.clone())
            .with_context(|| format!("opening the trainer of {}", run.name()))?;
        run.sync_generations_out()?;
        let gen = run.latest_generation()?.map_or(0, |(g, _)| g);
        recover_generation_lines(run, gen)?;
        // Games already in the run before this session are not this session's statistics.
        let mut tally = GenerationTally::default();
        tally.update(&run.selfplay())?;
        tally.take_new_games();
        run.note(&format!("trainer at step {} with generation {gen} published", trainer.step()))?;
        reporter.report(Report::Started(Half::Trainer));
        Ok(TrainerLoop {
            cfg,
            run,
            reporter,
            trainer,
            t0: Instant::now(),
            tally,
            last_line: Instant::now(),
            last: TrainMetrics::default(),
            waiting_since: None,
            last_pull: None,
            gen,
            due: (gen + 1) * cfg.pipeline.steps_per_generation,
            pace: None,
        })
    }

    /// Refreshes the replay window (reporting rejected shards), then either waits briefly for
    /// self-play samples or takes up to `steps_per_round` steps, never past the due step (and
    /// none after `stop` is set). A remote run first renews the trainer lease and pulls new shards.
    fn train_round(&mut self, stop: &Stop) -> Result<()> {
        if self.run.remote.is_some() && self.last_pull.is_none_or(|t| t.elapsed() >= Duration::from_secs(1)) {
            self.run.renew_trainer_lease()?;
            self.run.sync_shards_in()?;
            self.last_pull = Some(Instant::now());
        }
        let status = self.trainer.refresh_window()?;
        for (path, err) in self.trainer.take_rejected_shards() {
            let line = format!("rejected a shard (moved to {}): {err}", path.display());
            say(&line);
            self.run.note(&line)?;
        }
        let allowed = self.trainer.steps_allowed();
        if let Some(pace) = self.pace {
            pace.look(allowed);
        }
        let last = &self.last;
        if allowed == 0 {
            let since = *self.waiting_since.get_or_insert_with(Instant::now);
            self.reporter.report(Report::Waiting {
                generation: self.gen,
                step: self.trainer.step(),
                samples: status.total_samples,
                waited: since.elapsed(),
                last,
            });
            // Paced self-play runs while the trainer waits: look again soon, so that it writes
            // little more than the trainer can take.
            let poll = if self.pace.is_some() { 50 } else { 200 };
            std::thread::sleep(Duration::from_millis(poll));
            return Ok(());
        }
        self.waiting_since = None;
        let n = allowed.min(self.cfg.pipeline.steps_per_round).min(self.due - self.trainer.step());
        let m = self.trainer.train_steps_until(n, stop.flag())?;
        if let Some(pace) = self.pace {
            pace.trained(m.steps);
        }
        if m.steps > 0 {
            self.last = m;
        }
        self.reporter.report(Report::Training {
            generation: self.gen,
            last: &self.last,
            window_samples: status.window_samples,
        });
        Ok(())
    }

    /// The due candidate: checkpoint, gate it when configured, publish it and log the
    /// generation. Returns whether a generation was published. A remote run's trainer lease is
    /// renewed throughout (a gate match can outlast it).
    fn candidate(&mut self) -> Result<bool> {
        let run = self.run;
        run.with_trainer_lease_renewed(|| self.checkpoint_gate_publish())?
    }

    /// [`TrainerLoop::candidate`]'s work.
    fn checkpoint_gate_publish(&mut self) -> Result<bool> {
        self.trainer.checkpoint()?;
        self.due = self.trainer.step() + self.cfg.pipeline.steps_per_generation;
        if self.cfg.pipeline.gate {
            let (pass, reason) = gate_candidate(self.cfg, self.run, &self.trainer, self.gen)?;
            let verdict = if pass { "pass" } else { "rejected" };
            self.run.note(&format!("gate at step {}: {verdict} ({reason})", self.trainer.step()))?;
            if !pass {
                return Ok(false);
            }
        }
        self.gen = self.trainer.publish()?;
        self.run.sync_generations_out()?;
        self.log_generation()?;
        self.run.sync_logs_out()?;
        let pruned = prune_generations(&self.run.models(), self.cfg.pipeline.keep_generations_every)?;
        if !pruned.is_empty() {
            self.run.note(&format!(
                "pruned generation(s) {pruned:?} (pipeline.keep_generations_every = {})",
                self.cfg.pipeline.keep_generations_every
            ))?;
        }
        Ok(true)
    }

    /// Appends the just-published generation to `generations.jsonl` and `train.log` and shows it.
    fn log_generation(&mut self) -> Result<()> {
        let status = self.trainer.window_status();
        let (samples_by_generation, samples_older_generations) =
            newest_generations(self.tally.update(&self.run.selfplay())?, BY_GENERATION_KEPT);
        let stats = GameStats::of(&self.tally.take_new_games());
        let seconds = self.last_line.elapsed().as_secs_f64();
        self.last_line = Instant::now();
        let selfplay = SelfplayLine::new(&stats, seconds);
        for (tag, v) in stats.scalars() {
            self.trainer.log_scalar(tag, v);
        }
        self.trainer.log_scalar("selfplay/games_per_sec", selfplay.games_per_sec);
        let last = &self.last;
        let line = GenerationLine {
            generation: self.gen,
            writer: renju_trainer::process::process_tag(),
            step: self.trainer.step(),
            samples_trained: self.trainer.samples_trained(),
            total_samples: status.total_samples,
            window_samples: status.window_samples,
            samples_by_generation,
            samples_older_generations,
            selfplay_games: self.tally.games,
            selfplay,
            loss: last.loss,
            policy_loss: last.policy_loss,
            value_loss: last.value_loss,
            opponent_policy_loss: self.trainer.config().net.opponent_policy.then_some(last.opponent_policy_loss),
            minutes: self.t0.elapsed().as_secs_f64() / 60.0,
        };
        append_generation_line(self.run, &line)?;
        let (shown, shown_older) = newest_generations(&line.samples_by_generation, 5);
        let summary = format!(
            "generation {} published at step {} | loss {:.4} (policy {:.4}, value {:.4}{}) | samples {} (window {}) | by generation {:?}{}\n  \
             self-play since the last generation: {:.2} games/s | {}",
            self.gen,
            line.step,
            line.loss,
            line.policy_loss,
            line.value_loss,
            line.opponent_policy_loss.map_or(String::new(), |l| format!(", opponent policy {l:.4}")),
            line.total_samples,
            line.window_samples,
            shown,
            match line.samples_older_generations + shown_older {
                0 => String::new(),
                n => format!(" and {n} from older generations"),
            },
            line.selfplay.games_per_sec,
            stats.summary()
        );
        self.run.note(&summary)?;
        self.reporter.report(Report::Line(&summary));
        Ok(())
    }

    /// Writes the final checkpoint and notes where the trainer stopped, in `train.log` and on
    /// the terminal (or stderr), so that a short run that never trained says why.
    fn close(mut self) -> Result<()> {
        self.trainer.checkpoint()?;
        self.run.release_trainer_lease()?;
        let step = self.trainer.step();
        let total = self.trainer.window_status().total_samples;
        let mut line = format!("trainer stopped at step {step} (generation {}); it had read {total} samples", self.gen);
        if total > 0 {
            let ratio = self.trainer.samples_trained() as f64 / total as f64;
            line.push_str(&format!(", {ratio:.2} training samples per sample"));
        }
        if let Some(pace) = self.pace {
            let share = (pace.paused_time().as_secs_f64() / self.t0.elapsed().as_secs_f64().max(1e-9)).min(1.0);
            line.push_str(&format!("; self-play waited for the trainer {:.0}% of this session", 100.0 * share));
        }
        if step == 0 {
            let min = self.cfg.training.min_samples_to_train;
            line.push_str(&format!(" (training starts at training.min_samples_to_train = {min})"));
        }
        self.run.note(&line)?;
        self.run.sync_logs_out()?;
        self.reporter.report(Report::Line(&line));
        self.reporter.report(Report::Stopped(Half::Trainer));
        Ok(())
    }
}
