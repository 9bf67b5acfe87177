//! Forbidden-move verdicts on hand-built positions (RULES.md §2–4). Positions are written as
//! black and white stone lists in notation (15x15 unless said otherwise); each test states the
//! right answer and why. Every position is also checked against the independent reference checker.

use renju_rules::board::ForbiddenKind::{DoubleFour, DoubleThree, Overline};
use renju_rules::notation::parse_point;
use renju_rules::{reference, Board, Color, Point, Rule, Verdict};

mod common;
use common::stones;

/// The verdict for `c` on `mv`, asserting that the fast engine and the reference agree.
fn verdict_on(rule: Rule, size: usize, black: &str, white: &str, mv: &str, c: Color) -> Verdict {
    let st = stones(black, white, size);
    let b = Board::with_stones(size, rule, &st).unwrap();
    let p = parse_point(mv, size).unwrap();
    let fast = b.classify(p, c);
    assert_eq!(fast, reference::classify(size, rule, &st, p, c), "reference disagrees on {mv}");
    fast
}
fn black(black: &str, white: &str, mv: &str) -> Verdict {
    verdict_on(Rule::Renju, 15, black, white, mv, Color::Black)
}
const DT: Verdict = Verdict::Forbidden(DoubleThree);
const DF: Verdict = Verdict::Forbidden(DoubleFour);
const OL: Verdict = Verdict::Forbidden(Overline);

#[test]
fn double_three_continuous_split_and_diagonal() {
    assert_eq!(black("f8 g8 h6 h7", "", "h8"), DT, "two unbroken threes");
    assert_eq!(black("e8 f8 h5 h6", "", "h8"), DT, "two split threes XX.X");
    assert_eq!(black("f6 g7 i7 j6", "", "h8"), DT, "two diagonal threes");
    assert_eq!(black("f8 g8 h6 h7 f6 g7", "", "h8"), DT, "three-three-three");
}

#[test]
fn double_four_on_one_line_in_three_shapes() {
    // X.X?X.X: d8 f8 h8 j8, move g8 -> X.XXX.X, five points e8 and i8 with different stones.
    assert_eq!(black("d8 f8 h8 j8", "", "g8"), DF);
    // XX.XX.XX: c8 d8 f8 i8 j8, move g8 -> five points e8 and h8.
    assert_eq!(black("c8 d8 f8 i8 j8", "", "g8"), DF);
    // XXX.X.XXX: b8 c8 d8 h8 i8 j8, move f8 -> five points e8 and g8.
    assert_eq!(black("b8 c8 d8 h8 i8 j8", "", "f8"), DF);
    // Two fours on two lines.
    assert_eq!(black("e8 f8 g8 h5 h6 h7", "d8 h4", "h8"), DF);
}

#[test]
fn combinations() {
    // four (row, blocked by d8) + four (column, blocked by h4) + three (diagonal): four-four-three.
    assert_eq!(black("e8 f8 g8 h5 h6 h7 f6 g7", "d8 h4", "h8"), DF);
    // four (row) + two threes: four-three-three is forbidden (as a double-three).
    assert_eq!(black("e8 f8 g8 h6 h7 f6 g7", "d8", "h8"), DT);
    // four + one three: four-three is legal, Black's normal win.
    assert_eq!(black("e8 f8 g8 h6 h7", "d8", "h8"), Verdict::Legal);
    // a straight four with a three is also legal.
    assert_eq!(black("e8 f8 g8 h6 h7", "", "h8"), Verdict::Legal);
}

#[test]
fn overlines_of_six_and_nine() {
    assert_eq!(black("e8 f8 g8 i8 j8", "", "h8"), OL, "six");
    assert_eq!(black("d8 e8 f8 g8 i8 j8 k8 l8", "", "h8"), OL, "nine");
    // overline takes precedence over a double-four elsewhere.
    assert_eq!(black("e8 f8 g8 i8 j8 h4 h5 h6 e5 f6 g7", "", "h8"), OL);
}

