//! The line-pattern (NNUE-style) policy-value network, torch-free half: the pattern encoding, the
//! exported table file and the table evaluator [`LinePatternEvaluator`]. The trainer
//! (`renju_trainer::linenet`) learns the mapping with 1-D convolutions and writes the table.
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

use crate::action::action_space_size;
use crate::encode::{global, plane, ENCODER_VERSION, NUM_GLOBALS, NUM_PLANES};
use crate::eval::{check_inputs, EvalOutput, Evaluator};
use anyhow::{bail, ensure, Context, Result};
use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, OnceLock};

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
/// Value of the table file's `format` metadata.
pub const TABLE_FORMAT: &str = "renju-zero-linepattern-table";
/// Version of the table file layout (tensor names and shapes below); checked on load.
pub const TABLE_VERSION: u32 = 1;
/// File name of the table inside a published generation.
pub const TABLE_FILE: &str = "linepattern.safetensors";

/// Cell states of a line pattern.
pub mod cell {
    pub const EMPTY: u8 = 0;
    pub const OWN: u8 = 1;
    pub const OPP: u8 = 2;
    pub const WALL: u8 = 3;
}

const POW3: [u32; 6] = [1, 3, 9, 27, 81, 243];

/// Points of a row [`LineGeometry::raw_indices`] computes at once with AVX2 (16 lanes of u16);
/// the empty-board indices carry this many spare zeros.
const RAW_TAIL: usize = 16;

/// Code of one side, `cells` nearest first (module docs). Errors when a state is not 0..=3 or an
/// on-board cell follows a wall.
pub fn side_code(cells: &[u8; HALF]) -> Result<u32> {
    let k = cells.iter().position(|&c| c == cell::WALL).unwrap_or(HALF);
    ensure!(cells[k..].iter().all(|&c| c == cell::WALL), "side {cells:?}: an on-board cell after a wall");
    let mut code = (POW3[k] - 1) / 2;
    for (j, &c) in cells[..k].iter().enumerate() {
        ensure!(c <= cell::OPP, "side {cells:?}: cell state {c} is not 0..=3");
        code += c as u32 * POW3[j];
    }
    Ok(code)
}

/// The cells of side code `code` (inverse of [`side_code`]); `code < SIDE_CODES`.
pub fn side_cells(code: u32) -> [u8; HALF] {
    assert!((code as usize) < SIDE_CODES, "side code {code} out of range");
    let mut k = 0;
    while k < HALF && code >= (POW3[k + 1] - 1) / 2 {
        k += 1;
    }
    let mut rest = code - (POW3[k] - 1) / 2;
    let mut out = [cell::WALL; HALF];
    for c in out.iter_mut().take(k) {
        *c = (rest % 3) as u8;
        rest /= 3;
    }
    out
}

/// The pattern tables shared by every evaluator: raw index -> canonical id, and canonical id ->
/// its representative raw index (the one with `neg <= pos`).
pub struct Canonical {
    /// `[RAW_PATTERNS]`.
    pub of_raw: Vec<u32>,
    /// `[CANONICAL_PATTERNS]`.
    pub raw_of: Vec<u32>,
}

/// The canonicalisation tables (built once per process, 0.8 MB).
pub fn canonical() -> &'static Canonical {
    static C: OnceLock<Canonical> = OnceLock::new();
    C.get_or_init(|| {
        let mut of_raw = vec![u32::MAX; RAW_PATTERNS];
        let mut raw_of = Vec::with_capacity(CANONICAL_PATTERNS);
        for neg in 0..SIDE_CODES {
            for pos in neg..SIDE_CODES {
                let id = raw_of.len() as u32;
                raw_of.push((neg * SIDE_CODES + pos) as u32);
                of_raw[neg * SIDE_CODES + pos] = id;
                of_raw[pos * SIDE_CODES + neg] = id;
            }
        }
        Canonical { of_raw, raw_of }
    })
}

/// The 11 cells (offsets `-5..=5` along the line, index 5 the empty centre) of canonical pattern
/// `id`, as the trainer feeds them to its convolution stack when it writes the table.
pub fn pattern_line(id: usize) -> [u8; 2 * HALF + 1] {
    let raw = canonical().raw_of[id] as usize;
    let (neg, pos) = (side_cells((raw / SIDE_CODES) as u32), side_cells((raw % SIDE_CODES) as u32));
    let mut line = [cell::EMPTY; 2 * HALF + 1];
    for j in 0..HALF {
        line[HALF - 1 - j] = neg[j];
        line[HALF + 1 + j] = pos[j];
    }
    line
}

/// Raw pattern index at point `(x, y)` in direction `d` of a board of side `size` whose cells
/// (`y * size + x`) hold 0 empty, 1 own, 2 opponent: the definition, walked cell by cell (the
/// reference for [`LineGeometry`]).
pub fn raw_index_direct(cells: &[u8], size: usize, x: usize, y: usize, d: usize) -> u32 {
    let (dx, dy) = DIRS[d];
    let side = |s: i32| {
        let mut c = [cell::WALL; HALF];
        for (j, v) in c.iter_mut().enumerate() {
            let (cx, cy) = (x as i32 + s * dx * (j as i32 + 1), y as i32 + s * dy * (j as i32 + 1));
            if cx < 0 || cy < 0 || cx >= size as i32 || cy >= size as i32 {
                break;
            }
            *v = cells[cy as usize * size + cx as usize];
        }
        side_code(&c).expect("cells hold 0..=2")
    };
    side(-1) * SIDE_CODES as u32 + side(1)
}

/// The cells (`[S*S]`, [`cell::OWN`] / [`cell::OPP`] / [`cell::EMPTY`]) of a position given as
/// its own- and opponent-stone planes (`[S*S]` each, 1.0 = stone), into `out` (replaced): the
/// input of [`LineGeometry::raw_indices`].
#[inline]
pub fn stone_cells(own: &[f32], opp: &[f32], out: &mut Vec<u8>) {
    out.clear();
    out.resize(own.len().min(opp.len()), cell::EMPTY);
    mark_cells::<false>(own, opp, out);
}

/// [`stone_cells`] into `out` (`[S*S]`, all [`cell::EMPTY`] on entry), in the kernel variant
/// `AVX2` ([`mark_points`]): bit 0 where `own` is set, bit 1 where `opp` is, then OWN where both
/// are (not a position, but own wins).
#[inline(always)]
fn mark_cells<const AVX2: bool>(own: &[f32], opp: &[f32], out: &mut [u8]) {
    mark_points::<AVX2, 2>(&[own, opp], out);
    for c in out.iter_mut() {
        *c ^= *c & (*c << 1) & cell::OPP;
    }
}

/// Precomputed geometry of a board side: the raw index of every (point, direction) slot of the
/// empty board, and for every point the slots whose pattern it is in, with the weight its state
/// adds (`3^(k-1)`, times 364 on the `-d` side). A stone of state `s` at `q` adds `s * weight` to
/// each of its (at most 40) slots. Slot of point `p`, direction `d`: `d * S*S + p` (one
/// direction's points contiguous).
pub struct LineGeometry {
    size: usize,
    base: Vec<u32>,
    start: Vec<u32>,
    touch: Vec<(u32, u32)>,
}

impl LineGeometry {
    /// The geometry of side `size`.
    pub fn new(size: usize) -> LineGeometry {
        let pp = size * size;
        let on = |x: i32, y: i32| x >= 0 && y >= 0 && x < size as i32 && y < size as i32;
        // Zero tail: `raw_indices` reads and writes whole 16-point chunks.
        let mut base = vec![0u32; pp * 4 + RAW_TAIL];
        for p in 0..pp {
            let (x, y) = ((p % size) as i32, (p / size) as i32);
            for (d, &(dx, dy)) in DIRS.iter().enumerate() {
                let k = |s: i32| (1..=HALF as i32).take_while(|&j| on(x + s * j * dx, y + s * j * dy)).count();
                base[d * pp + p] = (POW3[k(-1)] - 1) / 2 * SIDE_CODES as u32 + (POW3[k(1)] - 1) / 2;
            }
        }
        let mut start = Vec::with_capacity(pp + 1);
        let mut touch = Vec::new();
        for q in 0..pp {
            start.push(touch.len() as u32);
            let (qx, qy) = ((q % size) as i32, (q / size) as i32);
            for (d, &(dx, dy)) in DIRS.iter().enumerate() {
                for j in 1..=HALF as i32 {
                    for s in [-1i32, 1] {
                        // q = p + s * j * d, so p = q - s * j * d and q lies on p's side s.
                        let (px, py) = (qx - s * j * dx, qy - s * j * dy);
                        if on(px, py) {
                            let w = POW3[j as usize - 1] * if s < 0 { SIDE_CODES as u32 } else { 1 };
                            touch.push(((d * pp + py as usize * size + px as usize) as u32, w));
                        }
                    }
                }
            }
        }
        start.push(touch.len() as u32);
        LineGeometry { size, base, start, touch }
    }

    /// Board side.
    pub fn size(&self) -> usize {
        self.size
    }

    /// The (slot, weight) pairs of point `q`.
    #[inline]
    pub fn touched(&self, q: usize) -> &[(u32, u32)] {
        &self.touch[self.start[q] as usize..self.start[q + 1] as usize]
    }

    /// Raw indices `[4, S*S]` (slot `d * S*S + p`) of a board given as cells (0 empty, 1 own,
    /// 2 opponent), into `out` (replaced), from scratch. Uses [`Self::raw_indices_avx2`] where
    /// the CPU has AVX2, else [`Self::raw_indices_portable`] (the same values; a test compares
    /// both with [`raw_index_direct`] on every size).
    pub fn raw_indices(&self, cells: &[u8], out: &mut Vec<u32>) {
        #[cfg(target_arch = "x86_64")]
        if avx2_available() {
            // SAFETY: the CPU has AVX2.
            unsafe { self.raw_indices_avx2(cells, out) };
            return;
        }
        self.raw_indices_portable(cells, out)
    }

    /// [`Self::raw_indices`] as the empty-board indices plus each stone's contributions
    /// ([`Self::touched`], as [`PatternIndex`] adds them).
    #[inline(always)]
    fn raw_indices_portable(&self, cells: &[u8], out: &mut Vec<u32>) {
        let n = 4 * self.size * self.size;
        out.clear();
        out.extend_from_slice(&self.base[..n]);
        for (q, &c) in cells.iter().enumerate() {
            if c != cell::EMPTY {
                for &(slot, w) in self.touched(q) {
                    out[slot as usize] += c as u32 * w;
                }
            }
        }
    }

