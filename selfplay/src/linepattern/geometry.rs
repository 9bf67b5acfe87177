//! Line geometry and indexing: the cells of a position read from its planes ([`stone_cells`]),
//! the raw pattern index of every (point, direction) slot of a board computed from scratch
//! ([`LineGeometry::raw_indices`]) and kept up to date stone by stone ([`PatternIndex`]).

use super::simd::{self, RAW_TAIL};
use super::{cell, DIRS, HALF, POW3, SIDE_CODES};
use std::sync::Arc;

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
pub(super) fn mark_cells<const AVX2: bool>(own: &[f32], opp: &[f32], out: &mut [u8]) {
    mark_points::<AVX2, 2>(&[own, opp], out);
    for c in out.iter_mut() {
        *c ^= *c & (*c << 1) & cell::OPP;
    }
}

/// `out[p] |= 1 << k` for every point `p` where `planes[k][p] > 0.5` (`planes[k]`, `out`:
/// `[S*S]`, `K <= 8`): how the kernel reads the stone planes and the sparse per-point inputs.
/// `AVX2` picks [`simd::mark_points_avx2`] for whole groups of 8 points (the same result, 8
/// points per compare) and this loop for the rest.
#[inline(always)]
pub(super) fn mark_points<const AVX2: bool, const K: usize>(planes: &[&[f32]; K], out: &mut [u8]) {
    #[cfg(target_arch = "x86_64")]
    if AVX2 {
        let n = planes.iter().map(|p| p.len()).fold(out.len(), usize::min);
        // SAFETY: `AVX2` is true only inside the kernel's AVX2 entry point, which runs only on
        // AVX2 CPUs.
        let i = unsafe { simd::mark_points_avx2(planes, out) };
        mark_points::<false, K>(&planes.map(|p| &p[i..n]), &mut out[i..n]);
        return;
    }
    for (k, plane) in planes.iter().enumerate() {
        for (o, &v) in out.iter_mut().zip(*plane) {
            *o |= u8::from(v > 0.5) << k;
        }
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
    /// 2 opponent), into `out` (replaced), from scratch. Uses [`simd::raw_indices_avx2`] where
    /// the CPU has AVX2, else [`Self::raw_indices_portable`] (the same values; a test compares
    /// both with [`raw_index_direct`](super::raw_index_direct) on every size).
    pub fn raw_indices(&self, cells: &[u8], out: &mut Vec<u32>) {
        #[cfg(target_arch = "x86_64")]
        if simd::avx2_available() {
            // SAFETY: the CPU has AVX2.
            unsafe { simd::raw_indices_avx2(self.size, &self.base, cells, out) };
            return;
        }
        self.raw_indices_portable(cells, out)
    }

    /// [`Self::raw_indices`] in the kernel variant `AVX2`: [`simd::raw_indices_avx2`] when
    /// `AVX2`, else the portable loop.
    #[inline(always)]
    pub(super) fn raw_indices_in<const AVX2: bool>(&self, cells: &[u8], out: &mut Vec<u32>) {
        #[cfg(target_arch = "x86_64")]
        if AVX2 {
            // SAFETY: `AVX2` is true only inside the kernel's AVX2 entry point, which runs only
            // on AVX2 CPUs.
            unsafe { simd::raw_indices_avx2(self.size, &self.base, cells, out) };
            return;
        }
        self.raw_indices_portable(cells, out)
    }

    /// [`Self::raw_indices`] as the empty-board indices plus each stone's contributions
    /// ([`Self::touched`], as [`PatternIndex`] adds them).
    #[inline(always)]
    pub(super) fn raw_indices_portable(&self, cells: &[u8], out: &mut Vec<u32>) {
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

#[cfg(test)]
mod tests {
    use super::super::raw_index_direct;
    use super::*;
    use rand::{Rng, SeedableRng};

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
                if simd::avx2_available() {
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
}
