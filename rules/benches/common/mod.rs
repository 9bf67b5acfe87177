//! Benchmark positions shared by `benches/rules.rs` and `examples/rules_profile.rs`, so that
//! criterion timings and instruction counts measure exactly the same workload.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use renju_rules::{Board, Color, Point, Rule};

/// Play one random renju game (uniform over the mover's legal mask); `stop_at` stones at most.
/// Returns the board.
pub fn random_game(rng: &mut ChaCha8Rng, stop_at: usize) -> Board {
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
pub fn midgame_positions(n: usize) -> Vec<Board> {
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

/// Tactical positions: renju games of 20..=60 stones whose moves are uniform over the legal
/// points within distance 2 of an existing stone (so lines build up as in real games), kept
/// only if nobody has won. Seeded: the same set every run.
#[allow(dead_code)] // used by the vcf bench only
pub fn local_positions(n: usize) -> Vec<Board> {
    let mut rng = ChaCha8Rng::seed_from_u64(17);
    let mut out = Vec::new();
    while out.len() < n {
        let target = rng.gen_range(20..=60);
        let mut b = Board::new(15, Rule::Renju).unwrap();
        b.place(Point::new(7, 7), Color::Black);
        let mut c = Color::White;
        let mut won = false;
        while b.stone_count() < target && !won {
            let near: Vec<usize> = b
                .legal_mask(c)
                .iter()
                .filter(|&i| {
                    let p = Point::from_index(i, 15);
                    b.stones().iter().any(|&(q, _)| p.x.abs_diff(q.x) <= 2 && p.y.abs_diff(q.y) <= 2)
                })
                .collect();
            if near.is_empty() {
                break;
            }
            let p = Point::from_index(near[rng.gen_range(0..near.len())], 15);
            b.place(p, c);
            won = b.is_win_at(p);
            c = c.opponent();
        }
        if !won && b.stone_count() == target {
            out.push(b);
        }
    }
    out
}
