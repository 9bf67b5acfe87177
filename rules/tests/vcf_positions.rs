//! Hand-built VCF positions with the answers written down (RULES.md §2–4; the solver's rules are
//! listed in `renju_rules::vcf`). Every `win` line is also replayed by the simple reference
//! checker `reference::check_vcf_line`.

use renju_rules::notation::format_moves;
use renju_rules::vcf::{line_wins, refutations, vcf, Defence, Limits, Vcf};
use renju_rules::{reference, Board, Color, ForbiddenKind, Rule, Verdict};

mod common;
use common::{pt, stones};

/// A 15x15 board under `rule` with the black, then the white stones (notation lists).
fn board(rule: Rule, black: &str, white: &str) -> Board {
    Board::with_stones(15, rule, &stones(black, white, 15)).unwrap()
}

/// The solver's verdict with a generous budget; a win's line must pass the reference checker.
fn solve(b: &Board, c: Color) -> Vcf {
    let v = vcf(b, c, &Limits::nodes(1_000_000));
    if let Vcf::Win { line } = &v {
        if let Err(e) = reference::check_vcf_line(15, b.rule(), b.stones(), c, line) {
            panic!("line {} fails the reference check: {e}", format_moves(line));
        }
    }
    v
}

fn line_of(v: &Vcf) -> String {
    match v {
        Vcf::Win { line } => format_moves(line),
        other => panic!("expected a win, got {other:?}"),
    }
}

#[test]
fn an_open_five_point_wins_at_once() {
    // d8 e8 f8 g8 has two five points; the line is the first in index order.
    let b = board(Rule::Renju, "d8 e8 f8 g8", "a1 a2 a3 a4");
    assert_eq!(line_of(&solve(&b, Color::Black)), "c8");
}

// A Black VCF of four fours (renju): the columns k, l, n each hold three black stones capped by a
// white one (k10, l7, n10), so k11, l11 and n11 are simple fours (forced blocks k15, l12, n15);
// with k11 l11 . n11 on row 11 the fourth move m11 is a straight four. No shorter VCF: row 11
// starts empty, and each column gives it one stone.
const CHAIN_BLACK: &str = "k12 k13 k14 l10 l9 l8 n12 n13 n14";
const CHAIN_WHITE: &str = "k10 l7 n10";

// Row 3 is `X.X.X.X` (c3 e3 g3 i3): f3 makes two fours on the same line (five points d3, h3), a
// double-four; d3 and h3 also make a four on row 3, but each fills a column gap `XX.XXX`
// (d1 d2 . d4 d5 d6 capped by d7, the same on h) into an overline. White's f4 cuts the two
// diagonals d2-h6 and d6-h2 that the columns would otherwise form with e3 and g3. So under renju
// Black's only four-making points are forbidden.
const DF_BLACK: &str = "c3 e3 g3 i3 d1 d2 d4 d5 d6 h1 h2 h4 h5 h6";
const DF_WHITE: &str = "d7 h7 f4";

#[test]
fn black_vcf_of_four_fours() {
    let b = board(Rule::Renju, CHAIN_BLACK, CHAIN_WHITE);
    let v = solve(&b, Color::Black);
    let Vcf::Win { line } = &v else { panic!("{v:?}") };
    assert_eq!(line.len(), 7, "four fours, three forced blocks: {}", format_moves(line));
    // The first three fours are the column fours, in some order, each answered on its column.
    let mut fours: Vec<String> = line[..6].chunks(2).map(format_moves).collect();
    fours.sort();
    assert_eq!(fours, ["k11 k15", "l11 l12", "n11 n15"]);
    assert_eq!(format_moves(&line[6..]), "m11");
    // White, to move instead, has no VCF.
    assert_eq!(solve(&b, Color::White), Vcf::NoWin);
}

#[test]
fn a_black_line_avoids_the_double_four_point() {
    // The chain and the row-3 trap on one board: Black wins, without touching d3, f3 or h3.
    let black = format!("{CHAIN_BLACK} {DF_BLACK}");
    let white = format!("{CHAIN_WHITE} {DF_WHITE}");
    let b = board(Rule::Renju, &black, &white);
    assert_eq!(b.classify(pt("f3"), Color::Black), Verdict::Forbidden(ForbiddenKind::DoubleFour));
    assert_eq!(b.classify(pt("d3"), Color::Black), Verdict::Forbidden(ForbiddenKind::Overline));
    let line = line_of(&solve(&b, Color::Black));
    assert_eq!(line.split(' ').count(), 7, "{line}");
    for bad in ["d3", "f3", "h3"] {
        assert!(!line.split(' ').any(|m| m == bad), "{line} plays {bad}");
    }
}

#[test]
fn the_only_fours_are_forbidden_points_so_black_has_no_vcf() {
    let b = board(Rule::Renju, DF_BLACK, DF_WHITE);
    assert_eq!(solve(&b, Color::Black), Vcf::NoWin);
}

