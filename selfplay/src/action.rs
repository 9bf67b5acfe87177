//! The action space: every decision of a [`Game`](renju_rules::Game) at a fixed index (DESIGN.md "Action space").
//!
//! For a board of side `S` (`P = S * S` points) the space has `A = P + 4 + MAX_OFFERS` entries:
//!
//! | index | action |
//! |---|---|
//! | `0 .. P` | `Place(Point::from_index(i, S))`: a stone, an offer, or picking the offer there |
//! | `P + 0` | `Keep` (decline a swap; Lianhuan: take the next stone; Swap2: stay White) |
//! | `P + 1` | `Swap` (swap colours; Lianhuan: exchange; Swap2: take Black) |
//! | `P + 2` | `Single` (Lianhuan) |
//! | `P + 3` | `Double` (Lianhuan; Swap2: place stones 4 and 5) |
//! | `P + 4 + (n - 1)` | `ChooseN(n)`, `n = 1..=MAX_OFFERS` (fifth-n; Soosõrv-N declares 1..=N; Taraguchi-N: 1 or N) |
//!
//! Symmetry augmentation permutes `0 .. P` only; protocol actions are unaffected.
//!
//! Soosõrv-N, Taraguchi-N and Swap2 (RULES.md §5.9–5.11) use these actions only, so the space
//! and every network trained on it serve them unchanged.

use renju_rules::game::MAX_OFFERS as RULES_MAX_OFFERS;
use renju_rules::{Action, Point};

/// Number of `ChooseN` slots in the action space (RULES.md §5 item 4, `rules::game::MAX_OFFERS`).
pub const MAX_OFFERS: usize = RULES_MAX_OFFERS as usize;

/// Number of protocol (non-point) actions: Keep, Swap, Single, Double, then `ChooseN(1..=10)`.
pub const NUM_PROTOCOL_ACTIONS: usize = 4 + MAX_OFFERS;

/// Size `A = S*S + 4 + MAX_OFFERS` of the action space (policy head width) for board side `size`.
pub fn action_space_size(size: usize) -> usize {
    size * size + NUM_PROTOCOL_ACTIONS
}

/// The fixed index of `action` on a board of side `size`.
///
/// # Panics
/// If a `Place` point lies off the board or `ChooseN(n)` has `n` outside `1..=MAX_OFFERS`
/// (such actions are never legal in a [`Game`](renju_rules::Game)).
pub fn action_index(action: Action, size: usize) -> usize {
    let p = size * size;
    match action {
        Action::Place(pt) => {
            assert!(
                (pt.x as usize) < size && (pt.y as usize) < size,
                "action_index: point ({}, {}) is off a {size}x{size} board",
                pt.x,
                pt.y
            );
            pt.index(size)
        }
        Action::Keep => p,
        Action::Swap => p + 1,
        Action::Single => p + 2,
        Action::Double => p + 3,
        Action::ChooseN(n) => {
            assert!((1..=MAX_OFFERS).contains(&(n as usize)), "action_index: ChooseN({n}) is outside 1..={MAX_OFFERS}");
            p + 4 + (n as usize - 1)
        }
    }
}

/// The action at `index` on a board of side `size`, or `None` when `index >= action_space_size(size)`.
pub fn action_from_index(index: usize, size: usize) -> Option<Action> {
    let p = size * size;
    if index < p {
        return Some(Action::Place(Point::from_index(index, size)));
    }
    match index - p {
        0 => Some(Action::Keep),
        1 => Some(Action::Swap),
        2 => Some(Action::Single),
        3 => Some(Action::Double),
        k if k < NUM_PROTOCOL_ACTIONS => Some(Action::ChooseN((k - 3) as u8)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indices_match_design_table() {
        let s = 15;
        assert_eq!(action_space_size(s), 225 + 14);
        assert_eq!(action_index(Action::Place(Point::new(7, 7)), s), 7 * 15 + 7);
        assert_eq!(action_index(Action::Keep, s), 225);
        assert_eq!(action_index(Action::Swap, s), 226);
        assert_eq!(action_index(Action::Single, s), 227);
        assert_eq!(action_index(Action::Double, s), 228);
        assert_eq!(action_index(Action::ChooseN(1), s), 229);
        assert_eq!(action_index(Action::ChooseN(10), s), 238);
    }

    #[test]
    fn round_trip_every_index() {
        for s in [7usize, 15, 20] {
            for i in 0..action_space_size(s) {
                let a = action_from_index(i, s).unwrap();
                assert_eq!(action_index(a, s), i);
            }
            assert_eq!(action_from_index(action_space_size(s), s), None);
        }
    }
}
