//! The net's layers in portable code: the first layer (line features from the table, per-point
//! embeddings, `relu`: [`FirstLayer`]), the depthwise 3x3 with its residual and placement logits
//! ([`depthwise_points`]), the pooled heads ([`pooled_heads`]) and the dot product. Every kernel
//! variant (the AVX2 twins in [`super::simd`] included) does the same arithmetic in the same
//! order per lane, so all of them give bit-identical outputs.

use super::cell;
use super::net::{QuantisedTable, Rows};
use super::table::{LinePatternWeights, PointwiseStage, MAX_POINTWISE_OUTPUTS};

/// `a += b` over `F` lanes.
#[inline(always)]
fn add_to(a: &mut [f32], b: &[f32]) {
    for (x, &y) in a.iter_mut().zip(b) {
        *x += y;
    }
}

/// The line features of one empty point: the sum of its 4 table rows.
pub(super) trait LineRows {
    type Elem: Copy;
    /// The 4 rows (`[F]` each) of canonical ids `ids` in the deciding colour's table, which
    /// starts at row `colour * CANONICAL_PATTERNS`.
    fn rows(&self, colour: usize, ids: [usize; 4], f: usize) -> [&[Self::Elem]; 4];
    /// `h += (r0 + r1) + (r2 + r3)` over the 4 rows (`h`: `[F]`), the portable loop.
    fn add_lines(&self, rows: [&[Self::Elem]; 4], h: &mut [f32]);
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
}

/// The inputs of the first layer of one position (see [`FirstLayer::run`]).
pub(super) struct FirstLayer<'a, T, I> {
    pub(super) w: &'a LinePatternWeights,
    /// The table at its precision, and the deciding colour's half of it (0 Black, 1 White).
    pub(super) table: &'a T,
    pub(super) colour: usize,
    /// `[S*S]` cells ([`cell`]), from the deciding player's view.
    pub(super) cells: &'a [u8],
    /// The canonical ids of a point's 4 line patterns.
    pub(super) ids_of: I,
    /// `[S*S]`: bit `k` set where sparse per-point input `k` is.
    pub(super) flags: &'a [u8],
    /// `[F]`: the per-position bias from the globals.
    pub(super) gbias: &'a [f32],
}

impl<T: LineRows, I: Fn(usize) -> [usize; 4]> FirstLayer<'_, T, I> {
    /// First layer of every point into `act` (`[(S+2)^2, F]`, interior points): `h = gbias`,
    /// plus the line features (an empty point) or the own/opponent stone embedding, plus the
    /// embedding of every sparse input set at the point (in increasing `k`), then `relu`. The
    /// portable loop.
    #[inline(always)]
    pub(super) fn run(&self, act: &mut [f32]) {
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
}

/// The depthwise 3x3 + residual of every point (`act`: first-layer activations on the padded
/// board, `[(S+2)^2, F]`), its placement logit into `logits[..S*S]`, and the running mean sum
/// and max of the outputs into `mean` and `max` (`[F]` each). `o` (`[F]`) is scratch. Unless
/// `o_all` is empty, every point's outputs are also kept there (`[S*S, F]`, for
/// [`dynamic_policy`]).
#[inline(always)]
pub(super) fn depthwise_points(
    w: &LinePatternWeights,
    act: &[f32],
    o: &mut [f32],
    mean: &mut [f32],
    max: &mut [f32],
    logits: &mut [f32],
    o_all: &mut [f32],
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
            if !o_all.is_empty() {
                let p = y * s + x;
                o_all[p * f..(p + 1) * f].copy_from_slice(o);
            }
        }
    }
}

