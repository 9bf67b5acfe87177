//! The VCF solver against the simple reference line checker on random positions (RULES.md §2–4):
//! every `win` line must replay as a forced win by `reference::check_vcf_line`; a `none` verdict
//! must not miss a win in one move (a five, or a four that cannot be stopped); verdicts are the
//! same on the 8 symmetric images of a position.
//!
//! The suite runs a few hundred positions; set `VCF_CASES=100000` for the long run
//! (`VCF_CASES=100000 cargo test --release -p renju-rules --test vcf_random -- --nocapture`).

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use renju_rules::vcf::{vcf, Limits, Vcf};
use renju_rules::{reference, Board, Color, Point, Rule, Symmetry};

fn cases(default: usize) -> usize {
    std::env::var("VCF_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// A random position on 15x15 under `rule`: a game of 12..=90 stones played near the existing
/// stones (legal moves only, Black's forbidden points excluded under renju), stopped before
/// anyone has five. Returns the board and the side to move.
fn random_position(rng: &mut ChaCha8Rng, rule: Rule) -> (Board, Color) {
    let n = 15;
    let mut b = Board::new(n, rule).unwrap();
    let target = rng.gen_range(12..=90);
    let mut c = Color::Black;
    b.place(Point::new(7, 7), c);
    c = c.opponent();
    while b.stone_count() < target {
        let legal: Vec<usize> = b.legal_mask(c).iter().collect();
        let near: Vec<usize> = legal
            .iter()
            .copied()
            .filter(|&i| {
                let p = Point::from_index(i, n);
                b.stones().iter().any(|&(q, _)| p.x.abs_diff(q.x) <= 2 && p.y.abs_diff(q.y) <= 2)
            })
            .collect();
        let pool = if near.is_empty() { &legal } else { &near };
        if pool.is_empty() {
            break;
        }
        let p = Point::from_index(pool[rng.gen_range(0..pool.len())], n);
        if b.makes_five(p, c) {
            continue; // keep the game undecided
        }
        b.place(p, c);
        c = c.opponent();
    }
    (b, c)
}

#[derive(Default, Debug)]
struct Tally {
    positions: usize,
    wins: usize,
    long_wins: usize,
    none: usize,
    unknown: usize,
}

fn check_one(b: &Board, attacker: Color, tally: &mut Tally) {
    let rule = b.rule();
    let v = vcf(b, attacker, &Limits::nodes(20_000));
    tally.positions += 1;
    match &v {
        Vcf::Win { line } => {
            tally.wins += 1;
            tally.long_wins += (line.len() >= 5) as usize;
            if let Err(e) = reference::check_vcf_line(15, rule, b.stones(), attacker, line) {
                panic!("bad line {line:?} for {attacker:?} under {rule:?}: {e}\nstones {:?}", b.stones());
            }
        }
        Vcf::NoWin => {
            tally.none += 1;
            for i in 0..225 {
                let m = Point::from_index(i, 15);
                if b.get(m).is_none() && reference::check_vcf_line(15, rule, b.stones(), attacker, &[m]).is_ok() {
                    panic!("`none`, but {m:?} wins at once for {attacker:?} under {rule:?}\nstones {:?}", b.stones());
                }
            }
        }
        Vcf::Unknown => tally.unknown += 1,
    }
}

#[test]
fn every_win_line_replays_and_none_misses_no_win_in_one() {
    let n = cases(300);
    let mut rng = ChaCha8Rng::seed_from_u64(2026);
    let mut tally = Tally::default();
    for k in 0..n {
        let rule = [Rule::Renju, Rule::Renju, Rule::Standard, Rule::Freestyle][k % 4];
        let (b, to_move) = random_position(&mut rng, rule);
        check_one(&b, to_move, &mut tally);
        check_one(&b, to_move.opponent(), &mut tally);
    }
    eprintln!("vcf_random: {tally:?}");
    // Meaningful only if wins, long wins and exhaustive `none` verdicts all occur.
    assert!(tally.wins >= tally.positions / 20, "{tally:?}");
    assert!(tally.long_wins >= tally.positions / 100, "{tally:?}");
    assert!(tally.none >= tally.positions / 10, "{tally:?}");
}

#[test]
fn verdicts_are_invariant_under_the_8_symmetries() {
    let n = cases(300) / 10;
    let mut rng = ChaCha8Rng::seed_from_u64(88);
    let mut decided = 0;
    for k in 0..n {
        let rule = [Rule::Renju, Rule::Standard, Rule::Freestyle][k % 3];
        let (b, to_move) = random_position(&mut rng, rule);
        for attacker in [to_move, to_move.opponent()] {
            let base = vcf(&b, attacker, &Limits::nodes(200_000));
            if base == Vcf::Unknown {
                continue;
            }
            decided += 1;
            for s in Symmetry::ALL {
                let img = s.apply_board(&b);
                let v = vcf(&img, attacker, &Limits::nodes(200_000));
                match (&base, &v) {
                    (Vcf::NoWin, Vcf::NoWin) => {}
                    (Vcf::Win { .. }, Vcf::Win { line }) => {
                        reference::check_vcf_line(15, rule, img.stones(), attacker, line).unwrap();
                    }
                    _ => panic!("{base:?} but {v:?} under {s:?} for {attacker:?}, stones {:?}", b.stones()),
                }
            }
        }
    }
    assert!(decided >= n, "only {decided} decided verdicts");
}
