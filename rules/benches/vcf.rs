//! VCF solver benchmarks (criterion). Run: `cargo bench -p renju-rules --bench vcf`.
//! Position set: the 256 midgame positions of `common::midgame_positions` (random renju games of
//! 30..=60 stones), solved for both colours with a budget of 100,000 nodes each.
//! - Printed first: nodes/s over the set, and the median and worst time per position.
//! - `vcf/midgame_set`: the whole set (512 solver calls); criterion's throughput is in nodes.
//! - `vcf/check_200`: one call with the MCTS-style budget of 200 nodes (`vcf_nodes` in the
//!   search config), the cost of the check per expanded node.

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use renju_rules::vcf::{vcf, vcf_with_stats, Limits};
use renju_rules::Color;
use std::time::Instant;

mod common;
use common::midgame_positions;

fn bench(c: &mut Criterion) {
    let positions = midgame_positions(256);
    let limits = Limits::nodes(100_000);
    let mut times = Vec::new();
    let mut nodes = 0u64;
    let mut verdicts = [0usize; 3];
    for b in &positions {
        for colour in [Color::Black, Color::White] {
            let t = Instant::now();
            let (v, st) = vcf_with_stats(b, colour, &limits);
            times.push(t.elapsed().as_secs_f64());
            nodes += st.nodes;
            verdicts[match v {
                renju_rules::vcf::Vcf::Win { .. } => 0,
                renju_rules::vcf::Vcf::NoWin => 1,
                renju_rules::vcf::Vcf::Unknown => 2,
            }] += 1;
        }
    }
    let total: f64 = times.iter().sum();
    times.sort_by(|a, b| a.partial_cmp(b).unwrap());
    println!(
        "vcf set: {} calls (win/none/unknown {:?}), {} nodes, {:.0} nodes/s, median {:.1} us, worst {:.1} us",
        times.len(),
        verdicts,
        nodes,
        nodes as f64 / total,
        times[times.len() / 2] * 1e6,
        times[times.len() - 1] * 1e6
    );

    let mut g = c.benchmark_group("vcf");
    g.throughput(Throughput::Elements(nodes.max(1)));
    g.bench_function("midgame_set", |bch| {
        bch.iter(|| {
            for b in &positions {
                for colour in [Color::Black, Color::White] {
                    black_box(vcf(b, colour, &limits));
                }
            }
        })
    });
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
