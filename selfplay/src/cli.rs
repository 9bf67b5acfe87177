//! `renju-zero selfplay` as a library function (the root binary only wires clap to it).

use crate::eval::{no_models, Evaluator, EvaluatorSpec};
use crate::record::default_writer_id;
use crate::server::{EvaluatorFactory, InferenceServer, ServerConfig, ServerHandle};
use crate::worker::{run_selfplay, Progress, SelfplayConfig, ShardSink};
use anyhow::Result;
use indicatif::{ProgressBar, ProgressStyle};
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

/// Options of the `selfplay` command.
#[derive(Clone, Debug)]
pub struct SelfplayOptions {
    /// An [`EvaluatorSpec`]: `uniform` or `heuristic` for [`run`] (`model:DIR` needs the
    /// trainer's loader; with [`run_with`] this is only a label).
    pub evaluator: String,
    /// Games to play.
    pub games: u64,
    /// Output directory for shards.
    pub out: PathBuf,
    /// Games per shard file.
    pub games_per_shard: usize,
    /// Show a progress bar.
    pub progress: bool,
    /// Everything else.
    pub config: SelfplayConfig,
}

/// Run the command: play `games` games, write shards into `out`, print a summary line.
/// Returns the process exit code (0).
pub fn run(opts: SelfplayOptions) -> Result<i32> {
    let ev = EvaluatorSpec::parse(&opts.evaluator)?.build(opts.config.size, &no_models)?;
    run_with(opts, ev, 0)
}

/// As [`run`], with an evaluator built by the caller (e.g. a trained network of generation
/// `generation`, which the shards then record), served by the batching inference server.
/// `opts.evaluator` is only a label.
pub fn run_with(opts: SelfplayOptions, ev: Box<dyn Evaluator>, generation: i64) -> Result<i32> {
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
pub fn run_per_thread(opts: SelfplayOptions, factory: EvaluatorFactory, generation: i64) -> Result<i32> {
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