/// The dynamic pointwise policy stage `p` (`K = p.outputs`; see [`PointwiseStage`]) of a net of
/// `f` channels: from the pooled vector (`pooled`, `[2F]`) the hidden `d = relu(b1 + w1 pooled)`
/// (`[F]`, into `hidden`) and the per-position `g = b2 + w2 d` (`[K*F + K]`: `W`
/// row-major `[K, F]`, then `b`), kept in `gen` as `W` transposed then `b`; then every point `p`
/// adds `sum_k out[k] * relu(b[k] + sum_i W[k][i] o[p][i])` to `logits[p]`
/// ([`pointwise_points`] fixes the order of the sums). `o_all`: the depthwise stage's outputs
/// `[S*S, F]`, padded with zero points to a multiple of 4 points; `K <= MAX_POINTWISE_OUTPUTS`.
#[inline(always)]
pub(super) fn dynamic_policy<const AVX2: bool>(
    p: &PointwiseStage,
    f: usize,
    o_all: &[f32],
    pooled: &[f32],
    hidden: &mut Vec<f32>,
    gen: &mut Vec<f32>,
    logits: &mut [f32],
) {
    let k = p.outputs;
    hidden.clear();
    hidden.extend((0..f).map(|i| (p.b1[i] + dot(&p.w1[i * 2 * f..(i + 1) * 2 * f], pooled)).max(0.0)));
    // W transposed, `[F, Kp]` with `Kp` = K rounded up to whole 8-lane chunks (zero columns),
    // then `b` (`[Kp]`): a point's K sums run in 8-lane chunks.
    let kp = k.next_multiple_of(8);
    gen.clear();
    gen.resize(f * kp + kp, 0.0);
    for r in 0..k * f + k {
        let v = p.b2[r] + dot(&p.w2[r * f..(r + 1) * f], hidden);
        // Row r < K*F is W[r / F][r % F].
        let at = if r < k * f { (r % f) * kp + r / f } else { f * kp + r - k * f };
        gen[at] = v;
    }
    let (wt, bd) = gen.split_at(f * kp);
    #[cfg(target_arch = "x86_64")]
    if AVX2 {
        // SAFETY: `AVX2` is true only inside `evaluator::kernel_avx2`, which runs only on CPUs
        // with AVX2; the slices have the sizes the function asks for (built above).
        unsafe { super::simd::pointwise_points_avx2(wt, bd, &p.out[..k], o_all, f, logits) };
        return;
    }
    pointwise_points(wt, bd, &p.out[..k], o_all, f, logits);
}

/// [`dynamic_policy`]'s per-point sums: `wt` `[F, Kp]`, `bd` `[Kp]` (`Kp` a multiple of 8, at
/// most [`MAX_POINTWISE_OUTPUTS`]), `out` `[K]` (`K <= Kp`), `o_all` `S*S` points rounded up to a multiple of 4 (the
/// padding points are never written to `logits`). Four points at a time, one 8-lane chunk of
/// outputs at a time: each lane starts at its bias and adds `o[p][i] * W^T[i][lane]` in
/// increasing `i` (a product, then an add); then every point adds `out[k] * relu(sum_k)` in
/// increasing `k` to its logit. `simd::pointwise_points_avx2` is the twin.
#[inline(always)]
pub(super) fn pointwise_points(wt: &[f32], bd: &[f32], out: &[f32], o_all: &[f32], f: usize, logits: &mut [f32]) {
    let kp = bd.len();
    let pp = logits.len();
    let mut sums = [0f32; 4 * MAX_POINTWISE_OUTPUTS];
    for p0 in (0..pp).step_by(4) {
        for c in (0..kp).step_by(8) {
            let mut acc = [[0f32; 8]; 4];
            for a in acc.iter_mut() {
                a.copy_from_slice(&bd[c..c + 8]);
            }
            for i in 0..f {
                let w = &wt[i * kp + c..i * kp + c + 8];
                for (q, a) in acc.iter_mut().enumerate() {
                    let oi = o_all[(p0 + q) * f + i];
                    for j in 0..8 {
                        a[j] += oi * w[j];
                    }
                }
            }
            for (q, a) in acc.iter().enumerate() {
                sums[q * kp + c..q * kp + c + 8].copy_from_slice(a);
            }
        }
        pointwise_finish(&sums, out, kp, p0, logits);
    }
}

/// The logits of points `p0..p0 + 4` (those below `S*S`) from their sums (`sums[q * kp + k]`).
#[inline(always)]
pub(super) fn pointwise_finish(sums: &[f32], out: &[f32], kp: usize, p0: usize, logits: &mut [f32]) {
    for q in 0..4.min(logits.len() - p0) {
        let mut add = 0.0f32;
        for (k, &c) in out.iter().enumerate() {
            add += c * sums[q * kp + k].max(0.0);
        }
        logits[p0 + q] += add;
    }
}

/// `b + sum_t w(t) * a(t)` over the 9 taps of a depthwise 3x3 in one fixed order: three
/// chains of fused multiply-adds (taps 0, 3, 6 onto `b`; 1, 4, 7; 2, 5, 8), then
/// `(s0 + s1) + s2`. The AVX2 kernel does the same per lane with FMA instructions, so the
/// variants stay bit-identical; `f32::mul_add` is one instruction where the target has FMA
/// (aarch64, x86-64 with FMA) and a correctly rounded library call elsewhere (slow, but such a
/// CPU has no AVX2 kernel either).
#[inline(always)]
pub(super) fn taps(b: f32, w: impl Fn(usize) -> f32, a: impl Fn(usize) -> f32) -> f32 {
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
pub(super) fn pooled_heads(wt: &[f32], b: &[f32], x: &[f32], out: &mut Vec<f32>) {
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
pub(super) fn dot(a: &[f32], b: &[f32]) -> f32 {
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
