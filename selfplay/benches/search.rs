//! Search speed: playouts per second per thread on 15x15 renju midgame positions with a
//! zero-cost evaluator (one thread and two threads), and with the heuristic evaluator the
//! fraction of time spent outside the evaluator, and the cost of the VCF check per expanded node.
//! Run:
//! `cargo bench -p renju-selfplay --bench search`
//! With `SEARCH_PROFILE_ONCE=1` set, the binary runs the 1-thread zero-cost search once and exits
//! (for instruction counts under callgrind; see docs/experiments/2026-11-search-speed.md).

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use renju_rules::{Action, Game, Point, Protocol, Rule};
use renju_selfplay::action::action_space_size;
use renju_selfplay::eval::{EvalOutput, Evaluator, HeuristicEvaluator};
use renju_selfplay::mcts::{search_with, Mcts, SearchConfig};
use std::time::{Duration, Instant};

const VISITS: u32 = 4000;
const BATCH: usize = 16;

/// Midgame positions: 24 stones played at random near the centre (seeded), renju, no five yet.
fn midgames() -> Vec<Game> {
    let mut out = Vec::new();
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    while out.len() < 4 {
        let mut g = Game::new(15, Rule::Renju, Protocol::Free { centre: true }, None).unwrap();
        g.apply(Action::Place(Point::new(7, 7))).unwrap();
        while g.board().stone_count() < 24 && !g.is_over() {
            let legal: Vec<Action> = g
                .legal_actions()
                .into_iter()
                .filter(|a| matches!(a, Action::Place(p) if (p.x as i32 - 7).abs() <= 4 && (p.y as i32 - 7).abs() <= 4))
                .collect();
            if legal.is_empty() {
                break;
            }
            g.apply(legal[rng.gen_range(0..legal.len())]).unwrap();
        }
        if !g.is_over() && g.board().stone_count() == 24 {
            out.push(g);
        }
    }
    out
}

fn zero_eval(n: usize) -> anyhow::Result<EvalOutput> {
    Ok(EvalOutput { policy_logits: vec![0.0; n * action_space_size(15)], wdl: [0.3, 0.4, 0.3].repeat(n) })
}

fn run_zero(games: &[Game], visits: u32) -> u64 {
    run_zero_with(games, visits, &SearchConfig::default()).0
}

/// Playouts and evaluated leaves (expanded nodes) of the zero-cost search under `cfg`.
fn run_zero_with(games: &[Game], visits: u32, cfg: &SearchConfig) -> (u64, u64) {
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let (mut playouts, mut leaves) = (0, 0);
    for g in games {
        let mut m = Mcts::new(g, cfg.clone());
        search_with(&mut m, visits, BATCH, &mut rng, |_, _, n| zero_eval(n)).unwrap();
        let st = m.take_stats();
        playouts += st.playouts;
        leaves += st.evaluations;
    }
    (playouts, leaves)
}

