//! `renju-zero export --model DIR --format torchscript|safetensors|onnx|table-i16 --out PATH`: writes a
//! published model (a `models/gen-NNNNNN` directory, or a `models` directory with `LATEST`) as
//! one file. The TorchScript module maps `planes f32 [n, C, S, S]` and `globals f32 [n, G]` to
//! `f32 [n, A + 3]` (policy logits, then win/draw/loss value logits); see
//! `renju_trainer::model`. ONNX is the interface of Rapfi's ONNX Runtime evaluator, for other
//! engines (`renju_trainer::onnx`, docs/onnx-export.md).

use renju_selfplay::linepattern::{LinePatternWeights, TABLE_FILE};
use renju_trainer::export::{export, ExportFormat};
use renju_trainer::model::resolve_model_dir;
use renju_trainer::onnx::{export_onnx, DEFAULT_PYTHON};
use std::path::PathBuf;

/// Arguments of `renju-zero export`.
#[derive(clap::Args)]
pub struct ExportArgs {
    /// Model directory (`<run>/models/gen-NNNNNN`) or models directory (follows `LATEST`).
    #[arg(long)]
    pub model: PathBuf,
    /// Output format (`onnx`: Rapfi's ONNX interface; needs Python with torch and onnx, see
    /// `--python`).
    #[arg(long, value_enum, default_value_t = FormatArg::Torchscript)]
    pub format: FormatArg,
    /// Output file (must not exist).
    #[arg(long)]
    pub out: PathBuf,
    /// `--format onnx`: the Python that runs torch's ONNX exporter (it must import torch and
    /// onnx; `source scripts/env.sh` puts the project's .venv first on PATH).
    #[arg(long, default_value = DEFAULT_PYTHON)]
    pub python: PathBuf,
}

/// The values of `--format`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum FormatArg {
    /// A TorchScript module (`model.pt`'s format).
    Torchscript,
    /// The network's variables as safetensors (f32).
    Safetensors,
    /// ONNX in the interface of Rapfi's ONNX Runtime evaluator (docs/onnx-export.md).
    Onnx,
    /// A line-pattern generation's table in the compact form of the shipped model (i16 table,
    /// gzip; `models/renju-15-rif/linepattern.safetensors.gz`).
    TableI16,
}

impl From<FormatArg> for ExportFormat {
    fn from(f: FormatArg) -> ExportFormat {
        match f {
            FormatArg::Torchscript => ExportFormat::TorchScript,
            FormatArg::Safetensors => ExportFormat::Safetensors,
            FormatArg::Onnx => ExportFormat::Onnx,
            FormatArg::TableI16 => unreachable!("the compact table is written by `run` itself"),
        }
    }
}

/// Run the command; returns the process exit code.
pub fn run(args: ExportArgs) -> anyhow::Result<i32> {
    // Name the generation that was written, also when `--model` is a `models/` directory.
    let dir = resolve_model_dir(&args.model)?;
    if args.format == FormatArg::TableI16 {
        let table = dir.join(TABLE_FILE);
        anyhow::ensure!(
            table.is_file(),
            "{}: no {TABLE_FILE}; --format table-i16 needs a line-pattern generation",
            dir.display()
        );
        anyhow::ensure!(!args.out.exists(), "{} exists already; choose another --out", args.out.display());
        let w = LinePatternWeights::read(&table)?;
        let bytes = w.to_compact_bytes()?;
        renju_fs::write_atomic(&args.out, &bytes)?;
        println!(
            "exported {} as the compact i16 table ({} bytes) to {}",
            dir.display(),
            bytes.len(),
            args.out.display()
        );
        return Ok(0);
    }
    let format = ExportFormat::from(args.format);
    if format == ExportFormat::Onnx {
        let (cfg, version) = export_onnx(&dir, &args.out, args.python.as_os_str())?;
        println!(
            "exported {} as ONNX for Rapfi ({:?}, {}x{}, model_version {:#018x}) to {}",
            dir.display(),
            cfg.rule,
            cfg.board_size,
            cfg.board_size,
            version.to_i64(),
            args.out.display()
        );
        return Ok(0);
    }
    export(&dir, format, &args.out)?;
    println!("exported {} as {format:?} to {}", dir.display(), args.out.display());
    Ok(0)
}
