//! `renju-zero openings`: the opening-balance study (library: `renju_arena::openings`).

use std::path::PathBuf;

use anyhow::Result;
use renju_arena::openings::{run_study, StudyConfig};
use renju_rules::{Protocol, Rule};
use renju_selfplay::eval::EvaluatorSpec;
use renju_trainer::config::DeviceChoice;
use renju_trainer::model::evaluator_loader;

use crate::cmd::arena::default_threads;

/// Arguments of `renju-zero openings`.
#[derive(clap::Args)]
pub struct OpeningsArgs {
    /// Model directory (or a models directory with LATEST), `shipped` (the model built into this
    /// binary, 15x15), `heuristic` or `uniform`. Without it the shipped model is studied (said
    /// on stderr).
    #[arg(long)]
    pub model: Option<String>,
    /// renju, standard or freestyle.
    #[arg(long, default_value_t = StudyConfig::default().rule)]
    pub rule: Rule,
    /// rif, fifth-n:N, designated:...,swap,offers=K, soosorv:N, taraguchi:N (decisions after
    /// the opening), swap2 (decisions after the opening plus whole games), or lianhuan, swap1,
    /// black-sets, free (plain play from each opening plus whole games).
    #[arg(long, default_value_t = StudyConfig::default().protocol)]
    pub protocol: Protocol,
    /// Self-play games per opening.
    #[arg(long, default_value_t = StudyConfig::default().games)]
    pub games: usize,
    /// Playouts per decision.
    #[arg(long, default_value_t = StudyConfig::default().playouts)]
    pub playouts: u64,
    /// The first K decisions of each game are sampled by visit counts (diversity).
    #[arg(long, default_value_t = StudyConfig::default().explore)]
    pub explore: usize,
    /// VCF check at node expansion: solver nodes per call (0 = off).
    #[arg(long, default_value_t = StudyConfig::default().vcf_nodes)]
    pub vcf_nodes: u64,
    /// Whole games under protocols that do not start from the 26 openings.
    #[arg(long, default_value_t = StudyConfig::default().protocol_games)]
    pub protocol_games: usize,
    /// Board side.
    #[arg(long, default_value_t = StudyConfig::default().size)]
    pub size: usize,
    /// Seed of the games.
    #[arg(long, default_value_t = StudyConfig::default().seed)]
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
        rule: args.rule,
        protocol: args.protocol,
        games: args.games,
        playouts: args.playouts,
        explore: args.explore,
        vcf_nodes: args.vcf_nodes,
        protocol_games: args.protocol_games,
        seed: args.seed,
        threads: args.threads.unwrap_or_else(default_threads),
        stone_cap: args.stone_cap,
    };
    let model = crate::cmd::model_or_shipped(args.model.as_deref(), Some("openings"));
    let eval = EvaluatorSpec::parse(&model)?;
    let result = run_study(&eval, &cfg, &evaluator_loader(DeviceChoice::Auto), |_| {})?;
    if let Some(dir) = &args.out {
        result.write(dir)?;
    }
    print!("{}", result.markdown());
    Ok(0)
}
