//! Helpers shared by the search crate's integration tests.
#![allow(dead_code)]

use renju_rules::{Action, Game, Point, Protocol, Rule};

/// A free-opening game of `rule` with the given stones placed alternately (black first); the
/// game must not be over.
pub fn game_with(rule: Rule, black: &[(u8, u8)], white: &[(u8, u8)]) -> Game {
    let mut g = Game::new(15, rule, Protocol::Free { centre: false }, None).unwrap();
    for k in 0..black.len().max(white.len()) {
        if let Some(&(x, y)) = black.get(k) {
            g.apply(Action::Place(Point::new(x, y))).unwrap();
        }
        if let Some(&(x, y)) = white.get(k) {
            g.apply(Action::Place(Point::new(x, y))).unwrap();
        }
    }
    assert!(g.outcome().is_none());
    g
}
