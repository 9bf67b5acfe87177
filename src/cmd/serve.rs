//! `renju-zero serve`: the board in the browser (library: `renju_zero::serve`; the page and its
//! API are described there and in docs/commands.md).

use std::path::PathBuf;

use anyhow::Result;
use renju_arena::analysis::Output;
use renju_selfplay::eval::EvaluatorSpec;

use crate::cmd::analyze::EngineArgs;

/// Arguments of `renju-zero serve`.
#[derive(clap::Args)]
pub struct ServeArgs {
    /// Address to listen on (127.0.0.1: this machine only; 0.0.0.0 opens it to the network).
    #[arg(long, default_value = "127.0.0.1")]
    pub host: String,
    /// Port to listen on (0: any free port; the address is printed on stderr).
    #[arg(long, default_value_t = 8080)]
    pub port: u16,
    /// A run directory whose games, generations and learning curve the page may show
    /// (repeatable). Only these directories are read.
    #[arg(long = "run")]
    pub runs: Vec<PathBuf>,
    #[command(flatten)]
    pub engine: EngineArgs,
}

/// Run the command; returns the process exit code (it serves until stopped).
pub fn run(args: ServeArgs) -> Result<i32> {
    // The listening line names the model (the shipped one too): no separate notice.
    let spec = args.engine.spec(None)?;
    let model = match &spec {
        EvaluatorSpec::Shipped => crate::cmd::shipped_model_named(),
        EvaluatorSpec::Model(dir) => dir.display().to_string(),
        other => other.to_string(),
    };
    let cfg = renju_zero::serve::ServeConfig { host: args.host, port: args.port, model, runs: args.runs };
    let engine_args = &args.engine;
    renju_zero::serve::run(cfg, |out: Output| engine_args.engine(spec, out))?;
    Ok(0)
}
