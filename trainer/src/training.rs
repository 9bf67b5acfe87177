//! The [`Trainer`]: network + optimiser + replay window + checkpoints + publishing, as a library
//! that the combined `renju-zero train` loop drives.
//!
//! The trainer reads shards from [`RunDir::selfplay`], publishes into [`RunDir::models`], writes
//! TensorBoard events into [`RunDir::tensorboard`] and checkpoints into [`RunDir::checkpoints`]:
//! `step-NNNNNNNNN/` (`model.safetensors`, `optimizer.safetensors`, `state.json`) and `LATEST`.
//!
//! Loss per step (AlphaZero, Silver et al. 2018: `l = -pi^T log p + (z - v)^2 + c ||theta||^2`,
//! with the value as a W/D/L distribution as in KataGo):
//! `policy_loss = sum_b w_b * CE(pi_b, softmax(policy_logits_b)) / B` (w_b = 0 for positions
//! without a policy target), `value_loss = mean_b CE(z_b, softmax(value_logits_b))`,
//! `l2 = c * sum(w^2)` over convolution/linear weights, total
//! `policy_loss + value_loss_weight * value_loss + l2`. With the opponent-policy head
//! (`NetConfig::opponent_policy`, KataGo) the total adds `opponent_policy_weight *
//! opponent_loss`, `opponent_loss = sum_b u_b * CE(onehot(reply_b), softmax(opponent_logits_b))
//! / B` (u_b = 0 for positions without an opponent's reply).
//!
//! Determinism: all training randomness comes from the initial seed (weights, via
//! `tch::manual_seed`) and from [`crate::replay::step_rng`]`(seed, step)` (sampling and
//! symmetries), so the checkpointed "RNG state" is the seed and the step. Resuming from a
//! checkpoint with the same shards and config gives the same next batches and, on the CPU, the
//! same losses.

use crate::config::TrainerConfig;
use crate::generations::{newest_generation, LATEST_FILE};
use crate::metrics::{MetricsSink, NullSink, TensorBoardSink};
use crate::model::{load_weights, publish_model, ModelConfig, WEIGHTS_FILE};
use crate::net::{is_decayed, Net, NetShape};
use crate::optim::Optimizer;
use crate::replay::{LoadJob, Loader, ReplayWindow, WindowStatus};
use crate::rundir::{checkpoint_dir_name, RunDir};
use anyhow::{bail, ensure, Context, Result};
use renju_fs::{publish_dir, write_atomic};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::Instant;
use tch::{nn, Device, Kind, Tensor};

/// Optimiser state file in a checkpoint.
pub const OPTIMIZER_FILE: &str = "optimizer.safetensors";
/// Training state file in a checkpoint.
pub const STATE_FILE: &str = "state.json";

/// `state.json` of a checkpoint.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckpointState {
    /// Training steps done.
    pub step: u64,
    /// Samples trained on (steps x batch size, summed over batch-size changes).
    pub samples_trained: u64,
    /// The config the run was started or last resumed with.
    pub config: TrainerConfig,
    /// Encoder version of the network.
    pub encoder_version: u32,
}

/// Averages over the steps of one [`Trainer::train_steps`] call.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TrainMetrics {
    /// Steps done in this call.
    pub steps: u64,
    /// Global step after the call.
    pub step: u64,
    /// Mean total loss.
    pub loss: f64,
    /// Mean policy cross-entropy (nats).
    pub policy_loss: f64,
    /// Mean value cross-entropy (nats).
    pub value_loss: f64,
    /// Mean opponent-policy cross-entropy (nats, positions without a reply counting 0); 0
    /// without the head.
    pub opponent_policy_loss: f64,
    /// Mean L2 term.
    pub l2_loss: f64,
    /// Learning rate of the last step.
    pub lr: f64,
    /// Mean gradient norm before clipping.
    pub grad_norm: f64,
    /// Mean entropy of the predicted policy (nats).
    pub policy_entropy: f64,
    /// Fraction of samples whose argmax W/D/L equals the target's.
    pub value_accuracy: f64,
    /// Training samples per second over the call (wall clock).
    pub samples_per_sec: f64,
    /// Total loss of every step, in order.
    pub step_losses: Vec<f64>,
}

/// The training state of one run.
pub struct Trainer {
    run: RunDir,
    config: TrainerConfig,
    device: Device,
    vs: nn::VarStore,
    net: Net,
    opt: Optimizer,
    decayed: Vec<Tensor>,
    window: ReplayWindow,
    step: u64,
    samples_trained: u64,
    metrics: Box<dyn MetricsSink>,
}

