//! The line-pattern (NNUE-style) policy-value network, torch-free half: the pattern encoding, the
//! exported table file and the table evaluator [`LinePatternEvaluator`]. The trainer
//! (`renju_trainer::net::linepattern`) learns the mapping with 1-D convolutions and writes the table.
//!
//! Design (after Rapfi's "mix" networks, dhbloo/rapfi `Rapfi/eval/mix9nnue.*`; the code is our
//! own): for every empty point `p` and each of the 4 directions `d` of [`DIRS`], the 10 cells
//! `p + k*d`, `k = ±1..=±5` (the centre is left out: it is empty), seen from the deciding player,
//! form a *line pattern*; a learned mapping shared by all points and directions turns it into a
//! feature vector of `F` channels. The colour the deciding player holds selects one of two
//! mappings (renju is asymmetric). The 4 vectors are summed, per-point inputs a line cannot see
//! are added through embeddings, and a cheap head follows (see [`LinePatternEvaluator`]).
//!
//! # Pattern encoding (the contract with the trainer)
//! Cell states: [`cell::EMPTY`] 0, [`cell::OWN`] 1, [`cell::OPP`] 2 (from the deciding player's
//! view) and [`cell::WALL`] (off the board). Off-board cells are not a fourth free state: along a
//! line, once a side leaves the board it stays off, so a side of 5 cells is "`k` on-board cells of
//! 3 states, then wall" for some `k` in `0..=5`, and its code is
//! `side_code = (3^k - 1) / 2 + sum_{j<k} state_j * 3^j` (`j = 0` nearest to the centre), one of
//! `1 + 3 + 9 + 27 + 81 + 243 = 364` ([`SIDE_CODES`]) values. This is lossless (a wall never
//! looks like a stone of either colour) and needs `364^2 = 132,496` raw patterns
//! ([`RAW_PATTERNS`]) instead of `4^10 ≈ 1 M`. The raw index is `neg * 364 + pos` where `neg` is
//! the side towards `-d`. The mapping is mirror-symmetric (the trainer sums the convolution stack
//! over both orientations of the line), so a pattern and its mirror (`neg` and `pos` swapped) share
//! one table row: `364 * 365 / 2 = 66,430` canonical patterns ([`CANONICAL_PATTERNS`]), numbered in
//! increasing raw index over the raw indices with `neg <= pos`. At `F = 32` in f32 the table is
//! 8.5 MB per colour.
//!
//! # Files
//! - this module: the encoding contract: the constants above, the cell states ([`cell`]) and
//!   how the net reads the encoder's planes ([`StoneView`]);
//! - [`pattern`]: side codes, canonical patterns, the raw index by its definition;
//! - [`geometry`]: the cells of a position, the raw indices of a board from scratch
//!   ([`LineGeometry`]) and kept up to date stone by stone ([`PatternIndex`]);
//! - [`table`]: the exported weights and the table file (format, checksum);
//! - [`net`]: the loaded net, its table in cache-line rows and quantised to i16;
//! - `layers`: the net's layers in portable code (every kernel variant shares their arithmetic);
//! - `simd`: the AVX2 kernels, every `unsafe` intrinsic block with its safety argument;
//! - [`evaluator`]: [`LinePatternEvaluator`], the per-position kernel and its dispatch.

use crate::encode::{global, plane, ENCODER_VERSION};
use anyhow::{bail, Result};

pub mod evaluator;
pub mod geometry;
mod layers;
pub mod net;
pub mod pattern;
pub mod shipped;
mod simd;
pub mod table;

pub use evaluator::LinePatternEvaluator;
pub use geometry::{stone_cells, LineGeometry, PatternIndex};
pub use net::{LinePatternNet, Precision, QuantisedTable};
pub use pattern::{canonical, pattern_line, raw_index_direct, side_cells, side_code, Canonical};
pub use table::{LinePatternWeights, PointwiseStage, MAX_POINTWISE_OUTPUTS, TABLE_FILE, TABLE_FORMAT, TABLE_VERSION};

