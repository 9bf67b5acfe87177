//! Rules-core benchmarks (criterion). Run: `cargo bench -p renju-rules --bench rules`.
//! - `legal_mask_black/midgame`: Black's legal-move mask (renju, forbidden points excluded) on
//!   midgame positions (30..=60 stones) from random renju games; time per position.
//! - `place_undo`: one `place` + `undo` on a midgame board.
//! - `random_game/renju15`: a whole random renju game on 15x15 with the legal mask computed for
//!   every move (throughput = games).

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use renju_rules::{Color, Point};

mod common;
use common::{midgame_positions, random_game};

fn bench(c: &mut Criterion) {
    let positions = midgame_positions(256);
    let mut g = c.benchmark_group("legal_mask_black");
    g.throughput(Throughput::Elements(1));
    let mut i = 0;
    g.bench_function("midgame", |bch| {
        bch.iter(|| {
            i = (i + 1) & 255;
            black_box(positions[i].legal_mask(Color::Black))
        })
    });
    g.finish();

    let mut g = c.benchmark_group("place_undo");
    let mut b = positions[0].clone();
    let empty: Vec<usize> = b.legal_mask(Color::White).iter().collect();
    let mut j = 0;
    g.bench_function("midgame", |bch| {
        bch.iter(|| {
            j = (j + 1) % empty.len();
            b.place(Point::from_index(empty[j], 15), Color::Black);
            black_box(b.undo())
        })
    });
    g.finish();

    let mut g = c.benchmark_group("random_game");
    g.throughput(Throughput::Elements(1));
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    g.bench_function("renju15", |bch| bch.iter(|| black_box(random_game(&mut rng, 225))));
    g.finish();

    let mut g = c.benchmark_group("clone");
    g.bench_function("midgame_board", |bch| bch.iter(|| black_box(positions[3].clone())));
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30).warm_up_time(std::time::Duration::from_millis(500))
        .measurement_time(std::time::Duration::from_secs(2));
    targets = bench
}
criterion_main!(benches);
