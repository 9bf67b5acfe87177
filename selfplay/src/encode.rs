//! The position encoder, version [`ENCODER_VERSION`] (DESIGN.md "Position encoder").
//!
//! A position is encoded as `planes: [NUM_PLANES, S, S]` (binary 0/1, index `c * S*S + y * S + x`)
//! and `globals: [NUM_GLOBALS]` (f32). The network's value and policy are always from the view of
//! the *deciding* player ([`Game::to_decide`]). Version 2 gives the stones from that view too (own
//! stones, opponent stones: the stones of the colour the deciding player holds now, and of the
//! other colour) with the colour held as a whole plane, since renju is not colour-symmetric;
//! version 1 gave black and white stones with the colour only as global 0.
//!
//! Planes (version 2, [`ENCODER_VERSION`]):
//! | plane | meaning |
//! |---|---|
//! | 0 | own stones (the colour the deciding player holds) |
//! | 1 | opponent stones |
//! | 2 | colour plane: ones when the deciding player holds Black, zeros when White |
//! | 3 | Black's forbidden points (renju only, RULES.md §4; all zero under other rules) |
//! | 4 | pending fifth-move offers (candidate black stones not yet on the board, RULES.md §5.3–5.4) |
//! | 5 | the last stone placed |
//! | 6 | the stone placed before it |
//! | 7 | the stone placed before that |
//! | 8 | ones on the board (lets a convolution see the edge through zero padding) |
//!
//! Planes of version 1 (models of version 1 still load and play: [`planes_for_version`]
//! rewrites the current planes into theirs, exactly): 0 black stones, 1 white stones, then
//! planes 3..=8 of version 2 as 2..=7.
//!
//! Planes of version 3 (an optional network input, `training.encoder_version = 3`, after
//! KataGomo's VCF features): the 9 planes of version 2, then
//! | plane | meaning |
//! |---|---|
//! | 9 | [`plane_v3::VCF_OWN`]: a one at the first move of a VCF (`renju_rules::vcf`, budget [`VCF_PLANE_NODES`]) of the own colour, as if it were to move; all zero when the solver finds none |
//! | 10 | [`plane_v3::VCF_OPPONENT`]: the same for the opponent colour |
//!
//! Shards and the search always hold version 2 ([`ENCODER_VERSION`]); the version-3 planes are
//! computed from them by [`planes_for_version`] (the board is rebuilt from planes 0-2 and the
//! rule one-hot), where a version-3 model is trained or plays.
//!
//! Globals (versions 1 and 2, the same):
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

/// Version of the encoding below; stored in every shard's metadata and every model's config.
/// Bump on any change (and teach [`planes_for_version`] the old one).
pub const ENCODER_VERSION: u32 = 2;
/// Versions whose models still load and play (their inputs converted by [`planes_for_version`]).
pub const SUPPORTED_VERSIONS: [u32; 3] = [1, 2, 3];
/// Solver node budget (attacker moves tried, `renju_rules::vcf::Limits::nodes`) of each of the
/// two VCF calls behind the version-3 planes; part of version 3's contract (about 13-20 µs a
/// call on 15x15 midgames, docs/benchmarks.md).
pub const VCF_PLANE_NODES: u64 = 200;
/// Number of planes `C` (see the module table).
pub const NUM_PLANES: usize = 9;
/// Number of globals `G` (see the module table).
pub const NUM_GLOBALS: usize = 16;

/// Plane indices (module table).
pub mod plane {
    pub const OWN: usize = 0;
    pub const OPPONENT: usize = 1;
    pub const DECIDER_IS_BLACK: usize = 2;
    pub const FORBIDDEN: usize = 3;
    pub const OFFERS: usize = 4;
    pub const LAST1: usize = 5;
    pub const LAST2: usize = 6;
    pub const LAST3: usize = 7;
    pub const ONES: usize = 8;
}

/// The extra plane indices of encoder version 3 (module table).
pub mod plane_v3 {
    /// First move of a VCF of the own colour.
    pub const VCF_OWN: usize = super::NUM_PLANES;
    /// First move of a VCF of the opponent colour.
    pub const VCF_OPPONENT: usize = super::NUM_PLANES + 1;
    /// Planes of version 3.
    pub const COUNT: usize = super::NUM_PLANES + 2;
}

/// `(planes C, globals G)` of encoder `version`. Errors: a version this build cannot encode.
pub fn input_shape(version: u32) -> anyhow::Result<(usize, usize)> {
    match version {
        1 => Ok((8, NUM_GLOBALS)),
        2 => Ok((NUM_PLANES, NUM_GLOBALS)),
        3 => Ok((plane_v3::COUNT, NUM_GLOBALS)),
        v => anyhow::bail!("encoder version {v} is unknown to this build (it encodes versions {SUPPORTED_VERSIONS:?})"),
    }
}

