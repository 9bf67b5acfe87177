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
use crate::eval::{check_inputs, EvalOutput, Evaluator};
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

/// Whether the encoded globals `g` are those of an ordinary placement, the only decision a
/// stones-only engine makes: decision kind `PlaceStone`, colours settled, the stone of the
/// decider's own colour, no offers pending.
pub fn is_ordinary_placement(g: &[f32]) -> bool {
    g[global::KIND + kind::PLACE_STONE] > 0.5
        && g[global::COLOURS_SETTLED] > 0.5
        && (g[global::STONE_IS_BLACK] > 0.5) == (g[global::DECIDER_IS_BLACK] > 0.5)
        && g[global::OFFERS_PENDING] == 0.0
}

/// An evaluator that plays as an exported network does inside a stones-only engine: every
/// ordinary placement ([`is_ordinary_placement`]) reaches `inner` in its stones-only encoding
/// ([`to_stones_only`]); the opening protocol's decisions, which such an engine never makes, keep
/// their full inputs. Arena players get it with `inputs=stones`.
pub struct StonesOnlyEvaluator {
    inner: Box<dyn Evaluator>,
    planes: Vec<f32>,
    globals: Vec<f32>,
}

impl StonesOnlyEvaluator {
    pub fn new(inner: Box<dyn Evaluator>) -> StonesOnlyEvaluator {
        StonesOnlyEvaluator { inner, planes: Vec::new(), globals: Vec::new() }
    }
}

impl Evaluator for StonesOnlyEvaluator {
    fn evaluate(&mut self, planes: &[f32], globals: &[f32], n: usize) -> Result<EvalOutput> {
        let size = self.inner.board_size();
        check_inputs(planes, globals, n, size)?;
        self.planes.clear();
        self.planes.extend_from_slice(planes);
        self.globals.clear();
        self.globals.extend_from_slice(globals);
        let pl = NUM_PLANES * size * size;
        for (pos, g) in self.planes.chunks_exact_mut(pl).zip(self.globals.chunks_exact_mut(NUM_GLOBALS)) {
            if is_ordinary_placement(g) {
                to_stones_only(pos, g, 1, size)?;
            }
        }
        self.inner.evaluate(&self.planes, &self.globals, n)
    }

    fn board_size(&self) -> usize {
        self.inner.board_size()
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

    /// The `(planes, globals)` of each request.
    type Requests = std::sync::Arc<std::sync::Mutex<Vec<(Vec<f32>, Vec<f32>)>>>;

    /// Keeps the inputs it was asked about; answers zeros.
    struct Recorder(Requests);
    impl Evaluator for Recorder {
        fn evaluate(&mut self, planes: &[f32], globals: &[f32], n: usize) -> Result<EvalOutput> {
            self.0.lock().unwrap().push((planes.to_vec(), globals.to_vec()));
            Ok(EvalOutput { policy_logits: vec![0.0; n * 15 * 15 * 2], wdl: vec![0.0; n * 3] })
        }
        fn board_size(&self) -> usize {
            15
        }
    }

    #[test]
    fn the_evaluator_rewrites_ordinary_placements_and_passes_protocol_decisions() {
        // Position 0: an ordinary placement with j8 forbidden for Black. Position 1: RIF after
        // three stones, White deciding whether to swap.
        let mut placement = Game::new(15, Rule::Renju, Protocol::Free { centre: false }, None).unwrap();
        for p in parse_moves("h8 a15 i8 o15 j9 o1 j10 a1", 15).unwrap() {
            placement.apply(Action::Place(p)).unwrap();
        }
        let mut swap = Game::new(15, Rule::Renju, Protocol::Rif, None).unwrap();
        while swap.board().stones().len() < 3 {
            let a = swap.legal_actions()[0];
            swap.apply(a).unwrap();
        }
        let (mut planes, mut globals) = (vec![0.0; 2 * planes_len(15)], vec![0.0; 2 * NUM_GLOBALS]);
        for (i, g) in [&placement, &swap].into_iter().enumerate() {
            let pl = planes_len(15);
            encode(g, &mut planes[i * pl..(i + 1) * pl], &mut globals[i * NUM_GLOBALS..(i + 1) * NUM_GLOBALS]);
        }
        assert!(is_ordinary_placement(&globals[..NUM_GLOBALS]));
        assert!(!is_ordinary_placement(&globals[NUM_GLOBALS..]));
        let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let mut e = StonesOnlyEvaluator::new(Box::new(Recorder(seen.clone())));
        let out = e.evaluate(&planes, &globals, 2).unwrap();
        assert_eq!(out.wdl.len(), 6);
        let (got_planes, got_globals) = seen.lock().unwrap()[0].clone();
        let pl = planes_len(15);
        let (mut want_planes, mut want_globals) = (planes[..pl].to_vec(), globals[..NUM_GLOBALS].to_vec());
        to_stones_only(&mut want_planes, &mut want_globals, 1, 15).unwrap();
        assert_eq!(&got_planes[..pl], &want_planes[..], "the placement in its stones-only encoding");
        assert_eq!(&got_globals[..NUM_GLOBALS], &want_globals[..]);
        assert_ne!(&got_planes[..pl], &planes[..pl], "j8's forbidden mark is gone");
        assert_eq!(&got_planes[pl..], &planes[pl..], "the swap decision keeps its inputs");
        assert_eq!(&got_globals[NUM_GLOBALS..], &globals[NUM_GLOBALS..]);
        // Wrong lengths are refused before the inner evaluator sees them.
        assert!(e.evaluate(&planes[1..], &globals, 2).is_err());
        assert_eq!(seen.lock().unwrap().len(), 1);
    }
}
