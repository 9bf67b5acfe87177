//! The AVX2 kernels of the line-pattern evaluator: every block of x86-64 intrinsics, each an
//! `unsafe fn` whose `# Safety` section states what its caller guarantees. Each is the twin of a
//! portable loop (named in its docs) with the same operations in the same order per lane, so the
//! outputs are bit-identical (tested). The kernel's entry point compiled with AVX2 and FMA is
//! `evaluator::kernel_avx2`; it and [`LineGeometry::raw_indices`](super::LineGeometry::raw_indices)
//! call these only after [`avx2_available`].

use super::layers::{FirstLayer, LineRows};
use super::net::{QuantisedTable, Rows};
use super::table::{LinePatternWeights, MAX_POINTWISE_OUTPUTS};
use super::{cell, DIRS, HALF, POINT_INPUTS, SIDE_CODES};
#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;

/// Points of a row [`LineGeometry::raw_indices`] computes at once with AVX2 (16 lanes of u16);
/// the empty-board indices carry this many spare zeros.
pub(super) const RAW_TAIL: usize = 16;

/// Whether this CPU runs the AVX2 variant of the kernel (which also uses FMA: every CPU
/// with AVX2 has had it since 2013).
pub(super) fn avx2_available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// [`LineRows`] summed 8 channels at a time with AVX2 (no methods off x86-64).
pub(super) trait LineRowsAvx2: LineRows {
    /// [`LineRows::add_lines`] for the 8 channels from `c`: returns `v + sum of
    /// rows[.., c..c + 8]`, in the portable loop's order per lane.
    ///
    /// # Safety
    /// AVX2; every row holds at least `c + 8` values.
    #[cfg(target_arch = "x86_64")]
    unsafe fn add_chunk_avx2(&self, rows: &[&[Self::Elem]; 4], c: usize, v: __m256) -> __m256;
}

impl LineRowsAvx2 for Rows<f32> {
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn add_chunk_avx2(&self, rows: &[&[f32]; 4], c: usize, v: __m256) -> __m256 {
        let ld = |r: &[f32]| _mm256_loadu_ps(r.as_ptr().add(c));
        _mm256_add_ps(
            v,
            _mm256_add_ps(_mm256_add_ps(ld(rows[0]), ld(rows[1])), _mm256_add_ps(ld(rows[2]), ld(rows[3]))),
        )
    }
}

impl LineRowsAvx2 for QuantisedTable {
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn add_chunk_avx2(&self, rows: &[&[i16]; 4], c: usize, v: __m256) -> __m256 {
        // 8 i16 of row `r` from channel `c`, widened to i32.
        let ld = |r: &[i16]| _mm256_cvtepi16_epi32(_mm_loadu_si128(r.as_ptr().add(c) as *const __m128i));
        let q =
            _mm256_add_epi32(_mm256_add_epi32(_mm256_add_epi32(ld(rows[0]), ld(rows[1])), ld(rows[2])), ld(rows[3]));
        _mm256_add_ps(v, _mm256_mul_ps(_mm256_cvtepi32_ps(q), _mm256_set1_ps(self.scale)))
    }
}

