//! Rules-core benchmarks (criterion). Run: `cargo bench -p renju-rules --bench rules`.
//! - `legal_mask_black/midgame`: Black's legal-move mask (renju, forbidden points excluded) on
//!   midgame positions (30..=60 stones) from random renju games; time per position.
//! - `place_undo`: one `place` + `undo` on a midgame board.
//! - `random_game/renju15`: a whole random renju game on 15x15 with the legal mask computed for
//!   every move (throughput = games).

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use renju_rules::{Board, Color, Point, Rule};

/// Play one random renju game (uniform over the mover's legal mask); `stop_at` stones at most.
/// Returns the board and whether it ended with a win.
fn random_game(rng: &mut ChaCha8Rng, stop_at: usize) -> Board {
    let mut b = Board::new(15, Rule::Renju).unwrap();
    let mut c = Color::Black;
    let mut idx = Vec::with_capacity(225);
    while b.stone_count() < stop_at {
        let mask = b.legal_mask(c);
        idx.clear();
        idx.extend(mask.iter());
        if idx.is_empty() {
            break;
        }
        let p = Point::from_index(idx[rng.gen_range(0..idx.len())], 15);
        b.place(p, c);
        if b.is_win_at(p) {
            break;
        }
        c = c.opponent();
    }
    b
}

/// Midgame positions: random games stopped at 30..=60 stones, kept only if nobody has won.
fn midgame_positions(n: usize) -> Vec<Board> {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let mut out = Vec::new();
    while out.len() < n {
        let target = rng.gen_range(30..=60);
        let b = random_game(&mut rng, target);
        if b.stone_count() == target && !b.stones().iter().any(|&(p, _)| b.is_win_at(p)) {
            out.push(b);
        }
    }
    out
}

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
