//! `renju-zero curve`: the learning curve of a run (library: `renju_arena::curve`). Reads only
//! what a run publishes (its `config.toml`, `models/gen-*`, the shards' metadata), so it can run
//! beside a live `train` or afterwards.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result};
use renju_arena::agent::{SearchLimit, SearchSettings};
use renju_arena::curve::{
    due_generations, play_point, CurveConfig, CurveDir, CurveGeneration, CurveOpponent, OpponentKind,
};
use renju_arena::matches::{ArenaConfig, OpeningMode};
use renju_selfplay::eval::EvaluatorSpec;
use renju_selfplay::record::{list_shards, read_shard_meta};
use renju_trainer::config::DeviceChoice;
use renju_trainer::generations::list_generations;
use renju_trainer::model::{evaluator_loader, published_at, ModelConfig};
use renju_zero::pipeline::{RunConfig, RunDir, Stop};

use crate::cmd::arena::default_threads;

/// Arguments of `renju-zero curve`.
#[derive(clap::Args)]
pub struct CurveArgs {
    /// The run directory (made by `renju-zero train`).
    #[arg(long)]
    pub run: PathBuf,
    /// Output directory for curve.csv, curve.svg and the matches (default: RUN/curve).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Put every K-th generation on the curve (generation numbers divisible by K), and the
    /// newest one unless --follow. On a run that prunes old generations
    /// (`pipeline.keep_generations_every`), use a multiple of that: the others disappear.
    #[arg(long, default_value_t = 1)]
    pub every_generations: u64,
    /// Games per match against a search opponent (whole games under the run's protocol),
    /// colours alternating.
    #[arg(long, default_value_t = 40)]
    pub games: usize,
    /// Games per match against an engine opponent: game G starts from RIF opening G/2 mod 26
    /// (after the opening: an engine makes no swap or offer decisions), colours alternating; 52
    /// plays each of the 26 openings with both colours, 4 the first two.
    #[arg(long, default_value_t = 52)]
    pub engine_games: usize,
    /// Root visits per decision: the generation's, and a search opponent's.
    #[arg(long, default_value_t = 32)]
    pub playouts: u64,
    /// Seconds per decision instead of --playouts (the generation's, and a search opponent's).
    /// Games under a time limit depend on the machine and its load; playouts do not.
    #[arg(long, conflicts_with = "playouts")]
    pub seconds: Option<f64>,
    /// Leaves evaluated per batch, the same for both sides.
    #[arg(long, default_value_t = 8)]
    pub batch: usize,
    /// The first K decisions of each game are sampled in proportion to the visit counts (the
    /// games of a pair would otherwise repeat), both sides.
    #[arg(long, default_value_t = 4)]
    pub explore: usize,
    /// A fixed opponent: heuristic, uniform, gen:N (generation N of this run), model:DIR, or an
    /// outside Gomocup engine `engine:"CMD ARGS"[,nodes=N][,depth=D][,time=S]` with its own
    /// budget per move (sent as INFO max_node / max_depth / timeout_turn; time defaults to 60 s
    /// with nodes or depth, else 5 s), played on the 26 RIF openings (--engine-games). Repeat
    /// for several. Default: heuristic and gen:0. A generation is never played against itself.
    #[arg(long = "opponent")]
    pub opponents: Vec<String>,
    /// Seed of the games (the same for every point).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Games played at once (default: the number of CPUs).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Keep waiting for newly published generations (beside a live `train`) until Ctrl-C.
    #[arg(long)]
    pub follow: bool,
    /// With --follow: seconds between looks at the run's models.
    #[arg(long, default_value_t = 30)]
    pub poll_seconds: u64,
    /// Override a key of the run's config for the curve's games only (the run is not
    /// changed), `SECTION.KEY=VALUE` as for `train --set`: e.g. `--set
    /// selfplay.search.vcf_nodes=200` plays the curve with the VCF solver in the search. Both
    /// sides use the result. Repeat for several; give a fresh --out (a curve directory keeps
    /// the settings it was made with).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub sets: Vec<String>,
}

/// Self-play games per shard, by the generation that finished each game; read once per shard.
#[derive(Default)]
struct GameTally {
    seen: BTreeMap<PathBuf, Vec<i64>>,
}

impl GameTally {
    /// Games finished before generation `g` was published: those whose last move was played by
    /// an earlier generation.
    fn games_before(&mut self, dir: &Path, g: u64) -> Result<u64> {
        if dir.exists() {
            for p in list_shards(dir)? {
                if let std::collections::btree_map::Entry::Vacant(slot) = self.seen.entry(p) {
                    // A shard that does not read (being replaced, corrupt) is the trainer's to report.
                    let Ok(meta) = read_shard_meta(slot.key()) else { continue };
                    slot.insert(meta.games.iter().map(|m| m.generation_last).collect());
                }
            }
        }
        Ok(self.seen.values().flatten().filter(|&&last| last < g as i64).count() as u64)
    }
}

