//! `renju-zero selfplay`: clap wiring for [`renju_selfplay::cli::run`].

use renju_rules::{Protocol, Rule};
use renju_selfplay::cli::SelfplayOptions;
use renju_selfplay::selfplay::SelfplayConfig;
use std::path::PathBuf;

/// Arguments of `renju-zero selfplay`.
#[derive(clap::Args)]
pub struct SelfplayArgs {
    /// Evaluator: uniform or heuristic.
    #[arg(long, default_value = "heuristic")]
    evaluator: String,
    /// Number of games to play.
    #[arg(long)]
    games: u64,
    /// Directory for the shards (created if missing).
    #[arg(long)]
    out: PathBuf,
    /// Rule variant: renju, standard or freestyle.
    #[arg(long, default_value = "renju")]
    rule: Rule,
    /// Opening protocol (RULES.md §5): free, free-centre, swap1, rif, fifth-n:N, black-sets, lianhuan, designated...
    #[arg(long, default_value = "rif")]
    protocol: Protocol,
    /// Board side.
    #[arg(long, default_value_t = 15)]
    size: usize,
    /// Root visits of a full search.
    #[arg(long, default_value_t = 200)]
    playouts: u32,
    /// Root visits of a fast search (playout-cap randomisation).
    #[arg(long, default_value_t = 50)]
    fast_playouts: u32,
    /// Fraction of decisions searched fully (and recorded).
    #[arg(long, default_value_t = 0.25)]
    full_search_fraction: f64,
    /// Worker threads.
    #[arg(long, default_value_t = 1)]
    threads: usize,
    /// Games interleaved per thread.
    #[arg(long, default_value_t = 16)]
    games_per_thread: usize,
    /// Draw at this many stones (RULES.md §2 optional cap).
    #[arg(long)]
    stone_cap: Option<usize>,
    /// Random seed.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Games per shard file.
    #[arg(long, default_value_t = 64)]
    games_per_shard: usize,
    /// Hide the progress bar.
    #[arg(long)]
    quiet: bool,
}

/// Run the command; returns the process exit code.
pub fn run(a: SelfplayArgs) -> anyhow::Result<i32> {
    let config = SelfplayConfig {
        size: a.size,
        rule: a.rule,
        protocol: a.protocol,
        stone_cap: a.stone_cap,
        playouts: a.playouts,
        fast_playouts: a.fast_playouts,
        full_search_fraction: a.full_search_fraction,
        threads: a.threads,
        games_per_thread: a.games_per_thread,
        seed: a.seed,
        ..SelfplayConfig::default()
    };
    renju_selfplay::cli::run(SelfplayOptions {
        evaluator: a.evaluator,
        games: a.games,
        out: a.out,
        games_per_shard: a.games_per_shard,
        progress: !a.quiet,
        config,
    })
}
