//! Published models: the directory format, loading with validation, publishing generations, the
//! TorchScript export and the [`ModelEvaluator`].
//!
//! A model directory (`<run>/models/gen-NNNNNN/`) holds:
//! - `model.safetensors`: every network variable (weights and batch-norm running statistics),
//!   f32, keys as built by [`Net::new`];
//! - `config.json`: a [`ModelConfig`] (architecture, encoder version, rule, board size,
//!   generation);
//! - `model.pt`: TorchScript, `forward(planes: f32 [n, C, S, S], globals: f32 [n, G]) ->
//!   f32 [n, A + 3]`: columns `0..A` are the policy logits over the whole action space (DESIGN.md
//!   order), columns `A..A+3` the value logits win, draw, loss for the deciding player (softmax
//!   them for probabilities). Batch norm is in inference mode; runs on the CPU.
//!
//! A generation is published whole ([`publish_model`], through [`crate::generations`], which
//! owns the `models/` directory: `gen-NNNNNN` names, `LATEST`, pruning); an existing generation
//! is never replaced. Every file of it, `model.safetensors` included, is fsynced inside its
//! temporary directory before the rename ([`renju_fs::publish_dir`]), so a power loss never
//! leaves a generation directory with a short or empty weights file.

//!
//! Reading a model directory and the line-pattern table evaluator need no torch and are built
//! without the `torch` feature; the tch side (weights, tracing, publishing, [`ModelEvaluator`])
//! is in `torch.rs`, re-exported here.

#[cfg(feature = "torch")]
mod torch;
#[cfg(feature = "torch")]
pub use torch::*;

use crate::config::{DeviceChoice, NetConfig, NetKind};
use crate::generations::{read_latest, LATEST_FILE};
use crate::net::NetShape;
use anyhow::{bail, ensure, Context, Result};
use renju_rules::Rule;
use renju_selfplay::encode::ENCODER_VERSION;
use renju_selfplay::eval::Evaluator;
use renju_selfplay::linepattern::{LinePatternNet, LinePatternWeights, TABLE_FILE, TABLE_VERSION};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Value of [`ModelConfig::format`].
pub const MODEL_FORMAT: &str = "renju-zero-model";
/// Current [`ModelConfig::format_version`].
pub const MODEL_FORMAT_VERSION: u32 = 1;
/// File names inside a model directory.
pub const WEIGHTS_FILE: &str = "model.safetensors";
/// See the module docs.
pub const CONFIG_FILE: &str = "config.json";
/// See the module docs.
pub const TORCHSCRIPT_FILE: &str = "model.pt";

/// `config.json` of a model directory.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelConfig {
    /// Always [`MODEL_FORMAT`].
    pub format: String,
    /// [`MODEL_FORMAT_VERSION`].
    pub format_version: u32,
    /// Generation number (0 = the random initial network).
    pub generation: u64,
    /// `renju_selfplay::encode::ENCODER_VERSION` the network was trained on. It selects the
    /// input encoding when the model plays (every version of `SUPPORTED_VERSIONS` loads).
    pub encoder_version: u32,
    /// Rule variant of the training games.
    pub rule: Rule,
    /// Board side `S`.
    pub board_size: usize,
    /// Input/output dimensions.
    pub shape: NetShape,
    /// Architecture.
    pub net: NetConfig,
    /// Training steps behind these weights.
    pub trained_steps: u64,
    /// Training samples behind these weights (steps x batch size).
    pub trained_samples: u64,
    /// Human-readable description of `model.pt`'s output.
    pub torchscript_output: String,
    /// Line-pattern nets: the exported table ([`LineTableInfo`]); absent for residual nets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line_table: Option<LineTableInfo>,
}

/// The table file of a line-pattern generation, as recorded in its `config.json`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LineTableInfo {
    /// File name inside the generation ([`TABLE_FILE`]).
    pub file: String,
    /// Table layout version (1 to [`TABLE_VERSION`]: `LinePatternWeights::layout_version`).
    pub version: u32,
    /// SHA-256 of the tensors (`LinePatternWeights::checksum`), also in the file's metadata.
    pub checksum: String,
}

impl ModelConfig {
    /// A config for a network of the current encoder version.
    pub fn new(generation: u64, rule: Rule, board_size: usize, net: NetConfig) -> ModelConfig {
        ModelConfig::for_encoder(generation, rule, board_size, net, ENCODER_VERSION)
            .expect("the current encoder version is supported")
    }