#[test]
fn standard_and_freestyle_differ_on_the_same_position() {
    // Standard: no forbidden moves, so f3's two fours win at once. Freestyle: the overline on
    // column d (or h) is itself a win.
    assert_eq!(line_of(&solve(&board(Rule::Standard, DF_BLACK, DF_WHITE), Color::Black)), "f3");
    assert_eq!(line_of(&solve(&board(Rule::Freestyle, DF_BLACK, DF_WHITE), Color::Black)), "d3");
}

#[test]
fn five_beats_forbidden_for_black() {
    // d3 makes an exact five on row 3 (c3 d3 e3 f3 g3) and an overline on column d: a win.
    let b = board(Rule::Renju, "c3 e3 f3 g3 d1 d2 d4 d5 d6", "d7");
    assert_eq!(b.classify(pt("d3"), Color::Black), Verdict::Five);
    assert_eq!(line_of(&solve(&b, Color::Black)), "d3");
}

// d8 e8 and f9 f10 make f8 a double-three for Black. White's anti-diagonal g7 h6 (i5, j4) lies
// between black stones on e9 and k3, so White's four g7 h6 i5 j4 can only be blocked on f8. i5
// is a four on column i (i6 i7 i8, i9 black), forcing i4.
const FB_BLACK: &str = "d8 e8 f9 f10 k3 i9 e9";
const FB_WHITE: &str = "g7 h6 i6 i7 i8";

#[test]
fn white_vcf_ends_on_a_four_whose_block_is_forbidden() {
    let b = board(Rule::Renju, FB_BLACK, FB_WHITE);
    assert_eq!(b.classify(pt("f8"), Color::Black), Verdict::Forbidden(ForbiddenKind::DoubleThree));
    assert_eq!(line_of(&solve(&b, Color::White)), "i5 i4 j4");
    // Under the standard rule Black simply blocks on f8.
    assert_eq!(solve(&board(Rule::Standard, FB_BLACK, FB_WHITE), Color::White), Vcf::NoWin);
}

// Black: row 10 c10 d10 e10 (b10 white) and column f11 f12. f10 is a four-three: White blocks g10,
// then f9 or f13 is a straight four. With White's g11 g12 g13 (g14 black) the block on g10 is a
// four of White (five point g9): Black must answer g9, which makes no four, and the line fails.
const CF_BLACK: &str = "c10 d10 e10 f11 f12 g14";
const CF_WHITE: &str = "b10";

#[test]
fn a_counter_four_breaks_an_otherwise_winning_line() {
    let without = board(Rule::Renju, CF_BLACK, CF_WHITE);
    let v = solve(&without, Color::Black);
    let line = line_of(&v);
    assert!(line == "f10 g10 f9" || line == "f10 g10 f13", "{line}");
    let with = board(Rule::Renju, CF_BLACK, &format!("{CF_WHITE} g11 g12 g13"));
    assert_eq!(solve(&with, Color::Black), Vcf::NoWin);
    let Vcf::Win { line } = v else { unreachable!() };
    assert!(!line_wins(&with, Color::Black, &line));
    let err = reference::check_vcf_line(15, Rule::Renju, with.stones(), Color::Black, &line).unwrap_err();
    assert!(err.contains("defender can win"), "{err}");
}

#[test]
fn the_defender_must_block_an_existing_four_with_a_four() {
    // White already has a four (five point g9 after g10): with the counter-four position and
    // White's g10 on the board, Black to move must block on g9, which is no four: no VCF.
    let b = board(Rule::Renju, "c10 d10 e10 f11 f12 g14 f10", "b10 g11 g12 g13 g10");
    assert_eq!(solve(&b, Color::Black), Vcf::NoWin);
    // Give Black an open three h9 i9 j9: the forced block on g9 is now a straight four.
    let b = board(Rule::Renju, "c10 d10 e10 f11 f12 g14 f10 h9 i9 j9", "b10 g11 g12 g13 g10");
    assert_eq!(line_of(&solve(&b, Color::Black)), "g9");
}

#[test]
fn refutations_of_a_four_three_threat() {
    // Black threatens f10 (four-three): White to move must stop it. Every refutation must leave
    // Black without a VCF, and the obvious ones are among them.
    let b = board(Rule::Renju, CF_BLACK, CF_WHITE);
    let d = refutations(&b, Color::White, &Limits::nodes(5_000_000));
    let Defence::Threat { threat, refutations: refs } = d else { panic!("{d:?}") };
    assert!(format_moves(&threat).starts_with("f10"));
    let names: Vec<String> = refs.iter().map(|&p| format_moves(&[p])).collect();
    for must in ["f10", "g10", "f9", "f13"] {
        assert!(names.contains(&must.to_string()), "{must} missing from {names:?}");
    }
    for &m in &refs {
        let mut after = b.clone();
        after.place(m, Color::White);
        assert_eq!(vcf(&after, Color::Black, &Limits::nodes(1_000_000)), Vcf::NoWin, "{m:?}");
    }
    assert!(refs.len() < 20, "{names:?}");
    // No threat at all on an empty-ish board.
    let quiet = board(Rule::Renju, "h8", "h9");
    assert_eq!(refutations(&quiet, Color::Black, &Limits::nodes(10_000)), Defence::NoThreat);
}
