//! The stones-only encoding: the network inputs an engine can give that knows only the stones
//! and the side to move (Rapfi's ONNX evaluator: docs/onnx-export.md), written in the layout of
//! the position encoder ([`crate::encode`], version [`ENCODER_VERSION`]).
//!
//! Such an engine asks about ordinary stone placements: the side to move places a stone of its
//! own colour, colours are settled, no fifth-move offers are pending. In the stones-only
//! encoding of a position
//! - the planes of the own stones, the opponent stones, the colour and the ones are as encoded;
//! - the planes of Black's forbidden points, the pending offers and the last three stones
//!   ([`ZEROED_PLANES`]) are zero;
//! - the globals are those of such a placement ([`stones_only_globals`]): the deciding player's
//!   colour, decision kind `PlaceStone`, the stone to place of that colour, stones / points, no
//!   offers, the rule, colours settled.
//!
//! For an ordinary placement the globals equal the encoder's, so the information lost is that of
//! the zeroed planes: `training.stones_only_dropout` trains a network to play without them
//! ([`DROPOUT_PLANES`]).

use crate::encode::{global, kind, plane, ENCODER_VERSION, NUM_GLOBALS, NUM_PLANES};
use anyhow::{ensure, Result};
use renju_rules::Rule;

/// The planes a stones-only engine cannot give: zero in the stones-only encoding.
pub const ZEROED_PLANES: [usize; 5] = [plane::FORBIDDEN, plane::OFFERS, plane::LAST1, plane::LAST2, plane::LAST3];

/// The planes `training.stones_only_dropout` zeroes: [`ZEROED_PLANES`] without the offers plane,
/// which is already zero in every position a stones-only engine asks about (offers are pending
/// only while the fifth-move protocol decides), and which the protocol decisions need.
pub const DROPOUT_PLANES: [usize; 4] = [plane::FORBIDDEN, plane::LAST1, plane::LAST2, plane::LAST3];

/// The globals of a stones-only position: the deciding player holds Black when
/// `decider_is_black`, `stones` stones are on the board of side `size` under `rule` (see the
/// module docs for the rest).
pub fn stones_only_globals(decider_is_black: bool, stones: usize, rule: Rule, size: usize) -> [f32; NUM_GLOBALS] {
    let mut g = [0f32; NUM_GLOBALS];
    let black = decider_is_black as u8 as f32;
    g[global::DECIDER_IS_BLACK] = black;
    g[global::KIND + kind::PLACE_STONE] = 1.0;
    g[global::STONE_IS_BLACK] = black;
    g[global::STONE_FRACTION] = stones as f32 / (size * size) as f32;
    let r = global::RULE_ORDER.iter().position(|&x| x == rule).expect("every rule has an entry");
    g[global::RULE + r] = 1.0;
    g[global::COLOURS_SETTLED] = 1.0;
    g
}

/// Rewrites `n` encoded positions (`planes [n, NUM_PLANES, S, S]`, `globals [n, NUM_GLOBALS]`,
/// encoder version [`ENCODER_VERSION`]) into their stones-only encoding, in place. Errors: wrong
/// lengths, or a position whose globals name no rule.
pub fn to_stones_only(planes: &mut [f32], globals: &mut [f32], n: usize, size: usize) -> Result<()> {
    let pp = size * size;
    ensure!(
        planes.len() == n * NUM_PLANES * pp && globals.len() == n * NUM_GLOBALS,
        "to_stones_only: {} plane and {} global floats for {n} positions of side {size} (encoder version \
         {ENCODER_VERSION} has {NUM_PLANES} planes and {NUM_GLOBALS} globals)",
        planes.len(),
        globals.len()
    );
    for (pos, g) in planes.chunks_exact_mut(NUM_PLANES * pp).zip(globals.chunks_exact_mut(NUM_GLOBALS)) {
        let Some(r) = (0..global::RULE_ORDER.len()).find(|&k| g[global::RULE + k] > 0.5) else {
            anyhow::bail!("the globals name no rule (entries {}..{} all zero)", global::RULE, global::RULE + 3)
        };
        for &c in &ZEROED_PLANES {
            pos[c * pp..(c + 1) * pp].fill(0.0);
        }
        let stones = pos[plane::OWN * pp..(plane::OPPONENT + 1) * pp].iter().filter(|&&x| x > 0.5).count();
        let black = g[global::DECIDER_IS_BLACK] > 0.5;
        g.copy_from_slice(&stones_only_globals(black, stones, global::RULE_ORDER[r], size));
    }
    Ok(())
}