    /// A config for a network of encoder `encoder_version` (its input shape,
    /// [`NetShape::for_version`]). Errors: a version this build does not know.
    pub fn for_encoder(
        generation: u64,
        rule: Rule,
        board_size: usize,
        net: NetConfig,
        encoder_version: u32,
    ) -> Result<ModelConfig> {
        let shape = NetShape::for_version(encoder_version, board_size)?;
        Ok(ModelConfig {
            format: MODEL_FORMAT.into(),
            format_version: MODEL_FORMAT_VERSION,
            generation,
            encoder_version,
            rule,
            board_size,
            shape,
            net,
            trained_steps: 0,
            trained_samples: 0,
            torchscript_output: format!(
                "forward(planes f32 [n,{},{s},{s}], globals f32 [n,{}]) -> f32 [n,{}]: columns 0..{} policy logits, then 3 value logits (win, draw, loss)",
                shape.planes, shape.globals, shape.actions + 3, shape.actions, s = board_size
            ),
            line_table: None,
        })
    }

    /// Reads and validates `<dir>/config.json`: format, an encoder version this build supports
    /// (`renju_selfplay::encode::SUPPORTED_VERSIONS`) and the shape that version and the board
    /// size give. Errors name the file.
    pub fn read(dir: &Path) -> Result<ModelConfig> {
        let path = dir.join(CONFIG_FILE);
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("missing or unreadable model config {}", path.display()))?;
        let cfg: ModelConfig =
            serde_json::from_str(&text).with_context(|| format!("corrupt model config {}", path.display()))?;
        ensure!(
            cfg.format == MODEL_FORMAT && cfg.format_version == MODEL_FORMAT_VERSION,
            "{}: format {} v{} is not {MODEL_FORMAT} v{MODEL_FORMAT_VERSION}",
            path.display(),
            cfg.format,
            cfg.format_version
        );
        let want = NetShape::for_version(cfg.encoder_version, cfg.board_size)
            .with_context(|| format!("{}: the model cannot be played by this build", path.display()))?;
        ensure!(
            cfg.shape == want,
            "{}: model shape {:?} does not match the current encoder/action space {:?}",
            path.display(),
            cfg.shape,
            want
        );
        Ok(cfg)
    }
}

/// If `dir` has no `config.json` but a `LATEST` pointer, the directory it points to; else `dir`.
/// Lets a caller pass either `models/gen-000012` or `models`.
pub fn resolve_model_dir(dir: &Path) -> Result<PathBuf> {
    if dir.join(CONFIG_FILE).exists() {
        return Ok(dir.to_path_buf());
    }
    if let Some(name) = read_latest(dir)? {
        return Ok(dir.join(name));
    }
    if !dir.exists() {
        bail!("model directory {} does not exist", dir.display());
    }
    bail!("{} is not a model directory: it has neither {CONFIG_FILE} nor {LATEST_FILE}", dir.display())
}

/// Loads the table of a line-pattern generation (or a models directory with `LATEST`) for the
/// torch-free evaluator. Errors when the model is not a line-pattern net (naming its kind), when
/// `config.json` records no table, or when the table's version or checksum disagrees with it.
/// A table already loaded by this process (same directory, same checksum in `config.json`) is
/// shared instead of read again (the arena builds an evaluator per game); the process keeps the
/// [`LINE_TABLE_CACHE`] most recently used ones (a run publishes a generation every few
/// seconds, and a cache that kept them all held 17 MB per generation).
pub fn load_line_table(dir: &Path) -> Result<Arc<LinePatternNet>> {
    type Stamp = (String, u64, Option<std::time::SystemTime>);
    type Cache = std::sync::Mutex<Vec<(PathBuf, Stamp, Arc<LinePatternNet>)>>;
    static CACHE: std::sync::OnceLock<Cache> = std::sync::OnceLock::new();
    let dir = resolve_model_dir(dir)?;
    let key = dir.canonicalize().unwrap_or_else(|_| dir.clone());
    let cache = CACHE.get_or_init(Default::default);
    // The checksum config.json records, and the table file's length and modification time.
    let stamp = |sum: String| -> Stamp {
        let meta = std::fs::metadata(dir.join(TABLE_FILE)).ok();
        (sum, meta.as_ref().map_or(0, |m| m.len()), meta.and_then(|m| m.modified().ok()))
    };
    let recorded = ModelConfig::read(&dir)?.line_table.map(|t| stamp(t.checksum));
    if let (Some(want), Ok(mut c)) = (&recorded, cache.lock()) {
        if let Some(i) = c.iter().position(|(k, s, _)| k == &key && s == want) {
            let hit = c.remove(i);
            let net = hit.2.clone();
            c.push(hit); // most recently used last
            return Ok(net);
        }
    }
    let net = read_line_table(&dir)?;
    if let Ok(mut c) = cache.lock() {
        c.retain(|(k, _, _)| k != &key);
        c.push((key, stamp(net.checksum().to_string()), net.clone()));
        let excess = c.len().saturating_sub(LINE_TABLE_CACHE);
        c.drain(..excess);
    }
    Ok(net)
}