/// Cells on each side of the centre.
pub const HALF: usize = 5;
/// Cells of a pattern: both sides, the centre left out.
pub const PATTERN_CELLS: usize = 2 * HALF;
/// Codes of one side (see the module docs): `sum_{k=0..=5} 3^k`.
pub const SIDE_CODES: usize = 364;
/// Raw patterns `SIDE_CODES^2`.
pub const RAW_PATTERNS: usize = SIDE_CODES * SIDE_CODES;
/// Canonical patterns (a pattern and its mirror count once): `364 * 365 / 2`.
pub const CANONICAL_PATTERNS: usize = SIDE_CODES * (SIDE_CODES + 1) / 2;
/// Line directions `(dx, dy)` (the rules crate's): horizontal, vertical, diagonal, anti-diagonal.
pub use renju_rules::board::DIRS;
/// Per-point inputs a line cannot see, in this order: own stone, opponent stone, Black's
/// forbidden point, pending offer, the last three stones placed (encoder planes 2..=6).
pub const POINT_INPUTS: usize = 7;

/// Cell states of a line pattern.
pub mod cell {
    pub const EMPTY: u8 = 0;
    pub const OWN: u8 = 1;
    pub const OPP: u8 = 2;
    pub const WALL: u8 = 3;
}

/// `3^k` for `k = 0..=HALF`: a side code weighs the cell `j` steps out by `3^j`.
const POW3: [u32; 6] = [1, 3, 9, 27, 81, 243];

/// How the net reads own and opponent stones and the deciding player's colour from the encoder
/// output: the one place that depends on the encoder version (the trainer's tch net uses it too).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StoneView {
    /// Black and white planes; a global says whether the decider holds Black (encoder v1).
    Absolute { black: usize, white: usize, decider_is_black: usize },
    /// Own and opponent planes; a plane of ones when the decider holds Black.
    Relative { own: usize, opp: usize, colour_plane: usize },
}

impl StoneView {
    /// The view of encoder version `version`. Errors on a version this build does not know.
    pub fn of_encoder(version: u32) -> Result<StoneView> {
        match version {
            // Version 1: black 0, white 1, forbidden 2, offers 3, last stones 4..=6; global 0.
            1 => Ok(StoneView::Absolute { black: 0, white: 1, decider_is_black: global::DECIDER_IS_BLACK }),
            2 => {
                Ok(StoneView::Relative { own: plane::OWN, opp: plane::OPPONENT, colour_plane: plane::DECIDER_IS_BLACK })
            }
            v => bail!(
                "the line-pattern net does not know encoder version {v} (this build encodes version {ENCODER_VERSION})"
            ),
        }
    }

    /// The planes of the per-point inputs after own and opponent stones, in [`POINT_INPUTS`]
    /// order: Black's forbidden points, pending offers, the last three stones.
    pub fn extra_planes(&self) -> [usize; POINT_INPUTS - 2] {
        match self {
            StoneView::Absolute { .. } => [2, 3, 4, 5, 6],
            StoneView::Relative { .. } => [plane::FORBIDDEN, plane::OFFERS, plane::LAST1, plane::LAST2, plane::LAST3],
        }
    }

    /// `(own plane, opponent plane, decider holds Black)` of one encoded position
    /// (`planes: [C, S, S]`, `globals: [G]`).
    pub fn read(&self, planes: &[f32], globals: &[f32], pp: usize) -> (usize, usize, bool) {
        match *self {
            StoneView::Absolute { black, white, decider_is_black } => {
                if globals[decider_is_black] > 0.5 {
                    (black, white, true)
                } else {
                    (white, black, false)
                }
            }
            StoneView::Relative { own, opp, colour_plane } => (own, opp, planes[colour_plane * pp] > 0.5),
        }
    }
}
