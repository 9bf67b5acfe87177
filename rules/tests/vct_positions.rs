//! Hand-built VCT positions with the answers written down (RULES.md §2–4; the threat game is
//! listed in `renju_rules::vct`). Every claimed win is replayed by the reference checkers
//! `reference::check_vct_line` (the principal branch) and, where cheap enough in a debug build,
//! `reference::check_vct_win` / `reference::has_vct` (the whole tree, to a small depth).

use renju_rules::notation::format_moves;
use renju_rules::vcf::{vcf, Limits, Vcf};
use renju_rules::vct::{vct, vct_refutations, vct_with_options, Options, Vct, VctDefence};
use renju_rules::{reference, Board, Color, ForbiddenKind, Rule, Verdict};

mod common;
use common::{pt, stones};

/// A 15x15 board under `rule` with the black, then the white stones (notation lists).
fn board(rule: Rule, black: &str, white: &str) -> Board {
    Board::with_stones(15, rule, &stones(black, white, 15)).unwrap()
}

/// The solver's verdict with a generous budget; a win's line must replay by the reference.
fn solve(b: &Board, c: Color) -> Vct {
    let v = vct(b, c, &Limits::nodes(1_000_000));
    if let Vct::Win { line } = &v {
        if let Err(e) = reference::check_vct_line(15, b.rule(), b.stones(), c, line) {
            panic!("line {} fails the reference replay: {e}", format_moves(line));
        }
    }
    v
}

/// The solver limited to `depth` threats, without the VCF shortcut (the reference's game).
fn solve_depth(b: &Board, c: Color, depth: u32) -> Vct {
    let options = Options { max_depth: depth, vcf_nodes: 0 };
    let v = vct_with_options(b, c, &Limits::nodes(1_000_000), &options).0;
    if let Vct::Win { line } = &v {
        reference::check_vct_line(15, b.rule(), b.stones(), c, line).unwrap();
        assert!(reference::check_vct_win(15, b.rule(), b.stones(), c, line[0], depth), "{}", format_moves(line));
    }
    v
}

fn no_vcf(b: &Board, c: Color) {
    assert_eq!(vcf(b, c, &Limits::nodes(1_000_000)), Vcf::NoWin);
}

// (a), (b) and (d) share a shape. The attacker has the column three h5 h6 h7, capped by the
// defender's h8 (fours at h4 and h3), the stone e4 on row 4, and the anti-diagonal pair d6 e5.
// The defender's i7 and g6 cut two diagonals that would otherwise give quicker double threes.
// f4 makes the anti-diagonal three d6 e5 f4 (straight-four points c7 and g3) and the row pair
// e4 f4. After any defence, h4 is a four-three: the column four (the defender must take h3)
// and the split three e4 f4 . h4, whose straight four g4 (ends d4 and i4) follows.
const SHAPE_A: &str = "h5 h6 h7 e4 d6 e5";
const SHAPE_D: &str = "h8 i7 g6";

#[test]
fn a_three_then_a_four_three_wins_for_white() {
    let b = board(Rule::Renju, SHAPE_D, SHAPE_A);
    no_vcf(&b, Color::White);
    // f4 makes no four and wins within three threats (f4, h4, g4) against every reply.
    let mut after = b.clone();
    after.place(pt("f4"), Color::White);
    assert!(renju_rules::vcf::five_points(&after, Color::White).is_empty());
    assert!(reference::check_vct_win(15, Rule::Renju, b.stones(), Color::White, pt("f4"), 3));
    // White has no VCT of one threat; with two, the four h4 (forced h3) then f4, a double
    // three (allowed to White), also wins.
    assert_eq!(solve_depth(&b, Color::White, 1), Vct::Unknown);
    assert_eq!(format_moves(&line(solve_depth(&b, Color::White, 2))), "h4 h3 f4");
    assert!(matches!(solve(&b, Color::White), Vct::Win { .. }));
}

fn line(v: Vct) -> Vec<renju_rules::Point> {
    match v {
        Vct::Win { line } => line,
        other => panic!("expected a win, got {other:?}"),
    }
}

#[test]
fn black_has_a_vct_but_no_vcf() {
    // The same shape with the colours swapped. For Black the quick line h4 h3 f4 fails: after
    // it f4 would be a double-three, a forbidden move. So Black needs the three first: f4 (a
    // single three, legal), then h4 is a four-three (legal) and g4 the straight four.
    let b = board(Rule::Renju, SHAPE_A, SHAPE_D);
    no_vcf(&b, Color::Black);
    let mut after = b.clone();
    after.place(pt("h4"), Color::Black);
    after.place(pt("h3"), Color::White);
    assert_eq!(after.classify(pt("f4"), Color::Black), Verdict::Forbidden(ForbiddenKind::DoubleThree));
    assert_eq!(solve_depth(&b, Color::Black, 2), Vct::Unknown);
    assert!(!reference::has_vct(15, Rule::Renju, b.stones(), Color::Black, 2));
    let l = line(solve_depth(&b, Color::Black, 3));
    assert_eq!(format_moves(&l[..1]), "f4", "{}", format_moves(&l));
    assert!(matches!(solve(&b, Color::Black), Vct::Win { .. }));
}

