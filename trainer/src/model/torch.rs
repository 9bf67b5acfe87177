//! The tch side of a model directory: loading weights into a network, TorchScript tracing,
//! writing and publishing a generation, and the [`ModelEvaluator`].

use super::{resolve_model_dir, LineTableInfo, ModelConfig, CONFIG_FILE, TORCHSCRIPT_FILE, WEIGHTS_FILE};
use crate::generations::publish_generation;
use crate::net::Net;
use anyhow::{bail, ensure, Context, Result};
use renju_fs::write_atomic;
use renju_selfplay::encode::planes_for_version;
use renju_selfplay::eval::{check_inputs, EvalOutput, Evaluator};
use renju_selfplay::linepattern::TABLE_FILE;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use tch::{nn, CModule, Device, Kind, Tensor};

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
        config.line_table = Some(LineTableInfo {
            file: TABLE_FILE.into(),
            version: table.layout_version(),
            checksum: table.checksum(),
        });
    }
    let json = serde_json::to_string_pretty(&config)?;
    write_atomic(&dir.join(CONFIG_FILE), json.as_bytes())?;
    let pt = dir.join(TORCHSCRIPT_FILE);
    let module = trace_torchscript(&cpu_net).context("tracing the TorchScript module")?;
    module.save(&pt).with_context(|| format!("writing {}", pt.display()))?;
    Ok(())
}

/// Publishes `vs` as generation `config.generation` under `models_dir`
/// ([`publish_generation`]: the files of [`write_model_files`] in a temporary directory renamed
/// to `gen-NNNNNN`, refusing to replace an existing one, then `LATEST`). Returns the new
/// directory.
pub fn publish_model(models_dir: &Path, vs: &nn::VarStore, config: &ModelConfig) -> Result<PathBuf> {
    publish_generation(models_dir, config.generation, |dir| write_model_files(dir, vs, config))
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
