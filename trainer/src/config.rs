//! Configuration: the network architecture ([`NetConfig`], with the presets `tiny`, `small`,
//! `standard`, `large`, `linepattern`, `linepattern-tiny`) and the training run ([`TrainerConfig`]).
//!
//! Every struct is `serde` with `deny_unknown_fields` and per-field defaults, so a TOML/JSON file
//! needs to name only what it changes, and a misspelt key is an error instead of being ignored.

use anyhow::{bail, ensure, Context, Result};
use renju_rules::Rule;
use renju_selfplay::linepattern::MAX_POINTWISE_OUTPUTS;
use serde::{Deserialize, Serialize};

/// Network family of [`NetConfig::kind`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NetKind {
    /// The KataGo-style residual tower ([`crate::net::ResNet`]). Default.
    #[default]
    Resnet,
    /// The line-pattern (NNUE-style) net ([`crate::net::LineNet`]), exported as a table that
    /// the search evaluates without torch (`renju_selfplay::linepattern`).
    Linepattern,
}

/// Architecture: the network family and its sizes (see [`crate::net::resnet`] and
/// [`crate::net::linepattern`] for the layers). The residual keys (`blocks` .. `value_channels`)
/// are ignored by the line-pattern net, the `line_*` keys by the residual net; `value_hidden`
/// serves both.
///
/// The tower follows KataGo (Wu 2019, "Accelerating Self-Play Learning in Go", §3 and
/// Appendix A): pre-activation residual blocks, some of which carry a global-pooling bias, and
/// global-pooling policy and value heads.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct NetConfig {
    /// Network family: `resnet` or `linepattern`. Default: resnet.
    pub kind: NetKind,
    /// Number of residual blocks in the tower. Default (the `small` preset): 6.
    pub blocks: usize,
    /// Channels of the tower (3x3 convolutions). Default: 64.
    pub channels: usize,
    /// Every `pool_every`-th block (1-based: blocks `k` with `k % pool_every == pool_every - 1`)
    /// carries a global-pooling bias, as KataGo does in roughly every third block; 0 = none.
    /// Default: 3.
    pub pool_every: usize,
    /// Channels of a block that are pooled (mean and max over the board) into a bias for the
    /// others. Must be < `channels`. Default: 16 (KataGo b6c96 pools 32 of 96).
    pub pool_channels: usize,
    /// Channels of the 1x1 convolutions of the policy head. Default: 32 (KataGo b6c96: 32).
    pub policy_channels: usize,
    /// Channels of the 1x1 convolution of the value head. Default: 32 (KataGo b6c96: 32).
    pub value_channels: usize,
    /// Width of the hidden fully connected layer of the value head. Default: 64.
    pub value_hidden: usize,
    /// linepattern: feature channels `F` of the line mapping (the table row width) and of the
    /// head. Default: 32 (the table is `2 x 66,430 x F` f32: 17 MB at 32).
    pub line_features: usize,
    /// linepattern: channels of the five kernel-3 1-D convolutions along a line (receptive field
    /// 11 cells). Default: 32.
    pub line_channels: usize,
    /// linepattern: outputs `K` of the dynamic pointwise policy stage (after Rapfi's mix9
    /// networks): the pooled features generate, per position, a `K x F` pointwise layer whose
    /// relu outputs, weighted, add to every placement logit. 0 = none (the placement logit is
    /// linear in a point's features). Default: 0.
    pub policy_pointwise: usize,
    /// An auxiliary policy head that predicts the opponent's reply (KataGo), trained with weight
    /// [`TrainerConfig::opponent_policy_weight`] on the shards' `opponent_reply`. It shapes
    /// the shared features only: inference, the exported table and the ONNX export leave it
    /// out. Default: false.
    pub opponent_policy: bool,
}

impl Default for NetConfig {
    fn default() -> Self {
        NetConfig::preset("small").expect("small preset exists")
    }
}