    /// [`Self::raw_indices`] with AVX2, about 4x faster than the portable loop: per side, the
    /// stones' part of the side code (`sum_j cell(p + j * d) * 3^(j-1)`, off-board cells 0) by
    /// Horner's rule for 16 points of a row at once (16 lanes of u16, from a zero-padded copy
    /// of the board), then `base + 364 * neg + pos` in 8 lanes of u32.
    ///
    /// # Safety
    /// The CPU must support AVX2.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn raw_indices_avx2(&self, cells: &[u8], out: &mut Vec<u32>) {
        use std::arch::x86_64::*;
        /// Zero columns left of the board (at least `HALF`); a padded row holds two 16-point
        /// chunks (`MAX_SIZE <= 32`) and the columns a chunk's farthest cell reaches, and
        /// `HALF` zero rows lie above and below the board.
        const PAD: usize = 8;
        const LANES: usize = RAW_TAIL;
        const W: usize = 2 * PAD + 2 * LANES;
        const H: usize = renju_rules::board::MAX_SIZE + 2 * HALF;
        const _: () = assert!(renju_rules::board::MAX_SIZE <= 2 * LANES && PAD >= HALF && LANES == 16);
        let s = self.size;
        assert!(cells.len() >= s * s && s <= renju_rules::board::MAX_SIZE);
        let mut pad = [0u16; H * W];
        for y in 0..s {
            for (x, &c) in cells[y * s..(y + 1) * s].iter().enumerate() {
                pad[(y + HALF) * W + PAD + x] = u16::from(c);
            }
        }
        out.clear();
        out.resize(s * s * 4 + RAW_TAIL, 0);
        let (pad, base, dst) = (pad.as_ptr(), self.base.as_ptr(), out.as_mut_ptr());
        let ld = |at: isize| _mm256_loadu_si256(pad.offset(at) as *const __m256i);
        let times3_plus = |a: __m256i, c: __m256i| _mm256_add_epi16(_mm256_add_epi16(a, _mm256_slli_epi16::<1>(a)), c);
        let codes = _mm256_set1_epi32(SIDE_CODES as i32);
        for (d, &(dx, dy)) in DIRS.iter().enumerate() {
            // Offset in `pad` of the cell one step along `+d`.
            let step = dy as isize * W as isize + dx as isize;
            for y in 0..s {
                for x0 in (0..s).step_by(LANES) {
                    // Every read is within `pad`: the chunk's row is `HALF` rows from the top
                    // and bottom, its columns `PAD` from the left and at least `HALF` from the
                    // right, and a cell at most `HALF` steps from its point.
                    let centre = ((y + HALF) * W + PAD + x0) as isize;
                    let (mut n, mut p) = (_mm256_setzero_si256(), _mm256_setzero_si256());
                    for j in (1..=HALF as isize).rev() {
                        n = times3_plus(n, ld(centre - j * step));
                        p = times3_plus(p, ld(centre + j * step));
                    }
                    // All 16 lanes: those past the row's end land on the next row's slots,
                    // which are written after this (the last row's on the spare tail).
                    let at = d * s * s + y * s + x0;
                    for (half, (n8, p8)) in [
                        (_mm256_castsi256_si128(n), _mm256_castsi256_si128(p)),
                        (_mm256_extracti128_si256::<1>(n), _mm256_extracti128_si256::<1>(p)),
                    ]
                    .into_iter()
                    .enumerate()
                    {
                        let (n32, p32) = (_mm256_cvtepu16_epi32(n8), _mm256_cvtepu16_epi32(p8));
                        let b = _mm256_loadu_si256(base.add(at + 8 * half) as *const __m256i);
                        let v = _mm256_add_epi32(_mm256_add_epi32(b, _mm256_mullo_epi32(n32, codes)), p32);
                        _mm256_storeu_si256(dst.add(at + 8 * half) as *mut __m256i, v);
                    }
                }
            }
        }
        out.truncate(s * s * 4);
    }
}

/// Raw pattern indices of a board kept up to date stone by stone (place / undo), from both
/// colours' views (view 0: Black's stones are own; view 1: White's are). Each placement touches at
/// most 40 slots per view.
pub struct PatternIndex {
    geometry: Arc<LineGeometry>,
    raw: [Vec<u32>; 2],
}

impl PatternIndex {
    /// The indices of the empty board.
    pub fn new(geometry: Arc<LineGeometry>) -> PatternIndex {
        let pp = geometry.size * geometry.size;
        let raw = [geometry.base[..4 * pp].to_vec(), geometry.base[..4 * pp].to_vec()];
        PatternIndex { geometry, raw }
    }

    fn add(&mut self, q: usize, black: bool, sign: i64) {
        let (own, opp) = (cell::OWN as i64 * sign, cell::OPP as i64 * sign);
        let (b, w) = if black { (own, opp) } else { (opp, own) };
        for &(slot, wt) in self.geometry.touched(q) {
            let s = slot as usize;
            self.raw[0][s] = (self.raw[0][s] as i64 + b * wt as i64) as u32;
            self.raw[1][s] = (self.raw[1][s] as i64 + w * wt as i64) as u32;
        }
    }

    /// A stone of colour `black` (true) or white on the empty point `q` (index `y * S + x`).
    pub fn place(&mut self, q: usize, black: bool) {
        self.add(q, black, 1);
    }

    /// Removes the stone `place(q, black)` put there.
    pub fn undo(&mut self, q: usize, black: bool) {
        self.add(q, black, -1);
    }

    /// The raw indices `[4, S*S]` (slot `d * S*S + p`) from the view of the player holding Black (`true`) or White.
    pub fn raw(&self, black_view: bool) -> &[u32] {
        &self.raw[if black_view { 0 } else { 1 }]
    }
}

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

/// The exported network: the table and the head's weights, f32, in the shapes the trainer
/// writes (`F` = [`Self::features`], `H` = [`Self::value_hidden`], `R` = protocol actions
/// `A - S*S`, `G` = `NUM_GLOBALS`). Linear weights are `[out, in]` row-major.
#[derive(Clone, Debug, PartialEq)]
pub struct LinePatternWeights {
    /// Feature channels `F`.
    pub features: usize,
    /// Hidden width `H` of the value MLP.
    pub value_hidden: usize,
    /// Board side `S`.
    pub board_size: usize,
    /// Encoder version the net reads.
    pub encoder_version: u32,
    /// `[2, CANONICAL_PATTERNS, F]`: row `[c][id]` is the line feature of canonical pattern `id`
    /// when the deciding player holds Black (`c = 0`) or White (`c = 1`).
    pub table: Vec<f32>,
    /// `[POINT_INPUTS, F]` embeddings of the per-point inputs.
    pub point_embed: Vec<f32>,
    /// `[G, F]` (transposed linear) and `[F]`: the globals' per-channel bias, added at every point.
    pub global_w: Vec<f32>,
    pub global_b: Vec<f32>,
    /// `[9, F]` depthwise 3x3 kernel (tap `(dy + 1) * 3 + (dx + 1)`) and `[F]` bias.
    pub dw_w: Vec<f32>,
    pub dw_b: Vec<f32>,
    /// `[F]` and `[1]`: placement logit of a point.
    pub policy_w: Vec<f32>,
    pub policy_b: Vec<f32>,
    /// `[R, 2F]`, `[R]`: protocol-action logits from the pooled vector (mean then max).
    pub protocol_w: Vec<f32>,
    pub protocol_b: Vec<f32>,
    /// `[H, 2F]`, `[H]`, `[3, H]`, `[3]`: the value MLP (win, draw, loss logits).
    pub value_w1: Vec<f32>,
    pub value_b1: Vec<f32>,
    pub value_w2: Vec<f32>,
    pub value_b2: Vec<f32>,
}

impl LinePatternWeights {
    /// Protocol actions `R = A - S*S`.
    pub fn protocol_actions(&self) -> usize {
        action_space_size(self.board_size) - self.board_size * self.board_size
    }

    /// `(name, tensor data, shape)` of every tensor, in file order.
    fn tensors(&self) -> Vec<(&'static str, &Vec<f32>, Vec<usize>)> {
        let (f, h, r) = (self.features, self.value_hidden, self.protocol_actions());
        vec![
            ("table", &self.table, vec![2, CANONICAL_PATTERNS, f]),
            ("point_embed", &self.point_embed, vec![POINT_INPUTS, f]),
            ("global_w", &self.global_w, vec![NUM_GLOBALS, f]),
            ("global_b", &self.global_b, vec![f]),
            ("dw_w", &self.dw_w, vec![9, f]),
            ("dw_b", &self.dw_b, vec![f]),
            ("policy_w", &self.policy_w, vec![f]),
            ("policy_b", &self.policy_b, vec![1]),
            ("protocol_w", &self.protocol_w, vec![r, 2 * f]),
            ("protocol_b", &self.protocol_b, vec![r]),
            ("value_w1", &self.value_w1, vec![h, 2 * f]),
            ("value_b1", &self.value_b1, vec![h]),
            ("value_w2", &self.value_w2, vec![3, h]),
            ("value_b2", &self.value_b2, vec![3]),
        ]
    }

    /// Checks every tensor has its shape; the error names the tensor.
    pub fn validate(&self) -> Result<()> {
        ensure!(
            self.features >= 1 && self.value_hidden >= 1,
            "line-pattern net: features and value_hidden must be >= 1"
        );
        for (name, data, shape) in self.tensors() {
            let n: usize = shape.iter().product();
            ensure!(
                data.len() == n,
                "line-pattern tensor '{name}' has {} values, expected {shape:?} = {n}",
                data.len()
            );
        }
        Ok(())
    }

    /// SHA-256 (hex) over every tensor's little-endian bytes in file order: the checksum stored
    /// in the table file's metadata and in the generation's `config.json`.
    pub fn checksum(&self) -> String {
        use sha2::{Digest, Sha256};
        let mut h = Sha256::new();
        for (name, data, _) in self.tensors() {
            h.update(name.as_bytes());
            for v in data {
                h.update(v.to_le_bytes());
            }
        }
        h.finalize().iter().map(|b| format!("{b:02x}")).collect()
    }