/// Zeroes [`DROPOUT_PLANES`] of one encoded position (`pos [NUM_PLANES, S, S]`, `pp = S * S`).
pub fn zero_dropout_planes(pos: &mut [f32], pp: usize) {
    for &c in &DROPOUT_PLANES {
        pos[c * pp..(c + 1) * pp].fill(0.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encode::{encode, planes_len};
    use renju_rules::notation::parse_moves;
    use renju_rules::{Action, Game, Protocol};

    #[test]
    fn an_ordinary_placement_keeps_its_globals_and_loses_the_derived_planes() {
        // Black h8 i8 j9 j10, White a15 o15 o1, then White a1: Black to move, j8 is forbidden for
        // Black (double-three, RULES.md §4), the last stones a1, o1, j10.
        let mut g = Game::new(15, Rule::Renju, Protocol::Free { centre: false }, None).unwrap();
        for p in parse_moves("h8 a15 i8 o15 j9 o1 j10 a1", 15).unwrap() {
            g.apply(Action::Place(p)).unwrap();
        }
        let (mut planes, mut globals) = (vec![0.0; planes_len(15)], vec![0.0; NUM_GLOBALS]);
        encode(&g, &mut planes, &mut globals);
        let (full_planes, full_globals) = (planes.clone(), globals.clone());
        to_stones_only(&mut planes, &mut globals, 1, 15).unwrap();
        assert_eq!(globals, full_globals, "an ordinary placement: the globals are the encoder's");
        let sum = |p: &[f32], c: usize| p[c * 225..(c + 1) * 225].iter().sum::<f32>();
        for c in 0..NUM_PLANES {
            let want = if ZEROED_PLANES.contains(&c) { 0.0 } else { sum(&full_planes, c) };
            assert_eq!(sum(&planes, c), want, "plane {c}");
        }
        assert_eq!(sum(&full_planes, plane::FORBIDDEN), 1.0, "j8 was marked before");
        assert_eq!((sum(&planes, plane::OWN), sum(&planes, plane::OPPONENT)), (4.0, 4.0));
        assert_eq!(sum(&planes, plane::DECIDER_IS_BLACK), 225.0);
        assert_eq!(globals[global::STONE_FRACTION], 8.0 / 225.0);
    }

    #[test]
    fn a_protocol_decision_becomes_a_placement_of_the_deciders_colour() {
        // RIF after three stones: White decides whether to swap; colours are not settled.
        let mut g = Game::new(15, Rule::Renju, Protocol::Rif, None).unwrap();
        while g.board().stones().len() < 3 {
            let a = g.legal_actions()[0];
            g.apply(a).unwrap();
        }
        let (mut planes, mut globals) = (vec![0.0; planes_len(15)], vec![0.0; NUM_GLOBALS]);
        encode(&g, &mut planes, &mut globals);
        assert_eq!(globals[global::COLOURS_SETTLED], 0.0);
        let black = globals[global::DECIDER_IS_BLACK] > 0.5;
        to_stones_only(&mut planes, &mut globals, 1, 15).unwrap();
        let want = stones_only_globals(black, 3, Rule::Renju, 15);
        assert_eq!(globals, want);
        assert_eq!(want[global::KIND + kind::PLACE_STONE], 1.0);
        assert_eq!(want[global::COLOURS_SETTLED], 1.0);
        assert_eq!(want[global::STONE_IS_BLACK], want[global::DECIDER_IS_BLACK]);
        assert_eq!(want[global::RULE + 2], 1.0, "renju is the third rule entry");
        // Bad lengths and a missing rule are named.
        assert!(to_stones_only(&mut planes[1..], &mut globals, 1, 15).unwrap_err().to_string().contains("side 15"));
        let mut no_rule = vec![0.0; NUM_GLOBALS];
        let e = to_stones_only(&mut planes, &mut no_rule, 1, 15).unwrap_err();
        assert!(e.to_string().contains("no rule"), "{e}");
    }

    #[test]
    fn dropout_zeroes_the_derived_planes_but_keeps_the_offers() {
        let pp = 81;
        let mut pos: Vec<f32> = (0..NUM_PLANES * pp).map(|i| (i % 7) as f32).collect();
        let before = pos.clone();
        zero_dropout_planes(&mut pos, pp);
        for c in 0..NUM_PLANES {
            let plane = &pos[c * pp..(c + 1) * pp];
            if DROPOUT_PLANES.contains(&c) {
                assert!(plane.iter().all(|&x| x == 0.0), "plane {c} zeroed");
            } else {
                assert_eq!(plane, &before[c * pp..(c + 1) * pp], "plane {c} kept");
            }
        }
        assert!(!DROPOUT_PLANES.contains(&plane::OFFERS));
    }
}