impl Trainer {
    /// Opens the run in `run`: resumes from `checkpoints/LATEST` when present (the
    /// checkpoint's architecture, board size and rule must equal `config`'s; the other settings
    /// come from `config`), otherwise initialises the network from `config.seed`, publishes it as
    /// generation 0 (unless a generation exists already) and writes a step-0 checkpoint.
    /// Errors: missing/corrupt checkpoint files or a config mismatch, naming the file.
    pub fn open_or_resume(run: &RunDir, config: TrainerConfig) -> Result<Trainer> {
        config.validate()?;
        let device = config.device.resolve()?;
        if config.intra_op_threads > 0 {
            tch::set_num_threads(config.intra_op_threads as i32);
        }
        std::fs::create_dir_all(&run.root).with_context(|| format!("creating run directory {}", run.root.display()))?;
        // The shards' shape (the current encoder) and the network's (its encoder version).
        let shape = NetShape::current(config.board_size);
        let net_shape = NetShape::for_version(config.encoder_version, config.board_size)?;
        tch::manual_seed(config.seed as i64);
        let vs = nn::VarStore::new(device);
        let net = Net::new(&vs.root(), &config.net, net_shape)?;
        let opt = Optimizer::new(&vs, config.optimizer.clone());
        // Sorted by name: the L2 penalty is a float sum, and `variables()` is a HashMap whose
        // order differs per store, so an unsorted sum differs in its last bits after a resume.
        let mut decayed: Vec<(String, Tensor)> = vs.variables().into_iter().filter(|(n, t)| is_decayed(n, t)).collect();
        decayed.sort_by(|a, b| a.0.cmp(&b.0));
        let decayed = decayed.into_iter().map(|(_, t)| t).collect();
        let window = ReplayWindow::new(&run.selfplay(), shape, config.rule, config.window.clone());
        let metrics: Box<dyn MetricsSink> =
            if config.tensorboard { Box::new(TensorBoardSink::new(&run.tensorboard())?) } else { Box::new(NullSink) };
        let mut t = Trainer {
            run: run.clone(),
            config,
            device,
            vs,
            net,
            opt,
            decayed,
            window,
            step: 0,
            samples_trained: 0,
            metrics,
        };
        let latest = t.run.checkpoints().join(LATEST_FILE);
        if latest.exists() {
            let name = std::fs::read_to_string(&latest).with_context(|| format!("reading {}", latest.display()))?;
            let dir = t.run.checkpoints().join(name.trim());
            t.load_checkpoint(&dir)?;
        } else {
            if newest_generation(&t.run.models())?.is_none() {
                t.publish()?;
            }
            t.checkpoint()?;
        }
        Ok(t)
    }

    /// The run directory this trainer reads and writes.
    pub fn run_dir(&self) -> &RunDir {
        &self.run
    }

    fn load_checkpoint(&mut self, dir: &Path) -> Result<()> {
        let state_path = dir.join(STATE_FILE);
        let text = std::fs::read_to_string(&state_path)
            .with_context(|| format!("missing or unreadable checkpoint state {}", state_path.display()))?;
        let state: CheckpointState = serde_json::from_str(&text)
            .with_context(|| format!("corrupt checkpoint state {}", state_path.display()))?;
        ensure!(
            state.config.net == self.config.net
                && state.config.board_size == self.config.board_size
                && state.config.rule == self.config.rule,
            "{}: the checkpoint's network/board size/rule differ from the config's; use a new run directory",
            state_path.display()
        );
        ensure!(
            state.encoder_version == self.config.encoder_version,
            "{}: checkpoint trained with encoder version {}, the config trains version {} \
             (training.encoder_version); its published models still play (arena, curve, selfplay --evaluator \
             model), but training goes on only with its version or in a new run directory",
            state_path.display(),
            state.encoder_version,
            self.config.encoder_version
        );
        load_weights(&self.vs, &dir.join(WEIGHTS_FILE))?;
        self.opt.load(&dir.join(OPTIMIZER_FILE))?;
        self.step = state.step;
        self.samples_trained = state.samples_trained;
        Ok(())
    }

    /// The config in use.
    pub fn config(&self) -> &TrainerConfig {
        &self.config
    }

