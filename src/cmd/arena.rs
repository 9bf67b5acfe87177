//! `renju-zero arena`: matches between players with W/D/L per pair, Bradley–Terry ratings and
//! an optional SPRT (library: `renju_arena::matches`).

use std::path::PathBuf;

use anyhow::Result;
use renju_arena::matches::{run_arena, ArenaConfig, OpeningMode};
use renju_arena::spec::PlayerSpec;
use renju_arena::sprt::{SprtConfig, SprtDecision};
use renju_rules::{Protocol, Rule};
use renju_trainer::config::DeviceChoice;
use renju_trainer::model::evaluator_loader;

/// Arguments of `renju-zero arena`.
#[derive(clap::Args)]
pub struct ArenaArgs {
    /// A player as NAME=SPEC (repeat for each player). SPEC: `model:DIR[,playouts=N][,time=S]`,
    /// `shipped[,...]` (the model built into this binary), `heuristic[,playouts=N]`,
    /// `uniform[,...]`, or
    /// `engine:"CMD ARGS"[,nodes=N][,depth=D][,time=S][,match=S]` (a Gomocup brain with its budget
    /// per move, sent as INFO max_node / max_depth / timeout_turn; time defaults to 60 s with
    /// nodes or depth, else 5 s; match: a clock for the whole game, sent as INFO timeout_match
    /// and time_left, lost on time when it runs out). Search options:
    /// playouts, time (seconds), batch, explore (sampled opening decisions), cpuct, fpu and
    /// root_fpu (first-play-urgency reductions below and at the root), algorithm
    /// (puct or gumbel), vcf_nodes (VCF check at node expansion: solver nodes per call, 0 =
    /// off), vct_nodes and vct_visits (the VCT check), policy_temp (the search's priors from the
    /// policy logits divided by it; 1 = as they are), lcb (play the root move with the best lower
    /// confidence bound of its value at this many standard errors; default: the most visited), inputs
    /// (full, or stones: the net sees only what an engine that knows just the stones gives, as
    /// the ONNX export does inside Rapfi).
    #[arg(long = "player", required = true)]
    pub players: Vec<String>,
    /// Games per pair of players.
    #[arg(long, default_value_t = ArenaConfig::default().games)]
    pub games: usize,
    /// `rif26`: the 26 openings, each with both colours; `protocol`: whole games under --protocol.
    #[arg(long, default_value = "rif26")]
    pub openings: String,
    /// Opening protocol for `--openings protocol` (rif, swap1, lianhuan, fifth-n:N, soosorv:8,
    /// taraguchi:10, swap2, ...).
    #[arg(long, default_value_t = Protocol::Rif)]
    pub protocol: Protocol,
    /// renju, standard or freestyle.
    #[arg(long, default_value_t = ArenaConfig::default().rule)]
    pub rule: Rule,
    /// Board side.
    #[arg(long, default_value_t = ArenaConfig::default().size)]
    pub size: usize,
    /// Seed of the games (a run with playout limits is reproducible).
    #[arg(long, default_value_t = ArenaConfig::default().seed)]
    pub seed: u64,
    /// Games played at once (default: the number of CPUs).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Draw when this many stones are on the board.
    #[arg(long)]
    pub stone_cap: Option<usize>,
    /// Sequential test `elo0,elo1,alpha,beta` of the first player against the second (exactly
    /// 2 players); stops early when decided. Exit code 0 = H1 or undecided, 1 = H0.
    #[arg(long)]
    pub sprt: Option<String>,
    /// Directory for games.jsonl, results.csv, pairs.csv, ratings.csv and report.md.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// No per-game progress lines on stderr.
    #[arg(long)]
    pub quiet: bool,
}

/// The default number of worker threads: the CPUs available.
pub fn default_threads() -> usize {
    std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)
}

/// Run the command; returns the process exit code.
pub fn run(args: ArenaArgs) -> Result<i32> {
    let players: Vec<PlayerSpec> = args.players.iter().map(|p| PlayerSpec::parse_named(p)).collect::<Result<_>>()?;
    let openings = match args.openings.as_str() {
        "rif26" => OpeningMode::Rif26,
        "protocol" => OpeningMode::Protocol(args.protocol.clone()),
        other => anyhow::bail!("--openings '{other}': expected rif26 or protocol"),
    };
    let sprt = args.sprt.as_deref().map(str::parse::<SprtConfig>).transpose()?;
    let cfg = ArenaConfig {
        size: args.size,
        rule: args.rule,
        openings,
        games: args.games,
        seed: args.seed,
        threads: args.threads.unwrap_or_else(default_threads),
        stone_cap: args.stone_cap,
        sprt,
    };
    let total = args.games * players.len() * (players.len() - 1).max(1) / 2;
    let mut done = 0;
    let quiet = args.quiet;
    let loader = evaluator_loader(DeviceChoice::Auto);
    let summary = run_arena(&players, &cfg, &loader, |r| {
        done += 1;
        if !quiet {
            eprintln!(
                "game {done}/{total} #{}: {} (black) vs {} (white): {} ({})",
                r.index,
                r.black,
                r.white,
                r.winner.as_deref().unwrap_or("draw"),
                r.reason
            );
        }
    })?;
    if let Some(dir) = &args.out {
        summary.write(dir)?;
    }
    print!("{}", summary.markdown());
    Ok(match summary.sprt.map(|s| s.decision) {
        Some(SprtDecision::H0) => 1,
        _ => 0,
    })
}