impl NetConfig {
    /// The named presets: `tiny` (tests: 2 blocks x 16), `small` (CPU: 6 x 64, the default),
    /// `standard` (GPU: 10 x 128), `large` (20 x 256); line-pattern nets `linepattern` (F = 32,
    /// 32 line channels) and `linepattern-tiny` (tests: F = 8, 8 channels). Errors on any other
    /// name.
    pub fn preset(name: &str) -> Result<NetConfig> {
        let line = |f: usize, c: usize, hidden: usize| NetConfig {
            kind: NetKind::Linepattern,
            line_features: f,
            line_channels: c,
            value_hidden: hidden,
            ..NetConfig::preset("small").expect("small preset exists")
        };
        let (blocks, channels, pool, head, hidden) = match name {
            "linepattern" => return Ok(line(32, 32, 64)),
            "linepattern-tiny" => return Ok(line(8, 8, 8)),
            "tiny" => (2, 16, 8, 8, 16),
            "small" => (6, 64, 16, 32, 64),
            "standard" => (10, 128, 32, 32, 128),
            "large" => (20, 256, 64, 48, 256),
            other => bail!(
                "unknown network preset '{other}' (expected tiny, small, standard, large, linepattern or linepattern-tiny)"
            ),
        };
        Ok(NetConfig {
            kind: NetKind::Resnet,
            line_features: 32,
            line_channels: 32,
            policy_pointwise: 0,
            opponent_policy: false,
            blocks,
            channels,
            pool_every: 3,
            pool_channels: pool,
            policy_channels: head,
            value_channels: head,
            value_hidden: hidden,
        })
    }

    /// Checks the sizes are usable.
    pub fn validate(&self) -> Result<()> {
        if self.kind == NetKind::Linepattern {
            ensure!(self.line_features >= 1, "net.line_features must be >= 1");
            ensure!(self.line_channels >= 1, "net.line_channels must be >= 1");
            ensure!(self.value_hidden >= 1, "net.value_hidden must be >= 1");
            ensure!(
                self.policy_pointwise <= MAX_POINTWISE_OUTPUTS,
                "net.policy_pointwise must be <= {MAX_POINTWISE_OUTPUTS} (got {})",
                self.policy_pointwise
            );
            return Ok(());
        }
        ensure!(
            self.policy_pointwise == 0,
            "net.policy_pointwise is a stage of the linepattern net; the resnet has none (set it to 0)"
        );
        ensure!(self.blocks >= 1, "net.blocks must be >= 1");
        ensure!(self.channels >= 2, "net.channels must be >= 2");
        ensure!(
            self.pool_every == 0 || (self.pool_channels >= 1 && self.pool_channels < self.channels),
            "net.pool_channels ({}) must be in 1..channels ({})",
            self.pool_channels,
            self.channels
        );
        ensure!(
            self.policy_channels >= 1 && self.value_channels >= 1 && self.value_hidden >= 1,
            "net head sizes must be >= 1"
        );
        Ok(())
    }

    /// A lower bound on the number of weights of this architecture (the residual trunk's 3x3
    /// convolutions, `blocks * 2 * 9 * channels^2`, plus one weight per head channel and hidden
    /// unit), without overflow. The model loader compares it with the size of the weights file,
    /// so a corrupt `config.json` cannot make it allocate more than the file could hold.
    pub fn min_weights(&self) -> u128 {
        let (b, c) = (self.blocks as u128, self.channels as u128);
        b * 2 * 9 * c * c + c * (self.policy_channels as u128 + self.value_channels as u128) + self.value_hidden as u128
    }

    /// Whether block `i` (0-based) carries a global-pooling bias.
    pub fn block_has_pool(&self, i: usize) -> bool {
        self.pool_every > 0 && i % self.pool_every == self.pool_every - 1
    }
}

/// The optimiser.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, tag = "kind", rename_all = "lowercase")]
pub enum OptimizerConfig {
    /// SGD with Nesterov momentum (AlphaZero, Silver et al. 2018: momentum 0.9). Weight decay
    /// comes from the L2 term of the loss ([`TrainerConfig::l2`]).
    Sgd {
        /// Momentum coefficient. Default: 0.9 (AlphaZero).
        #[serde(default = "default_momentum")]
        momentum: f64,
    },
    /// AdamW (Loshchilov & Hutter 2019) with decoupled weight decay; set
    /// [`TrainerConfig::l2`] to 0 when using it.
    Adamw {
        /// Default: 0.9.
        #[serde(default = "default_beta1")]
        beta1: f64,
        /// Default: 0.999.
        #[serde(default = "default_beta2")]
        beta2: f64,
        /// Default: 1e-8.
        #[serde(default = "default_eps")]
        eps: f64,
        /// Decoupled weight decay per step, multiplied by the learning rate. Default: 0.01.
        #[serde(default = "default_wd")]
        weight_decay: f64,
    },
}

fn default_momentum() -> f64 {
    0.9
}
fn default_beta1() -> f64 {
    0.9
}
fn default_beta2() -> f64 {
    0.999
}
fn default_eps() -> f64 {
    1e-8
}
fn default_wd() -> f64 {
    0.01
}

