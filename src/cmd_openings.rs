//! `renju-zero openings`: the opening-balance study (library: `renju_arena::openings`).

use std::path::PathBuf;

use anyhow::{Context, Result};
use renju_arena::spec::EvaluatorSpec;
use renju_arena::openings::{run_study, StudyConfig};
use renju_rules::Protocol;

use crate::cmd_arena::{default_threads, load_model, parse_rule};

/// Arguments of `renju-zero openings`.
#[derive(clap::Args)]
pub struct OpeningsArgs {
    /// Model directory (or a models directory with LATEST), or `heuristic` / `uniform`.
    #[arg(long)]
    pub model: String,
    /// renju, standard or freestyle.
    #[arg(long, default_value = "renju")]
    pub rule: String,
    /// rif, fifth-n:N, designated:...,swap,offers=K (decisions after the opening), or
    /// lianhuan, swap1, black-sets, free (plain play from each opening plus whole games).
    #[arg(long, default_value = "rif")]
    pub protocol: String,
    /// Self-play games per opening.
    #[arg(long, default_value_t = 10)]
    pub games: usize,
    /// Playouts per decision.
    #[arg(long, default_value_t = 200)]
    pub playouts: u64,
    /// The first K decisions of each game are sampled by visit counts (diversity).
    #[arg(long, default_value_t = 6)]
    pub explore: usize,
    /// Whole games under protocols that do not start from the 26 openings.
    #[arg(long, default_value_t = 100)]
    pub protocol_games: usize,
    /// Board side.
    #[arg(long, default_value_t = 15)]
    pub size: usize,
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Games played at once (default: the number of CPUs).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Draw when this many stones are on the board.
    #[arg(long)]
    pub stone_cap: Option<usize>,
    /// Directory for openings.csv, decisions.csv, patterns.csv, report.md and openings.svg.
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// Run the command; returns the process exit code.
pub fn run(args: OpeningsArgs) -> Result<i32> {
    let cfg = StudyConfig {
        size: args.size,
        rule: parse_rule(&args.rule)?,
        protocol: args.protocol.parse::<Protocol>().context("--protocol")?,
        games: args.games,
        playouts: args.playouts,
        explore: args.explore,
        protocol_games: args.protocol_games,
        seed: args.seed,
        threads: args.threads.unwrap_or_else(default_threads),
        stone_cap: args.stone_cap,
    };
    let eval = EvaluatorSpec::parse(&args.model);
    let result = run_study(&eval, &cfg, &load_model, |_| {})?;
    if let Some(dir) = &args.out {
        result.write(dir)?;
    }
    print!("{}", result.markdown());
    Ok(0)
}