    /// The table file's bytes (safetensors; metadata: format, version, features, value_hidden,
    /// board_size, encoder_version, checksum).
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        self.validate()?;
        let bytes: Vec<(&'static str, Vec<u8>, Vec<usize>)> = self
            .tensors()
            .into_iter()
            .map(|(n, d, s)| (n, d.iter().flat_map(|v| v.to_le_bytes()).collect(), s))
            .collect();
        let views = bytes
            .iter()
            .map(|(n, b, s)| Ok((*n, safetensors::tensor::TensorView::new(safetensors::Dtype::F32, s.clone(), b)?)))
            .collect::<Result<Vec<_>, safetensors::SafeTensorError>>()
            .map_err(|e| anyhow::anyhow!("{e:?}"))?;
        let meta: HashMap<String, String> = [
            ("format", TABLE_FORMAT.to_string()),
            ("version", TABLE_VERSION.to_string()),
            ("features", self.features.to_string()),
            ("value_hidden", self.value_hidden.to_string()),
            ("board_size", self.board_size.to_string()),
            ("encoder_version", self.encoder_version.to_string()),
            ("checksum", self.checksum()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        safetensors::serialize(views, &Some(meta))
            .map_err(|e| anyhow::anyhow!("serialising the line-pattern table: {e:?}"))
    }

    /// Parses a table file's bytes, checking format, version, shapes and checksum; errors start
    /// with `what` (the file name).
    pub fn from_bytes(bytes: &[u8], what: &str) -> Result<LinePatternWeights> {
        let st = safetensors::SafeTensors::deserialize(bytes)
            .map_err(|e| anyhow::anyhow!("{what}: not a readable safetensors file ({e:?})"))?;
        let (_, md) = safetensors::SafeTensors::read_metadata(bytes).map_err(|e| anyhow::anyhow!("{what}: {e:?}"))?;
        let meta = md.metadata().clone().unwrap_or_default();
        let get = |k: &str| meta.get(k).with_context(|| format!("{what}: metadata '{k}' missing"));
        let num = |k: &str| -> Result<usize> {
            get(k)?.parse().with_context(|| format!("{what}: metadata '{k}' is not a number"))
        };
        ensure!(get("format")? == TABLE_FORMAT, "{what}: format '{}' is not {TABLE_FORMAT}", get("format")?);
        ensure!(
            num("version")? == TABLE_VERSION as usize,
            "{what}: table version {} but this build reads version {TABLE_VERSION}",
            num("version")?
        );
        let mut w = LinePatternWeights {
            features: num("features")?,
            value_hidden: num("value_hidden")?,
            board_size: num("board_size")?,
            encoder_version: num("encoder_version")? as u32,
            table: vec![],
            point_embed: vec![],
            global_w: vec![],
            global_b: vec![],
            dw_w: vec![],
            dw_b: vec![],
            policy_w: vec![],
            policy_b: vec![],
            protocol_w: vec![],
            protocol_b: vec![],
            value_w1: vec![],
            value_b1: vec![],
            value_w2: vec![],
            value_b2: vec![],
        };
        ensure!(
            renju_rules::board::SIZES.contains(&w.board_size),
            "{what}: board_size {} out of range ({:?})",
            w.board_size,
            renju_rules::board::SIZES
        );
        let read = |name: &str| -> Result<Vec<f32>> {
            let t = st.tensor(name).map_err(|e| anyhow::anyhow!("{what}: tensor '{name}' missing ({e:?})"))?;
            ensure!(t.dtype() == safetensors::Dtype::F32, "{what}: tensor '{name}' is not f32");
            Ok(t.data().chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect())
        };
        w.table = read("table")?;
        w.point_embed = read("point_embed")?;
        w.global_w = read("global_w")?;
        w.global_b = read("global_b")?;
        w.dw_w = read("dw_w")?;
        w.dw_b = read("dw_b")?;
        w.policy_w = read("policy_w")?;
        w.policy_b = read("policy_b")?;
        w.protocol_w = read("protocol_w")?;
        w.protocol_b = read("protocol_b")?;
        w.value_w1 = read("value_w1")?;
        w.value_b1 = read("value_b1")?;
        w.value_w2 = read("value_w2")?;
        w.value_b2 = read("value_b2")?;
        w.validate().with_context(|| what.to_string())?;
        let sum = w.checksum();
        ensure!(
            get("checksum")? == &sum,
            "{what}: checksum mismatch (file says {}, contents give {sum}): the table is corrupt",
            get("checksum")?
        );
        Ok(w)
    }

    /// Reads and checks a table file.
    pub fn read(path: &Path) -> Result<LinePatternWeights> {
        let bytes = std::fs::read(path)
            .with_context(|| format!("missing or unreadable line-pattern table {}", path.display()))?;
        LinePatternWeights::from_bytes(&bytes, &path.display().to_string())
    }
}

/// A loaded line-pattern network: weights plus the board geometry, shared (`Arc`) by the
/// evaluators of every thread.
pub struct LinePatternNet {
    /// The weights without their table (`w.table` is empty: the table lives in `rows_f32`, so
    /// a loaded net holds it once).
    w: LinePatternWeights,
    /// [`LinePatternWeights::checksum`] of the weights as loaded.
    checksum: String,
    view: StoneView,
    geometry: Arc<LineGeometry>,
    /// The table as the f32 kernel reads it (rows on cache lines).
    rows_f32: Rows<f32>,
    /// The table quantised to i16 (built on first use).
    rows_i16: OnceLock<QuantisedTable>,
    /// The protocol logits' and the value MLP's first layer stacked and transposed,
    /// `[2F, M]` with `M = R + H` rounded up to a multiple of 8 (zero columns), and their bias
    /// `[M]`: both read the pooled vector, so one pass over it computes `R + H` outputs with
    /// independent accumulators (see [`pooled_heads`]).
    heads_t: Vec<f32>,
    heads_b: Vec<f32>,
}

/// How the evaluator holds the line table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Precision {
    /// The exported f32 values: the outputs equal the tch model within float rounding (1e-4).
    /// The default: in self-play the i16 table measured no faster
    /// (docs/experiments/2026-12-line-pattern-evaluator.md).
    #[default]
    F32,
    /// Rows quantised to i16 with one scale per table ([`QuantisedTable`]): half the memory
    /// traffic of the table lookups; the outputs differ from the f32 ones by the quantisation
    /// error, at most [`QuantisedTable::line_error`] in every first-layer activation.
    I16,
}

/// Plain numbers a [`Rows`] buffer may hold (every bit pattern is a valid value).
trait RowElem: Copy + Default {}
impl RowElem for f32 {}
impl RowElem for i16 {}

/// One 64-byte cache line of raw storage.
#[repr(C, align(64))]
#[derive(Clone, Copy)]
struct CacheLine([u8; 64]);

/// `n` table rows of `f` values each, every row starting on a 64-byte cache line (the row
/// stride is `f` rounded up to whole lines), so that a row of 32 i16 is one line and a row of
/// 32 f32 two (an unaligned row would touch one line more).
struct Rows<T> {
    lines: Vec<CacheLine>,
    stride: usize,
    _elem: std::marker::PhantomData<T>,
}

impl<T: RowElem> Rows<T> {
    fn new(n: usize, f: usize, mut value: impl FnMut(usize, usize) -> T) -> Rows<T> {
        let per_line = 64 / std::mem::size_of::<T>();
        let stride = f.div_ceil(per_line) * per_line;
        let mut rows = Rows {
            lines: vec![CacheLine([0; 64]); (n * stride).div_ceil(per_line)],
            stride,
            _elem: std::marker::PhantomData,
        };
        let data = rows.data_mut();
        for r in 0..n {
            for c in 0..f {
                data[r * stride + c] = value(r, c);
            }
        }
        rows
    }

    /// The values, row `r` at `r * stride`.
    #[inline(always)]
    fn data(&self) -> &[T] {
        let n = self.lines.len() * 64 / std::mem::size_of::<T>();
        // SAFETY: the lines are plain bytes, 64-aligned (>= T's alignment), and every bit
        // pattern is a valid T (`RowElem` is implemented only for f32 and i16).
        unsafe { std::slice::from_raw_parts(self.lines.as_ptr() as *const T, n) }
    }

    /// The rows (`f` values each) of canonical ids `ids` in colour `colour`'s table, which
    /// starts at row `colour * CANONICAL_PATTERNS`.
    #[inline(always)]
    fn four(&self, colour: usize, ids: [usize; 4], f: usize) -> [&[T]; 4] {
        let (data, st) = (self.data(), self.stride);
        let base = colour * CANONICAL_PATTERNS;
        // Written out, not `ids.map(..)`: that compiled to an out-of-line call per point.
        let row = |id: usize| &data[(base + id) * st..(base + id) * st + f];
        [row(ids[0]), row(ids[1]), row(ids[2]), row(ids[3])]
    }

    fn data_mut(&mut self) -> &mut [T] {
        let n = self.lines.len() * 64 / std::mem::size_of::<T>();
        // SAFETY: as in `data`, and the borrow is unique.
        unsafe { std::slice::from_raw_parts_mut(self.lines.as_mut_ptr() as *mut T, n) }
    }
}

/// The line table quantised to i16: `value = q * scale` with `scale = max|table| / 32_767`,
/// one scale for both colours' tables. The evaluator adds a point's 4 rows in i32 (exact) and
/// converts once. Rounding to the nearest step leaves each row within `scale / 2` of its f32
/// value.
pub struct QuantisedTable {
    rows: Rows<i16>,
    /// f32 value of one i16 step.
    pub scale: f32,
}

impl QuantisedTable {
    /// Quantises the f32 table `table` (`2 * CANONICAL_PATTERNS` rows of `f`).
    fn new(table: &Rows<f32>, f: usize) -> QuantisedTable {
        let (data, st) = (table.data(), table.stride);
        let value = |r: usize, c: usize| data[r * st + c];
        let mut max = 0f32;
        for r in 0..2 * CANONICAL_PATTERNS {
            for c in 0..f {
                max = max.max(value(r, c).abs());
            }
        }
        let scale = if max > 0.0 { max / 32_767.0 } else { 1.0 };
        let rows = Rows::new(2 * CANONICAL_PATTERNS, f, |r, c| (value(r, c) / scale).round() as i16);
        QuantisedTable { rows, scale }
    }