impl Default for OptimizerConfig {
    fn default() -> Self {
        OptimizerConfig::Sgd { momentum: 0.9 }
    }
}

/// Learning-rate schedule: linear warm-up from 0, then `lr` multiplied by the factor of every
/// milestone already passed (AlphaZero's step schedule: 0.2 → 0.02 → 0.002).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LrSchedule {
    /// Peak learning rate. Default: 0.02 (SGD, batch 256; AlphaZero used 0.2 at batch 4096).
    pub lr: f64,
    /// Steps of linear warm-up. Default: 200.
    pub warmup_steps: u64,
    /// `[step, factor]` milestones: from `step` on the rate is multiplied by `factor`
    /// (cumulative). Default: none.
    pub milestones: Vec<(u64, f64)>,
}

impl Default for LrSchedule {
    fn default() -> Self {
        LrSchedule { lr: 0.02, warmup_steps: 200, milestones: Vec::new() }
    }
}

impl LrSchedule {
    /// The learning rate of step `step` (0-based).
    pub fn at(&self, step: u64) -> f64 {
        let mut lr = self.lr;
        if step < self.warmup_steps {
            lr *= (step + 1) as f64 / self.warmup_steps as f64;
        }
        for &(s, f) in &self.milestones {
            if step >= s {
                lr *= f;
            }
        }
        lr
    }
}

/// The replay window: how many of the most recent samples training draws from.
///
/// KataGo's power law (Wu 2019, Appendix C): with `N` samples produced so far,
/// `window(N) = min(N, c * (1 + beta * ((N / c)^alpha - 1) / alpha))` for `N > c`, and
/// `window(N) = N` below `c`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct WindowConfig {
    /// `c`: the window is everything until this many samples exist. Default: 250000 (KataGo).
    pub min_samples: u64,
    /// `alpha`: exponent of the growth. Default: 0.75 (KataGo).
    pub alpha: f64,
    /// `beta`: slope at `N = c`. Default: 0.4 (KataGo).
    pub beta: f64,
    /// Upper bound on the window (memory). Default: 2000000.
    pub max_samples: u64,
}

impl Default for WindowConfig {
    fn default() -> Self {
        WindowConfig { min_samples: 250_000, alpha: 0.75, beta: 0.4, max_samples: 2_000_000 }
    }
}

impl WindowConfig {
    /// Window size (samples) when `total` samples have been produced in all.
    pub fn window_size(&self, total: u64) -> u64 {
        let c = self.min_samples.max(1) as f64;
        let n = total as f64;
        let w = if n <= c { n } else { c * (1.0 + self.beta * ((n / c).powf(self.alpha) - 1.0) / self.alpha) };
        (w.floor() as u64).min(total).min(self.max_samples)
    }
}

/// Where tensors live.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum DeviceChoice {
    /// CUDA device 0 when available, else the CPU. Default.
    #[default]
    Auto,
    /// The CPU.
    Cpu,
    /// CUDA device 0 (an error at start when unavailable).
    Cuda,
}

impl DeviceChoice {
    /// Resolves to a tch device; errors when CUDA is asked for but absent.
    #[cfg(feature = "torch")]
    pub fn resolve(self) -> Result<tch::Device> {
        Ok(match self {
            DeviceChoice::Auto => tch::Device::cuda_if_available(),
            DeviceChoice::Cpu => tch::Device::Cpu,
            DeviceChoice::Cuda => {
                ensure!(tch::Cuda::is_available(), "device = \"cuda\" but no CUDA device is available");
                tch::Device::Cuda(0)
            }
        })
    }
}

