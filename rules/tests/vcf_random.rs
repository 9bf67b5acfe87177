//! The VCF solver against the simple reference line checker on random positions (RULES.md §2–4):
//! every `win` line must replay as a forced win by `reference::check_vcf_line`; a `none` verdict
//! must not miss a win in one move (a five, or a four that cannot be stopped); verdicts are the
//! same on the 8 symmetric images of a position.
//!
//! The suite runs a few hundred positions; set `VCF_CASES=100000` for the long run
//! (`VCF_CASES=100000 cargo test --release -p renju-rules --test vcf_random -- --nocapture`).

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use renju_rules::vcf::{vcf, Limits, Vcf};
use renju_rules::{reference, Board, Color, Point, Rule, Symmetry};

mod common;
use common::random_game_position;

fn cases(default: usize) -> usize {
    std::env::var("VCF_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(default)
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
        let (b, to_move) = random_game_position(&mut rng, rule, 12, 90);
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
        let (b, to_move) = random_game_position(&mut rng, rule, 12, 90);
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