    /// The largest difference the quantisation makes to one point's summed line features
    /// (4 rows of at most `scale / 2` each).
    pub fn line_error(&self) -> f32 {
        2.0 * self.scale
    }
}

impl LinePatternNet {
    /// Checks the weights against this build (encoder version), precomputes the geometry and
    /// moves the table into the evaluator's layout.
    pub fn new(mut w: LinePatternWeights) -> Result<Arc<LinePatternNet>> {
        w.validate()?;
        ensure!(
            w.encoder_version == ENCODER_VERSION,
            "the line-pattern table was made for encoder version {}, this build encodes version {ENCODER_VERSION}",
            w.encoder_version
        );
        let view = StoneView::of_encoder(w.encoder_version)?;
        let geometry = Arc::new(LineGeometry::new(w.board_size));
        let checksum = w.checksum();
        let f = w.features;
        let rows_f32 = Rows::new(2 * CANONICAL_PATTERNS, f, |r, c| w.table[r * f + c]);
        w.table = Vec::new();
        let (r, h) = (w.protocol_actions(), w.value_hidden);
        let m = (r + h).next_multiple_of(8);
        let mut heads_t = vec![0.0; 2 * f * m];
        let mut heads_b = vec![0.0; m];
        for j in 0..2 * f {
            for i in 0..r {
                heads_t[j * m + i] = w.protocol_w[i * 2 * f + j];
            }
            for i in 0..h {
                heads_t[j * m + r + i] = w.value_w1[i * 2 * f + j];
            }
        }
        heads_b[..r].copy_from_slice(&w.protocol_b[..r]);
        heads_b[r..r + h].copy_from_slice(&w.value_b1[..h]);
        Ok(Arc::new(LinePatternNet {
            w,
            checksum,
            view,
            geometry,
            rows_f32,
            rows_i16: OnceLock::new(),
            heads_t,
            heads_b,
        }))
    }

    /// The table as a kernel reads it at precision `p`.
    fn table(&self, p: Precision) -> TableRef<'_> {
        match p {
            Precision::F32 => TableRef::F32(&self.rows_f32),
            Precision::I16 => TableRef::I16(self.quantised()),
        }
    }

    /// The i16 table (quantised on first use, then shared by every evaluator of this net).
    pub fn quantised(&self) -> &QuantisedTable {
        self.rows_i16.get_or_init(|| QuantisedTable::new(&self.rows_f32, self.w.features))
    }

    /// [`LinePatternWeights::checksum`] of the weights this net was made from.
    pub fn checksum(&self) -> &str {
        &self.checksum
    }

    /// Feature channels `F`.
    pub fn features(&self) -> usize {
        self.w.features
    }

    /// A per-thread evaluator factory over this network (for
    /// [`crate::server::ServerHandle::per_thread`]).
    pub fn factory(self: &Arc<Self>) -> crate::server::EvaluatorFactory {
        let net = self.clone();
        Arc::new(move || Ok(Box::new(net.evaluator()) as Box<dyn Evaluator>))
    }

    /// A fresh evaluator (own scratch buffers) over this network, at the default
    /// [`Precision`]; it uses AVX2 where the CPU has it ([`LinePatternEvaluator::with_simd`]).
    pub fn evaluator(self: &Arc<Self>) -> LinePatternEvaluator {
        LinePatternEvaluator {
            net: self.clone(),
            scratch: Scratch::default(),
            avx2: avx2_available(),
            precision: Precision::default(),
        }
    }
}

#[derive(Default)]
struct Scratch {
    cells: Vec<u8>,
    raw: Vec<u32>,
    /// `[S*S]`: bit `k` set where sparse per-point input `k` is.
    flags: Vec<u8>,
    /// First-layer activations on the board padded by one zero point on every side
    /// (`[(S+2)*(S+2), F]`): the depthwise 3x3 reads its taps without bounds checks.
    act: Vec<f32>,
    out: Vec<f32>,
    /// `[S*S * 8]`: the placement logits' partial sums between channel chunks (AVX2 kernel).
    pol: Vec<f32>,
    gbias: Vec<f32>,
    pooled: Vec<f32>,
    hidden: Vec<f32>,
}

/// The table evaluator: the same outputs as the tch `LineNet` from table lookups. Per position
/// (`S*S` points `p`, `F` channels, all loops over `F` contiguous):
/// 1. `h[p] = empty(p) * sum_d table[c][canon(raw(p, d))] + sum_k input_k(p) * point_embed[k]
///    + global_w^T globals + global_b`, `a = relu(h)`;
/// 2. `o[p] = a[p] + relu(dw_b + sum_taps dw_w[t] * a[p + t])` (depthwise 3x3, zero outside);
/// 3. placement logit `policy_w . o[p] + policy_b`; pooled `[mean_p o, max_p o]` (`2F`) gives the
///    protocol logits (linear) and the value (linear, relu, linear to W/D/L logits, softmax).
///
/// Pattern indices are recomputed per position from the planes (chosen by measurement, see
/// `docs/experiments/2026-12-line-pattern-evaluator.md`: with AVX2 they cost about 4% of an
/// evaluation). The table is read at a [`Precision`] (f32 by default, or i16). The kernel is
/// compiled for the presets' `F` (16, 32, 64) as constants, so every per-point loop has a known
/// length, and on x86-64 a second time with AVX2 and FMA enabled, picked at run time when the CPU
/// has them; in that variant the stone and flag planes, the pattern indices, the line sums and the
/// depthwise 3x3 are written with intrinsics when `F` is a multiple of 8. The arithmetic and its
/// order per lane are the same in every variant (the depthwise taps are fused multiply-adds in
/// both: [`taps`]), so all variants give bit-identical outputs (tested).
pub struct LinePatternEvaluator {
    net: Arc<LinePatternNet>,
    scratch: Scratch,
    avx2: bool,
    precision: Precision,
}

/// Whether this CPU runs the AVX2 variant of the kernel (which also uses FMA: every CPU
/// with AVX2 has had it since 2013).
fn avx2_available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

impl LinePatternEvaluator {
    /// Uses the AVX2 variant of the kernel when `on` and the CPU has AVX2, else the portable
    /// one (the outputs are bit-identical; a test compares them, the bench times both).
    pub fn with_simd(mut self, on: bool) -> LinePatternEvaluator {
        self.avx2 = on && avx2_available();
        self
    }

    /// Whether this evaluator runs the AVX2 variant.
    pub fn simd(&self) -> bool {
        self.avx2
    }

    /// Holds the table at precision `p` (the i16 table is built on first use and shared).
    pub fn with_precision(mut self, p: Precision) -> LinePatternEvaluator {
        self.precision = p;
        self
    }

    /// The precision of the table lookups.
    pub fn precision(&self) -> Precision {
        self.precision
    }

    /// Evaluates one position into `logits` (`[A]`) and `wdl` (`[3]`).
    fn one(&mut self, planes: &[f32], globals: &[f32], logits: &mut [f32], wdl: &mut [f32]) {
        let (net, sc) = (&*self.net, &mut self.scratch);
        let table = net.table(self.precision);
        let io = Io { planes, globals, logits, wdl };
        #[cfg(target_arch = "x86_64")]
        if self.avx2 {
            // SAFETY: `avx2` is true only when the running CPU reports AVX2 (`avx2_available`).
            unsafe { kernel_avx2(net, sc, table, io) };
            return;
        }
        kernel_for_width::<false>(net, sc, table, io)
    }
}

/// The table a kernel reads.
#[derive(Clone, Copy)]
enum TableRef<'a> {
    F32(&'a Rows<f32>),
    I16(&'a QuantisedTable),
}

/// One position's inputs (`planes [C, S, S]`, `globals [G]`) and outputs (`logits [A]`,
/// `wdl [3]`).
struct Io<'a> {
    planes: &'a [f32],
    globals: &'a [f32],
    logits: &'a mut [f32],
    wdl: &'a mut [f32],
}

/// Runs [`kernel`] specialised for the presets' channel counts (16, 32, 64; any other takes the
/// generic loop) and the table precision: the one dispatch every SIMD variant goes through.
#[inline(always)]
fn kernel_for_width<const AVX2: bool>(net: &LinePatternNet, sc: &mut Scratch, table: TableRef<'_>, io: Io<'_>) {
    match net.w.features {
        16 => kernel::<16, AVX2>(net, sc, table, io),
        32 => kernel::<32, AVX2>(net, sc, table, io),
        64 => kernel::<64, AVX2>(net, sc, table, io),
        _ => kernel::<0, AVX2>(net, sc, table, io),
    }
}

/// [`kernel_for_width`] compiled with AVX2 and FMA (8 f32 / 16 i16 lanes instead of SSE2's
/// 4 / 8).
///
/// # Safety
/// The CPU must support AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn kernel_avx2(net: &LinePatternNet, sc: &mut Scratch, table: TableRef<'_>, io: Io<'_>) {
    kernel_for_width::<true>(net, sc, table, io)
}

/// `out[p] |= 1 << k` for every point `p` where `planes[k][p] > 0.5` (`planes[k]`, `out`:
/// `[S*S]`, `K <= 8`): how the kernel reads the stone planes and the sparse per-point inputs.
/// `AVX2` picks [`mark_points_avx2`] (the same result, 8 points per compare).
#[inline(always)]
fn mark_points<const AVX2: bool, const K: usize>(planes: &[&[f32]; K], out: &mut [u8]) {
    #[cfg(target_arch = "x86_64")]
    if AVX2 {
        // SAFETY: `AVX2` is true only inside `kernel_avx2`, which runs only on AVX2 CPUs.
        unsafe { mark_points_avx2(planes, out) };
        return;
    }
    for (k, plane) in planes.iter().enumerate() {
        for (o, &v) in out.iter_mut().zip(*plane) {
            *o |= u8::from(v > 0.5) << k;
        }
    }
}

/// `SPREAD[m]`: byte `j` is 1 where bit `j` of `m` is set (8 compare results as 8 bytes).
static SPREAD: [u64; 256] = {
    let mut t = [0u64; 256];
    let mut m = 0;
    while m < 256 {
        let mut j = 0;
        while j < 8 {
            if m >> j & 1 == 1 {
                t[m] |= 1 << (8 * j);
            }
            j += 1;
        }
        m += 1;
    }
    t
};

