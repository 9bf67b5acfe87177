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
    Selfplay(cmd::selfplay::SelfplayArgs),
    /// The main job: self-play, training and publishing in one resumable loop.
    Train(cmd::train::TrainArgs),
    /// The training half of `train` alone, on a run directory that self-play processes feed.
    Trainer(cmd::train::TrainerArgs),
    /// Check a run directory's invariants (generations, models, shards, logs); exit 1 if broken.
    CheckRun(cmd::train::CheckRunArgs),
    /// Export a published model to one file (TorchScript or safetensors).
    Export(cmd::export::ExportArgs),
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
        Command::Selfplay(args) => cmd::selfplay::run(args),
        Command::Train(args) => cmd::train::run(args),
        Command::Trainer(args) => cmd::train::run_trainer(args),
        Command::CheckRun(args) => cmd::train::run_check(args),
        Command::Export(args) => cmd::export::run(args),
        Command::Arena(args) => cmd::arena::run(args),
        Command::Curve(args) => cmd::curve::run(args),
        Command::Games(args) => cmd::games::run(args),
        Command::Openings(args) => cmd::openings::run(args),
        Command::Gomocup(args) => cmd::gomocup::run(args),
        Command::Analyze(args) => cmd::analyze::run(args),
    }
}