/// Everything that configures a training run. Stored in every checkpoint.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TrainerConfig {
    /// The network architecture. Default: the `small` preset (6 blocks x 64 channels).
    pub net: NetConfig,
    /// Board side `S`. Default: 15.
    pub board_size: usize,
    /// Rule variant the run plays (recorded in published models; shards must match). Default:
    /// renju.
    pub rule: Rule,
    /// Samples per training step. Default: 256 (KataGo).
    pub batch_size: usize,
    /// The optimiser. Default: SGD with Nesterov momentum 0.9.
    pub optimizer: OptimizerConfig,
    /// Learning-rate schedule. Default: see [`LrSchedule`].
    pub schedule: LrSchedule,
    /// L2 coefficient `c` of the loss term `c * sum(w^2)` over convolution and linear weights
    /// (not batch-norm parameters or biases). Default: 1e-4 (AlphaZero).
    pub l2: f64,
    /// Weight of the value cross-entropy relative to the policy cross-entropy. Default: 1.0
    /// (AlphaZero weights them equally).
    pub value_loss_weight: f64,
    /// Weight of the opponent-policy cross-entropy (the head of [`NetConfig::opponent_policy`],
    /// over the positions with an opponent's reply) relative to the policy cross-entropy.
    /// Default: 0.15 (KataGo's).
    pub opponent_policy_weight: f64,
    /// Share `w` of the short-horizon value in the value target: the target is
    /// `(1 - w) * result + w * short`, `short` the shards' `short_value` (the TD(λ) return over
    /// the following root values, `selfplay.short_value_horizon`) as W/D/L
    /// `[(1 + s) / 2, 0, (1 - s) / 2]`. 0 trains on the game's result alone. Default: 0.
    pub short_value_weight: f64,
    /// Gradients are rescaled so that their global L2 norm is at most this; 0 = off. Default: 10.
    pub grad_clip: f64,
    /// Replay window. Default: KataGo's power law, see [`WindowConfig`].
    pub window: WindowConfig,
    /// Training samples per new self-play sample that the combined loop should keep to (KataGo
    /// trains each sample about 4 times on average at its settings). Used by
    /// [`crate::Trainer::steps_allowed`]. Default: 4.0.
    pub samples_per_new_sample: f64,
    /// Samples that must exist before any training step. Default: 10000.
    pub min_samples_to_train: u64,
    /// Write a checkpoint every this many steps (and at [`crate::Trainer::checkpoint`] calls).
    /// Default: 1000.
    pub checkpoint_every: u64,
    /// How many checkpoints to keep (older ones are deleted). Default: 3.
    pub keep_checkpoints: usize,
    /// Seed of all training randomness (initial weights, sampling, symmetries). Default: 1.
    pub seed: u64,
    /// Device. Default: auto (CUDA when present).
    pub device: DeviceChoice,
    /// Batches the background loader prepares ahead of the training step. Default: 4.
    pub prefetch_batches: usize,
    /// Apply a random board symmetry (of 8) to each sample. Default: true.
    pub augment_symmetry: bool,
    /// Write TensorBoard event files into `<run>/tensorboard/`. Default: true.
    pub tensorboard: bool,
    /// libtorch intra-op threads of the training thread (set when the trainer opens); 0 keeps
    /// the library's default (all cores). Default: 0.
    pub intra_op_threads: usize,
    /// Input encoding of the trained network (`renju_selfplay::encode`, one of
    /// `SUPPORTED_VERSIONS`): 2 own/opponent stones (the default, `ENCODER_VERSION`), 1 black/white
    /// stones, 3 version 2 plus the two VCF planes. Shards always hold version 2; the batches are
    /// converted (`planes_for_version`). Residual nets only: the line-pattern net reads the
    /// stones through its own view and takes no other planes. Default: 2.
    pub encoder_version: u32,
    /// Encoder version 3: the probability that a training sample's two VCF planes are zeroed,
    /// so that the network also plays well without them (KataGomo drops its VCF features out at
    /// random). Default: 0.25.
    pub vcf_plane_dropout: f64,
    /// The probability that a training sample keeps only what an engine that knows just the
    /// stones and the side to move can give (`renju_selfplay::stones_only`): its planes of
    /// Black's forbidden points and the last three stones, and for encoder version 3 its VCF
    /// planes, are zeroed, so that the network also plays well as an ONNX export for such an
    /// engine (docs/onnx-export.md). Default: 0.
    pub stones_only_dropout: f64,
}

impl Default for TrainerConfig {
    fn default() -> Self {
        TrainerConfig {
            net: NetConfig::default(),
            board_size: 15,
            rule: Rule::Renju,
            batch_size: 256,
            optimizer: OptimizerConfig::default(),
            schedule: LrSchedule::default(),
            l2: 1e-4,
            value_loss_weight: 1.0,
            opponent_policy_weight: 0.15,
            short_value_weight: 0.0,
            grad_clip: 10.0,
            window: WindowConfig::default(),
            samples_per_new_sample: 4.0,
            min_samples_to_train: 10_000,
            checkpoint_every: 1000,
            keep_checkpoints: 3,
            seed: 1,
            device: DeviceChoice::Auto,
            prefetch_batches: 4,
            augment_symmetry: true,
            tensorboard: true,
            intra_op_threads: 0,
            encoder_version: renju_selfplay::encode::ENCODER_VERSION,
            vcf_plane_dropout: 0.25,
            stones_only_dropout: 0.0,
        }
    }
}

