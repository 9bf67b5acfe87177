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

use crate::config::{NetConfig, NetKind};
use crate::generations::{publish_generation, read_latest, LATEST_FILE};
use crate::net::{Net, NetShape};
use anyhow::{bail, ensure, Context, Result};
use renju_fs::write_atomic;
use renju_rules::Rule;
use renju_selfplay::encode::{planes_for_version, ENCODER_VERSION};
use renju_selfplay::eval::{check_inputs, EvalOutput, Evaluator};
use renju_selfplay::linepattern::{LinePatternNet, LinePatternWeights, TABLE_FILE, TABLE_VERSION};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tch::{nn, CModule, Device, Kind, Tensor};

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
    /// Table layout version ([`TABLE_VERSION`]).
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

/// Loads `path` (safetensors) into every variable of `vs`, checking that each variable is
/// present with the right shape and that the file has no extra tensors. Errors name the file.
pub fn load_weights(vs: &nn::VarStore, path: &Path) -> Result<()> {
    ensure!(path.exists(), "missing model weights {}", path.display());
    let named = Tensor::read_safetensors(path)
        .map_err(|e| anyhow::anyhow!("{e}"))
        .with_context(|| format!("corrupt model weights {} (not a readable safetensors file)", path.display()))?;
    let mut named: HashMap<String, Tensor> = named.into_iter().collect();
    let mut vars: Vec<(String, Tensor)> = vs.variables().into_iter().collect();
    vars.sort_by(|a, b| a.0.cmp(&b.0));
    for (name, mut var) in vars {
        let src = named
            .remove(&name)
            .with_context(|| format!("{}: tensor '{name}' missing (architecture mismatch?)", path.display()))?;
        ensure!(
            src.size() == var.size(),
            "{}: tensor '{name}' has shape {:?}, the network expects {:?}",
            path.display(),
            src.size(),
            var.size()
        );
        tch::no_grad(|| var.copy_(&src.to_kind(var.kind()).to_device(var.device())));
    }
    if let Some(extra) = named.keys().next() {
        bail!("{}: unexpected tensor '{extra}' (architecture mismatch?)", path.display());
    }
    Ok(())
}

/// A network with its variables and config, as loaded from a model directory.
pub struct LoadedModel {
    /// The variables (on the requested device, f32).
    pub vs: nn::VarStore,
    /// The network.
    pub net: Net,
    /// The model's `config.json`.
    pub config: ModelConfig,
    /// The resolved model directory.
    pub dir: PathBuf,
}

/// Loads a model directory (or a models directory with `LATEST`) onto `device`, in f32.
/// Errors: missing/corrupt `config.json` or `model.safetensors`, encoder-version mismatch,
/// architecture mismatch; each names the file.
pub fn load_model(dir: &Path, device: Device) -> Result<LoadedModel> {
    let dir = resolve_model_dir(dir)?;
    let config = ModelConfig::read(&dir)?;
    let weights = dir.join(WEIGHTS_FILE);
    let cfg_path = dir.join(CONFIG_FILE);
    config.net.validate().with_context(|| format!("{}: bad architecture", cfg_path.display()))?;
    // Weights are stored as f16 at the least: 2 bytes each. (A missing file is load_weights's
    // error below.)
    // The bound counts the residual tower's weights; other kinds are sized by their own tables.
    let meta = std::fs::metadata(&weights).ok().filter(|_| config.net.kind == crate::config::NetKind::Resnet);
    if let Some(meta) = meta {
        let have = meta.len() as u128;
        ensure!(
            config.net.min_weights() * 2 <= have,
            "corrupt model weights {} or config {}: the architecture ({} blocks x {} channels) needs at least {} \
             weights, more than the weights file ({have} bytes) holds",
            weights.display(),
            cfg_path.display(),
            config.net.blocks,
            config.net.channels,
            config.net.min_weights()
        );
    }
    let vs = nn::VarStore::new(device);
    let net = Net::new(&vs.root(), &config.net, config.shape)
        .with_context(|| format!("{}: bad architecture", dir.join(CONFIG_FILE).display()))?;
    load_weights(&vs, &dir.join(WEIGHTS_FILE))?;
    Ok(LoadedModel { vs, net, config, dir })
}