#[test]
fn five_beats_forbidden_shapes() {
    // d8..g8: h8 makes exactly five, and also a double-three (column h6 h7, diagonal f6 g7).
    assert_eq!(black("d8 e8 f8 g8 h6 h7 f6 g7", "", "h8"), Verdict::Five);
    // five on the row, overline on the column.
    assert_eq!(black("d8 e8 f8 g8 h9 h10 h11 h12 h13", "", "h8"), Verdict::Five);
}

#[test]
fn edge_blocked_three_is_fake() {
    // a8 b8 + c8: the row three touches the edge, it can only become a simple four.
    assert_eq!(black("a8 b8 c6 c7", "", "c8"), Verdict::Legal);
    // One column further in it is live: double-three.
    assert_eq!(black("b8 c8 d6 d7", "", "d8"), DT);
    // Bottom edge, column three h1 h2 + h3 and a row three.
    assert_eq!(black("h1 h2 f3 g3", "", "h3"), Verdict::Legal);
}

#[test]
fn three_whose_four_points_give_overline_is_fake() {
    // Row: b8 X, e8 f8 + g8; d8 would make d..g whose end c8 gives b..g = six; h8 would make
    // e..h whose end i8 gives e..j = six. So the row three is fake; only the column three counts.
    assert_eq!(black("b8 e8 f8 j8 g6 g7", "", "g8"), Verdict::Legal);
    // Without j8 the h8 straight four is real: double-three.
    assert_eq!(black("b8 e8 f8 g6 g7", "", "g8"), DT);
}

#[test]
fn three_whose_four_point_is_forbidden_is_fake_one_level() {
    // A = g8: row e8 f8 + g8 blocked on the left by white c8, so h8 is its only straight-four
    // point; column g6 g7 + g8 is a live three. After A, h8 makes the row four and the column
    // h5 h6 h7 h8 four: a double-four, so h8 is forbidden and the row three is fake: A is legal.
    let (b, w) = ("e8 f8 g6 g7 h5 h6 h7", "c8");
    assert_eq!(black(b, w, "g8"), Verdict::Legal);
    let mut board = Board::with_stones(15, Rule::Renju, &stones(b, w, 15)).unwrap();
    board.place(parse_point("g8", 15).unwrap(), Color::Black);
    assert_eq!(board.classify(parse_point("h8", 15).unwrap(), Color::Black), DF);
    // With only h6 h7 on the column, h8 is four-three (legal): the row three is live, A forbidden.
    assert_eq!(black("e8 f8 g6 g7 h6 h7", "c8", "g8"), DT);
}

#[test]
fn three_whose_four_point_is_forbidden_two_levels() {
    // As above, but h8 (after A) is a four (row) plus two live threes (column h6 h7 h8 and
    // diagonal f6 g7 h8): four-three-three, forbidden, so A's row three is fake and A is legal.
    // Deciding it needs the threes at h8 to be live, i.e. their own four points (level 2).
    assert_eq!(black("e8 f8 g6 g7 h6 h7 f6", "c8", "g8"), Verdict::Legal);
    // White i9 blocks h8's diagonal three on one side and e5 on the other: h8 becomes
    // four-three (legal), so A's row three is live again: A is a double-three.
    assert_eq!(black("e8 f8 g6 g7 h6 h7 f6", "c8 i9 e5", "g8"), DT);
}

#[test]
fn revived_three_not_containing_the_move_does_not_count() {
    // Row three e8 f8 g8 (white c8) has h8 as its only straight-four point. Before the move h8 is
    // a double-four (row + column h5 h6 h7, whose other end is spoiled by h3: h4 would give an
    // overline, so the column four's five point is h9). Black h10 turns h9 into an overline
    // point, so h8 stops being a double-four and the row three is live again, and h10 also makes
    // its own three f10 g10 h10. Only one three contains h10: legal (common-stone rule).
    let (b, w) = ("e8 f8 g8 h3 h5 h6 h7 f10 g10", "c8");
    let board = Board::with_stones(15, Rule::Renju, &stones(b, w, 15)).unwrap();
    assert_eq!(board.classify(parse_point("h8", 15).unwrap(), Color::Black), DF);
    assert_eq!(black(b, w, "h10"), Verdict::Legal);
    let mut after = board.clone();
    after.place(parse_point("h10", 15).unwrap(), Color::Black);
    assert_eq!(after.classify(parse_point("h8", 15).unwrap(), Color::Black), Verdict::Legal);
}