    /// Training steps done.
    pub fn step(&self) -> u64 {
        self.step
    }

    /// Samples trained on so far.
    pub fn samples_trained(&self) -> u64 {
        self.samples_trained
    }

    /// The device training runs on.
    pub fn device(&self) -> Device {
        self.device
    }

    /// The network (for evaluation in tests and tools).
    pub fn net(&self) -> &Net {
        &self.net
    }

    /// The network's variables.
    pub fn var_store(&self) -> &nn::VarStore {
        &self.vs
    }

    /// Rescans `<run>/selfplay` for new shards and recomputes the window.
    pub fn refresh_window(&mut self) -> Result<WindowStatus> {
        self.window.refresh()
    }

    /// Shards the window rejected (moved to `selfplay/rejected/`) since the last call, with
    /// the error naming each; see [`ReplayWindow::take_rejected`].
    pub fn take_rejected_shards(&mut self) -> Vec<(PathBuf, String)> {
        self.window.take_rejected()
    }

    /// Window counts as of the last refresh.
    pub fn window_status(&self) -> WindowStatus {
        self.window.status()
    }

    /// Steps the loop may take now without exceeding `samples_per_new_sample` training samples
    /// per self-play sample: `floor((total * ratio - samples_trained) / batch)`, 0 while fewer
    /// than `min_samples_to_train` samples exist.
    pub fn steps_allowed(&self) -> u64 {
        let total = self.window.status().total_samples;
        if total < self.config.min_samples_to_train || total == 0 {
            return 0;
        }
        let budget = total as f64 * self.config.samples_per_new_sample - self.samples_trained as f64;
        if budget <= 0.0 {
            0
        } else {
            (budget / self.config.batch_size as f64).floor() as u64
        }
    }

    /// Takes `n` training steps on the current window (call [`Self::refresh_window`] first to
    /// see new shards); writes a checkpoint whenever the step count reaches a multiple of
    /// `checkpoint_every`. Errors on an empty window, naming the shard directory.
    pub fn train_steps(&mut self, n: u64) -> Result<TrainMetrics> {
        self.train_steps_until(n, &std::sync::atomic::AtomicBool::new(false))
    }

    /// [`Self::train_steps`], but returns early, between two steps, once `stop` is set (so a
    /// stop never waits for a whole round of steps). The metrics cover the steps taken
    /// (`steps`, possibly fewer than `n`, possibly 0).
    pub fn train_steps_until(&mut self, n: u64, stop: &std::sync::atomic::AtomicBool) -> Result<TrainMetrics> {
        let stopped = || stop.load(std::sync::atomic::Ordering::SeqCst);
        if n == 0 || stopped() {
            return Ok(TrainMetrics { step: self.step, ..Default::default() });
        }
        let snapshot = self.window.snapshot();
        if snapshot.is_empty() {
            bail!(
                "the replay window is empty: no self-play samples in {} (refresh_window() after shards arrive)",
                self.window.dir().display()
            );
        }
        let start = Instant::now();
        // The shards' shape (the current encoder); the loader converts to the network's.
        let shape = self.window.shape();
        let mut done = 0u64;
        let mut stats: Vec<Tensor> = Vec::with_capacity(n as usize);
        let mut lr = 0.0;
        while done < n {
            // Stop at checkpoint boundaries so the loader job never runs past a checkpoint.
            let every = self.config.checkpoint_every.max(1);
            let to_boundary = every - self.step % every;
            let chunk = (n - done).min(to_boundary);
            let loader = Loader::start(
                LoadJob {
                    window: snapshot.clone(),
                    shape,
                    batch: self.config.batch_size,
                    augment: self.config.augment_symmetry,
                    encoding: crate::replay::BatchEncoding {
                        version: self.config.encoder_version,
                        vcf_plane_dropout: self.config.vcf_plane_dropout,
                        stones_only_dropout: self.config.stones_only_dropout,
                        short_value_weight: self.config.short_value_weight as f32,
                    },
                    seed: self.config.seed,
                    first_step: self.step,
                    steps: chunk,
                },
                self.config.prefetch_batches,
            )?;
            let mut taken = 0;
            for _ in 0..chunk {
                if stopped() {
                    break;
                }
                let batch = loader.next()?;
                lr = self.config.schedule.at(self.step);
                stats.push(self.train_one(&batch, lr));
                self.step += 1;
                self.samples_trained += self.config.batch_size as u64;
                taken += 1;
            }
            done += taken;
            drop(loader);
            if self.step.is_multiple_of(every) {
                self.checkpoint()?;
            }
            if taken < chunk {
                break;
            }
        }
        let n = done;
        if stats.is_empty() {
            return Ok(TrainMetrics { step: self.step, ..Default::default() });
        }
        let all = Tensor::stack(&stats, 0).to_device(Device::Cpu).to_kind(Kind::Double);
        let rows: Vec<Vec<f64>> = Vec::<Vec<f64>>::try_from(&all).context("reading training statistics")?;
        let secs = start.elapsed().as_secs_f64();
        let mean = |k: usize| rows.iter().map(|r| r[k]).sum::<f64>() / rows.len() as f64;
        let m = TrainMetrics {
            steps: n,
            step: self.step,
            loss: mean(0),
            policy_loss: mean(1),
            value_loss: mean(2),
            opponent_policy_loss: mean(7),
            l2_loss: mean(3),
            lr,
            grad_norm: mean(4),
            policy_entropy: mean(5),
            value_accuracy: mean(6),
            samples_per_sec: (n as f64 * self.config.batch_size as f64) / secs.max(1e-9),
            step_losses: rows.iter().map(|r| r[0]).collect(),
        };
        self.log_metrics(&m);
        Ok(m)
    }

