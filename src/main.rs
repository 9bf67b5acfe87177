//! `renju-zero`: the command-line interface. Each subcommand's arguments and logic live in its
//! own module (`src/cmd/*.rs`); the pipeline they drive is the library (`src/lib.rs`); this file
//! only dispatches.

use clap::{Parser, Subcommand};

mod cmd;

/// Self-play reinforcement learning for renju.
#[derive(Parser)]
#[command(name = "renju-zero", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Rules utilities: show a position with forbidden points, classify moves, solve VCF (JSON
    /// lines), list the 26 openings.
    Rules(cmd::rules::RulesArgs),
    /// Play self-play games and write training shards.
    #[cfg(feature = "torch")]
    Selfplay(cmd::selfplay::SelfplayArgs),
    #[cfg(not(feature = "torch"))]
    #[command(disable_help_flag = true, about = "Not in this build: needs libtorch (the default torch feature)")]
    Selfplay(NeedsTorch),
    /// The main job: self-play, training and publishing in one resumable loop.
    #[cfg(feature = "torch")]
    Train(cmd::train::TrainArgs),
    #[cfg(not(feature = "torch"))]
    #[command(disable_help_flag = true, about = "Not in this build: needs libtorch (the default torch feature)")]
    Train(NeedsTorch),
    /// The training half of `train` alone, on a run directory that self-play processes feed.
    #[cfg(feature = "torch")]
    Trainer(cmd::train::TrainerArgs),
    #[cfg(not(feature = "torch"))]
    #[command(disable_help_flag = true, about = "Not in this build: needs libtorch (the default torch feature)")]
    Trainer(NeedsTorch),
    /// Check a run directory's invariants (generations, models, shards, logs); exit 1 if broken.
    #[cfg(feature = "torch")]
    CheckRun(cmd::train::CheckRunArgs),
    #[cfg(not(feature = "torch"))]
    #[command(disable_help_flag = true, about = "Not in this build: needs libtorch (the default torch feature)")]
    CheckRun(NeedsTorch),
    /// Export a published model to one file (TorchScript or safetensors).
    #[cfg(feature = "torch")]
    Export(cmd::export::ExportArgs),
    #[cfg(not(feature = "torch"))]
    #[command(disable_help_flag = true, about = "Not in this build: needs libtorch (the default torch feature)")]
    Export(NeedsTorch),
    /// Matches between players: W/D/L per pair, Bradley-Terry ratings, optional SPRT.
    Arena(cmd::arena::ArenaArgs),
    /// The learning curve of a run: published generations against fixed opponents in the
    /// training distribution (curve.csv, curve.svg).
    Curve(cmd::curve::CurveArgs),
    /// Game records: export `arena`/`curve` games and self-play shards as SGF or Piskvork .psq.
    Games(cmd::games::GamesArgs),
    /// Opening-balance study of the 26 openings against the published assessments.
    Openings(cmd::openings::OpeningsArgs),
    /// A Gomocup (Piskvork protocol) brain on stdin/stdout.
    ///
    /// The rule is freestyle (five or more wins) until the manager sends `INFO rule 4` (renju) or
    /// `INFO rule 1` (standard), as the protocol has it; without `INFO rule` the brain says so in
    /// a MESSAGE before its first move. Started as `pbrain-renju-zero` it needs no arguments.
    Gomocup(cmd::gomocup::GomocupArgs),
    /// An analysis engine on stdin/stdout: one JSON query per line, JSON answers with the
    /// candidates, values, principal variations, Black's forbidden points and VCF lines.
    Analyze(cmd::analyze::AnalyzeArgs),
    /// A board in the browser: play the AI under any rule and opening protocol, analyse
    /// positions, replay and follow runs (http://127.0.0.1:8080/ by default).
    Serve(cmd::serve::ServeArgs),
}

// The arguments of a command that needs libtorch, in a build without it: taken as they come,
// so that the command answers that it needs the torch build whatever it was given.
#[cfg(not(feature = "torch"))]
#[derive(clap::Args)]
struct NeedsTorch {
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, hide = true)]
    _args: Vec<std::ffi::OsString>,
}

fn main() {
    // Started as `pbrain-renju-zero` (no arguments, as engine managers start brains).
    let argv0 = std::path::PathBuf::from(std::env::args_os().next().unwrap_or_default());
    let pbrain = argv0.file_name().is_some_and(|n| n.to_string_lossy().starts_with("pbrain-"));
    // The brain with every default, its model found by `pbrain_model`.
    let result = if pbrain {
        let model = cmd::gomocup::pbrain_model(&argv0);
        dispatch(Cli::parse_from([
            std::ffi::OsString::from("renju-zero"),
            "gomocup".into(),
            "--model".into(),
            model.into(),
        ]))
    } else {
        dispatch(Cli::parse())
    };
    match result {
        Ok(code) => std::process::exit(code),
        Err(err) => {
            renju_zero::pipeline::say(&format!("error: {err:#}"));
            std::process::exit(2);
        }
    }
}

fn dispatch(cli: Cli) -> anyhow::Result<i32> {
    match cli.command {
        Command::Rules(args) => cmd::rules::run(args),
        #[cfg(feature = "torch")]
        Command::Selfplay(args) => cmd::selfplay::run(args),
        #[cfg(not(feature = "torch"))]
        Command::Selfplay(_) => cmd::needs_torch("selfplay"),
        #[cfg(feature = "torch")]
        Command::Train(args) => cmd::train::run(args),
        #[cfg(not(feature = "torch"))]
        Command::Train(_) => cmd::needs_torch("train"),
        #[cfg(feature = "torch")]
        Command::Trainer(args) => cmd::train::run_trainer(args),
        #[cfg(not(feature = "torch"))]
        Command::Trainer(_) => cmd::needs_torch("trainer"),
        #[cfg(feature = "torch")]
        Command::CheckRun(args) => cmd::train::run_check(args),
        #[cfg(not(feature = "torch"))]
        Command::CheckRun(_) => cmd::needs_torch("check-run"),
        #[cfg(feature = "torch")]
        Command::Export(args) => cmd::export::run(args),
        #[cfg(not(feature = "torch"))]
        Command::Export(_) => cmd::needs_torch("export"),
        Command::Arena(args) => cmd::arena::run(args),
        Command::Curve(args) => cmd::curve::run(args),
        Command::Games(args) => cmd::games::run(args),
        Command::Openings(args) => cmd::openings::run(args),
        Command::Gomocup(args) => cmd::gomocup::run(args),
        Command::Serve(args) => cmd::serve::run(args),
        Command::Analyze(args) => cmd::analyze::run(args),
    }
}