/// [`mark_points`] for 8 points at a time: per plane a compare, its sign bits as a mask, the
/// mask spread to bytes ([`SPREAD`]) and shifted to the plane's bit; one store per 8 points
/// (the rest one by one). No branch on the masks: on the stone planes it would be mispredicted
/// half the time. Before this, building the cells and the flags took about a tenth of an
/// evaluation.
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn mark_points_avx2<const K: usize>(planes: &[&[f32]; K], out: &mut [u8]) {
    use std::arch::x86_64::*;
    const { assert!(K <= 8) };
    let n = planes.iter().map(|p| p.len()).fold(out.len(), usize::min);
    let half = _mm256_set1_ps(0.5);
    let mut i = 0;
    while i + 8 <= n {
        let mut bytes = 0u64;
        for (k, plane) in planes.iter().enumerate() {
            let v = _mm256_loadu_ps(plane.as_ptr().add(i));
            let m = _mm256_movemask_ps(_mm256_cmp_ps::<_CMP_GT_OQ>(v, half)) as usize;
            // Each byte of `SPREAD[m]` is 0 or 1, so `k < 8` shifts stay within bytes.
            bytes |= SPREAD[m] << k;
        }
        let o = out.as_mut_ptr().add(i) as *mut u64;
        o.write_unaligned(o.read_unaligned() | bytes);
        i += 8;
    }
    mark_points::<false, K>(&planes.map(|p| &p[i..n]), &mut out[i..n]);
}

/// `a += b` over `F` lanes.
#[inline(always)]
fn add_to(a: &mut [f32], b: &[f32]) {
    for (x, &y) in a.iter_mut().zip(b) {
        *x += y;
    }
}

/// The line features of one empty point: the sum of its 4 table rows.
trait LineRows {
    type Elem: Copy;
    /// The 4 rows (`[F]` each) of canonical ids `ids` in the deciding colour's table, which
    /// starts at row `colour * CANONICAL_PATTERNS`.
    fn rows(&self, colour: usize, ids: [usize; 4], f: usize) -> [&[Self::Elem]; 4];
    /// `h += (r0 + r1) + (r2 + r3)` over the 4 rows (`h`: `[F]`), the portable loop.
    fn add_lines(&self, rows: [&[Self::Elem]; 4], h: &mut [f32]);
    /// The same for the 8 channels from `c`: returns `v + sum of rows[.., c..c + 8]`, in the
    /// portable loop's order per lane.
    ///
    /// # Safety
    /// AVX2; every row holds at least `c + 8` values.
    #[cfg(target_arch = "x86_64")]
    unsafe fn add_chunk_avx2(
        &self,
        rows: &[&[Self::Elem]; 4],
        c: usize,
        v: std::arch::x86_64::__m256,
    ) -> std::arch::x86_64::__m256;
}

impl LineRows for Rows<f32> {
    type Elem = f32;
    #[inline(always)]
    fn rows(&self, colour: usize, ids: [usize; 4], f: usize) -> [&[f32]; 4] {
        self.four(colour, ids, f)
    }
    #[inline(always)]
    fn add_lines(&self, rows: [&[f32]; 4], h: &mut [f32]) {
        let [r0, r1, r2, r3] = rows;
        // `(r0 + r1) + (r2 + r3)`: two levels of adds instead of a chain of four.
        for (i, x) in h.iter_mut().enumerate().take(r0.len()) {
            *x += (r0[i] + r1[i]) + (r2[i] + r3[i]);
        }
    }
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn add_chunk_avx2(
        &self,
        rows: &[&[f32]; 4],
        c: usize,
        v: std::arch::x86_64::__m256,
    ) -> std::arch::x86_64::__m256 {
        use std::arch::x86_64::*;
        let ld = |r: &[f32]| _mm256_loadu_ps(r.as_ptr().add(c));
        _mm256_add_ps(
            v,
            _mm256_add_ps(_mm256_add_ps(ld(rows[0]), ld(rows[1])), _mm256_add_ps(ld(rows[2]), ld(rows[3]))),
        )
    }
}

impl LineRows for QuantisedTable {
    type Elem = i16;
    #[inline(always)]
    fn rows(&self, colour: usize, ids: [usize; 4], f: usize) -> [&[i16]; 4] {
        self.rows.four(colour, ids, f)
    }
    #[inline(always)]
    fn add_lines(&self, rows: [&[i16]; 4], h: &mut [f32]) {
        let [r0, r1, r2, r3] = rows;
        let scale = self.scale;
        // Integer adds are exact, so every SIMD variant gives the same bits; the sum (at most
        // 4 * 32_767) converts to f32 exactly.
        for (i, x) in h.iter_mut().enumerate().take(r0.len()) {
            let q = r0[i] as i32 + r1[i] as i32 + r2[i] as i32 + r3[i] as i32;
            *x += q as f32 * scale;
        }
    }
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn add_chunk_avx2(
        &self,
        rows: &[&[i16]; 4],
        c: usize,
        v: std::arch::x86_64::__m256,
    ) -> std::arch::x86_64::__m256 {
        use std::arch::x86_64::*;
        // 8 i16 of row `r` from channel `c`, widened to i32.
        let ld = |r: &[i16]| _mm256_cvtepi16_epi32(_mm_loadu_si128(r.as_ptr().add(c) as *const __m128i));
        let q =
            _mm256_add_epi32(_mm256_add_epi32(_mm256_add_epi32(ld(rows[0]), ld(rows[1])), ld(rows[2])), ld(rows[3]));
        _mm256_add_ps(v, _mm256_mul_ps(_mm256_cvtepi32_ps(q), _mm256_set1_ps(self.scale)))
    }
}

/// The inputs of the first layer of one position (see [`FirstLayer::run`]).
struct FirstLayer<'a, T, I> {
    w: &'a LinePatternWeights,
    /// The table at its precision, and the deciding colour's half of it (0 Black, 1 White).
    table: &'a T,
    colour: usize,
    /// `[S*S]` cells ([`cell`]), from the deciding player's view.
    cells: &'a [u8],
    /// The canonical ids of a point's 4 line patterns.
    ids_of: I,
    /// `[S*S]`: bit `k` set where sparse per-point input `k` is.
    flags: &'a [u8],
    /// `[F]`: the per-position bias from the globals.
    gbias: &'a [f32],
}

impl<T: LineRows, I: Fn(usize) -> [usize; 4]> FirstLayer<'_, T, I> {
    /// First layer of every point into `act` (`[(S+2)^2, F]`, interior points): `h = gbias`,
    /// plus the line features (an empty point) or the own/opponent stone embedding, plus the
    /// embedding of every sparse input set at the point (in increasing `k`), then `relu`. The
    /// portable loop.
    #[inline(always)]
    fn run(&self, act: &mut [f32]) {
        let FirstLayer { w, table, colour, cells, ref ids_of, flags, gbias } = *self;
        let (s, f) = (w.board_size, gbias.len());
        let sp = s + 2;
        for y in 0..s {
            for x in 0..s {
                let p = y * s + x;
                let q = (y + 1) * sp + x + 1;
                let h = &mut act[q * f..(q + 1) * f];
                h.copy_from_slice(gbias);
                let c = cells[p];
                if c == cell::EMPTY {
                    table.add_lines(table.rows(colour, ids_of(p), f), h);
                } else {
                    let k = (c - 1) as usize; // own 0, opponent 1
                    add_to(h, &w.point_embed[k * f..(k + 1) * f]);
                }
                let mut m = flags[p];
                while m != 0 {
                    let k = m.trailing_zeros() as usize + 2;
                    add_to(h, &w.point_embed[k * f..(k + 1) * f]);
                    m &= m - 1;
                }
                for v in h.iter_mut() {
                    *v = v.max(0.0);
                }
            }
        }
    }

    /// [`Self::run`] with AVX2 intrinsics for `F` a multiple of 8: each point's 8-channel
    /// chunk stays in a register from the bias to the `relu` and is stored once. `F = 8 * N`
    /// (a constant: the chunk loop unrolls), or `N = 0` for `F = gbias.len()`. The same
    /// operations in the same order per lane, so the outputs are bit-identical.
    ///
    /// # Safety
    /// AVX2; `F % 8 == 0` (checked).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn run_avx2<const N: usize>(&self, act: &mut [f32]) {
        let FirstLayer { w, table, colour, cells, ref ids_of, flags, gbias } = *self;
        use std::arch::x86_64::*;
        let (s, f) = (w.board_size, if N == 0 { gbias.len() } else { 8 * N });
        let sp = s + 2;
        assert!(f.is_multiple_of(8) && gbias.len() >= f && act.len() >= sp * sp * f);
        assert!(cells.len() >= s * s && flags.len() >= s * s && w.point_embed.len() >= POINT_INPUTS * f);
        let (emb, gb) = (w.point_embed.as_ptr(), gbias.as_ptr());
        let zero = _mm256_setzero_ps();
        let extras = |mut v: __m256, flags: u8, c: usize| {
            let mut m = flags;
            while m != 0 {
                let k = m.trailing_zeros() as usize + 2;
                v = _mm256_add_ps(v, _mm256_loadu_ps(emb.add(k * f + c)));
                m &= m - 1;
            }
            v
        };
        for y in 0..s {
            for x in 0..s {
                let p = y * s + x;
                let dst = act.as_mut_ptr().add(((y + 1) * sp + x + 1) * f);
                let (cl, fl) = (cells[p], flags[p]);
                if cl == cell::EMPTY {
                    let rows = table.rows(colour, ids_of(p), f);
                    for c in (0..f / 8).map(|n| 8 * n) {
                        let v = table.add_chunk_avx2(&rows, c, _mm256_loadu_ps(gb.add(c)));
                        _mm256_storeu_ps(dst.add(c), _mm256_max_ps(extras(v, fl, c), zero));
                    }
                } else {
                    let k = (cl - 1) as usize;
                    for c in (0..f / 8).map(|n| 8 * n) {
                        let v = _mm256_add_ps(_mm256_loadu_ps(gb.add(c)), _mm256_loadu_ps(emb.add(k * f + c)));
                        _mm256_storeu_ps(dst.add(c), _mm256_max_ps(extras(v, fl, c), zero));
                    }
                }
            }
        }
    }
}

