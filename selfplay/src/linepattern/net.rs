//! The loaded net ([`LinePatternNet`]): the weights in the evaluator's layout, the line table in
//! cache-line rows ([`Rows`]) at f32 and, built on first use, quantised to i16
//! ([`QuantisedTable`]), at the [`Precision`] an evaluator asks for.

use super::geometry::LineGeometry;
use super::table::LinePatternWeights;
use super::{StoneView, CANONICAL_PATTERNS};
use crate::encode::ENCODER_VERSION;
use anyhow::{ensure, Result};
use std::sync::{Arc, OnceLock};

/// A loaded line-pattern network: weights plus the board geometry, shared (`Arc`) by the
/// evaluators of every thread.
pub struct LinePatternNet {
    /// The weights without their table (`w.table` is empty: the table lives in `rows_f32`, so
    /// a loaded net holds it once).
    pub(super) w: LinePatternWeights,
    /// [`LinePatternWeights::checksum`] of the weights as loaded.
    checksum: String,
    pub(super) view: StoneView,
    pub(super) geometry: Arc<LineGeometry>,
    /// The table as the f32 kernel reads it (rows on cache lines).
    pub(super) rows_f32: Rows<f32>,
    /// The table quantised to i16 (built on first use).
    rows_i16: OnceLock<QuantisedTable>,
    /// The protocol logits' and the value MLP's first layer stacked and transposed,
    /// `[2F, M]` with `M = R + H` rounded up to a multiple of 8 (zero columns), and their bias
    /// `[M]`: both read the pooled vector, so one pass over it computes `R + H` outputs with
    /// independent accumulators (see [`pooled_heads`]).
    pub(super) heads_t: Vec<f32>,
    pub(super) heads_b: Vec<f32>,
}

/// How the evaluator holds the line table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Precision {
    /// The exported f32 values: the outputs equal the tch model within float rounding (1e-4).
    /// The default: in self-play the i16 table measured no faster (docs/experiments/2026-12-line-pattern-evaluator.md).
    #[default]
    F32,
    /// Rows quantised to i16 with one scale per table ([`QuantisedTable`]): half the memory
    /// traffic of the table lookups; the outputs differ from the f32 ones by the quantisation
    /// error, at most [`QuantisedTable::line_error`] in every first-layer activation.
    I16,
}

/// Plain numbers a [`Rows`] buffer may hold (every bit pattern is a valid value).
pub(super) trait RowElem: Copy + Default {}
impl RowElem for f32 {}
impl RowElem for i16 {}

/// One 64-byte cache line of raw storage.
#[repr(C, align(64))]
#[derive(Clone, Copy)]
struct CacheLine([u8; 64]);

/// `n` table rows of `f` values each, every row starting on a 64-byte cache line (the row
/// stride is `f` rounded up to whole lines), so that a row of 32 i16 is one line and a row of
/// 32 f32 two (an unaligned row would touch one line more).
pub(super) struct Rows<T> {
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
    pub(super) fn four(&self, colour: usize, ids: [usize; 4], f: usize) -> [&[T]; 4] {
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
    pub(super) rows: Rows<i16>,
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
    pub(super) fn table(&self, p: Precision) -> TableRef<'_> {
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
}

/// The table a kernel reads.
#[derive(Clone, Copy)]
pub(super) enum TableRef<'a> {
    F32(&'a Rows<f32>),
    I16(&'a QuantisedTable),
}

#[cfg(test)]
mod tests {
    use super::super::table::random_weights;
    use super::*;
    use crate::eval::Evaluator;

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
