//! `renju-zero export --model DIR --format torchscript|safetensors --out PATH`: writes a
//! published model (a `models/gen-NNNNNN` directory, or a `models` directory with `LATEST`) as
//! one file. The TorchScript module maps `planes f32 [n, C, S, S]` and `globals f32 [n, G]` to
//! `f32 [n, A + 3]` (policy logits, then win/draw/loss value logits); see
//! `renju_trainer::model`.

use renju_trainer::export::{export, ExportFormat};
use renju_trainer::model::resolve_model_dir;
use std::path::PathBuf;

/// Arguments of `renju-zero export`.
#[derive(clap::Args)]
pub struct ExportArgs {
    /// Model directory (`<run>/models/gen-NNNNNN`) or models directory (follows `LATEST`).
    #[arg(long)]
    pub model: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value_t = FormatArg::Torchscript)]
    pub format: FormatArg,
    /// Output file (must not exist).
    #[arg(long)]
    pub out: PathBuf,
}

/// The values of `--format`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum FormatArg {
    /// A TorchScript module (`model.pt`'s format).
    Torchscript,
    /// The network's variables as safetensors (f32).
    Safetensors,
}

impl From<FormatArg> for ExportFormat {
    fn from(f: FormatArg) -> ExportFormat {
        match f {
            FormatArg::Torchscript => ExportFormat::TorchScript,
            FormatArg::Safetensors => ExportFormat::Safetensors,
        }
    }
}

/// Run the command; returns the process exit code.
pub fn run(args: ExportArgs) -> anyhow::Result<i32> {
    // Name the generation that was written, also when `--model` is a `models/` directory.
    let dir = resolve_model_dir(&args.model)?;
    let format = ExportFormat::from(args.format);
    export(&dir, format, &args.out)?;
    println!("exported {} as {format:?} to {}", dir.display(), args.out.display());
    Ok(0)
}
