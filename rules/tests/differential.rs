//! Differential test: the fast `Board` against the simple `reference` checker (RULES.md §2–4),
//! on random and realistic positions (random games biased toward existing stones, plus dense
//! local clusters so that forbidden shapes actually occur). Also checks that `legal_mask`,
//! `forbidden_points` and `is_win_at` agree with `classify` / the reference.

use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use renju_rules::board::ForbiddenKind;
use renju_rules::{reference, Board, Color, Point, Rule, Verdict};

mod common;
use common::realistic_position;

#[derive(Default, Debug)]
struct Tally {
    calls: usize,
    five: usize,
    overline: usize,
    double_four: usize,
    double_three: usize,
}

/// Compare every point of the position under `rule`, for both colours; returns the first
/// disagreement as a message.
fn check(size: usize, rule: Rule, stones: &[(Point, Color)], tally: &mut Tally) -> Result<(), String> {
    let board = Board::with_stones(size, rule, stones).unwrap();
    let mask = board.legal_mask(Color::Black);
    let forb = board.forbidden_points();
    for idx in 0..size * size {
        let p = Point::from_index(idx, size);
        for c in [Color::Black, Color::White] {
            let fast = board.classify(p, c);
            let slow = reference::classify(size, rule, stones, p, c);
            tally.calls += 1;
            if fast != slow {
                return Err(format!(
                    "{rule:?} size {size} {c:?} at {p:?}: fast {fast:?} reference {slow:?}; stones {stones:?}"
                ));
            }
            if c == Color::Black {
                match fast {
                    Verdict::Five => tally.five += 1,
                    Verdict::Forbidden(ForbiddenKind::Overline) => tally.overline += 1,
                    Verdict::Forbidden(ForbiddenKind::DoubleFour) => tally.double_four += 1,
                    Verdict::Forbidden(ForbiddenKind::DoubleThree) => tally.double_three += 1,
                    _ => {}
                }
                let legal = !matches!(fast, Verdict::Occupied | Verdict::Forbidden(_));
                if mask.contains(idx) != legal {
                    return Err(format!("legal_mask disagrees with classify at {p:?} ({fast:?}); stones {stones:?}"));
                }
                let listed = forb.iter().find(|(q, _)| *q == p).map(|&(_, k)| Verdict::Forbidden(k));
                if listed.is_some() != matches!(fast, Verdict::Forbidden(_))
                    || (listed.is_some() && listed != Some(fast))
                {
                    return Err(format!("forbidden_points disagrees at {p:?} ({fast:?} vs {listed:?})"));
                }
            }
        }
    }
    for &(p, _) in stones {
        if board.is_win_at(p) != reference::is_win_at(size, rule, stones, p) {
            return Err(format!("is_win_at disagrees at {p:?}"));
        }
    }
    Ok(())
}

#[test]
fn fast_engine_agrees_with_reference_on_600k_classifications() {
    let mut rng = ChaCha8Rng::seed_from_u64(0x5EED_2024);
    let mut tally = Tally::default();
    let mut positions = 0;
    while tally.calls < 600_000 {
        let size = [15, 15, 15, 7, 9, 20][rng.gen_range(0..6)];
        let stones = realistic_position(&mut rng, size);
        let rule = if rng.gen_bool(0.8) { Rule::Renju } else { [Rule::Standard, Rule::Freestyle][rng.gen_range(0..2)] };
        if let Err(e) = check(size, rule, &stones, &mut tally) {
            panic!("position {positions}: {e}");
        }
        positions += 1;
    }
    eprintln!("differential: {positions} positions, {tally:?}");
    // The test is only meaningful if every kind actually occurred often enough.
    assert!(tally.five >= 500, "{tally:?}");
    assert!(tally.overline >= 200, "{tally:?}");
    assert!(tally.double_four >= 500, "{tally:?}");
    assert!(tally.double_three >= 500, "{tally:?}");
}

fn arb_stones(size: usize) -> impl Strategy<Value = Vec<(Point, Color)>> {
    // Stones in a 9x9 corner-free window of the board, black-heavy; duplicates removed.
    proptest::collection::vec((0..9u8, 0..9u8, prop::bool::weighted(0.7)), 0..45).prop_map(move |v| {
        let off = ((size - 9) / 2) as u8;
        let mut seen = std::collections::HashSet::new();
        v.into_iter()
            .filter(|&(x, y, _)| seen.insert((x, y)))
            .map(|(x, y, b)| (Point::new(x + off, y + off), if b { Color::Black } else { Color::White }))
            .collect()
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]
    /// Shrinkable version: on a failure proptest reduces the stone list to a minimal witness.
    #[test]
    fn proptest_fast_matches_reference(stones in arb_stones(11)) {
        let mut tally = Tally::default();
        if let Err(e) = check(11, Rule::Renju, &stones, &mut tally) {
            prop_assert!(false, "{}", e);
        }
    }
}
