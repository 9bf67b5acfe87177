//! The position encoder, version [`ENCODER_VERSION`] (DESIGN.md "Position encoder").
//!
//! A position is encoded as `planes: [NUM_PLANES, S, S]` (binary 0/1, index `c * S*S + y * S + x`)
//! and `globals: [NUM_GLOBALS]` (f32). The network's value and policy are always from the view of
//! the *deciding* player ([`Game::to_decide`]); colours are encoded absolutely (renju is not
//! colour-symmetric) and global 0 says which colour the deciding player holds.
//!
//! Planes (version 1):
//! | plane | meaning |
//! |---|---|
//! | 0 | black stones |
//! | 1 | white stones |
//! | 2 | Black's forbidden points (renju only, RULES.md §4; all zero under other rules) |
//! | 3 | pending fifth-move offers (candidate black stones not yet on the board, RULES.md §5.3–5.4) |
//! | 4 | the last stone placed |
//! | 5 | the stone placed before it |
//! | 6 | the stone placed before that |
//! | 7 | ones on the board (lets a convolution see the edge through zero padding) |
//!
//! Globals (version 1):
//! | global | meaning |
//! |---|---|
//! | 0 | 1 when the deciding player holds Black now |
//! | 1..=7 | decision kind one-hot: PlaceStone, SwapOrKeep, ChooseN, PlaceOffer, PickOffer, SingleOrDouble, ExchangeOrTake |
//! | 8 | 1 when the stone to be placed (PlaceStone / PlaceOffer) is black |
//! | 9 | stones on the board / (S*S) |
//! | 10 | offers total / MAX_OFFERS (PlaceOffer: the declared total; otherwise pending offers) |
//! | 11 | pending offers / MAX_OFFERS |
//! | 12..=14 | rule one-hot: freestyle, standard, renju |
//! | 15 | 1 when colours are settled (no swap / exchange / pick can follow) |

use crate::action::MAX_OFFERS;
use renju_rules::{Board, Color, DecisionKind, Game, Point, Rule};

/// Version of the encoding below; stored in every shard's metadata. Bump on any change.
pub const ENCODER_VERSION: u32 = 1;
/// Number of planes `C` (see the module table).
pub const NUM_PLANES: usize = 8;
/// Number of globals `G` (see the module table).
pub const NUM_GLOBALS: usize = 16;

/// Plane indices (module table).
pub mod plane {
    pub const BLACK: usize = 0;
    pub const WHITE: usize = 1;
    pub const FORBIDDEN: usize = 2;
    pub const OFFERS: usize = 3;
    pub const LAST1: usize = 4;
    pub const LAST2: usize = 5;
    pub const LAST3: usize = 6;
    pub const ONES: usize = 7;
}

/// Global indices (module table).
pub mod global {
    pub const DECIDER_IS_BLACK: usize = 0;
    /// First of the 7 decision-kind one-hot entries.
    pub const KIND: usize = 1;
    pub const STONE_IS_BLACK: usize = 8;
    pub const STONE_FRACTION: usize = 9;
    pub const OFFERS_TOTAL: usize = 10;
    pub const OFFERS_PENDING: usize = 11;
    /// First of the 3 rule one-hot entries (freestyle, standard, renju).
    pub const RULE: usize = 12;
    pub const COLOURS_SETTLED: usize = 15;
}

/// Number of floats of the planes of one position: `NUM_PLANES * size * size`.
pub fn planes_len(size: usize) -> usize {
    NUM_PLANES * size * size
}

/// Indices (0..7) of the decision kinds in the one-hot globals `global::KIND + k` (the order is
/// part of the encoder version's contract).
pub mod kind {
    /// [`DecisionKind::PlaceStone`](renju_rules::DecisionKind::PlaceStone).
    pub const PLACE_STONE: usize = 0;
    /// [`DecisionKind::SwapOrKeep`](renju_rules::DecisionKind::SwapOrKeep).
    pub const SWAP_OR_KEEP: usize = 1;
    /// [`DecisionKind::ChooseN`](renju_rules::DecisionKind::ChooseN).
    pub const CHOOSE_N: usize = 2;
    /// [`DecisionKind::PlaceOffer`](renju_rules::DecisionKind::PlaceOffer).
    pub const PLACE_OFFER: usize = 3;
    /// [`DecisionKind::PickOffer`](renju_rules::DecisionKind::PickOffer).
    pub const PICK_OFFER: usize = 4;
    /// [`DecisionKind::SingleOrDouble`](renju_rules::DecisionKind::SingleOrDouble).
    pub const SINGLE_OR_DOUBLE: usize = 5;
    /// [`DecisionKind::ExchangeOrTake`](renju_rules::DecisionKind::ExchangeOrTake).
    pub const EXCHANGE_OR_TAKE: usize = 6;
    /// Number of decision kinds.
    pub const COUNT: usize = 7;
}

/// Index (0..7, see [`kind`]) of a decision kind in the one-hot globals `1..=7`.
pub fn decision_kind_index(k: DecisionKind) -> usize {
    match k {
        DecisionKind::PlaceStone(_) => kind::PLACE_STONE,
        DecisionKind::SwapOrKeep => kind::SWAP_OR_KEEP,
        DecisionKind::ChooseN => kind::CHOOSE_N,
        DecisionKind::PlaceOffer { .. } => kind::PLACE_OFFER,
        DecisionKind::PickOffer => kind::PICK_OFFER,
        DecisionKind::SingleOrDouble => kind::SINGLE_OR_DOUBLE,
        DecisionKind::ExchangeOrTake => kind::EXCHANGE_OR_TAKE,
    }
}

