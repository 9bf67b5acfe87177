//! Line-pattern net throughput, side by side with the residual net in one run, one thread each.
//!
//! ```text
//! cargo run --release -p renju-trainer --example bench_linepattern -- [--positions 4000]
//!     [--resnet-positions 512] [--games 16] [--playouts 128] [--fast-playouts 32] [--repeat 1]
//!     [--line-features 32] [--policy-pointwise 0]
//! ```
//!
//! - Evaluator: positions/s of the table evaluator (`LinePatternEvaluator`, the `linepattern`
//!   preset, its F = 32 unless `--line-features F`, with a dynamic pointwise policy stage of `K`
//!   outputs with `--policy-pointwise K`) and of the tch `ModelEvaluator` with the
//!   `small` ResNet (6 x 64), both on 15x15 renju midgames (30-60 stones from random RIF
//!   games), torch limited to one thread; the table evaluator in requests of 16 positions (a
//!   self-play request), the ResNet in batches of 256. Also the share of the table evaluation
//!   spent building pattern indices (what an incremental update along the search path could
//!   save at most).
//! - Self-play: `run_selfplay` with the table evaluated inside one worker thread: playouts/s.
//!
//! Prints the load average with every figure: on a shared machine wall-clock figures are noisy.
//! `--repeat R` times each table-evaluator figure as the best of R passes over the positions.

use anyhow::Result;
use renju_selfplay::encode::{NUM_GLOBALS, NUM_PLANES};
use renju_selfplay::eval::Evaluator;
use renju_selfplay::linepattern::{stone_cells, LineGeometry, Precision};
use renju_selfplay::server::ServerHandle;
use renju_selfplay::worker::{run_selfplay, GameSink, SelfplayConfig};
use renju_trainer::config::{DeviceChoice, NetConfig, TrainerConfig};
use renju_trainer::model::load_line_table;
use renju_trainer::{ModelEvaluator, RunDir, Trainer};
use std::sync::atomic::AtomicBool;
use std::time::Instant;

const SIZE: usize = 15;

fn arg(name: &str, default: &str) -> String {
    let args: Vec<String> = std::env::args().collect();
    args.iter().position(|a| a == name).and_then(|i| args.get(i + 1).cloned()).unwrap_or_else(|| default.to_string())
}

/// CPU seconds this process has used (user + system, from `/proc/self/stat`, 10 ms ticks): the
/// measured phases are single-threaded, so this is the thread's CPU time, which other load on a
/// shared machine inflates far less than wall-clock time.
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let rest = stat.rsplit(')').next().unwrap_or("");
    let f: Vec<f64> = rest.split_whitespace().map(|x| x.parse().unwrap_or(0.0)).collect();
    if f.len() > 13 {
        (f[11] + f[12]) / 100.0
    } else {
        f64::NAN
    }
}

fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

/// Generation 0 of `net` published into a temporary run: its models folder.
fn published(net: NetConfig) -> Result<(tempfile::TempDir, std::path::PathBuf)> {
    let run = tempfile::tempdir()?;
    let cfg = TrainerConfig { net, device: DeviceChoice::Cpu, tensorboard: false, ..Default::default() };
    Trainer::open_or_resume(&RunDir::new(run.path()), cfg)?; // publishes generation 0
    let models = run.path().join("models");
    Ok((run, models))
}

struct Discard;
impl GameSink for Discard {
    fn accept(&mut self, _: renju_selfplay::worker::FinishedGame) -> Result<()> {
        Ok(())
    }
    fn finish(&mut self) -> Result<()> {
        Ok(())
    }
}