    /// Records a scalar of the caller's (e.g. `selfplay/black_score`) at the current training
    /// step in the trainer's metrics sink (TensorBoard), and flushes it.
    pub fn log_scalar(&mut self, tag: &str, value: f64) {
        self.metrics.scalar(tag, self.step, value);
        self.metrics.flush();
    }

    fn log_metrics(&mut self, m: &TrainMetrics) {
        let s = self.step;
        let w = self.window.status();
        let opponent_head = self.config.net.opponent_policy;
        let sink = &mut self.metrics;
        sink.scalar("loss/total", s, m.loss);
        sink.scalar("loss/policy", s, m.policy_loss);
        sink.scalar("loss/value", s, m.value_loss);
        if opponent_head {
            sink.scalar("loss/opponent_policy", s, m.opponent_policy_loss);
        }
        sink.scalar("loss/l2", s, m.l2_loss);
        sink.scalar("train/lr", s, m.lr);
        sink.scalar("train/samples_per_sec", s, m.samples_per_sec);
        sink.scalar("train/grad_norm", s, m.grad_norm);
        sink.scalar("train/policy_entropy", s, m.policy_entropy);
        sink.scalar("train/value_accuracy", s, m.value_accuracy);
        sink.scalar("replay/total_samples", s, w.total_samples as f64);
        sink.scalar("replay/window_samples", s, w.window_samples as f64);
        sink.flush();
    }

    /// One optimisation step; returns the statistics `[loss, policy, value, l2, grad_norm,
    /// entropy, value_accuracy, opponent_policy]` as a device tensor (no host synchronisation).
    fn train_one(&mut self, b: &crate::replay::Batch, lr: f64) -> Tensor {
        let d = self.device;
        let planes = b.planes.to_device(d);
        let globals = b.globals.to_device(d);
        let target_p = b.policy.to_device(d);
        let target_v = b.value.to_device(d);
        let weight = b.policy_weight.to_device(d);
        let bsz = self.config.batch_size as f64;
        let (p, v, opp) = self.net.forward_with_opponent(&planes, &globals, true);
        let weighted_ce = |logits: &Tensor, target: &Tensor, weight: &Tensor| -> (Tensor, Tensor) {
            let logp = logits.log_softmax(-1, Kind::Float);
            let ce = -(target * &logp).sum_dim_intlist(1, false, Kind::Float);
            ((ce * weight).sum(Kind::Float) / bsz, logp)
        };
        let (policy_loss, logp) = weighted_ce(&p, &target_p, &weight);
        let opponent_loss = match &opp {
            Some(o) => weighted_ce(o, &b.opponent_policy.to_device(d), &b.opponent_weight.to_device(d)).0,
            None => Tensor::zeros([], (Kind::Float, d)),
        };
        let logv = v.log_softmax(-1, Kind::Float);
        let value_loss = -(&target_v * &logv).sum_dim_intlist(1, false, Kind::Float).mean(Kind::Float);
        let l2 = if self.config.l2 > 0.0 {
            let sq: Vec<Tensor> = self.decayed.iter().map(|w| w.square().sum(Kind::Float)).collect();
            Tensor::stack(&sq, 0).sum(Kind::Float) * self.config.l2
        } else {
            Tensor::zeros([], (Kind::Float, d))
        };
        let loss = &policy_loss
            + &value_loss * self.config.value_loss_weight
            + &opponent_loss * self.config.opponent_policy_weight
            + &l2;
        self.opt.zero_grad();
        loss.backward();
        let grad_norm = self.opt.clip_grad_norm(self.config.grad_clip);
        self.opt.step(lr);
        tch::no_grad(|| {
            let entropy = -(logp.exp() * &logp).sum_dim_intlist(1, false, Kind::Float).mean(Kind::Float);
            let acc = v.argmax(1, false).eq_tensor(&target_v.argmax(1, false)).to_kind(Kind::Float).mean(Kind::Float);
            Tensor::stack(
                &[
                    loss.detach(),
                    policy_loss.detach(),
                    value_loss.detach(),
                    l2.detach(),
                    grad_norm,
                    entropy,
                    acc,
                    opponent_loss.detach(),
                ],
                0,
            )
        })
    }