/// Everything the encoder reads, so that the search can encode positions it tracks on a bare
/// [`Board`] without building a [`Game`].
#[derive(Clone, Copy, Debug)]
pub struct EncodeInput<'a> {
    /// The stones (placement order matters for the last-stone planes).
    pub board: &'a Board,
    /// Whether the deciding player holds Black.
    pub decider_is_black: bool,
    /// The decision faced.
    pub decision: DecisionKind,
    /// Pending fifth-move offers.
    pub pending_offers: &'a [Point],
    /// Whether colours are settled.
    pub colours_settled: bool,
}

impl<'a> EncodeInput<'a> {
    /// The encoder input of a game (the game must not be over; a finished game is encoded as
    /// its last decision state, which the search never asks for).
    pub fn from_game(game: &'a Game) -> EncodeInput<'a> {
        let decider = game.to_decide();
        EncodeInput {
            board: game.board(),
            decider_is_black: game.black_player() == decider,
            decision: game.decision(),
            pending_offers: game.pending_offers(),
            colours_settled: game.colours_settled(),
        }
    }
}

/// Encode `game` from the deciding player's view into `planes` (`[NUM_PLANES, S, S]` flattened,
/// length [`planes_len`]) and `globals` (`[NUM_GLOBALS]`). Both buffers are fully overwritten.
///
/// # Panics
/// When a buffer has the wrong length (the message names the buffer and both lengths).
pub fn encode(game: &Game, planes: &mut [f32], globals: &mut [f32]) {
    encode_input(&EncodeInput::from_game(game), planes, globals)
}

/// [`encode`] from an [`EncodeInput`].
///
/// # Panics
/// When a buffer has the wrong length.
pub fn encode_input(inp: &EncodeInput<'_>, planes: &mut [f32], globals: &mut [f32]) {
    let board = inp.board;
    let size = board.size();
    let pp = size * size;
    assert_eq!(
        planes.len(),
        NUM_PLANES * pp,
        "encode: planes buffer has {} floats, expected NUM_PLANES*S*S = {}",
        planes.len(),
        NUM_PLANES * pp
    );
    assert_eq!(
        globals.len(),
        NUM_GLOBALS,
        "encode: globals buffer has {} floats, expected NUM_GLOBALS = {NUM_GLOBALS}",
        globals.len()
    );
    planes.fill(0.0);
    encode_zeroed_planes(inp, planes, globals);
}

/// [`encode_input`] into a `planes` buffer that is already all zero (the search's leaf buffers
/// are freshly zero-filled by `resize`; this skips zeroing them a second time). `globals` is
/// fully overwritten.
pub(crate) fn encode_zeroed_planes(inp: &EncodeInput<'_>, planes: &mut [f32], globals: &mut [f32]) {
    let board = inp.board;
    let size = board.size();
    let pp = size * size;
    assert_eq!(planes.len(), NUM_PLANES * pp, "encode: planes buffer has the wrong length");
    assert_eq!(globals.len(), NUM_GLOBALS, "encode: globals buffer has the wrong length");
    debug_assert!(planes.iter().all(|&x| x == 0.0), "encode_zeroed_planes: planes not zeroed");
    globals.fill(0.0);
    let stones = board.stones();
    for &(p, c) in stones {
        let pl = if c == Color::Black { plane::BLACK } else { plane::WHITE };
        planes[pl * pp + p.index(size)] = 1.0;
    }
    if board.rule() == Rule::Renju {
        for (p, _) in board.forbidden_points() {
            planes[plane::FORBIDDEN * pp + p.index(size)] = 1.0;
        }
    }
    for &p in inp.pending_offers {
        planes[plane::OFFERS * pp + p.index(size)] = 1.0;
    }
    for (k, &(p, _)) in stones.iter().rev().take(3).enumerate() {
        planes[(plane::LAST1 + k) * pp + p.index(size)] = 1.0;
    }
    planes[plane::ONES * pp..(plane::ONES + 1) * pp].fill(1.0);

    globals[global::DECIDER_IS_BLACK] = inp.decider_is_black as u8 as f32;
    globals[global::KIND + decision_kind_index(inp.decision)] = 1.0;
    let stone_black = match inp.decision {
        DecisionKind::PlaceStone(c) => c == Color::Black,
        DecisionKind::PlaceOffer { .. } => true,
        _ => false,
    };
    globals[global::STONE_IS_BLACK] = stone_black as u8 as f32;
    globals[global::STONE_FRACTION] = stones.len() as f32 / pp as f32;
    let total = match inp.decision {
        DecisionKind::PlaceOffer { total, .. } => total as usize,
        _ => inp.pending_offers.len(),
    };
    globals[global::OFFERS_TOTAL] = total as f32 / MAX_OFFERS as f32;
    globals[global::OFFERS_PENDING] = inp.pending_offers.len() as f32 / MAX_OFFERS as f32;
    let rule_idx = match board.rule() {
        Rule::Freestyle => 0,
        Rule::Standard => 1,
        Rule::Renju => 2,
    };
    globals[global::RULE + rule_idx] = 1.0;
    globals[global::COLOURS_SETTLED] = inp.colours_settled as u8 as f32;
}
