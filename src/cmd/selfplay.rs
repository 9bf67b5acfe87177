//! `renju-zero selfplay`: standalone self-play into a directory (`--games N --out DIR`), or the
//! self-play half of a run (`--run DIR`) following the generations its trainer publishes.

use super::progress::Bars;
use anyhow::{bail, Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
use renju_rules::{Protocol, Rule};
use renju_selfplay::eval::{no_models, Evaluator, EvaluatorSpec};
use renju_selfplay::record::default_writer_id;
use renju_selfplay::server::{EvaluatorFactory, InferenceServer, ServerConfig, ServerHandle};
use renju_selfplay::worker::{run_selfplay, Progress, SelfplayConfig, ShardSink};
use renju_trainer::config::DeviceChoice;
use renju_zero::pipeline::{self, Stop, StopWhen};
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

/// The defaults of the flags: self-play's own.
fn defaults() -> SelfplayConfig {
    SelfplayConfig::default()
}

/// Arguments of `renju-zero selfplay`.
#[derive(clap::Args)]
pub struct SelfplayArgs {
    /// Evaluator: `uniform`, `heuristic`, or `model:DIR` (a published generation directory, or
    /// a run's `models/` directory for its latest generation; a bare existing directory also
    /// works).
    #[arg(long, default_value = "heuristic")]
    evaluator: String,
    /// The self-play half of a run: play with the run's config and its newest generation,
    /// following newly published ones, writing into `DIR/selfplay/` (any number of such
    /// processes, on any machine sharing the directory, plus one `renju-zero trainer --run DIR`).
    /// DIR may be a run on object storage: `s3://bucket/prefix`, `gs://...`, `az://...`,
    /// `file:///dir` (shards are uploaded, generations followed through `models/LATEST`).
    /// The game and search settings come from the run's config: the flags for them are refused
    /// with --run (they used to be ignored silently).
    #[arg(long, conflicts_with_all = ["out", "evaluator"])]
    run: Option<String>,
    /// Number of games to play (with --run: stop after this many; default: until Ctrl-C).
    #[arg(long)]
    games: Option<u64>,
    /// With --run: stop after this many minutes.
    #[arg(long, requires = "run")]
    minutes: Option<f64>,
    /// Directory for the shards (created if missing).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Rule variant: renju, standard or freestyle.
    #[arg(long, default_value_t = defaults().rule, conflicts_with = "run")]
    rule: Rule,
    /// Opening protocol (RULES.md §5): free, free-centre, swap1, rif, fifth-n:N, black-sets, lianhuan, designated...,
    /// soosorv:N, taraguchi:N, swap2
    #[arg(long, default_value_t = defaults().protocol, conflicts_with = "run")]
    protocol: Protocol,
    /// Board side.
    #[arg(long, default_value_t = defaults().size, conflicts_with = "run")]
    size: usize,
    /// Root visits of a full search.
    #[arg(long, default_value_t = defaults().playouts, conflicts_with = "run")]
    playouts: u32,
    /// Root visits of a fast search (playout-cap randomisation).
    #[arg(long, default_value_t = defaults().fast_playouts, conflicts_with = "run")]
    fast_playouts: u32,
    /// Fraction of decisions searched fully (and recorded).
    #[arg(long, default_value_t = defaults().full_search_fraction, conflicts_with = "run")]
    full_search_fraction: f64,
    /// Worker threads.
    #[arg(long, default_value_t = defaults().threads, conflicts_with = "run")]
    threads: usize,
    /// Games interleaved per thread.
    #[arg(long, default_value_t = defaults().games_per_thread, conflicts_with = "run")]
    games_per_thread: usize,
    /// Draw at this many stones (RULES.md §2 optional cap).
    #[arg(long, conflicts_with = "run")]
    stone_cap: Option<usize>,
    /// Random seed.
    #[arg(long, default_value_t = defaults().seed, conflicts_with = "run")]
    seed: u64,
    /// Games per shard file.
    #[arg(long, default_value_t = 64, conflicts_with = "run")]
    games_per_shard: usize,
    /// Hide the progress bar.
    #[arg(long)]
    quiet: bool,
}

/// Run the command; returns the process exit code.
pub fn run(a: SelfplayArgs) -> anyhow::Result<i32> {
    if let Some(run) = &a.run {
        let (dir, cfg) = pipeline::open_run(run, None, &[], false)?;
        let when = StopWhen { generation: None, minutes: a.minutes, games: a.games };
        pipeline::selfplay_only(&cfg, &dir, &when, &Stop::on_signals()?, &Bars::new())?;
        return Ok(0);
    }
    let (Some(games), Some(out)) = (a.games, a.out) else {
        bail!("selfplay needs --games N and --out DIR (or --run DIR)");
    };
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
    let opts = SelfplayOptions { games, out, games_per_shard: a.games_per_shard, progress: !a.quiet, config };
    let spec = EvaluatorSpec::parse(&a.evaluator).context("--evaluator")?;
    match &spec {
        EvaluatorSpec::Model(dir) => {
            let mc = renju_trainer::model::resolve_model_dir(dir)
                .and_then(|d| renju_trainer::ModelConfig::read(&d))
                .with_context(|| format!("loading --evaluator {spec}"))?;
            anyhow::ensure!(
                mc.rule == opts.config.rule,
                "model {} was trained for {:?} but --rule is {:?}",
                dir.display(),
                mc.rule,
                opts.config.rule
            );
            let generation = mc.generation as i64;
            if mc.net.kind == renju_trainer::NetKind::Linepattern {
                // The table evaluator runs inside every worker thread; no inference server.
                let net = renju_trainer::model::load_line_table(dir)
                    .with_context(|| format!("loading --evaluator {spec}"))?;
                return run_per_thread(opts, net.factory(), generation);
            }
            let ev = renju_trainer::ModelEvaluator::load(dir, DeviceChoice::Auto.resolve()?)
                .with_context(|| format!("loading --evaluator {spec}"))?;
            run_with(opts, Box::new(ev), generation)
        }
        _ => {
            let ev = spec.build(opts.config.size, &no_models)?;
            run_with(opts, ev, 0)
        }
    }
}

/// Options of standalone self-play (`--games N --out DIR`).
#[derive(Clone, Debug)]
struct SelfplayOptions {
    /// Games to play.
    games: u64,
    /// Output directory for shards.
    out: PathBuf,
    /// Games per shard file.
    games_per_shard: usize,
    /// Show a progress bar.
    progress: bool,
    /// Everything else.
    config: SelfplayConfig,
}

/// Plays `opts.games` games with `ev` (e.g. a trained network of generation `generation`, which
/// the shards then record) served by the batching inference server, writes shards into
/// `opts.out` and prints a summary line. Returns the process exit code (0).
fn run_with(opts: SelfplayOptions, ev: Box<dyn Evaluator>, generation: i64) -> Result<i32> {
    anyhow::ensure!(
        ev.board_size() == opts.config.size,
        "the evaluator is for board side {} but --size is {}",
        ev.board_size(),
        opts.config.size
    );
    let server = InferenceServer::spawn(ev, generation, ServerConfig::default());
    let handle = server.handle();
    let played = play(&opts, &handle);
    drop(handle);
    let stats = server.join();
    let (prog, shards) = played?;
    summary(&opts, &prog, shards, &format!("mean batch {:.1}", stats.positions as f64 / stats.batches.max(1) as f64));
    Ok(0)
}

/// As [`run_with`], but every worker thread evaluates with its own evaluator from `factory`
/// (no inference server; see [`ServerHandle::per_thread`]).
fn run_per_thread(opts: SelfplayOptions, factory: EvaluatorFactory, generation: i64) -> Result<i32> {
    let handle = ServerHandle::per_thread(factory, generation, opts.config.size);
    let (prog, shards) = play(&opts, &handle)?;
    summary(&opts, &prog, shards, "evaluated in the worker threads");
    Ok(0)
}

fn play(opts: &SelfplayOptions, handle: &ServerHandle) -> Result<(Progress, usize)> {
    opts.config.validate()?;
    anyhow::ensure!(opts.games >= 1, "--games must be at least 1");
    let mut sink = ShardSink::new(&opts.out, &opts.config, &default_writer_id("cli"), opts.games_per_shard);
    let bar = if opts.progress { ProgressBar::new(opts.games) } else { ProgressBar::hidden() };
    bar.set_style(
        ProgressStyle::with_template("{bar:30} {pos}/{len} games {msg} [{elapsed_precise}<{eta_precise}]")
            .expect("static template"),
    );
    let stop = AtomicBool::new(false);
    let prog = run_selfplay(&opts.config, handle, Some(opts.games), &stop, &mut sink, &mut |p| {
        bar.set_position(p.games);
        let s = p.seconds.max(1e-9);
        bar.set_message(format!("{:.0} positions/s, {:.0} playouts/s", p.positions as f64 / s, p.playouts as f64 / s));
    })?;
    bar.finish();
    Ok((prog, sink.written.len()))
}

fn summary(opts: &SelfplayOptions, prog: &Progress, shards: usize, evaluation: &str) {
    let s = prog.seconds.max(1e-9);
    println!(
        "{} games ({} First wins, {} Second wins, {} draws, {} resignations, {} false resignations), {} positions in {} shards under {}; {:.1} s, {:.0} playouts/s, {:.0} positions/s, {evaluation}",
        prog.games,
        prog.wins_first,
        prog.wins_second,
        prog.draws,
        prog.resignations,
        prog.false_resignations,
        prog.positions,
        shards,
        opts.out.display(),
        prog.seconds,
        prog.playouts as f64 / s,
        prog.positions as f64 / s,
    );
}