// (c) Black f4 g4 and the capped column three h5 h6 h7 (h8 white): h4 is a four, and would be a
// four-three with the row three f4 g4 h4, but j4 (white) leaves that three one straight-four
// point, e4, and e4 is an overline for Black (column e1 e2 e3 . e5 e6, capped by e7). The
// three is fake, so h4 is only a four. White's g5, f3, f5 and g6 cut the diagonals and rows
// that the column e stones would otherwise give Black.
const FAKE_B: &str = "f4 g4 h5 h6 h7 e1 e2 e3 e5 e6";
const FAKE_W: &str = "h8 j4 g5 f3 e7 f5 g6";

#[test]
fn a_three_whose_straight_four_point_is_forbidden_is_no_threat() {
    let b = board(Rule::Renju, FAKE_B, FAKE_W);
    assert_eq!(b.classify(pt("e4"), Color::Black), Verdict::Forbidden(ForbiddenKind::Overline));
    no_vcf(&b, Color::Black);
    // Under renju Black has no VCT within three threats (by the solver and by the reference).
    assert_eq!(solve_depth(&b, Color::Black, 3), Vct::Unknown);
    assert!(!reference::has_vct(15, Rule::Renju, b.stones(), Color::Black, 2));
    // Under the standard rule e4 is allowed (and no five: six stones): h4 h3 e4 wins at once.
    let std = board(Rule::Standard, FAKE_B, FAKE_W);
    assert_eq!(format_moves(&line(solve_depth(&std, Color::Black, 2))), "h4 h3 e4");
    // With the colours swapped White wins too: for White the overline e4 is a five.
    let mirrored = board(Rule::Renju, FAKE_W, FAKE_B);
    assert_eq!(format_moves(&line(solve(&mirrored, Color::White))), "e4");
}

#[test]
fn a_counter_four_defeats_the_vct() {
    // Shape (a) plus Black's closed three b11 b12 b13 (b10 white): to any White three Black
    // answers b14 (or b15), a four; White's forced block on the other point makes no threat,
    // and Black then has a free move. The quick line h4 h3 f4 fails the same way.
    let b = board(Rule::Renju, &format!("{SHAPE_D} b11 b12 b13"), &format!("{SHAPE_A} b10"));
    no_vcf(&b, Color::White);
    assert_eq!(solve(&b, Color::White), Vct::NoWin);
    assert_eq!(solve_depth(&b, Color::White, 2), Vct::NoWin);
    assert!(!reference::has_vct(15, Rule::Renju, b.stones(), Color::White, 2));
    // Without the counter-four the same position wins (test (a)).
    assert!(matches!(solve(&board(Rule::Renju, SHAPE_D, SHAPE_A), Color::White), Vct::Win { .. }));
}

// (e) White f8 g8; h8 makes the open three f8 g8 h8, whose defence points are e8 and i8 (the
// straight-four points; d8 or j8 leave the other side's straight four). Black's e6 e7 with
// c6 d7, and i6 i7 with k6 j7, make both e8 and i8 double-threes for Black. Black has no four.
const FB_B: &str = "e6 e7 c6 d7 i6 i7 j7 k6";
const FB_W: &str = "f8 g8";

#[test]
fn a_three_whose_defence_points_are_forbidden_to_black_wins() {
    let b = board(Rule::Renju, FB_B, FB_W);
    for p in ["e8", "i8"] {
        assert_eq!(b.classify(pt(p), Color::Black), Verdict::Forbidden(ForbiddenKind::DoubleThree), "{p}");
    }
    no_vcf(&b, Color::White);
    assert_eq!(format_moves(&line(solve_depth(&b, Color::White, 1))), "h8");
    assert!(reference::check_vct_win(15, Rule::Renju, b.stones(), Color::White, pt("h8"), 1));
    assert!(matches!(solve(&b, Color::White), Vct::Win { .. }));
    // Under the standard rule Black may defend on e8 or i8: no VCT.
    let std = board(Rule::Standard, FB_B, FB_W);
    assert_eq!(solve(&std, Color::White), Vct::NoWin);
    assert!(!reference::has_vct(15, Rule::Standard, std.stones(), Color::White, 2));
}

#[test]
fn refutations_of_an_open_three() {
    // White's open three f8 g8 h8 (d8 to j8 empty); Black, to move, has the closed three
    // b11 b12 b13 (b10 white). White's threat is a straight four at e8 or i8. Black's
    // refutations: e8 and i8 (after d8 White plays i8, after j8 White plays e8: straight fours),
    // and the fours b14 and b15 (White must block the other point, which is no threat, and
    // Black moves again). Every other move loses to a straight four.
    let b = board(Rule::Renju, "b11 b12 b13", "f8 g8 h8 b10");
    let d = vct_refutations(&b, Color::Black, &Limits::nodes(2_000_000));
    let VctDefence::Threat { threat, mut refutations, undecided } = d else { panic!("{d:?}") };
    assert!(["e8", "i8"].contains(&format_moves(&threat).as_str()), "{}", format_moves(&threat));
    refutations.sort_by_key(|p| (p.x, p.y));
    assert_eq!(format_moves(&refutations), "b14 b15 e8 i8");
    assert!(undecided.is_empty(), "{}", format_moves(&undecided));
    for r in ["b14", "e8", "i8"] {
        let mut after = b.clone();
        after.place(pt(r), Color::Black);
        assert!(!reference::has_vct(15, Rule::Renju, after.stones(), Color::White, 1), "{r}");
    }
    // Nothing to refute on a quiet board.
    let quiet = board(Rule::Renju, "h8", "h9");
    assert_eq!(vct_refutations(&quiet, Color::Black, &Limits::nodes(100_000)), VctDefence::NoThreat);
}