/// One position through the table net (see [`LinePatternEvaluator`]) at the table's precision.
/// `FC` is the channel count `F` as a constant, or 0 for "read it from the weights".
#[inline(always)]
fn kernel<const FC: usize, const AVX2: bool>(net: &LinePatternNet, sc: &mut Scratch, table: TableRef<'_>, io: Io<'_>) {
    match table {
        TableRef::F32(rows) => kernel_rows::<FC, AVX2, _>(net, sc, rows, io),
        TableRef::I16(rows) => kernel_rows::<FC, AVX2, _>(net, sc, rows, io),
    }
}

#[inline(always)]
fn kernel_rows<const FC: usize, const AVX2: bool, T: LineRows>(
    net: &LinePatternNet,
    sc: &mut Scratch,
    table: &T,
    io: Io<'_>,
) {
    let Io { planes, globals, logits, wdl } = io;
    let w = &net.w;
    let s = w.board_size;
    let f = if FC == 0 { w.features } else { FC };
    let pp = s * s;
    let sp = s + 2; // padded side
    let (own, opp, black) = net.view.read(planes, globals, pp);
    let (own_pl, opp_pl) = (&planes[own * pp..(own + 1) * pp], &planes[opp * pp..(opp + 1) * pp]);
    sc.cells.clear();
    sc.cells.resize(pp, cell::EMPTY);
    mark_cells::<AVX2>(own_pl, opp_pl, &mut sc.cells);
    #[cfg(target_arch = "x86_64")]
    if AVX2 {
        // SAFETY: `AVX2` is true only inside `kernel_avx2`, which runs only on AVX2 CPUs.
        unsafe { net.geometry.raw_indices_avx2(&sc.cells, &mut sc.raw) };
    } else {
        net.geometry.raw_indices_portable(&sc.cells, &mut sc.raw);
    }
    #[cfg(not(target_arch = "x86_64"))]
    net.geometry.raw_indices_portable(&sc.cells, &mut sc.raw);
    // Per-position bias: globals.
    sc.gbias.clear();
    sc.gbias.extend_from_slice(&w.global_b[..f]);
    for (g, &v) in globals.iter().enumerate() {
        if v != 0.0 {
            for (b, &r) in sc.gbias.iter_mut().zip(&w.global_w[g * f..(g + 1) * f]) {
                *b += v * r;
            }
        }
    }
    let colour = if black { 0 } else { 1 };
    let canon = &canonical().of_raw;
    if sc.act.len() != sp * sp * f {
        sc.act.clear();
        sc.act.resize(sp * sp * f, 0.0); // the border stays zero: only interior points are written
    }
    // Bit k of flags[p]: sparse input k (forbidden point, offer, the last stones) is set at p.
    sc.flags.clear();
    sc.flags.resize(pp, 0);
    let extra = net.view.extra_planes().map(|pl| &planes[pl * pp..(pl + 1) * pp]);
    mark_points::<AVX2, { POINT_INPUTS - 2 }>(&extra, &mut sc.flags);
    let raw = &sc.raw;
    let ids_of = |p: usize| {
        let r = [raw[p], raw[pp + p], raw[2 * pp + p], raw[3 * pp + p]];
        let id = |d: usize| canon[r[d] as usize] as usize;
        [id(0), id(1), id(2), id(3)]
    };
    let layer = FirstLayer { w, table, colour, cells: &sc.cells, ids_of, flags: &sc.flags, gbias: &sc.gbias[..f] };
    #[cfg(target_arch = "x86_64")]
    if AVX2 && f.is_multiple_of(8) {
        // SAFETY: `AVX2` is true only inside `kernel_avx2`, which runs only on AVX2 CPUs.
        unsafe {
            match f {
                16 => layer.run_avx2::<2>(&mut sc.act),
                32 => layer.run_avx2::<4>(&mut sc.act),
                64 => layer.run_avx2::<8>(&mut sc.act),
                _ => layer.run_avx2::<0>(&mut sc.act),
            }
        }
    } else {
        layer.run(&mut sc.act);
    }
    #[cfg(not(target_arch = "x86_64"))]
    layer.run(&mut sc.act);
    // Depthwise 3x3 with a residual; the zero border stands for "outside the board".
    sc.pooled.clear();
    sc.pooled.resize(2 * f, 0.0);
    sc.out.resize(f, 0.0);
    let (mean, max) = sc.pooled.split_at_mut(f);
    max.fill(f32::NEG_INFINITY);
    #[cfg(target_arch = "x86_64")]
    if AVX2 && matches!(f, 16 | 32 | 64) {
        // SAFETY: `AVX2` is true only inside `kernel_avx2`, which runs only on CPUs with AVX2
        // and FMA; the buffers have the sizes the function asks for (`act` resized above, `pooled` 2F).
        unsafe {
            match f {
                16 => depthwise_points_avx2::<2>(w, &sc.act, &mut sc.pol, mean, max, logits),
                32 => depthwise_points_avx2::<4>(w, &sc.act, &mut sc.pol, mean, max, logits),
                _ => depthwise_points_avx2::<8>(w, &sc.act, &mut sc.pol, mean, max, logits),
            }
        }
    } else {
        depthwise_points(w, &sc.act, &mut sc.out[..f], mean, max, logits);
    }
    #[cfg(not(target_arch = "x86_64"))]
    depthwise_points(w, &sc.act, &mut sc.out[..f], mean, max, logits);
    let pooled = &mut sc.pooled[..];
    for v in &mut pooled[..f] {
        *v /= pp as f32;
    }
    let r = w.protocol_actions();
    let h = w.value_hidden;
    pooled_heads(&net.heads_t, &net.heads_b, pooled, &mut sc.hidden);
    logits[pp..pp + r].copy_from_slice(&sc.hidden[..r]);
    let hidden = &mut sc.hidden[r..r + h];
    for x in hidden.iter_mut() {
        *x = x.max(0.0);
    }
    let mut v = [0.0f32; 3];
    for (i, vi) in v.iter_mut().enumerate() {
        *vi = w.value_b2[i] + dot(&w.value_w2[i * h..(i + 1) * h], hidden);
    }
    let m = v.iter().cloned().fold(f32::NEG_INFINITY, f32::max);
    let e = v.map(|x| (x - m).exp());
    let z: f32 = e.iter().sum();
    for i in 0..3 {
        wdl[i] = e[i] / z;
    }
}

/// The depthwise 3x3 + residual of every point (`act`: first-layer activations on the padded
/// board, `[(S+2)^2, F]`), its placement logit into `logits[..S*S]`, and the running mean sum
/// and max of the outputs into `mean` and `max` (`[F]` each). `o` (`[F]`) is scratch.
#[inline(always)]
fn depthwise_points(
    w: &LinePatternWeights,
    act: &[f32],
    o: &mut [f32],
    mean: &mut [f32],
    max: &mut [f32],
    logits: &mut [f32],
) {
    let f = o.len();
    let s = w.board_size;
    let sp = s + 2;
    let pb = w.policy_b[0];
    let (dw_w, dw_b, policy_w) = (&w.dw_w[..9 * f], &w.dw_b[..f], &w.policy_w[..f]);
    for y in 0..s {
        for x in 0..s {
            let q = (y + 1) * sp + x + 1;
            for (i, v) in o.iter_mut().enumerate() {
                let w = |t: usize| dw_w[t * f + i];
                let a = |t: usize| act[(q + (t / 3) * sp + t % 3 - sp - 1) * f + i];
                *v = taps(dw_b[i], w, a);
            }
            let a = &act[q * f..(q + 1) * f];
            for (((v, &av), m), mx) in o.iter_mut().zip(a).zip(mean.iter_mut()).zip(max.iter_mut()) {
                *v = av + v.max(0.0);
                *m += *v;
                *mx = mx.max(*v);
            }
            logits[y * s + x] = pb + dot(o, policy_w);
        }
    }
}

/// [`depthwise_points`] written with AVX2 intrinsics for `F = 8 * N`, one 8-channel chunk at
/// a time over the whole board, so that the chunk's 9 tap weights, bias, policy weights, running
/// mean sum and maximum stay in registers (the loop is bound by loads: this halves them). The
/// placement logit's 8 partial sums per point wait in `pol` (`[S*S * 8]`) from one chunk to
/// the next. The same operations in the same order per lane as the portable loop (the products,
/// then [`taps`]'s fused multiply-adds; the policy partial sums over the chunks in increasing
/// order, then combined as [`dot`] combines them), so the outputs are bit-identical.
///
/// # Safety
/// The CPU must support AVX2 and FMA; `act` holds `(S+2)^2 * F` values, `mean` and `max` `F`, `logits`
/// at least `S*S`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn depthwise_points_avx2<const N: usize>(
    w: &LinePatternWeights,
    act: &[f32],
    pol: &mut Vec<f32>,
    mean: &mut [f32],
    max: &mut [f32],
    logits: &mut [f32],
) {
    use std::arch::x86_64::*;
    let f = 8 * N;
    let s = w.board_size;
    let (sp, pp) = (s + 2, s * s);
    assert!(act.len() >= sp * sp * f && mean.len() >= f && max.len() >= f && logits.len() >= pp);
    assert!(w.dw_w.len() >= 9 * f && w.dw_b.len() >= f && w.policy_w.len() >= f);
    pol.resize(pp * 8, 0.0);
    let (act, pol) = (act.as_ptr(), pol.as_mut_ptr());
    let zero = _mm256_setzero_ps();
    let add = |a, b| _mm256_add_ps(a, b);
    for n in 0..N {
        let c = 8 * n;
        let ld = |v: &[f32], at: usize| _mm256_loadu_ps(v.as_ptr().add(at));
        let wt: [__m256; 9] = std::array::from_fn(|t| ld(&w.dw_w, t * f + c));
        let (b, pw) = (ld(&w.dw_b, c), ld(&w.policy_w, c));
        let (mut m_sum, mut m_max) = (zero, _mm256_set1_ps(f32::NEG_INFINITY));
        for y in 0..s {
            for x in 0..s {
                let q = (y + 1) * sp + x + 1;
                let a = |t: usize| {
                    let qq = q + (t / 3) * sp + t % 3 - sp - 1;
                    _mm256_loadu_ps(act.add(qq * f + c))
                };
                // [`taps`], per lane.
                let mut acc = [b, _mm256_mul_ps(wt[1], a(1)), _mm256_mul_ps(wt[2], a(2))];
                acc[0] = _mm256_fmadd_ps(wt[0], a(0), acc[0]);
                for t in 3..9 {
                    acc[t % 3] = _mm256_fmadd_ps(wt[t], a(t), acc[t % 3]);
                }
                let v = add(add(acc[0], acc[1]), acc[2]);
                let o = add(_mm256_loadu_ps(act.add(q * f + c)), _mm256_max_ps(v, zero));
                m_sum = add(m_sum, o);
                m_max = _mm256_max_ps(m_max, o);
                let at = pol.add((y * s + x) * 8);
                let prev = if n == 0 { zero } else { _mm256_loadu_ps(at) };
                _mm256_storeu_ps(at, add(prev, _mm256_mul_ps(o, pw)));
            }
        }
        _mm256_storeu_ps(mean.as_mut_ptr().add(c), add(_mm256_loadu_ps(mean.as_ptr().add(c)), m_sum));
        _mm256_storeu_ps(max.as_mut_ptr().add(c), _mm256_max_ps(_mm256_loadu_ps(max.as_ptr().add(c)), m_max));
    }
    let pb = w.policy_b[0];
    for (p, l) in logits[..pp].iter_mut().enumerate() {
        let v = _mm256_loadu_ps(pol.add(p * 8));
        // ((l0 + l4) + (l1 + l5)) + ((l2 + l6) + (l3 + l7)), as in `dot`.
        let t = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
        let u = _mm_add_ps(t, _mm_shuffle_ps(t, t, 0b10_11_00_01));
        *l = pb + _mm_cvtss_f32(_mm_add_ss(u, _mm_movehl_ps(u, u)));
    }
}