/// [`LineGeometry::raw_indices`](super::LineGeometry::raw_indices) of a board of side `s`
/// whose empty-board indices are `base` (`[4 * S*S + RAW_TAIL]`), with AVX2, about 4x
/// faster than the portable loop: per side, the stones' part of the side code
/// (`sum_j cell(p + j * d) * 3^(j-1)`, off-board cells 0) by Horner's rule for 16 points of a
/// row at once (16 lanes of u16, from a zero-padded copy of the board), then
/// `base + 364 * neg + pos` in 8 lanes of u32.
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
pub(super) unsafe fn raw_indices_avx2(s: usize, base: &[u32], cells: &[u8], out: &mut Vec<u32>) {
    /// Zero columns left of the board (at least `HALF`); a padded row holds two 16-point
    /// chunks (`MAX_SIZE <= 32`) and the columns a chunk's farthest cell reaches, and
    /// `HALF` zero rows lie above and below the board.
    const PAD: usize = 8;
    const LANES: usize = RAW_TAIL;
    const W: usize = 2 * PAD + 2 * LANES;
    const H: usize = renju_rules::board::MAX_SIZE + 2 * HALF;
    const _: () = assert!(renju_rules::board::MAX_SIZE <= 2 * LANES && PAD >= HALF && LANES == 16);
    assert!(cells.len() >= s * s && s <= renju_rules::board::MAX_SIZE && base.len() >= s * s * 4 + RAW_TAIL);
    let mut pad = [0u16; H * W];
    for y in 0..s {
        for (x, &c) in cells[y * s..(y + 1) * s].iter().enumerate() {
            pad[(y + HALF) * W + PAD + x] = u16::from(c);
        }
    }
    out.clear();
    out.resize(s * s * 4 + RAW_TAIL, 0);
    let (pad, base, dst) = (pad.as_ptr(), base.as_ptr(), out.as_mut_ptr());
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

/// `SPREAD[m]`: byte `j` is 1 where bit `j` of `m` is set (8 compare results as 8 bytes).
#[cfg(target_arch = "x86_64")]
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

/// [`mark_points`](super::geometry::mark_points) for the first `8 * floor(n / 8)` points, `n`
/// the shortest of `out` and the planes, 8 points at a time: per plane a compare, its sign bits
/// as a mask, the mask spread to bytes ([`SPREAD`]) and shifted to the plane's bit; one store per
/// 8 points. Returns the points done; the caller marks the rest one by one. No branch on the
/// masks: on the stone planes it would be mispredicted half the time.
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
pub(super) unsafe fn mark_points_avx2<const K: usize>(planes: &[&[f32]; K], out: &mut [u8]) -> usize {
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
    i
}

impl<T: LineRowsAvx2, I: Fn(usize) -> [usize; 4]> FirstLayer<'_, T, I> {
    /// [`Self::run`] with AVX2 intrinsics for `F` a multiple of 8: each point's 8-channel
    /// chunk stays in a register from the bias to the `relu` and is stored once. `F = 8 * N`
    /// (a constant: the chunk loop unrolls), or `N = 0` for `F = gbias.len()`. The same
    /// operations in the same order per lane, so the outputs are bit-identical.
    ///
    /// # Safety
    /// AVX2; `F % 8 == 0` (checked).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn run_avx2<const N: usize>(&self, act: &mut [f32]) {
        let FirstLayer { w, table, colour, cells, ref ids_of, flags, gbias } = *self;
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

/// [`depthwise_points`](super::layers::depthwise_points) written with AVX2 intrinsics for `F = 8 * N`, one 8-channel chunk at
/// a time over the whole board, so that the chunk's 9 tap weights, bias, policy weights, running
/// mean sum and maximum stay in registers (the loop is bound by loads: this halves them). The
/// placement logit's 8 partial sums per point wait in `pol` (`[S*S * 8]`) from one chunk to
/// the next. The same operations in the same order per lane as the portable loop (the products,
/// then [`taps`](super::layers::taps)'s fused multiply-adds; the policy partial sums over the
/// chunks in increasing order, then combined as [`dot`](super::layers::dot) combines them), so the outputs are bit-identical.
///
/// # Safety
/// The CPU must support AVX2 and FMA; `act` holds `(S+2)^2 * F` values, `mean` and `max` `F`, `logits`
/// at least `S*S`, `o_all` none or `S*S * F` (each point's outputs are kept there, as the portable
/// loop keeps them).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
pub(super) unsafe fn depthwise_points_avx2<const N: usize>(
    w: &LinePatternWeights,
    act: &[f32],
    pol: &mut Vec<f32>,
    mean: &mut [f32],
    max: &mut [f32],
    logits: &mut [f32],
    o_all: &mut [f32],
) {
    let f = 8 * N;
    let s = w.board_size;
    let (sp, pp) = (s + 2, s * s);
    assert!(act.len() >= sp * sp * f && mean.len() >= f && max.len() >= f && logits.len() >= pp);
    assert!(w.dw_w.len() >= 9 * f && w.dw_b.len() >= f && w.policy_w.len() >= f);
    assert!(o_all.is_empty() || o_all.len() >= pp * f);
    let keep = !o_all.is_empty();
    pol.resize(pp * 8, 0.0);
    let (act, pol, o_all) = (act.as_ptr(), pol.as_mut_ptr(), o_all.as_mut_ptr());
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
                if keep {
                    _mm256_storeu_ps(o_all.add((y * s + x) * f + c), o);
                }
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

/// [`pointwise_points`](super::layers::pointwise_points) with AVX2: the four points' 8-lane
/// accumulators of a chunk stay in registers, with the same product-then-add per lane in the same
/// order, so the outputs are bit-identical.
///
/// # Safety
/// The CPU must support AVX2; `bd.len()` is a multiple of 8 and at most 64, `wt` holds
/// `F * bd.len()` values, `o_all` at least `S*S` rounded up to 4 points of `F`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
pub(super) unsafe fn pointwise_points_avx2(
    wt: &[f32],
    bd: &[f32],
    out: &[f32],
    o_all: &[f32],
    f: usize,
    logits: &mut [f32],
) {
    let kp = bd.len();
    let pp = logits.len();
    assert!(
        kp.is_multiple_of(8)
            && kp <= MAX_POINTWISE_OUTPUTS
            && wt.len() >= f * kp
            && o_all.len() >= pp.next_multiple_of(4) * f
    );
    let mut sums = [0f32; 4 * MAX_POINTWISE_OUTPUTS];
    let (wt_p, o_p) = (wt.as_ptr(), o_all.as_ptr());
    for p0 in (0..pp).step_by(4) {
        for c in (0..kp).step_by(8) {
            let b = _mm256_loadu_ps(bd.as_ptr().add(c));
            let mut acc = [b; 4];
            for i in 0..f {
                let w = _mm256_loadu_ps(wt_p.add(i * kp + c));
                for (q, a) in acc.iter_mut().enumerate() {
                    let oi = _mm256_set1_ps(*o_p.add((p0 + q) * f + i));
                    *a = _mm256_add_ps(*a, _mm256_mul_ps(oi, w));
                }
            }
            for (q, a) in acc.iter().enumerate() {
                _mm256_storeu_ps(sums.as_mut_ptr().add(q * kp + c), *a);
            }
        }
        super::layers::pointwise_finish(&sums, out, kp, p0, logits);
    }
}