/// How many loaded line-pattern nets [`load_line_table`] keeps for reuse.
pub const LINE_TABLE_CACHE: usize = 4;

fn read_line_table(dir: &Path) -> Result<Arc<LinePatternNet>> {
    let config = ModelConfig::read(dir)?;
    ensure!(
        config.net.kind == NetKind::Linepattern,
        "{}: the model is a {:?} net, not a line-pattern net",
        dir.display(),
        config.net.kind
    );
    let info = config
        .line_table
        .as_ref()
        .with_context(|| format!("{}: config.json records no line-pattern table", dir.display()))?;
    ensure!(
        (1..=TABLE_VERSION).contains(&info.version),
        "{}: table version {} but this build reads versions 1 to {TABLE_VERSION}",
        dir.display(),
        info.version
    );
    let weights = LinePatternWeights::read(&dir.join(&info.file))?;
    ensure!(
        weights.board_size == config.board_size
            && weights.features == config.net.line_features
            && weights.policy_pointwise() == config.net.policy_pointwise,
        "{}: the table (side {}, F {}, policy_pointwise {}) does not match config.json (side {}, F {}, policy_pointwise {})",
        dir.display(),
        weights.board_size,
        weights.features,
        weights.policy_pointwise(),
        config.board_size,
        config.net.line_features,
        config.net.policy_pointwise
    );
    // The net computes the checksum once (a SHA-256 over the 17 MB table, on every generation a
    // self-play process picks up); compare that instead of computing it again here.
    let net = LinePatternNet::new(weights).with_context(|| format!("loading {}", dir.display()))?;
    ensure!(
        net.checksum() == info.checksum,
        "{}: the table's checksum does not match the one config.json records",
        dir.join(&info.file).display()
    );
    Ok(net)
}

/// The search evaluator of a published model, chosen by the kind stored with it: the table
/// evaluator (no torch, CPU) for line-pattern nets, the tch [`ModelEvaluator`] on `device` for
/// residual nets (a build without the `torch` feature refuses those: [`check_playable`]).
/// Returns the model's config too.
pub fn load_evaluator(dir: &Path, device: DeviceChoice) -> Result<(Box<dyn Evaluator>, ModelConfig)> {
    let (resolved, config) = check_playable(dir)?;
    Ok(match config.net.kind {
        NetKind::Linepattern => (Box::new(load_line_table(&resolved)?.evaluator()), config),
        #[cfg(feature = "torch")]
        NetKind::Resnet => (Box::new(ModelEvaluator::load(&resolved, device.resolve()?)?), config),
        #[cfg(not(feature = "torch"))]
        NetKind::Resnet => unreachable!("check_playable refuses residual nets without torch ({device:?})"),
    })
}

/// Resolves `dir` ([`resolve_model_dir`]) and reads its config; in a build without the `torch`
/// feature, refuses a residual (ResNet) net, saying what to do. What commands call before they
/// start, so that a model this build cannot play fails at once.
pub fn check_playable(dir: &Path) -> Result<(PathBuf, ModelConfig)> {
    let resolved = resolve_model_dir(dir)?;
    let config = ModelConfig::read(&resolved)?;
    #[cfg(not(feature = "torch"))]
    ensure!(
        config.net.kind != NetKind::Resnet,
        "{}: a residual (ResNet) net needs libtorch, and this renju-zero was built without the \
         torch feature; build it with the default features, or use a line-pattern model",
        resolved.display()
    );
    Ok((resolved, config))
}

/// When the model directory `dir` was written: the modification time of its `config.json`,
/// which is written once and never replaced.
pub fn published_at(dir: &Path) -> Result<std::time::SystemTime> {
    let p = dir.join(CONFIG_FILE);
    std::fs::metadata(&p).and_then(|m| m.modified()).with_context(|| format!("reading the time of {}", p.display()))
}

/// The one model loader of the commands and the pipeline: builds a
/// [`renju_selfplay::eval::EvaluatorLoader`] that loads `model:DIR` specs (a generation directory,
/// or a models directory with `LATEST`) by the kind stored with them ([`load_evaluator`]): a
/// line-pattern net as its torch-free table evaluator, a residual net as a [`ModelEvaluator`] on
/// `device` (the configured one: `training.device` in the pipeline, `auto` for the commands).
pub fn evaluator_loader(device: DeviceChoice) -> impl Fn(&Path, usize) -> Result<Box<dyn Evaluator>> + Sync {
    move |dir: &Path, _size: usize| -> Result<Box<dyn Evaluator>> { Ok(load_evaluator(dir, device)?.0) }
}
