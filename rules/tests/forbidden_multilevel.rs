//! Complex forbidden moves (多重禁手, RULES.md §3 "fake three", recursive; seed 003's worked
//! example A -> B -> C -> D): hand-built chains where a double-three candidate's three is fake
//! only because its straight-four point is forbidden, which in turn depends on the next point,
//! three levels deep. Every verdict is written down and also checked against the independent
//! reference checker, at every level.
//!
//! The position (15x15, x = column a.., y = row 1..). The chain points are
//! A = e6, B = g6, C = g8, D = i8. Each three `F` below is blocked by a white stone two points
//! behind the new stone (`O . P X . X . .`), so its only straight-four point is the gap, the next
//! chain point:
//! - A's row three e6 f6 . h6 (white c6): only straight-four point g6 = B.
//!   A's column three e4 e5 e6: live through e3 (e7 is spoiled by white e8).
//! - B (after A) makes the row straight four e6 f6 g6 h6; its column three g6 g7 . g9 (white g4)
//!   has the only straight-four point g8 = C; its anti-diagonal three g6 h5 i4 is live through
//!   j3 (f7 is spoiled by white e8).
//! - C (after A, B) makes the column straight four g6 g7 g8 g9; its row three g8 h8 . j8
//!   (white e8) has the only straight-four point i8 = D; its anti-diagonal three e10 f9 g8 is
//!   live through d11 (h7 is a double-four then: column h5 h6 h7 h8 + that diagonal).
//! - D (after A, B, C) makes the row straight four g8 h8 i8 j8 and the column four i8 i9 i10 i11
//!   (white i12): a double-four, forbidden outright.
//!
//! So: D forbidden => C's row three is fake => C is a four-three (legal) => B's column three is
//! live => B is four-three-three (forbidden) => A's row three is fake => A is legal.

use renju_rules::board::ForbiddenKind::{DoubleFour, DoubleThree};
use renju_rules::{reference, Board, Color, Point, Rule, Verdict};

mod common;
use common::{pt, stones};

const DT: Verdict = Verdict::Forbidden(DoubleThree);
const DF: Verdict = Verdict::Forbidden(DoubleFour);
const LEGAL: Verdict = Verdict::Legal;

const BLACK: &str = "f6 h6 e5 e4 g7 g9 h5 i4 h8 j8 f9 e10 i9 i10 i11";
const WHITE: &str = "c6 g4 e8 i12";
/// D's column four, removed in the "flipped" variant.
const D_COLUMN: [&str; 4] = ["i9", "i10", "i11", "i12"];

/// Black's verdict on `mv` after the black chain points `placed` were added to `base`, checked
/// against the reference checker; also checks `legal_mask` / `forbidden_points` agree.
fn verdict_after(base: &[(Point, Color)], placed: &[&str], mv: &str) -> Verdict {
    let mut st = base.to_vec();
    st.extend(placed.iter().map(|s| (pt(s), Color::Black)));
    let b = Board::with_stones(15, Rule::Renju, &st).unwrap();
    let p = pt(mv);
    let fast = b.classify(p, Color::Black);
    let slow = reference::classify(15, Rule::Renju, &st, p, Color::Black);
    assert_eq!(fast, slow, "reference disagrees on {mv} after {placed:?}");
    let forbidden = matches!(fast, Verdict::Forbidden(_));
    assert_eq!(b.legal_mask(Color::Black).contains(p.index(15)), !forbidden, "legal_mask at {mv}");
    let listed = b.forbidden_points().iter().find(|(q, _)| *q == p).map(|&(_, k)| Verdict::Forbidden(k));
    assert_eq!(listed, if forbidden { Some(fast) } else { None }, "forbidden_points at {mv}");
    fast
}

#[test]
fn three_levels_deep_a_is_legal() {
    let base = stones(BLACK, WHITE, 15);
    // Level 3: D is a double-four whatever else happens.
    assert_eq!(verdict_after(&base, &["e6", "g6", "g8"], "i8"), DF, "D");
    // Level 2: C's row three is fake (its only straight-four point D is forbidden); its
    // anti-diagonal three is live through d11 (h7 is a double-four); C = four + one three.
    assert_eq!(verdict_after(&base, &["e6", "g6", "g8"], "d11"), LEGAL, "d11 after C");
    assert_eq!(verdict_after(&base, &["e6", "g6", "g8"], "h7"), DF, "h7 after C");
    assert_eq!(verdict_after(&base, &["e6", "g6"], "g8"), LEGAL, "C");
    // Level 1: C legal, so B's column three is live; with the anti-diagonal three (live through
    // j3) and the row four, B is four-three-three.
    assert_eq!(verdict_after(&base, &["e6", "g6"], "j3"), LEGAL, "j3 after B");
    assert_eq!(verdict_after(&base, &["e6"], "g6"), DT, "B");
    // Level 0: B forbidden, so A's row three is fake; the column three (live through e3) alone
    // does not make a double-three.
    assert_eq!(verdict_after(&base, &["e6"], "e3"), LEGAL, "e3 after A");
    assert_eq!(verdict_after(&base, &[], "e6"), LEGAL, "A");
}

#[test]
fn three_levels_deep_flipped_at_the_bottom() {
    // Without D's column four, D is just a straight four (legal), and every level flips:
    // C's row three is live (C four-three-three: forbidden), B's column three is fake (B is a
    // four-three: legal), A's row three is live (A double-three: forbidden).
    let black: String = BLACK.split(' ').filter(|s| !D_COLUMN.contains(s)).collect::<Vec<_>>().join(" ");
    let white: String = WHITE.split(' ').filter(|s| !D_COLUMN.contains(s)).collect::<Vec<_>>().join(" ");
    let base = stones(&black, &white, 15);
    assert_eq!(verdict_after(&base, &["e6", "g6", "g8"], "i8"), LEGAL, "D");
    assert_eq!(verdict_after(&base, &["e6", "g6"], "g8"), DT, "C");
    assert_eq!(verdict_after(&base, &["e6"], "g6"), LEGAL, "B");
    assert_eq!(verdict_after(&base, &[], "e6"), DT, "A");
}

#[test]
fn two_levels_deep() {
    // Black d11 with white c12 turns C's anti-diagonal three into a four (c12 blocks it, five point
    // h7): C is then a double-four outright (level 2). So B's column three is fake, B is a
    // four-three (legal, level 1), A's row three is live and A is a double-three (level 0).
    let base = stones(&format!("{BLACK} d11"), &format!("{WHITE} c12"), 15);
    assert_eq!(verdict_after(&base, &["e6", "g6"], "g8"), DF, "C");
    assert_eq!(verdict_after(&base, &["e6"], "g6"), LEGAL, "B");
    assert_eq!(verdict_after(&base, &[], "e6"), DT, "A");
}
