//! Verdicts are invariant under the 8 board symmetries (RULES.md §1: the rules do not depend on
//! orientation; §3–4: lines are the 4 directions, which the symmetries permute). For many random
//! realistic positions (random games played near existing stones, and dense black-heavy clusters
//! so that forbidden shapes occur), on several board sizes and every rule, and for every
//! symmetry `s`: `classify(s(p), c)` on the transformed board equals `classify(p, c)` on the
//! original for every point and both colours, and `forbidden_points` / `legal_mask` are the
//! images of the original ones. The test counts the forbidden verdicts it saw so that it cannot
//! pass vacuously.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use renju_rules::{Board, Color, Point, Rule, Symmetry, Verdict};

mod common;
use common::realistic_position;

#[test]
fn verdicts_masks_and_forbidden_lists_are_invariant_under_all_8_symmetries() {
    let mut rng = ChaCha8Rng::seed_from_u64(0x5733_0008);
    let mut forbidden_seen = 0usize;
    let mut fives_seen = 0usize;
    let mut positions = 0usize;
    while positions < 1000 {
        let size = [15, 15, 15, 7, 10, 20][rng.gen_range(0..6)];
        let rule = [Rule::Renju, Rule::Renju, Rule::Renju, Rule::Standard, Rule::Freestyle][rng.gen_range(0..5)];
        let stones = realistic_position(&mut rng, size);
        let board = Board::with_stones(size, rule, &stones).unwrap();
        let verdicts: Vec<[Verdict; 2]> = (0..size * size)
            .map(|i| {
                let p = Point::from_index(i, size);
                [board.classify(p, Color::Black), board.classify(p, Color::White)]
            })
            .collect();
        forbidden_seen += verdicts.iter().filter(|v| matches!(v[0], Verdict::Forbidden(_))).count();
        fives_seen += verdicts.iter().filter(|v| v[0] == Verdict::Five).count();
        let forbidden = board.forbidden_points();
        let masks = [board.legal_mask(Color::Black), board.legal_mask(Color::White)];
        for s in Symmetry::ALL {
            let t = s.apply_board(&board);
            assert_eq!(t.stone_count(), board.stone_count());
            for (i, v) in verdicts.iter().enumerate() {
                let q = s.apply(Point::from_index(i, size), size);
                for (k, c) in [Color::Black, Color::White].into_iter().enumerate() {
                    assert_eq!(t.classify(q, c), v[k], "{rule:?} size {size} {s:?} {c:?} at {q:?}; stones {stones:?}");
                }
            }
            let mut mapped: Vec<_> = forbidden.iter().map(|&(p, k)| (s.apply(p, size), k)).collect();
            mapped.sort_by_key(|&(p, _)| p.index(size));
            assert_eq!(t.forbidden_points(), mapped, "forbidden_points {rule:?} size {size} {s:?}");
            for (k, c) in [Color::Black, Color::White].into_iter().enumerate() {
                let want: std::collections::BTreeSet<usize> = masks[k].iter().map(|i| s.apply_index(i, size)).collect();
                let got: std::collections::BTreeSet<usize> = t.legal_mask(c).iter().collect();
                assert_eq!(got, want, "legal_mask {c:?} {rule:?} size {size} {s:?}");
            }
        }
        positions += 1;
    }
    eprintln!("symmetry: {positions} positions, {forbidden_seen} forbidden and {fives_seen} five verdicts for Black");
    assert!(forbidden_seen >= 1000, "only {forbidden_seen} forbidden verdicts: positions too tame");
    assert!(fives_seen >= 300, "only {fives_seen} five verdicts");
}
