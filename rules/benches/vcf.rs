//! VCF solver benchmarks (criterion). Run: `cargo bench -p renju-rules --bench vcf`.
//! Position sets, each solved for both colours with a budget of 100,000 nodes per call:
//! `midgame`, the 256 positions of `common::midgame_positions` (uniformly random renju games of
//! 30..=60 stones), and `local`, the 256 of `common::local_positions` (games of 20..=60 stones
//! played near the existing stones: longer lines, deeper searches).
//! - Printed first, per set: the verdicts, nodes/s, and the median and worst time per call.
//! - `vcf/<set>_set`: the whole set (512 solver calls); criterion's throughput is in nodes.
//! - `vcf/check_200`: one call with the MCTS-style budget of 200 nodes (`vcf_nodes` in the
//!   search config), the cost of the check per expanded node.

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use renju_rules::vcf::{vcf, vcf_with_stats, Limits, Vcf};
use renju_rules::{Board, Color};
use std::time::Instant;

mod common;
use common::{local_positions, midgame_positions};

/// Solve every position of `set` for both colours once, timing each call; prints the summary
/// line and returns the total nodes.
fn survey(name: &str, set: &[Board], limits: &Limits) -> u64 {
    let mut times = Vec::new();
    let mut nodes = 0u64;
    let mut verdicts = [0usize; 3];
    for b in set {
        for colour in [Color::Black, Color::White] {
            let t = Instant::now();
            let (v, st) = vcf_with_stats(b, colour, limits);
            times.push(t.elapsed().as_secs_f64());
            nodes += st.nodes;
            verdicts[match v {
                Vcf::Win { .. } => 0,
                Vcf::NoWin => 1,
                Vcf::Unknown => 2,
            }] += 1;
        }
    }
    let total: f64 = times.iter().sum();
    times.sort_by(|a, b| a.partial_cmp(b).unwrap());
    println!(
        "vcf {name}: {} calls (win/none/unknown {verdicts:?}), {nodes} nodes, {:.0} nodes/s, median {:.1} us, worst {:.1} us",
        times.len(),
        nodes as f64 / total,
        times[times.len() / 2] * 1e6,
        times[times.len() - 1] * 1e6
    );
    nodes
}

fn bench(c: &mut Criterion) {
    let limits = Limits::nodes(100_000);
    let positions = midgame_positions(256);
    let local = local_positions(256);
    let nodes = survey("midgame", &positions, &limits);
    let local_nodes = survey("local", &local, &limits);

    let mut g = c.benchmark_group("vcf");
    for (name, set, n) in [("midgame_set", &positions, nodes), ("local_set", &local, local_nodes)] {
        g.throughput(Throughput::Elements(n.max(1)));
        g.bench_function(name, |bch| {
            bch.iter(|| {
                for b in set.iter() {
                    for colour in [Color::Black, Color::White] {
                        black_box(vcf(b, colour, &limits));
                    }
                }
            })
        });
    }
    g.throughput(Throughput::Elements(1));
    let small = Limits::nodes(200);
    let mut i = 0;
    g.bench_function("check_200", |bch| {
        bch.iter(|| {
            i = (i + 1) & 255;
            black_box(vcf(&positions[i], if i & 1 == 0 { Color::Black } else { Color::White }, &small))
        })
    });
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10).warm_up_time(std::time::Duration::from_millis(500))
        .measurement_time(std::time::Duration::from_secs(3));
    targets = bench
}
criterion_main!(benches);
