//! Smoke checks of the board core written with explicit coordinates (more in forbidden.rs).
use renju_rules::{Board, Color, ForbiddenKind, Point, Rule, Verdict};

fn b(stones: &[(u8, u8, Color)]) -> Board {
    let v: Vec<_> = stones.iter().map(|&(x, y, c)| (Point::new(x, y), c)).collect();
    Board::with_stones(15, Rule::Renju, &v).unwrap()
}
const B: Color = Color::Black;

#[test]
fn place_undo_hash_roundtrip() {
    let mut bd = Board::new(15, Rule::Renju).unwrap();
    assert_eq!(bd.hash(), 0);
    bd.place(Point::new(7, 7), B);
    bd.place(Point::new(7, 8), Color::White);
    assert_eq!(bd.get(Point::new(7, 8)), Some(Color::White));
    let h = bd.hash();
    assert_ne!(h, 0);
    assert_eq!(bd.undo(), Some((Point::new(7, 8), Color::White)));
    assert_eq!(bd.get(Point::new(7, 8)), None);
    bd.place(Point::new(7, 8), Color::White);
    assert_eq!(bd.hash(), h);
    assert_eq!(bd.stone_count(), 2);
}

#[test]
fn simple_double_three_is_forbidden() {
    // Black h8? no: black at f8 g8 (row) and h6 h7 (column); h8 makes two live threes.
    let bd = b(&[(5, 7, B), (6, 7, B), (7, 5, B), (7, 6, B)]);
    assert_eq!(bd.classify(Point::new(7, 7), B), Verdict::Forbidden(ForbiddenKind::DoubleThree));
    assert_eq!(bd.classify(Point::new(7, 7), Color::White), Verdict::Legal);
    assert_eq!(bd.forbidden_points().len(), 1 + bd.forbidden_points().len() - 1);
    assert!(!bd.legal_mask(B).contains(Point::new(7, 7).index(15)));
}

#[test]
fn five_and_overline() {
    let bd = b(&[(3, 7, B), (4, 7, B), (5, 7, B), (6, 7, B), (8, 7, B)]);
    assert_eq!(bd.classify(Point::new(7, 7), B), Verdict::Forbidden(ForbiddenKind::Overline));
    assert_eq!(bd.classify(Point::new(2, 7), B), Verdict::Five);
    let bd = b(&[(3, 7, B), (4, 7, B), (5, 7, B), (6, 7, B)]);
    assert_eq!(bd.classify(Point::new(7, 7), B), Verdict::Five);
}
