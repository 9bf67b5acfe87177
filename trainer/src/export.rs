//! Exporting a published model to a single file (the library side of `renju-zero export`).

use crate::model::{load_model, trace_torchscript};
use anyhow::{ensure, Context, Result};
use renju_fs::write_atomic_with;
use std::path::Path;

/// Export formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExportFormat {
    /// TorchScript module, output `[n, A + 3]` (see [`crate::model`]).
    TorchScript,
    /// The network variables as safetensors (f32), keys as in `model.safetensors`.
    Safetensors,
    /// ONNX in the interface of Rapfi's ONNX Runtime evaluator (see [`crate::onnx`]).
    Onnx,
}

/// Loads the model in `model_dir` (a generation directory, or a models directory with
/// `LATEST`) on the CPU and writes it to `out` in `format` (temp file + rename). Refuses to
/// overwrite an existing `out`. ONNX runs the Python on PATH ([`crate::onnx::export_onnx`]).
pub fn export(model_dir: &Path, format: ExportFormat, out: &Path) -> Result<()> {
    ensure!(!out.exists(), "{} already exists; refusing to overwrite it", out.display());
    if format == ExportFormat::Onnx {
        return crate::onnx::export_onnx(model_dir, out, crate::onnx::DEFAULT_PYTHON.as_ref()).map(|_| ());
    }
    let mut m = load_model(model_dir, tch::Device::Cpu)?;
    m.vs.freeze();
    match format {
        ExportFormat::TorchScript => {
            let module = trace_torchscript(&m.net)?;
            write_atomic_with(out, |tmp| module.save(tmp).map_err(Into::into))
        }
        ExportFormat::Safetensors => write_atomic_with(out, |tmp| {
            // tch picks the format from the extension, so write through a `.safetensors` name.
            let st = tmp.with_extension("tmp.safetensors");
            m.vs.save(&st)?;
            std::fs::rename(&st, tmp).with_context(|| format!("renaming {}", st.display()))
        }),
        ExportFormat::Onnx => unreachable!("handled above"),
    }
    .with_context(|| format!("exporting {} to {}", m.dir.display(), out.display()))
}