/// `b + sum_t w(t) * a(t)` over the 9 taps of a depthwise 3x3 in one fixed order: three
/// chains of fused multiply-adds (taps 0, 3, 6 onto `b`; 1, 4, 7; 2, 5, 8), then
/// `(s0 + s1) + s2`. The AVX2 kernel does the same per lane with FMA instructions, so the
/// variants stay bit-identical; `f32::mul_add` is one instruction where the target has FMA
/// (aarch64, x86-64 with FMA) and a correctly rounded library call elsewhere (slow, but such a
/// CPU has no AVX2 kernel either).
#[inline(always)]
fn taps(b: f32, w: impl Fn(usize) -> f32, a: impl Fn(usize) -> f32) -> f32 {
    let mut s = [b, w(1) * a(1), w(2) * a(2)];
    s[0] = w(0).mul_add(a(0), s[0]);
    for t in 3..9 {
        s[t % 3] = w(t).mul_add(a(t), s[t % 3]);
    }
    (s[0] + s[1]) + s[2]
}

/// `out = b + W x` for the stacked head matrix `W` given transposed (`wt`: `[J, M]`, `b`:
/// `[M]`, `x`: `[J]`, `out`: `[M]`, replaced), summed in increasing `j` for every output: one
/// pass over `x` with `M` independent accumulators, a loop the compiler vectorises the same
/// way in every kernel variant (so they stay bit-identical).
#[inline(always)]
fn pooled_heads(wt: &[f32], b: &[f32], x: &[f32], out: &mut Vec<f32>) {
    let m = b.len();
    out.clear();
    out.extend_from_slice(b);
    for (j, &xj) in x.iter().enumerate() {
        for (o, &wv) in out.iter_mut().zip(&wt[j * m..(j + 1) * m]) {
            *o += xj * wv;
        }
    }
}

/// `sum_i a[i] * b[i]` over the shorter length, in 8 interleaved partial sums (so the compiler
/// keeps them in one vector register instead of a chain of dependent scalar adds), combined
/// pairwise, then the remainder in order. Every kernel variant calls this one function, so they
/// stay bit-identical.
#[inline(always)]
fn dot(a: &[f32], b: &[f32]) -> f32 {
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
    let (ra, rb) = (ca.remainder(), cb.remainder());
    let mut acc = [0f32; 8];
    for (x, y) in ca.zip(cb) {
        for i in 0..8 {
            acc[i] += x[i] * y[i];
        }
    }
    let mut s = ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
    for (x, y) in ra.iter().zip(rb) {
        s += x * y;
    }
    s
}

impl Evaluator for LinePatternEvaluator {
    fn evaluate(&mut self, planes: &[f32], globals: &[f32], n: usize) -> Result<EvalOutput> {
        let s = self.net.w.board_size;
        check_inputs(planes, globals, n, s)?;
        let a = action_space_size(s);
        let pl = NUM_PLANES * s * s;
        let mut out = EvalOutput { policy_logits: vec![0.0; n * a], wdl: vec![0.0; n * 3] };
        for i in 0..n {
            let (lg, wd) = (&mut out.policy_logits[i * a..(i + 1) * a], &mut out.wdl[i * 3..(i + 1) * 3]);
            self.one(&planes[i * pl..(i + 1) * pl], &globals[i * NUM_GLOBALS..(i + 1) * NUM_GLOBALS], lg, wd);
        }
        Ok(out)
    }

    fn board_size(&self) -> usize {
        self.net.w.board_size
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use std::collections::HashSet;

    #[test]
    fn side_codes_round_trip_and_count() {
        let mut seen = HashSet::new();
        for code in 0..SIDE_CODES as u32 {
            let c = side_cells(code);
            assert_eq!(side_code(&c).unwrap(), code);
            seen.insert(c);
        }
        assert_eq!(seen.len(), 364);
        assert!(side_code(&[cell::WALL, cell::OWN, cell::WALL, cell::WALL, cell::WALL]).is_err());
        // Written down: 5 on-board cells, own stones at j = 0 and j = 2 -> (243-1)/2 + 1 + 9 = 131.
        assert_eq!(side_code(&[1, 0, 1, 0, 0]).unwrap(), 131);
    }

    /// Enumerates every geometrically possible pattern from the definition (each side: 0..=5
    /// on-board cells of 3 states then walls), identifies mirrors, and counts.
    #[test]
    fn canonical_pattern_count_is_66430() {
        let mut sides = Vec::new();
        for k in 0..=HALF {
            for v in 0..3u32.pow(k as u32) {
                let mut c = [cell::WALL; HALF];
                let mut r = v;
                for x in c.iter_mut().take(k) {
                    *x = (r % 3) as u8;
                    r /= 3;
                }
                sides.push(c);
            }
        }
        assert_eq!(sides.len(), 364);
        let mut set = HashSet::new();
        for a in &sides {
            for b in &sides {
                set.insert(if a <= b { (*a, *b) } else { (*b, *a) });
            }
        }
        assert_eq!(set.len(), 66_430);
        assert_eq!(CANONICAL_PATTERNS, 66_430);
        let c = canonical();
        assert_eq!(c.raw_of.len(), 66_430);
        let ids: HashSet<u32> = c.of_raw.iter().copied().collect();
        assert_eq!(ids.len(), 66_430);
        for raw in 0..RAW_PATTERNS {
            let mirror = (raw % SIDE_CODES) * SIDE_CODES + raw / SIDE_CODES;
            assert_eq!(c.of_raw[raw], c.of_raw[mirror]);
            assert_eq!(c.of_raw[c.raw_of[c.of_raw[raw] as usize] as usize], c.of_raw[raw]);
        }
        // The line of a canonical pattern reproduces its raw index.
        let line = pattern_line(1234);
        let mut neg = [0u8; HALF];
        let mut pos = [0u8; HALF];
        for j in 0..HALF {
            neg[j] = line[HALF - 1 - j];
            pos[j] = line[HALF + 1 + j];
        }
        let raw = side_code(&neg).unwrap() * SIDE_CODES as u32 + side_code(&pos).unwrap();
        assert_eq!(raw, c.raw_of[1234]);
    }

    #[test]
    fn incremental_indices_equal_direct_after_random_place_undo() {
        for size in [7usize, 15] {
            let geo = Arc::new(LineGeometry::new(size));
            let mut idx = PatternIndex::new(geo.clone());
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(size as u64);
            let mut colour = vec![0u8; size * size]; // 0 empty, 1 black, 2 white
            let mut stack: Vec<usize> = Vec::new();
            for step in 0..600 {
                if !stack.is_empty() && rng.gen_bool(0.35) {
                    let q = stack.pop().unwrap();
                    idx.undo(q, colour[q] == 1);
                    colour[q] = 0;
                } else {
                    let empty: Vec<usize> = (0..size * size).filter(|&q| colour[q] == 0).collect();
                    if empty.is_empty() {
                        continue;
                    }
                    let q = empty[rng.gen_range(0..empty.len())];
                    let black = rng.gen_bool(0.5);
                    colour[q] = if black { 1 } else { 2 };
                    idx.place(q, black);
                    stack.push(q);
                }
                if step % 7 != 0 {
                    continue;
                }
                for black_view in [true, false] {
                    let cells: Vec<u8> = colour
                        .iter()
                        .map(|&c| match (c, black_view) {
                            (0, _) => 0,
                            (1, true) | (2, false) => cell::OWN,
                            _ => cell::OPP,
                        })
                        .collect();
                    let mut scratch = Vec::new();
                    geo.raw_indices(&cells, &mut scratch);
                    for p in 0..size * size {
                        for d in 0..4 {
                            let want = raw_index_direct(&cells, size, p % size, p / size, d);
                            assert_eq!(
                                idx.raw(black_view)[d * size * size + p],
                                want,
                                "size {size} step {step} p {p} d {d}"
                            );
                            assert_eq!(scratch[d * size * size + p], want);
                        }
                    }
                }
            }
        }
    }

    /// [`mark_cells`] in its AVX2 variant, callable from a test.
    ///
    /// # Safety
    /// The CPU must support AVX2.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn mark_cells_avx2_for_test(own: &[f32], opp: &[f32], out: &mut [u8]) {
        mark_cells::<true>(own, opp, out)
    }

