//! Notation: parsing/printing points and games, error messages, ASCII boards (RULES.md §1).
use renju_rules::notation::*;
use renju_rules::{Board, Color, Point, Rule};

#[test]
fn points_round_trip_and_case() {
    assert_eq!(parse_point("h8", 15).unwrap(), Point::new(7, 7));
    assert_eq!(parse_point("H8", 15).unwrap(), Point::new(7, 7));
    assert_eq!(parse_point("a1", 15).unwrap(), Point::new(0, 0));
    assert_eq!(parse_point("o15", 15).unwrap(), Point::new(14, 14));
    assert_eq!(parse_point("t20", 20).unwrap(), Point::new(19, 19));
    assert_eq!(format_point(Point::new(9, 9)), "j10");
    for size in [7usize, 15, 20] {
        for i in 0..size * size {
            let p = Point::from_index(i, size);
            assert_eq!(parse_point(&format_point(p), size).unwrap(), p);
        }
    }
    assert_eq!(parse_moves("h8 H9  j10", 15).unwrap(), vec![Point::new(7, 7), Point::new(7, 8), Point::new(9, 9)]);
    assert_eq!(format_moves(&parse_moves("h8 h9 j10", 15).unwrap()), "h8 h9 j10");
}

#[test]
fn errors_name_the_token_and_why() {
    let e = parse_point("z99", 15).unwrap_err();
    assert!(matches!(e, NotationError::OffBoard { .. }));
    assert!(e.to_string().contains("z99") && e.to_string().contains("15x15"), "{e}");
    let e = parse_moves("h8 p16", 15).unwrap_err();
    assert!(e.to_string().contains("p16") && e.to_string().contains("a..o"), "{e}");
    assert!(parse_point("p16", 20).is_ok());
    let e = parse_moves("h8 h9 H8", 15).unwrap_err();
    assert_eq!(e, NotationError::Repeated { token: "H8".into(), first: 1, second: 3 });
    assert_eq!(parse_moves("", 15).unwrap_err(), NotationError::Empty);
    assert_eq!(parse_moves("   ", 15).unwrap_err(), NotationError::Empty);
    for bad in ["8h", "h", "h8x", "h-1", "ä8"] {
        let e = parse_point(bad, 15).unwrap_err();
        assert!(matches!(e, NotationError::Malformed { .. }), "{bad}: {e:?}");
        assert!(e.to_string().contains(bad), "{e}");
    }
    assert!(matches!(parse_point("h0", 15).unwrap_err(), NotationError::OffBoard { .. }));
    assert!(matches!(parse_point("h16", 15).unwrap_err(), NotationError::OffBoard { .. }));
}

#[test]
fn ascii_board_marks_last_move_and_forbidden_kinds() {
    let mut b = Board::new(15, Rule::Renju).unwrap();
    for (i, p) in parse_moves("f8 a1 g8 a2 h6 a3 h7", 15).unwrap().into_iter().enumerate() {
        b.place(p, if i % 2 == 0 { Color::Black } else { Color::White });
    }
    let text = board_to_ascii(&b, true);
    let row = |n: usize| text.lines().find(|l| l.starts_with(&format!("{n:>2} "))).unwrap().to_string();
    // Row 8: f8 g8 black, h8 a double-three.
    assert_eq!(row(8), " 8  . . . . . X X 3 . . . . . . . 8 ");
    assert!(row(7).contains("(X)"), "last move h7 marked: {}", row(7));
    assert!(text.contains("3 double-three"));
    assert!(text.contains("h8 double-three"));
    assert_eq!(text.lines().next().unwrap().trim(), "a b c d e f g h i j k l m n o");
}