#[test]
fn threes_formed_at_different_times_do_not_count() {
    // d8 e8 f8 is an older live three; h10 makes one new three f10 g10 h10: legal.
    assert_eq!(black("d8 e8 f8 f10 g10", "", "h10"), Verdict::Legal);
}

#[test]
fn white_and_other_rules() {
    let (b5, w) = ("d8 e8 f8 g8 i8", "");
    // Black overline: forbidden under renju, no win under standard, a win under freestyle.
    assert_eq!(verdict_on(Rule::Renju, 15, b5, w, "h8", Color::Black), OL);
    assert_eq!(verdict_on(Rule::Standard, 15, b5, w, "h8", Color::Black), Verdict::Legal);
    assert_eq!(verdict_on(Rule::Freestyle, 15, b5, w, "h8", Color::Black), Verdict::Five);
    // White's overline wins under renju (and freestyle) but not under standard.
    assert_eq!(verdict_on(Rule::Renju, 15, "", b5, "h8", Color::White), Verdict::Five);
    assert_eq!(verdict_on(Rule::Standard, 15, "", b5, "h8", Color::White), Verdict::Legal);
    // White has no forbidden moves; double-three is fine outside renju.
    assert_eq!(verdict_on(Rule::Renju, 15, "", "f8 g8 h6 h7", "h8", Color::White), Verdict::Legal);
    assert_eq!(verdict_on(Rule::Standard, 15, "f8 g8 h6 h7", "", "h8", Color::Black), Verdict::Legal);
    assert_eq!(verdict_on(Rule::Freestyle, 15, "f8 g8 h6 h7", "", "h8", Color::Black), Verdict::Legal);
    assert_eq!(verdict_on(Rule::Renju, 15, "h8", "", "h8", Color::Black), Verdict::Occupied);
}

#[test]
fn is_win_at_per_rule() {
    let six = stones("c8 d8 e8 f8 g8 h8", "", 15);
    let five = stones("d8 e8 f8 g8 h8", "", 15);
    let p = parse_point("h8", 15).unwrap();
    let check = |rule, st: &[(Point, Color)]| Board::with_stones(15, rule, st).unwrap().is_win_at(p);
    assert!(check(Rule::Renju, &five));
    assert!(!check(Rule::Renju, &six));
    assert!(!check(Rule::Standard, &six));
    assert!(check(Rule::Freestyle, &six));
    let white_six: Vec<_> = six.iter().map(|&(q, _)| (q, Color::White)).collect();
    assert!(check(Rule::Renju, &white_six));
    assert!(!check(Rule::Renju, &stones("e8 f8 g8 h8", "", 15)));
}

#[test]
fn small_board_edges() {
    // 7x7: a row filling the whole board is seven: overline for Black under renju.
    let v = verdict_on(Rule::Renju, 7, "a4 b4 c4 e4 f4 g4", "", "d4", Color::Black);
    assert_eq!(v, OL);
    let v = verdict_on(Rule::Renju, 7, "a4 b4 c4 e4", "", "d4", Color::Black);
    assert_eq!(v, Verdict::Five);
    assert!(Board::new(6, Rule::Renju).is_err());
    assert!(Board::new(21, Rule::Renju).is_err());
}

#[test]
fn masks_and_forbidden_list() {
    let b = Board::with_stones(15, Rule::Renju, &stones("f8 g8 h6 h7 d8 f10 h10", "", 15)).unwrap();
    let forb = b.forbidden_points();
    // h8: row d8 . f8 g8 h8 (five point e8) and column h6 h7 h8 . h10 (five point h9): double-four.
    assert!(forb.contains(&(parse_point("h8", 15).unwrap(), DoubleFour)), "{forb:?}");
    let mask = b.legal_mask(Color::Black);
    for &(p, _) in &forb {
        assert!(!mask.contains(p.index(15)));
    }
    assert_eq!(mask.len() + forb.len(), 225 - 7);
    assert_eq!(b.legal_mask(Color::White).len(), 225 - 7);
}