    #[test]
    fn raw_indices_equal_the_definition_on_every_size() {
        // Every supported side, so both 16-point chunks of a padded row and every edge are
        // exercised; boards from empty to nearly full.
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        for size in renju_rules::board::SIZES {
            let geo = LineGeometry::new(size);
            for fill in [0.0, 0.1, 0.4, 0.9] {
                let own: Vec<f32> = (0..size * size).map(|_| rng.gen_bool(fill / 2.0) as u8 as f32).collect();
                let opp: Vec<f32> =
                    own.iter().map(|&o| if o > 0.5 { 0.0 } else { rng.gen_bool(fill / 2.0) as u8 as f32 }).collect();
                let mut cells = Vec::new();
                stone_cells(&own, &opp, &mut cells);
                for p in 0..size * size {
                    let want = if own[p] > 0.5 {
                        cell::OWN
                    } else if opp[p] > 0.5 {
                        cell::OPP
                    } else {
                        cell::EMPTY
                    };
                    assert_eq!(cells[p], want, "size {size} point {p}");
                }
                // Both planes set at a point (not a position): own wins, in both variants.
                let opp_any: Vec<f32> = (0..size * size).map(|_| rng.gen_bool(fill) as u8 as f32).collect();
                let mut both = Vec::new();
                stone_cells(&own, &opp_any, &mut both);
                for p in 0..size * size {
                    let want = if own[p] > 0.5 {
                        cell::OWN
                    } else if opp_any[p] > 0.5 {
                        cell::OPP
                    } else {
                        cell::EMPTY
                    };
                    assert_eq!(both[p], want, "overlapping planes: size {size} point {p}");
                }
                #[cfg(target_arch = "x86_64")]
                if avx2_available() {
                    let mut fast = vec![cell::EMPTY; size * size];
                    // SAFETY: the CPU has AVX2 (checked above).
                    unsafe { mark_cells_avx2_for_test(&own, &opp_any, &mut fast) };
                    assert_eq!(fast, both, "AVX2 cells: size {size}");
                }
                // The dispatching function (AVX2 where the CPU has it) and the portable loop.
                let (mut raw, mut portable) = (Vec::new(), Vec::new());
                geo.raw_indices(&cells, &mut raw);
                geo.raw_indices_portable(&cells, &mut portable);
                assert_eq!(raw.len(), size * size * 4);
                assert_eq!(portable.len(), size * size * 4);
                for p in 0..size * size {
                    for d in 0..4 {
                        let want = raw_index_direct(&cells, size, p % size, p / size, d);
                        assert_eq!(raw[d * size * size + p], want, "size {size} fill {fill} p {p} d {d}");
                        assert_eq!(
                            portable[d * size * size + p],
                            want,
                            "portable: size {size} fill {fill} p {p} d {d}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn edge_point_pattern_written_down() {
        // 7x7, point a1 (x 0, y 0), horizontal: the -x side is all wall (code 0), the +x side has
        // 5 on-board cells; an own stone at b1 (j = 0) and an opponent stone at d1 (j = 2):
        // 121 + 1 + 2 * 9 = 140.
        let size = 7;
        let mut cells = vec![0u8; 49];
        cells[1] = cell::OWN;
        cells[3] = cell::OPP;
        assert_eq!(raw_index_direct(&cells, size, 0, 0, 0), 140);
        let geo = LineGeometry::new(size);
        let mut raw = Vec::new();
        geo.raw_indices(&cells, &mut raw);
        assert_eq!(raw[0], 140);
    }

    fn random_weights(size: usize, f: usize, h: usize, seed: u64) -> LinePatternWeights {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let mut v = |n: usize| (0..n).map(|_| rng.gen_range(-0.5f32..0.5)).collect::<Vec<f32>>();
        let r = action_space_size(size) - size * size;
        LinePatternWeights {
            features: f,
            value_hidden: h,
            board_size: size,
            encoder_version: ENCODER_VERSION,
            table: v(2 * CANONICAL_PATTERNS * f),
            point_embed: v(POINT_INPUTS * f),
            global_w: v(NUM_GLOBALS * f),
            global_b: v(f),
            dw_w: v(9 * f),
            dw_b: v(f),
            policy_w: v(f),
            policy_b: v(1),
            protocol_w: v(r * 2 * f),
            protocol_b: v(r),
            value_w1: v(h * 2 * f),
            value_b1: v(h),
            value_w2: v(3 * h),
            value_b2: v(3),
        }
    }

    #[test]
    fn table_file_round_trip_and_corruption_is_caught() {
        let w = random_weights(9, 4, 5, 3);
        let bytes = w.to_bytes().unwrap();
        assert_eq!(LinePatternWeights::from_bytes(&bytes, "t").unwrap(), w);
        // Flip one byte inside the table data (the last bytes of the file are value_b2's).
        let mut bad = bytes.clone();
        let n = bad.len();
        bad[n - 2] ^= 0x40;
        let err = LinePatternWeights::from_bytes(&bad, "t.safetensors").unwrap_err().to_string();
        assert!(err.contains("checksum mismatch"), "{err}");
    }

    #[test]
    fn evaluator_outputs_are_well_formed() {
        let w = random_weights(9, 4, 5, 4);
        let net = LinePatternNet::new(w).unwrap();
        let mut ev = net.evaluator();
        let game =
            renju_rules::Game::new(9, renju_rules::Rule::Renju, renju_rules::Protocol::Free { centre: false }, None)
                .unwrap();
        let mut planes = vec![0.0; NUM_PLANES * 81];
        let mut globals = vec![0.0; NUM_GLOBALS];
        crate::encode::encode(&game, &mut planes, &mut globals);
        let out = ev.evaluate(&planes, &globals, 1).unwrap();
        assert_eq!(out.policy_logits.len(), action_space_size(9));
        assert!((out.wdl.iter().sum::<f32>() - 1.0).abs() < 1e-5);
        assert!(out.policy_logits.iter().all(|x| x.is_finite()));
    }

    /// Every kernel variant (channel count as a constant, AVX2 where the CPU has it) gives
    /// bit-identical outputs to the generic portable loop (`kernel::<0, false>`), at both
    /// precisions, on 15x15 midgames, for the specialised channel counts, one multiple of 8 that
    /// is not specialised (24: the AVX2 first layer with a run-time `F`) and one that is not a
    /// multiple of 8 (5: the portable loops everywhere).
    #[test]
    fn specialised_kernels_equal_the_generic_loop_bit_for_bit() {
        let (planes, globals) = crate::encode::random_positions(40, 15, 0..=60, 9);
        for f in [16, 32, 24, 5] {
            let net = LinePatternNet::new(random_weights(15, f, 8, f as u64)).unwrap();
            let a = action_space_size(15);
            for precision in [Precision::F32, Precision::I16] {
                let mut fast = net.evaluator().with_precision(precision);
                let out = fast.evaluate(&planes, &globals, 40).unwrap();
                let mut sc = Scratch::default();
                let pl = NUM_PLANES * 225;
                for i in 0..40 {
                    let (mut lg, mut wdl) = (vec![0.0f32; a], [0.0f32; 3]);
                    let (p, g) = (&planes[i * pl..(i + 1) * pl], &globals[i * NUM_GLOBALS..(i + 1) * NUM_GLOBALS]);
                    let table = net.table(precision);
                    kernel::<0, false>(
                        &net,
                        &mut sc,
                        table,
                        Io { planes: p, globals: g, logits: &mut lg, wdl: &mut wdl },
                    );
                    let at = format!("F = {f}, {precision:?}, position {i}");
                    assert_eq!(lg[..], out.policy_logits[i * a..(i + 1) * a], "{at}: logits");
                    assert_eq!(wdl[..], out.wdl[i * 3..(i + 1) * 3], "{at}: W/D/L");
                }
                let mut portable = net.evaluator().with_precision(precision).with_simd(false);
                assert!(!portable.simd());
                let got = portable.evaluate(&planes, &globals, 40).unwrap();
                assert_eq!(got.policy_logits, out.policy_logits, "F = {f}, {precision:?}");
            }
        }
    }

    /// The i16 table: every row within half a step of its f32 value, the step as documented,
    /// and the whole evaluator's outputs close to the f32 evaluator's (random weights, which
    /// are harsher than trained ones: every table value is of the same size).
    #[test]
    fn quantised_table_stays_within_its_stated_error() {
        let w = random_weights(15, 32, 16, 11);
        let max = w.table.iter().fold(0f32, |m, v| m.max(v.abs()));
        let table = w.table.clone();
        let net = LinePatternNet::new(w).unwrap();
        let qt = net.quantised();
        assert!((qt.scale - max / 32_767.0).abs() < 1e-9);
        let data = qt.rows.data();
        let f = 32;
        let mut worst = 0f32;
        for r in 0..2 * CANONICAL_PATTERNS {
            for c in 0..f {
                let want = table[r * f + c];
                assert_eq!(net.rows_f32.data()[r * net.rows_f32.stride + c], want);
                worst = worst.max((data[r * qt.rows.stride + c] as f32 * qt.scale - want).abs());
            }
        }
        // Half a step, plus the f32 rounding of `v / scale` and `q * scale` (a few ulps of max).
        let bound = qt.scale / 2.0 + 4.0 * f32::EPSILON * max;
        assert!(worst <= bound, "row error {worst} > half a step {}", qt.scale / 2.0);
        assert!(worst > qt.scale / 4.0, "the values really are rounded to steps: {worst}");
        assert!(qt.line_error() < 1e-4 * max, "four rows err by at most 2 steps = 2 max / 32767");
        let (planes, globals) = crate::encode::random_positions(200, 15, 0..=60, 12);
        let exact = net.evaluator().with_precision(Precision::F32).evaluate(&planes, &globals, 200).unwrap();
        let quant = net.evaluator().with_precision(Precision::I16).evaluate(&planes, &globals, 200).unwrap();
        let d = |a: &[f32], b: &[f32]| a.iter().zip(b).fold(0f32, |m, (x, y)| m.max((x - y).abs()));
        let spread = exact.policy_logits.iter().fold(0f32, |m, v| m.max(v.abs()));
        assert!(d(&exact.policy_logits, &quant.policy_logits) < 1e-3 * spread.max(1.0));
        assert!(d(&exact.wdl, &quant.wdl) < 1e-3);
        assert_ne!(exact.policy_logits, quant.policy_logits, "the i16 path is really taken");
    }
}
