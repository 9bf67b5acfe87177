//! The net's layers in portable code: the first layer (line features from the table, per-point
//! embeddings, `relu`: [`FirstLayer`]), the depthwise 3x3 with its residual and placement logits
//! ([`depthwise_points`]), the pooled heads ([`pooled_heads`]) and the dot product. Every kernel
//! variant (the AVX2 twins in [`super::simd`] included) does the same arithmetic in the same
//! order per lane, so all of them give bit-identical outputs.

use super::cell;
use super::net::{QuantisedTable, Rows};
use super::table::LinePatternWeights;

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
/// and max of the outputs into `mean` and `max` (`[F]` each). `o` (`[F]`) is scratch.
#[inline(always)]
pub(super) fn depthwise_points(
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