/// Rewrites `n` positions of current-version planes (`[n, NUM_PLANES, S, S]`, as the search and
/// the shards hold them, with their `globals [n, NUM_GLOBALS]`) into the planes of encoder
/// `version` (`[n, C_version, S, S]`); the globals are the same in every version. Version 1:
/// black = own or opponent stones by the colour plane, white = the other, then the remaining
/// planes. Version 3: the planes unchanged, then the two VCF planes ([`vcf_planes`]). Errors:
/// unknown version, or `planes` / `globals` not `n * NUM_PLANES * S * S` / `n * NUM_GLOBALS`
/// long.
pub fn planes_for_version<'a>(
    version: u32,
    planes: &'a [f32],
    globals: &[f32],
    n: usize,
    size: usize,
) -> anyhow::Result<std::borrow::Cow<'a, [f32]>> {
    let pp = size * size;
    anyhow::ensure!(
        planes.len() == n * NUM_PLANES * pp,
        "planes has {} floats, expected {n} x {NUM_PLANES} x {size} x {size}",
        planes.len()
    );
    anyhow::ensure!(
        globals.len() == n * NUM_GLOBALS,
        "globals has {} floats, expected {n} x {NUM_GLOBALS}",
        globals.len()
    );
    match version {
        ENCODER_VERSION => Ok(std::borrow::Cow::Borrowed(planes)),
        1 => {
            let mut out = Vec::with_capacity(n * 8 * pp);
            for pos in planes.chunks_exact(NUM_PLANES * pp) {
                let p = |c: usize| &pos[c * pp..(c + 1) * pp];
                let (b, w) = if own_colour(pos, pp) == Color::Black {
                    (plane::OWN, plane::OPPONENT)
                } else {
                    (plane::OPPONENT, plane::OWN)
                };
                out.extend_from_slice(p(b));
                out.extend_from_slice(p(w));
                for c in plane::FORBIDDEN..NUM_PLANES {
                    out.extend_from_slice(p(c));
                }
            }
            Ok(std::borrow::Cow::Owned(out))
        }
        3 => {
            let mut out = vec![0f32; n * plane_v3::COUNT * pp];
            for (i, (pos, dst)) in
                planes.chunks_exact(NUM_PLANES * pp).zip(out.chunks_exact_mut(plane_v3::COUNT * pp)).enumerate()
            {
                dst[..NUM_PLANES * pp].copy_from_slice(pos);
                let g = &globals[i * NUM_GLOBALS..(i + 1) * NUM_GLOBALS];
                vcf_planes(pos, g, size, &mut dst[NUM_PLANES * pp..])?;
            }
            Ok(std::borrow::Cow::Owned(out))
        }
        v => {
            input_shape(v)?;
            unreachable!("every known version is handled above")
        }
    }
}

/// The colour the deciding player holds in one encoded position (`planes [NUM_PLANES, S*S]`,
/// `pp = S*S`), read from the colour plane.
fn own_colour(planes: &[f32], pp: usize) -> Color {
    if planes[plane::DECIDER_IS_BLACK * pp] > 0.5 {
        Color::Black
    } else {
        Color::White
    }
}

/// The board of one encoded position (`planes [NUM_PLANES, S, S]`, `globals [NUM_GLOBALS]`):
/// own and opponent stones in the colours planes 0-2 give them, under the rule of the rule
/// one-hot. Errors: no rule set in the globals, a point with both stones, a bad size.
pub fn board_from_planes(planes: &[f32], globals: &[f32], size: usize) -> anyhow::Result<Board> {
    let pp = size * size;
    anyhow::ensure!(
        planes.len() == NUM_PLANES * pp && globals.len() == NUM_GLOBALS,
        "board_from_planes: wrong lengths"
    );
    let Some(k) = (0..global::RULE_ORDER.len()).find(|&k| globals[global::RULE + k] > 0.5) else {
        anyhow::bail!("the globals name no rule (entries {}..{} all zero)", global::RULE, global::RULE + 3)
    };
    let mut board = Board::new(size, global::RULE_ORDER[k])?;
    let own = own_colour(planes, pp);
    for i in 0..pp {
        let (o, x) = (planes[plane::OWN * pp + i] > 0.5, planes[plane::OPPONENT * pp + i] > 0.5);
        anyhow::ensure!(!(o && x), "point {i} holds an own and an opponent stone");
        if o || x {
            board.place(Point::from_index(i, size), if o { own } else { own.opponent() });
        }
    }
    Ok(board)
}