/// Traces `net` (which must live on the CPU, f32, in a frozen `VarStore`) into a TorchScript module with the output
/// layout of the module docs.
pub fn trace_torchscript(net: &Net) -> Result<CModule> {
    let s = net.shape();
    let planes = Tensor::zeros([2, s.planes as i64, s.size as i64, s.size as i64], (Kind::Float, Device::Cpu));
    let globals = Tensor::zeros([2, s.globals as i64], (Kind::Float, Device::Cpu));
    let module = tch::no_grad(|| {
        CModule::create_by_tracing("RenjuNet", "forward", &[planes, globals], &mut |inp| {
            vec![net.forward_export(&inp[0], &inp[1])]
        })
    })?;
    Ok(module)
}

/// Writes the files of a model directory into `dir` (which must exist): weights, config,
/// TorchScript, and for a line-pattern net its table ([`TABLE_FILE`], recorded with its version
/// and checksum in `config.json`). `vs`/`net` may live on any device; a CPU f32 copy is traced.
pub fn write_model_files(dir: &Path, vs: &nn::VarStore, config: &ModelConfig) -> Result<()> {
    let mut cpu = nn::VarStore::new(Device::Cpu);
    let cpu_net = Net::new(&cpu.root(), &config.net, config.shape)?;
    cpu.copy(vs).context("copying the network to the CPU")?;
    cpu.float();
    cpu.freeze(); // tracing embeds the weights as constants, which must not require grad
    let weights = dir.join(WEIGHTS_FILE);
    cpu.save(&weights).with_context(|| format!("writing {}", weights.display()))?;
    let mut config = config.clone();
    if let Net::Line(line) = &cpu_net {
        let table = line.export().context("tabulating the line-pattern net")?;
        write_atomic(&dir.join(TABLE_FILE), &table.to_bytes()?)?;
        config.line_table =
            Some(LineTableInfo { file: TABLE_FILE.into(), version: TABLE_VERSION, checksum: table.checksum() });
    }
    let json = serde_json::to_string_pretty(&config)?;
    write_atomic(&dir.join(CONFIG_FILE), json.as_bytes())?;
    let pt = dir.join(TORCHSCRIPT_FILE);
    let module = trace_torchscript(&cpu_net).context("tracing the TorchScript module")?;
    module.save(&pt).with_context(|| format!("writing {}", pt.display()))?;
    Ok(())
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
        info.version == TABLE_VERSION,
        "{}: table version {} but this build reads {TABLE_VERSION}",
        dir.display(),
        info.version
    );
    let weights = LinePatternWeights::read(&dir.join(&info.file))?;
    ensure!(
        weights.board_size == config.board_size && weights.features == config.net.line_features,
        "{}: the table (side {}, F {}) does not match config.json (side {}, F {})",
        dir.display(),
        weights.board_size,
        weights.features,
        config.board_size,
        config.net.line_features
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
/// residual nets. Returns the model's config too.
pub fn load_evaluator(dir: &Path, device: Device) -> Result<(Box<dyn Evaluator>, ModelConfig)> {
    let resolved = resolve_model_dir(dir)?;
    let config = ModelConfig::read(&resolved)?;
    Ok(match config.net.kind {
        NetKind::Linepattern => (Box::new(load_line_table(&resolved)?.evaluator()), config),
        NetKind::Resnet => (Box::new(ModelEvaluator::load(&resolved, device)?), config),
    })
}

/// Publishes `vs` as generation `config.generation` under `models_dir`
/// ([`publish_generation`]: the files of [`write_model_files`] in a temporary directory renamed
/// to `gen-NNNNNN`, refusing to replace an existing one, then `LATEST`). Returns the new
/// directory.
pub fn publish_model(models_dir: &Path, vs: &nn::VarStore, config: &ModelConfig) -> Result<PathBuf> {
    publish_generation(models_dir, config.generation, |dir| write_model_files(dir, vs, config))
}

/// When the model directory `dir` was written: the modification time of its `config.json`,
/// which is written once and never replaced.
pub fn published_at(dir: &Path) -> Result<std::time::SystemTime> {
    let p = dir.join(CONFIG_FILE);
    std::fs::metadata(&p).and_then(|m| m.modified()).with_context(|| format!("reading the time of {}", p.display()))
}

/// The network as a search [`Evaluator`]: inference under `no_grad` with batch norm in
/// inference mode. On CUDA the weights and inputs are converted to f16 (half precision); on the
/// CPU everything is f32. Not `Sync` (tch tensors are not); the inference server owns it on one
/// thread.
pub struct ModelEvaluator {
    /// Owns the network's variables (the net holds views of them); never read directly.
    _vs: nn::VarStore,
    net: Net,
    config: ModelConfig,
    device: Device,
    kind: Kind,
    /// libtorch intra-op threads to set on the evaluating thread at the next evaluation.
    threads: Option<usize>,
}

impl ModelEvaluator {
    /// Loads a model directory (or a models directory with `LATEST`, see
    /// [`resolve_model_dir`]) onto `device`. Errors as [`load_model`].
    pub fn load(dir: &Path, device: Device) -> Result<ModelEvaluator> {
        let LoadedModel { mut vs, net, config, .. } = load_model(dir, device)?;
        vs.freeze();
        let kind = if device.is_cuda() { Kind::Half } else { Kind::Float };
        if kind == Kind::Half {
            vs.half();
        }
        Ok(ModelEvaluator { _vs: vs, net, config, device, kind, threads: None })
    }

    /// Makes the evaluating thread use `threads` libtorch intra-op threads (set by the first
    /// evaluation, on the thread that runs it: the inference server's); 0 keeps the default.
    pub fn with_intra_op_threads(mut self, threads: usize) -> ModelEvaluator {
        self.threads = (threads > 0).then_some(threads);
        self
    }

    /// The model's config.
    pub fn config(&self) -> &ModelConfig {
        &self.config
    }

    /// The model's generation.
    pub fn generation(&self) -> u64 {
        self.config.generation
    }

    /// The device inference runs on.
    pub fn device(&self) -> Device {
        self.device
    }

    /// Raw forward on prepared tensors (`[n, C, S, S]`, `[n, G]` on the device, of the
    /// evaluator's kind): `(policy logits [n, A], value logits [n, 3])`. For benchmarks.
    pub fn forward_tensors(&self, planes: &Tensor, globals: &Tensor) -> (Tensor, Tensor) {
        tch::no_grad(|| self.net.forward(planes, globals, false))
    }

    /// The kind inputs must have for [`Self::forward_tensors`].
    pub fn kind(&self) -> Kind {
        self.kind
    }
}

impl Evaluator for ModelEvaluator {
    fn evaluate(&mut self, planes: &[f32], globals: &[f32], n: usize) -> Result<EvalOutput> {
        check_inputs(planes, globals, n, self.config.board_size)?;
        if let Some(t) = self.threads.take() {
            tch::set_num_threads(t as i32);
        }
        if n == 0 {
            return Ok(EvalOutput::default());
        }
        let s = self.config.shape;
        // The stored encoder version selects the model's input planes.
        let planes = planes_for_version(self.config.encoder_version, planes, globals, n, s.size)?;
        let pl = Tensor::from_slice(&planes)
            .view([n as i64, s.planes as i64, s.size as i64, s.size as i64])
            .to_device(self.device)
            .to_kind(self.kind);
        let gl =
            Tensor::from_slice(globals).view([n as i64, s.globals as i64]).to_device(self.device).to_kind(self.kind);
        let (p, v) = self.forward_tensors(&pl, &gl);
        let p = p.to_kind(Kind::Float).to_device(Device::Cpu).flatten(0, -1);
        let wdl = v.to_kind(Kind::Float).softmax(-1, Kind::Float).to_device(Device::Cpu).flatten(0, -1);
        Ok(EvalOutput {
            policy_logits: Vec::<f32>::try_from(&p).context("copying policy logits")?,
            wdl: Vec::<f32>::try_from(&wdl).context("copying value")?,
        })
    }

    fn board_size(&self) -> usize {
        self.config.board_size
    }
}

/// The one model loader of the commands and the pipeline: builds a
/// [`renju_selfplay::eval::EvaluatorLoader`] that loads `model:DIR` specs (a generation directory,
/// or a models directory with `LATEST`) by the kind stored with them ([`load_evaluator`]): a
/// line-pattern net as its torch-free table evaluator, a residual net as a [`ModelEvaluator`] on
/// `device` (the configured one: `training.device` in the pipeline, `auto` for the commands).
pub fn evaluator_loader(device: Device) -> impl Fn(&Path, usize) -> Result<Box<dyn Evaluator>> + Sync {
    move |dir: &Path, _size: usize| -> Result<Box<dyn Evaluator>> { Ok(load_evaluator(dir, device)?.0) }
}