    /// Writes a checkpoint of the current step (a no-op when it exists): weights, optimiser
    /// state and `state.json` into a temporary directory renamed to `step-NNNNNNNNN`, then
    /// `checkpoints/LATEST`; keeps the newest `keep_checkpoints`. A remote run then uploads it
    /// and the trainer's logs ([`RunDir::sync_checkpoint_out`]). Returns its directory.
    pub fn checkpoint(&mut self) -> Result<PathBuf> {
        let root = self.run.checkpoints();
        std::fs::create_dir_all(&root).with_context(|| format!("creating {}", root.display()))?;
        let name = checkpoint_dir_name(self.step);
        let dest = root.join(&name);
        if !dest.exists() {
            let tmp = root.join(format!(".tmp-{name}-{}", std::process::id()));
            if tmp.exists() {
                std::fs::remove_dir_all(&tmp)?;
            }
            std::fs::create_dir(&tmp).with_context(|| format!("creating {}", tmp.display()))?;
            let weights = tmp.join(WEIGHTS_FILE);
            self.vs.save(&weights).with_context(|| format!("writing {}", weights.display()))?;
            self.opt.save(&tmp.join(OPTIMIZER_FILE))?;
            let state = CheckpointState {
                step: self.step,
                samples_trained: self.samples_trained,
                config: self.config.clone(),
                encoder_version: self.config.encoder_version,
            };
            write_atomic(&tmp.join(STATE_FILE), serde_json::to_string_pretty(&state)?.as_bytes())?;
            publish_dir(&tmp, &dest)?;
        }
        write_atomic(&root.join(LATEST_FILE), format!("{name}\n").as_bytes())?;
        // Prune old checkpoints.
        let mut steps: Vec<PathBuf> = std::fs::read_dir(&root)?
            .filter_map(|e| e.ok())
            .map(|e| e.path())
            .filter(|p| p.is_dir() && p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("step-")))
            .collect();
        steps.sort();
        while steps.len() > self.config.keep_checkpoints {
            let old = steps.remove(0);
            if old != dest {
                std::fs::remove_dir_all(&old).with_context(|| format!("removing old checkpoint {}", old.display()))?;
            }
        }
        self.run.sync_checkpoint_out(&dest, self.config.keep_checkpoints)?;
        Ok(dest)
    }

    /// The `config.json` of the current network as generation `generation`: the run's rule,
    /// board size, architecture and encoder version, with the steps and samples trained so far.
    pub fn model_config(&self, generation: u64) -> Result<ModelConfig> {
        let c = &self.config;
        let mut cfg = ModelConfig::for_encoder(generation, c.rule, c.board_size, c.net.clone(), c.encoder_version)?;
        cfg.trained_steps = self.step;
        cfg.trained_samples = self.samples_trained;
        Ok(cfg)
    }

    /// Publishes the current network as the next generation (`max existing + 1`, or 0 in an
    /// empty models directory) and returns its number. See [`crate::model::publish_model`].
    pub fn publish(&mut self) -> Result<u64> {
        let generation = newest_generation(&self.run.models())?.map_or(0, |g| g + 1);
        let cfg = self.model_config(generation)?;
        publish_model(&self.run.models(), &self.vs, &cfg)?;
        self.metrics.scalar("models/generation", self.step, generation as f64);
        Ok(generation)
    }
}