/// Writes the two VCF planes of version 3 (`out: [2, S, S]`, fully overwritten) for one encoded
/// position: plane 0 a one at the first move of a VCF of the own colour (`renju_rules::vcf` with
/// [`VCF_PLANE_NODES`] nodes, the own colour to move), plane 1 the same for the opponent colour;
/// zeros where the solver proves no VCF or runs out of budget. Errors as [`board_from_planes`].
pub fn vcf_planes(planes: &[f32], globals: &[f32], size: usize, out: &mut [f32]) -> anyhow::Result<()> {
    let pp = size * size;
    anyhow::ensure!(out.len() == 2 * pp, "vcf_planes: out has {} floats, expected 2 x {size} x {size}", out.len());
    out.fill(0.0);
    let board = board_from_planes(planes, globals, size)?;
    let own = own_colour(planes, pp);
    let limits = renju_rules::vcf::Limits::nodes(VCF_PLANE_NODES);
    for (k, attacker) in [own, own.opponent()].into_iter().enumerate() {
        if let renju_rules::vcf::Vcf::Win { line } = renju_rules::vcf::vcf(&board, attacker, &limits) {
            out[k * pp + line[0].index(size)] = 1.0;
        }
    }
    Ok(())
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
    /// First of the 3 rule one-hot entries, in the order of [`RULE_ORDER`].
    pub const RULE: usize = 12;
    /// The rules of the one-hot entries `RULE + k` (the order is part of the encoder's contract).
    pub const RULE_ORDER: [renju_rules::Rule; 3] =
        [renju_rules::Rule::Freestyle, renju_rules::Rule::Standard, renju_rules::Rule::Renju];
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
    /// [`DecisionKind::SwapOrKeep`](renju_rules::DecisionKind::SwapOrKeep) and Swap2's
    /// [`DecisionKind::SwapKeepOrDouble`](renju_rules::DecisionKind::SwapKeepOrDouble).
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
        // Swap2's three-way choice is a swap decision with one more legal action (Double); the
        // stone count tells it apart, so it shares the slot and the encoder version stays.
        DecisionKind::SwapOrKeep | DecisionKind::SwapKeepOrDouble => kind::SWAP_OR_KEEP,
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
    let own = if inp.decider_is_black { Color::Black } else { Color::White };
    for &(p, c) in stones {
        let pl = if c == own { plane::OWN } else { plane::OPPONENT };
        planes[pl * pp + p.index(size)] = 1.0;
    }
    if inp.decider_is_black {
        planes[plane::DECIDER_IS_BLACK * pp..(plane::DECIDER_IS_BLACK + 1) * pp].fill(1.0);
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
    let rule_idx = global::RULE_ORDER.iter().position(|&r| r == board.rule()).expect("every rule has an entry");
    globals[global::RULE + rule_idx] = 1.0;
    globals[global::COLOURS_SETTLED] = inp.colours_settled as u8 as f32;
}

/// `n` encoded positions (`planes: [n, NUM_PLANES, S, S]`, `globals: [n, NUM_GLOBALS]`) of random
/// RIF renju games on side `size`, each stopped at a stone count drawn from `stones` (protocol
/// decisions included on the way), skipping finished games. Reproducible from `seed`; a workload
/// for evaluator tests and benchmarks.
pub fn random_positions(
    n: usize,
    size: usize,
    stones: std::ops::RangeInclusive<usize>,
    seed: u64,
) -> (Vec<f32>, Vec<f32>) {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let pl = planes_len(size);
    let (mut planes, mut globals) = (vec![0f32; n * pl], vec![0f32; n * NUM_GLOBALS]);
    let mut i = 0;
    while i < n {
        let mut game =
            Game::new(size, Rule::Renju, renju_rules::Protocol::Rif, None).expect("RIF renju is a valid game");
        let target = rng.gen_range(stones.clone());
        while game.outcome().is_none() && game.board().stones().len() < target {
            let legal = game.legal_actions();
            game.apply(legal[rng.gen_range(0..legal.len())]).expect("a legal action applies");
        }
        if game.outcome().is_some() {
            continue;
        }
        encode(&game, &mut planes[i * pl..(i + 1) * pl], &mut globals[i * NUM_GLOBALS..(i + 1) * NUM_GLOBALS]);
        i += 1;
    }
    (planes, globals)
}

#[cfg(test)]
mod tests {
    use super::*;
    use renju_rules::notation::{parse_moves, parse_point};
    use renju_rules::{Action, Protocol};

    /// The points set in plane `c` of `planes`, by name, sorted.
    fn points(planes: &[f32], c: usize, size: usize) -> Vec<String> {
        let pp = size * size;
        let mut v: Vec<String> = (0..pp)
            .filter(|&i| planes[c * pp + i] > 0.5)
            .map(|i| renju_rules::notation::format_point(Point::from_index(i, size)))
            .collect();
        v.sort();
        v
    }

    fn names(s: &str) -> Vec<String> {
        let mut v: Vec<String> = s.split_whitespace().map(String::from).collect();
        v.sort();
        v
    }

    #[test]
    fn version_2_planes_from_both_players_views() {
        // README's double-three position: black h8 i8 j9 j10, white a15 o15 o1; j8 is
        // forbidden for Black (double-three, RULES.md §4). White to move.
        let mut g = Game::new(15, Rule::Renju, Protocol::Free { centre: false }, None).unwrap();
        for p in parse_moves("h8 a15 i8 o15 j9 o1 j10", 15).unwrap() {
            g.apply(Action::Place(p)).unwrap();
        }
        let (mut planes, mut globals) = (vec![0.0; planes_len(15)], vec![0.0; NUM_GLOBALS]);
        encode(&g, &mut planes, &mut globals);
        assert_eq!(points(&planes, plane::OWN, 15), names("a15 o15 o1"), "White's own stones");
        assert_eq!(points(&planes, plane::OPPONENT, 15), names("h8 i8 j9 j10"));
        assert!(points(&planes, plane::DECIDER_IS_BLACK, 15).is_empty(), "White decides: colour plane zero");
        assert_eq!(points(&planes, plane::FORBIDDEN, 15), names("j8"));
        assert_eq!(points(&planes, plane::LAST1, 15), names("j10"));
        assert_eq!(points(&planes, plane::LAST2, 15), names("o1"));
        assert_eq!(points(&planes, plane::LAST3, 15), names("j9"));
        assert!(points(&planes, plane::OFFERS, 15).is_empty());
        assert_eq!(points(&planes, plane::ONES, 15).len(), 225);
        assert_eq!(globals[global::DECIDER_IS_BLACK], 0.0);
        // White plays a1: Black's view. Own and opponent swap, the colour plane is all ones.
        g.apply(Action::Place(parse_point("a1", 15).unwrap())).unwrap();
        encode(&g, &mut planes, &mut globals);
        assert_eq!(points(&planes, plane::OWN, 15), names("h8 i8 j9 j10"), "Black's own stones");
        assert_eq!(points(&planes, plane::OPPONENT, 15), names("a15 o15 o1 a1"));
        assert_eq!(points(&planes, plane::DECIDER_IS_BLACK, 15).len(), 225);
        assert_eq!(points(&planes, plane::FORBIDDEN, 15), names("j8"));
        assert_eq!(points(&planes, plane::LAST1, 15), names("a1"));
        assert_eq!(globals[global::DECIDER_IS_BLACK], 1.0);
        // Version 1 (for models of version 1): black and white planes, the rest shifted down.
        let v1 = planes_for_version(1, &planes, &globals, 1, 15).unwrap();
        assert_eq!(v1.len(), 8 * 225);
        assert_eq!(points(&v1, 0, 15), names("h8 i8 j9 j10"));
        assert_eq!(points(&v1, 1, 15), names("a15 o15 o1 a1"));
        assert_eq!(points(&v1, 2, 15), names("j8"));
        assert_eq!(points(&v1, 4, 15), names("a1"));
        assert_eq!(points(&v1, 7, 15).len(), 225);
        assert_eq!(input_shape(1).unwrap(), (8, 16));
        assert!(input_shape(7).unwrap_err().to_string().contains("encoder version 7"));
    }

    #[test]
    fn version_3_adds_the_vcf_first_moves_of_both_colours() {
        // Black h8 i8 j8 k8 (a four: its only five point is l8, g8 is White's), White g8 a1 a2;
        // White to move. Black (the opponent of the decider) has a VCF of one move, l8; White
        // has no four-making move at all, so no VCF.
        let mut g = Game::new(15, Rule::Renju, Protocol::Free { centre: false }, None).unwrap();
        for p in parse_moves("h8 g8 i8 a1 j8 a2 k8", 15).unwrap() {
            g.apply(Action::Place(p)).unwrap();
        }
        let (mut planes, mut globals) = (vec![0.0; planes_len(15)], vec![0.0; NUM_GLOBALS]);
        encode(&g, &mut planes, &mut globals);
        let v3 = planes_for_version(3, &planes, &globals, 1, 15).unwrap();
        assert_eq!(v3.len(), 11 * 225);
        assert_eq!(input_shape(3).unwrap(), (11, 16));
        assert_eq!(&v3[..NUM_PLANES * 225], &planes[..], "planes 0-8 are version 2's");
        assert!(points(&v3, plane_v3::VCF_OWN, 15).is_empty(), "White has no VCF");
        assert_eq!(points(&v3, plane_v3::VCF_OPPONENT, 15), names("l8"));
        // The board rebuilt from the planes holds the same stones in the same colours.
        let b = board_from_planes(&planes, &globals, 15).unwrap();
        let mut got: Vec<_> = b.stones().to_vec();
        let mut want: Vec<_> = g.board().stones().to_vec();
        got.sort_by_key(|&(p, _)| p.index(15));
        want.sort_by_key(|&(p, _)| p.index(15));
        assert_eq!(got, want);
        assert_eq!(b.rule(), Rule::Renju);
        // Black to move after White a3 (ignoring the four): Black's own plane now holds l8.
        g.apply(Action::Place(parse_point("a3", 15).unwrap())).unwrap();
        encode(&g, &mut planes, &mut globals);
        let v3 = planes_for_version(3, &planes, &globals, 1, 15).unwrap();
        assert_eq!(points(&v3, plane_v3::VCF_OWN, 15), names("l8"));
        assert!(points(&v3, plane_v3::VCF_OPPONENT, 15).is_empty());
        // Globals without a rule are refused, naming the entries.
        let mut bad = globals.clone();
        bad[global::RULE..global::RULE + 3].fill(0.0);
        let e = planes_for_version(3, &planes, &bad, 1, 15).unwrap_err();
        assert!(format!("{e:#}").contains("no rule"), "{e:#}");
    }

    #[test]
    fn version_3_vcf_plane_marks_the_first_move_of_the_solvers_line() {
        // Black h8 i8 j8 and h8 h9 h10 (two live threes), Black to move: a four that is also
        // straight wins at once, so a VCF exists (its line checked with the solver's line
        // checker); the plane marks the line's first move only. White's five scattered stones
        // make no four.
        let mut g = Game::new(15, Rule::Renju, Protocol::Free { centre: false }, None).unwrap();
        for p in parse_moves("h8 a1 i8 o1 j8 a15 h9 o15 h10 b13", 15).unwrap() {
            g.apply(Action::Place(p)).unwrap();
        }
        let (mut planes, mut globals) = (vec![0.0; planes_len(15)], vec![0.0; NUM_GLOBALS]);
        encode(&g, &mut planes, &mut globals);
        let v3 = planes_for_version(3, &planes, &globals, 1, 15).unwrap();
        let own = points(&v3, plane_v3::VCF_OWN, 15);
        let limits = renju_rules::vcf::Limits::nodes(VCF_PLANE_NODES);
        match renju_rules::vcf::vcf(g.board(), Color::Black, &limits) {
            renju_rules::vcf::Vcf::Win { line } => {
                assert!(renju_rules::vcf::line_wins(g.board(), Color::Black, &line));
                assert_eq!(own, vec![renju_rules::notation::format_point(line[0])]);
            }
            other => panic!("Black's two live threes give a VCF, got {other:?}"),
        }
        assert!(points(&v3, plane_v3::VCF_OPPONENT, 15).is_empty(), "White has no four-making move");
    }

    #[test]
    fn version_1_conversion_is_exact_for_either_colour() {
        // Black e5 f6, White d4, White to move: the black stones come from the opponent plane.
        let mut g = Game::new(9, Rule::Freestyle, Protocol::Free { centre: false }, None).unwrap();
        for p in parse_moves("e5 d4 f6", 9).unwrap() {
            g.apply(Action::Place(p)).unwrap();
        }
        let (mut planes, mut globals) = (vec![0.0; planes_len(9)], vec![0.0; NUM_GLOBALS]);
        encode(&g, &mut planes, &mut globals);
        let two = [planes.clone(), planes.clone()].concat();
        let v1 = planes_for_version(1, &two, &[globals.clone(), globals.clone()].concat(), 2, 9).unwrap();
        for k in 0..2 {
            let pos = &v1[k * 8 * 81..(k + 1) * 8 * 81];
            assert_eq!(points(pos, 0, 9), names("e5 f6"));
            assert_eq!(points(pos, 1, 9), names("d4"));
            assert!(points(pos, 2, 9).is_empty(), "freestyle: no forbidden points");
        }
        assert!(matches!(planes_for_version(2, &planes, &globals, 1, 9).unwrap(), std::borrow::Cow::Borrowed(_)));
        assert!(planes_for_version(1, &planes[1..], &globals, 1, 9).is_err());
    }
}