impl TrainerConfig {
    /// Checks values are usable.
    pub fn validate(&self) -> Result<()> {
        self.net.validate()?;
        renju_rules::board::check_size(self.board_size).context("board_size")?;
        ensure!(self.batch_size >= 1, "batch_size must be >= 1");
        ensure!(self.schedule.lr > 0.0, "schedule.lr must be > 0");
        ensure!(self.l2 >= 0.0 && self.grad_clip >= 0.0, "l2 and grad_clip must be >= 0");
        ensure!(self.opponent_policy_weight >= 0.0, "opponent_policy_weight must be >= 0");
        ensure!(
            (0.0..=1.0).contains(&self.short_value_weight),
            "short_value_weight {} is outside 0..=1",
            self.short_value_weight
        );
        ensure!(self.keep_checkpoints >= 1, "keep_checkpoints must be >= 1");
        ensure!(self.samples_per_new_sample > 0.0, "samples_per_new_sample must be > 0");
        renju_selfplay::encode::input_shape(self.encoder_version).context("encoder_version")?;
        ensure!(
            self.net.kind != NetKind::Linepattern || self.encoder_version == renju_selfplay::encode::ENCODER_VERSION,
            "encoder_version {} is for residual nets; the line-pattern net trains on version {} only",
            self.encoder_version,
            renju_selfplay::encode::ENCODER_VERSION
        );
        ensure!((0.0..=1.0).contains(&self.vcf_plane_dropout), "vcf_plane_dropout must be in 0..=1");
        ensure!((0.0..=1.0).contains(&self.stones_only_dropout), "stones_only_dropout must be in 0..=1");
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encoder_version_is_checked_against_the_net_kind() {
        let mut c = TrainerConfig { encoder_version: 3, ..Default::default() };
        c.validate().unwrap();
        c.encoder_version = 4;
        assert!(format!("{:#}", c.validate().unwrap_err()).contains("encoder version 4"));
        let lp =
            TrainerConfig { net: NetConfig::preset("linepattern").unwrap(), encoder_version: 1, ..Default::default() };
        assert!(format!("{:#}", lp.validate().unwrap_err()).contains("residual nets"));
        let d = TrainerConfig { vcf_plane_dropout: 1.5, ..Default::default() };
        assert!(format!("{:#}", d.validate().unwrap_err()).contains("vcf_plane_dropout"));
        let s = TrainerConfig { stones_only_dropout: -0.1, ..Default::default() };
        assert!(format!("{:#}", s.validate().unwrap_err()).contains("stones_only_dropout"));
    }

    #[test]
    fn window_follows_katago_power_law() {
        let w = WindowConfig::default();
        assert_eq!(w.window_size(1000), 1000);
        assert_eq!(w.window_size(250_000), 250_000);
        // N = 4c: c * (1 + 0.4 * (4^0.75 - 1) / 0.75) = 250000 * (1 + 0.4 * 1.828427 / 0.75)
        //       = 250000 * 1.975161 = 493790.4
        assert_eq!(w.window_size(1_000_000), 493_790);
    }

    #[test]
    fn lr_schedule_warms_up_and_decays() {
        let s = LrSchedule { lr: 0.1, warmup_steps: 10, milestones: vec![(100, 0.1), (200, 0.1)] };
        assert!((s.at(0) - 0.01).abs() < 1e-12);
        assert!((s.at(9) - 0.1).abs() < 1e-12);
        assert!((s.at(99) - 0.1).abs() < 1e-12);
        assert!((s.at(100) - 0.01).abs() < 1e-12);
        assert!((s.at(250) - 0.001).abs() < 1e-12);
    }

    #[test]
    fn unknown_keys_are_rejected_and_defaults_fill_in() {
        let cfg: TrainerConfig = toml::from_str("batch_size = 32\n[net]\nblocks = 2\n").unwrap();
        assert_eq!(cfg.batch_size, 32);
        assert_eq!(cfg.net.blocks, 2);
        assert_eq!(cfg.net.channels, 64);
        assert!(toml::from_str::<TrainerConfig>("batch_sise = 32\n").is_err());
        let opt: TrainerConfig = toml::from_str("[optimizer]\nkind = \"adamw\"\n").unwrap();
        assert_eq!(opt.optimizer, OptimizerConfig::Adamw { beta1: 0.9, beta2: 0.999, eps: 1e-8, weight_decay: 0.01 });
    }
}
