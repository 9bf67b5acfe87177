//! The table evaluator [`LinePatternEvaluator`]: one position at a time through the kernel,
//! compiled per channel count and, on x86-64, a second time with AVX2 and FMA (picked at run
//! time), over a [`LinePatternNet`].

use super::geometry::{mark_cells, mark_points};
use super::layers::{depthwise_points, dot, dynamic_policy, pooled_heads, FirstLayer};
use super::net::{LinePatternNet, Precision, TableRef};
use super::pattern::canonical;
#[cfg(target_arch = "x86_64")]
use super::simd::depthwise_points_avx2;
use super::simd::{avx2_available, LineRowsAvx2};
use super::{cell, POINT_INPUTS};
use crate::action::action_space_size;
use crate::encode::{NUM_GLOBALS, NUM_PLANES};
use crate::eval::{check_inputs, softmax, EvalOutput, Evaluator};
use anyhow::Result;
use std::sync::Arc;

/// The per-evaluator buffers of the kernel, reused from one position to the next.
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
    /// `[S*S, F]` (and zero points up to a multiple of 4): the depthwise stage's outputs, kept
    /// for the dynamic policy stage (empty without one).
    o_all: Vec<f32>,
    /// The dynamic policy stage's hidden layer `[F]` and generated weights `[K*F + K]`.
    pw_hidden: Vec<f32>,
    pw_gen: Vec<f32>,
}

/// The table evaluator: the same outputs as the tch `LineNet` from table lookups. Per position
/// (`S*S` points `p`, `F` channels, all loops over `F` contiguous):
/// 1. `h[p] = empty(p) * sum_d table[c][canon(raw(p, d))] + sum_k input_k(p) * point_embed[k]
///    + global_w^T globals + global_b`, `a = relu(h)`;
/// 2. `o[p] = a[p] + relu(dw_b + sum_taps dw_w[t] * a[p + t])` (depthwise 3x3, zero outside);
/// 3. placement logit `policy_w . o[p] + policy_b`; pooled `[mean_p o, max_p o]` (`2F`) gives the
///    protocol logits (linear) and the value (linear, relu, linear to W/D/L logits, softmax);
/// 4. with a dynamic policy stage (`pointwise`, `K` outputs), the pooled vector generates a `[K, F]`
///    pointwise layer whose relu outputs, weighted, add to every placement logit
///    (`layers::dynamic_policy`).
///
/// Pattern indices are recomputed per position from the planes (chosen by measurement, see
/// `docs/experiments/2026-12-line-pattern-evaluator.md`: with AVX2 they cost about 4% of an evaluation). The table
/// is read at a [`Precision`] (f32 by default, or i16). The kernel is compiled for the presets'
/// `F` (16, 32, 64) as constants, so every per-point loop has a known length, and on x86-64 a
/// second time with AVX2 and FMA enabled, picked at run time when the CPU has them; in that
/// variant the stone and flag planes, the pattern indices, the line sums and the depthwise 3x3
/// are written with intrinsics when `F` is a multiple of 8. The arithmetic and its order per
/// lane are the same in every variant (the depthwise taps are fused multiply-adds in both:
/// `layers::taps`), so all variants give bit-identical outputs (tested).
pub struct LinePatternEvaluator {
    net: Arc<LinePatternNet>,
    scratch: Scratch,
    avx2: bool,
    precision: Precision,
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
            // SAFETY: `avx2` is true only when the running CPU reports AVX2 and FMA
            // (`avx2_available`).
            unsafe { kernel_avx2(net, sc, table, io) };
            return;
        }
        kernel_for_width::<false>(net, sc, table, io)
    }
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
/// 4 / 8): the kernel's AVX2 entry point, the only caller of its `AVX2 = true` variant, so that
/// every intrinsic call in it runs on a CPU with AVX2 and FMA. Calling it is `unsafe` (a target
/// feature function) unless the caller has those features.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn kernel_avx2(net: &LinePatternNet, sc: &mut Scratch, table: TableRef<'_>, io: Io<'_>) {
    kernel_for_width::<true>(net, sc, table, io)
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

/// [`kernel`] over one table type.
#[inline(always)]
fn kernel_rows<const FC: usize, const AVX2: bool, T: LineRowsAvx2>(
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
    net.geometry.raw_indices_in::<AVX2>(&sc.cells, &mut sc.raw);
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
    // The dynamic policy stage reads points four at a time: room for a multiple of 4.
    let keep = if w.pointwise.is_some() { pp.next_multiple_of(4) * f } else { 0 };
    sc.o_all.resize(keep, 0.0);
    #[cfg(target_arch = "x86_64")]
    if AVX2 && matches!(f, 16 | 32 | 64) {
        // SAFETY: `AVX2` is true only inside `kernel_avx2`, which runs only on CPUs with AVX2
        // and FMA; the buffers have the sizes the function asks for (`act` resized above, `pooled` 2F).
        unsafe {
            match f {
                16 => depthwise_points_avx2::<2>(w, &sc.act, &mut sc.pol, mean, max, logits, &mut sc.o_all),
                32 => depthwise_points_avx2::<4>(w, &sc.act, &mut sc.pol, mean, max, logits, &mut sc.o_all),
                _ => depthwise_points_avx2::<8>(w, &sc.act, &mut sc.pol, mean, max, logits, &mut sc.o_all),
            }
        }
    } else {
        depthwise_points(w, &sc.act, &mut sc.out[..f], mean, max, logits, &mut sc.o_all);
    }
    #[cfg(not(target_arch = "x86_64"))]
    depthwise_points(w, &sc.act, &mut sc.out[..f], mean, max, logits, &mut sc.o_all);
    let pooled = &mut sc.pooled[..];
    for v in &mut pooled[..f] {
        *v /= pp as f32;
    }
    if let Some(p) = &w.pointwise {
        dynamic_policy::<AVX2>(p, f, &sc.o_all, pooled, &mut sc.pw_hidden, &mut sc.pw_gen, &mut logits[..pp]);
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
    softmax(&mut v);
    wdl[..3].copy_from_slice(&v);
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

impl LinePatternNet {
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

#[cfg(test)]
mod tests {
    use super::super::table::{random_weights, random_weights_pointwise};
    use super::*;

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
    /// multiple of 8 (5: the portable loops everywhere); with the dynamic policy stage at a few
    /// sizes, the largest allowed among them.
    #[test]
    fn specialised_kernels_equal_the_generic_loop_bit_for_bit() {
        let (planes, globals) = crate::encode::random_positions(40, 15, 0..=60, 9);
        let k_max = super::super::table::MAX_POINTWISE_OUTPUTS;
        for (f, k) in [(16, 0), (32, 0), (64, 0), (24, 0), (5, 0), (32, 4), (5, 3), (16, k_max)] {
            let net = LinePatternNet::new(random_weights_pointwise(15, f, 8, k, f as u64)).unwrap();
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
                    let at = format!("F = {f}, K = {k}, {precision:?}, position {i}");
                    assert_eq!(lg[..], out.policy_logits[i * a..(i + 1) * a], "{at}: logits");
                    assert_eq!(wdl[..], out.wdl[i * 3..(i + 1) * 3], "{at}: W/D/L");
                }
                let mut portable = net.evaluator().with_precision(precision).with_simd(false);
                assert!(!portable.simd());
                let got = portable.evaluate(&planes, &globals, 40).unwrap();
                assert_eq!(got.policy_logits, out.policy_logits, "F = {f}, K = {k}, {precision:?}");
            }
        }
    }
}