/// Run the command; returns the process exit code.
pub fn run(args: CurveArgs) -> Result<i32> {
    let run = RunDir::new(&args.run);
    run.ensure_is_run()?;
    let cfg: RunConfig = renju_zero::pipeline::check_config(&run.config(), &args.sets)
        .with_context(|| format!("reading the config of run {}", args.run.display()))?;
    let models = run.models();
    let gen_dir = |g: u64| run.generation(g);
    let texts = if args.opponents.is_empty() {
        vec!["heuristic".to_string(), "gen:0".to_string()]
    } else {
        args.opponents.clone()
    };
    let opponents: Vec<CurveOpponent> =
        texts.iter().map(|t| CurveOpponent::parse(t, gen_dir)).collect::<Result<_>>()?;
    anyhow::ensure!(args.games >= 1, "--games must be at least 1");
    anyhow::ensure!(args.engine_games >= 1, "--engine-games must be at least 1");
    anyhow::ensure!(args.playouts >= 1, "--playouts must be at least 1");
    let limit = match args.seconds {
        Some(s) => {
            anyhow::ensure!(s.is_finite() && s > 0.0, "--seconds {s} must be a positive number of seconds");
            SearchLimit { playouts: None, time: Some(Duration::from_secs_f64(s)) }
        }
        None => SearchLimit { playouts: Some(args.playouts), time: None },
    };
    anyhow::ensure!(args.batch >= 1, "--batch must be at least 1");
    let curve_cfg = CurveConfig {
        arena: ArenaConfig {
            size: cfg.game.size,
            rule: cfg.game.rule,
            openings: OpeningMode::Protocol(cfg.game.protocol.clone()),
            games: args.games,
            seed: args.seed,
            threads: args.threads.unwrap_or_else(default_threads),
            stone_cap: cfg.game.stone_cap,
            sprt: None,
        },
        settings: SearchSettings {
            limit,
            batch: args.batch,
            explore: args.explore,
            config: cfg.selfplay.search.clone(),
            // Every decision from its position and the seed alone: reproducible points.
            reuse_tree: false,
            threads: 1,
            stones_only: false,
            lcb: None,
        },
        engine_games: args.engine_games,
    };
    let out = args.out.clone().unwrap_or_else(|| run.root.join("curve"));
    let mut curve = CurveDir::open(&out, &curve_cfg)?;
    // Following a run: SIGINT / SIGTERM / SIGHUP stop after the current point.
    let stop = if args.follow { Stop::on_signals()? } else { Stop::default() };
    let mut tally = GameTally::default();
    let load_model = evaluator_loader(DeviceChoice::Auto);
    let sets = if args.sets.is_empty() { String::new() } else { format!(" (--set {})", args.sets.join(" --set ")) };
    eprintln!(
        "curve of {}{sets}: {} {}, stone cap {}, {} games per match, {}, batch {}, explore {} -> {}",
        run.root.display(),
        cfg.game.rule,
        cfg.game.protocol,
        cfg.game.stone_cap.map_or_else(|| "none".to_string(), |cap| cap.to_string()),
        args.games,
        curve_cfg.settings.limit,
        args.batch,
        args.explore,
        out.display()
    );
    for opp in &opponents {
        eprintln!("  {}", opp.how_played(&curve_cfg));
    }
    loop {
        let available = list_generations(&models)?;
        let start = match available.first() {
            Some(&g0) => Some(published_at(&gen_dir(g0))?),
            None => None,
        };
        for g in due_generations(&available, args.every_generations, !args.follow) {
            for opp in &opponents {
                let dir = gen_dir(g);
                // A generation against itself says nothing (gen:0 at generation 0): not played.
                let itself = matches!(&opp.kind, OpponentKind::Search(EvaluatorSpec::Model(d)) if d == &dir);
                if itself || curve.has(g, &opp.name) || stop.is_set() {
                    continue;
                }
                let minutes = match start {
                    Some(t0) => published_at(&dir)?.duration_since(t0).map_or(0.0, |d| d.as_secs_f64() / 60.0),
                    None => 0.0,
                };
                let point = CurveGeneration {
                    generation: g,
                    step: ModelConfig::read(&dir)?.trained_steps,
                    minutes,
                    selfplay_games: tally.games_before(&run.selfplay(), g)?,
                    eval: EvaluatorSpec::Model(dir),
                };
                let row = play_point(&point, opp, &curve_cfg, &load_model, Some(&out.join("matches")))?;
                eprintln!(
                    "generation {g} (step {}, {:.1} min, {} self-play games) vs {} ({}, {}): {}/{}/{} score {:.3} \
                     [{:.3}, {:.3}]",
                    row.step,
                    row.minutes,
                    row.selfplay_games,
                    row.opponent,
                    row.opponent_budget,
                    row.start,
                    row.wins,
                    row.draws,
                    row.losses,
                    row.score,
                    row.score_low95,
                    row.score_high95
                );
                curve.push(row)?;
            }
        }
        if !args.follow || stop.is_set() {
            break;
        }
        let until = std::time::Instant::now() + Duration::from_secs(args.poll_seconds.max(1));
        while std::time::Instant::now() < until && !stop.is_set() {
            std::thread::sleep(Duration::from_millis(200));
        }
    }
    print!("{}", std::fs::read_to_string(out.join("curve.csv")).unwrap_or_default());
    Ok(0)
}