fn main() -> Result<()> {
    let n: usize = arg("--positions", "4000").parse()?;
    let n_res: usize = arg("--resnet-positions", "512").parse()?;
    let games: u64 = arg("--games", "16").parse()?;
    tch::set_num_threads(1);
    let pl = NUM_PLANES * SIZE * SIZE;
    let (planes, globals) = renju_selfplay::encode::random_positions(n.max(n_res), SIZE, 30..=60, 5);

    let mut line_net = NetConfig::preset("linepattern")?;
    line_net.line_features = arg("--line-features", &line_net.line_features.to_string()).parse()?;
    line_net.policy_pointwise = arg("--policy-pointwise", "0").parse()?;
    let (_lp_run, lp_models) = published(line_net)?;
    let net = load_line_table(&lp_models)?;
    let mut table = net.evaluator();
    let (_res_run, res_models) = published(NetConfig::preset("small")?)?;
    let mut resnet = ModelEvaluator::load(&res_models, tch::Device::Cpu)?;

    // Table evaluator, requests of 16: the portable kernel, then the default (AVX2 where the CPU has it).
    let req = 16;
    // Best of `--repeat` passes over the positions: on a shared machine a pass that another
    // process interrupted is slower, never faster, so the best pass is the least disturbed one.
    let repeat: usize = arg("--repeat", "1").parse()?;
    let time_table = |ev: &mut renju_selfplay::linepattern::LinePatternEvaluator| -> Result<(usize, f64, f64)> {
        ev.evaluate(&planes[..req * pl], &globals[..req * NUM_GLOBALS], req)?;
        let mut best = (0, 0.0, 0.0);
        for _ in 0..repeat.max(1) {
            let (t, c) = (Instant::now(), cpu_seconds());
            let mut done = 0;
            while done + req <= n {
                let out = ev.evaluate(
                    &planes[done * pl..(done + req) * pl],
                    &globals[done * NUM_GLOBALS..(done + req) * NUM_GLOBALS],
                    req,
                )?;
                std::hint::black_box(&out);
                done += req;
            }
            let pass = (done, done as f64 / t.elapsed().as_secs_f64(), done as f64 / (cpu_seconds() - c));
            if pass.1 > best.1 {
                best = pass;
            }
        }
        Ok(best)
    };
    for precision in [Precision::F32, Precision::I16] {
        for simd in [false, true] {
            let load0 = loadavg();
            let mut ev = net.evaluator().with_precision(precision).with_simd(simd);
            let kind = if ev.simd() { "AVX2" } else { "portable (SSE2)" };
            let (_, pps, cpu) = time_table(&mut ev)?;
            println!(
                "table evaluator, {precision:?} table, {kind}: {pps:.0} positions/s wall-clock, {cpu:.0} per CPU-second ({:.2} us each) [load {load0} -> {}]",
                1e6 / pps,
                loadavg()
            );
        }
    }
    let load0 = loadavg();
    let (done, table_pps, table_cpu) = time_table(&mut table)?;
    let simd = format!(
        "{:?} table, {}",
        table.precision(),
        if table.simd() { "AVX2" } else { "portable, no AVX2 on this CPU" }
    );
    // The pattern-index stage alone (cells from the planes + raw indices).
    let geo = LineGeometry::new(SIZE);
    let pp = SIZE * SIZE;
    let (mut cells, mut raw) = (vec![0u8; pp], Vec::new());
    let t = Instant::now();
    for i in 0..done {
        let p = &planes[i * pl..(i + 1) * pl];
        let black = globals[i * NUM_GLOBALS] > 0.5;
        let (own, opp) = if black { (0, 1) } else { (1, 0) };
        stone_cells(&p[own * pp..(own + 1) * pp], &p[opp * pp..(opp + 1) * pp], &mut cells);
        geo.raw_indices(&cells, &mut raw);
        std::hint::black_box(&raw);
    }
    let index_s = t.elapsed().as_secs_f64() / done as f64;
    println!(
        "table evaluator (F = {}, {simd}): {table_pps:.0} positions/s per thread wall-clock, {table_cpu:.0} per CPU-second ({:.2} us each; pattern indices {:.2} us = {:.1}% of wall-clock) [load {load0} -> {}]",
        net.features(),
        1e6 / table_pps,
        index_s * 1e6,
        100.0 * index_s * table_pps,
        loadavg()
    );

    // The small ResNet, batches of 256, one torch thread.
    let b = 256.min(n_res);
    resnet.evaluate(&planes[..b * pl], &globals[..b * NUM_GLOBALS], b)?;
    let load0 = loadavg();
    let (t, c) = (Instant::now(), cpu_seconds());
    let mut done = 0;
    while done + b <= n_res {
        std::hint::black_box(resnet.evaluate(
            &planes[done * pl..(done + b) * pl],
            &globals[done * NUM_GLOBALS..(done + b) * NUM_GLOBALS],
            b,
        )?);
        done += b;
    }
    let res_pps = done as f64 / t.elapsed().as_secs_f64();
    let res_cpu = done as f64 / (cpu_seconds() - c);
    println!("small ResNet (tch, 1 thread, batch {b}): {res_pps:.1} positions/s wall-clock, {res_cpu:.1} per CPU-second [load {load0} -> {}]", loadavg());
    println!("ratio table / ResNet: {:.0}x wall-clock, {:.0}x CPU time", table_pps / res_pps, table_cpu / res_cpu);

    // Self-play with the table inside one worker thread.
    let cfg = SelfplayConfig {
        size: SIZE,
        playouts: arg("--playouts", "128").parse()?,
        fast_playouts: arg("--fast-playouts", "32").parse()?,
        threads: 1,
        games_per_thread: 16,
        stone_cap: Some(120),
        ..Default::default()
    };
    let handle = ServerHandle::per_thread(net.factory(), 0, SIZE);
    let load0 = loadavg();
    let stop = AtomicBool::new(false);
    let c = cpu_seconds();
    let prog = run_selfplay(&cfg, &handle, Some(games), &stop, &mut Discard, &mut |_| {})?;
    let cpu = cpu_seconds() - c;
    println!(
        "self-play, table in the worker thread: {} games, {} playouts in {:.1} s = {:.0} playouts/s wall-clock, {:.0} per CPU-second, {:.1} games/s [load {load0} -> {}]",
        prog.games,
        prog.playouts,
        prog.seconds,
        prog.playouts as f64 / prog.seconds,
        prog.playouts as f64 / cpu,
        prog.games as f64 / prog.seconds,
        loadavg()
    );
    Ok(())
}