fn bench(c: &mut Criterion) {
    let games = midgames();
    // Profiling mode (e.g. under `valgrind --tool=callgrind`): one zero-cost run, then exit.
    // It prints a fingerprint of the encoded leaves and the root visit counts, which must not
    // change when the search is optimised.
    if std::env::var_os("SEARCH_PROFILE_ONCE").is_some() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let (mut playouts, mut h) = (0, 0xcbf2_9ce4_8422_2325u64);
        let mix = |h: &mut u64, v: u64| *h = (*h ^ v).wrapping_mul(0x0100_0000_01b3);
        for g in &games {
            let mut m = Mcts::new(g, SearchConfig::default());
            search_with(&mut m, VISITS, BATCH, &mut rng, |p, gl, n| {
                for x in p.iter().chain(gl) {
                    mix(&mut h, x.to_bits() as u64);
                }
                zero_eval(n)
            })
            .unwrap();
            for (a, n, pr) in m.root_children() {
                mix(&mut h, ((a as u64) << 32) | n as u64);
                mix(&mut h, pr.to_bits() as u64);
            }
            mix(&mut h, m.tree_size() as u64);
            playouts += m.take_stats().playouts;
        }
        println!("playouts: {playouts} fingerprint: {h:016x}");
        std::process::exit(0);
    }
    let mut grp = c.benchmark_group("search");
    grp.sample_size(10).measurement_time(Duration::from_secs(8));
    grp.throughput(Throughput::Elements(VISITS as u64 * games.len() as u64));
    grp.bench_function("zero_eval_1_thread", |b| b.iter(|| run_zero(&games, VISITS)));
    grp.throughput(Throughput::Elements(2 * VISITS as u64 * games.len() as u64));
    grp.bench_function("zero_eval_2_threads", |b| {
        b.iter(|| {
            std::thread::scope(|s| {
                let h: Vec<_> = (0..2).map(|_| s.spawn(|| run_zero(&games, VISITS))).collect();
                h.into_iter().map(|h| h.join().unwrap()).sum::<u64>()
            })
        })
    });
    grp.finish();

    // Cost of the VCF check per expanded node (SearchConfig::vcf_nodes = 200): the extra time of
    // the same searches with the check on, per evaluated leaf (every expansion of an evaluated
    // leaf runs the check; proven nodes end playouts early, so the trees differ). Best of 3 runs.
    let time = |cfg: &SearchConfig| {
        let mut best = (Duration::MAX, 0, 0);
        for _ in 0..3 {
            let t = Instant::now();
            let (p, l) = run_zero_with(&games, VISITS, cfg);
            best = best.min((t.elapsed(), p, l));
        }
        best
    };
    let (t_off, _, l_off) = time(&SearchConfig::default());
    let (t_on, p_on, l_on) = time(&SearchConfig { vcf_nodes: 200, ..SearchConfig::default() });
    println!(
        "vcf check: off {:.1} ms ({l_off} leaves), vcf_nodes=200 {:.1} ms ({l_on} leaves, {p_on} playouts): {:.1} us per expanded node",
        t_off.as_secs_f64() * 1e3,
        t_on.as_secs_f64() * 1e3,
        (t_on.as_secs_f64() - t_off.as_secs_f64() * l_on as f64 / l_off.max(1) as f64) * 1e6 / l_on.max(1) as f64
    );
    // The VCT check on top of it (SearchConfig::vct_nodes = 200), asked at expansion and at a
    // node's 8th visit: the extra time per playout against the VCF check alone.
    for vct_visits in [0, 8] {
        let cfg = SearchConfig { vcf_nodes: 200, vct_nodes: 200, vct_visits, ..SearchConfig::default() };
        let (t_vct, p_vct, l_vct) = time(&cfg);
        println!(
            "vct check: vcf_nodes=200 vct_nodes=200 vct_visits={vct_visits} {:.1} ms ({l_vct} leaves, {p_vct} playouts): {:.2} us per playout more than the VCF check",
            t_vct.as_secs_f64() * 1e3,
            (t_vct.as_secs_f64() - t_on.as_secs_f64()) * 1e6 / p_vct.max(1) as f64
        );
    }

    // Cost of encoder version 3's VCF planes (two solver calls of VCF_PLANE_NODES per position,
    // `encode::planes_for_version(3, ..)`, as a version-3 model pays at every evaluation and the
    // trainer for every sample) on random RIF midgames of 10-60 stones. Best of 3 runs.
    {
        use renju_selfplay::encode::{plane_v3, planes_for_version, random_positions};
        let n = 2000;
        let (planes, globals) = random_positions(n, 15, 10..=60, 5);
        let mut best = Duration::MAX;
        let mut marked = 0;
        for _ in 0..3 {
            let t = Instant::now();
            let v3 = planes_for_version(3, &planes, &globals, n, 15).unwrap();
            best = best.min(t.elapsed());
            let pp = 225;
            marked = (0..n)
                .filter(|i| {
                    v3[(i * plane_v3::COUNT + plane_v3::VCF_OWN) * pp..(i + 1) * plane_v3::COUNT * pp].contains(&1.0)
                })
                .count();
        }
        println!(
            "encoder version 3 planes: {:.1} us per position ({n} positions, {marked} with a VCF of either colour)",
            best.as_secs_f64() * 1e6 / n as f64
        );
    }

    // Heuristic evaluator: share of wall time outside `evaluate`.
    let mut ev = HeuristicEvaluator::new(15);
    let mut rng = ChaCha8Rng::seed_from_u64(2);
    let mut inside = Duration::ZERO;
    let t0 = Instant::now();
    let mut playouts = 0;
    for g in &games {
        let mut m = Mcts::new(g, SearchConfig::default());
        search_with(&mut m, 2000, BATCH, &mut rng, |p, gl, n| {
            let t = Instant::now();
            let r = ev.evaluate(p, gl, n);
            inside += t.elapsed();
            r
        })
        .unwrap();
        playouts += m.take_stats().playouts;
    }
    let total = t0.elapsed();
    println!(
        "heuristic evaluator: {} playouts in {:.3} s ({:.0} playouts/s); time outside the evaluator {:.1}%",
        playouts,
        total.as_secs_f64(),
        playouts as f64 / total.as_secs_f64(),
        100.0 * (1.0 - inside.as_secs_f64() / total.as_secs_f64())
    );
}

criterion_group!(benches, bench);
criterion_main!(benches);
