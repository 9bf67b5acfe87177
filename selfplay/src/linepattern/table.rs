//! The exported weights ([`LinePatternWeights`]) and the table file: a safetensors file whose
//! metadata name the format ([`TABLE_FORMAT`]), its version ([`TABLE_VERSION`]), the shapes and
//! a SHA-256 checksum over every tensor, checked on load.

use super::{CANONICAL_PATTERNS, POINT_INPUTS};
use crate::action::action_space_size;
use crate::encode::NUM_GLOBALS;
use anyhow::{ensure, Context, Result};
use std::collections::HashMap;
use std::path::Path;

/// Value of the table file's `format` metadata.
pub const TABLE_FORMAT: &str = "renju-zero-linepattern-table";
/// Newest version of the table file layout (tensor names and shapes below); checked on load.
/// Version 1 has no dynamic policy stage; version 2 adds its tensors (`policy_pointwise > 0`). A file is
/// written at the lowest version that holds it ([`LinePatternWeights::layout_version`]), and this
/// build reads both.
pub const TABLE_VERSION: u32 = 2;
/// Most outputs `K` a [`PointwiseStage`] may have (the evaluator's kernels keep a point block's
/// `K` sums on the stack).
pub const MAX_POINTWISE_OUTPUTS: usize = 64;
/// File name of the table inside a published generation.
pub const TABLE_FILE: &str = "linepattern.safetensors";

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
    /// The dynamic pointwise policy stage; `None`: the placement logit is the linear
    /// `policy_w . o[p] + policy_b` alone.
    pub pointwise: Option<PointwiseStage>,
}

/// The dynamic pointwise policy stage of a [`LinePatternWeights`] with `K` = [`Self::outputs`]:
/// the pooled vector generates a per-position `[K, F]` weight matrix `W` and bias `b` (`w1`,
/// relu, `w2`), and every point adds `out . relu(W o[p] + b)` to its placement logit. In the
/// table file its tensors are `pw1_w`, `pw1_b`, `pw2_w`, `pw2_b`, `pw_out`.
#[derive(Clone, Debug, PartialEq)]
pub struct PointwiseStage {
    /// Outputs `K`, 1 to [`MAX_POINTWISE_OUTPUTS`].
    pub outputs: usize,
    /// `[F, 2F]`, `[F]`: the generator's hidden layer (pooled vector -> `F`, relu).
    pub w1: Vec<f32>,
    pub b1: Vec<f32>,
    /// `[K*F + K, F]`, `[K*F + K]`: hidden -> the per-position `W` (row-major `[K, F]`) then `b`.
    pub w2: Vec<f32>,
    pub b2: Vec<f32>,
    /// `[K]`: the weights of the stage's outputs in the placement logit.
    pub out: Vec<f32>,
}

impl LinePatternWeights {
    /// Outputs `K` of the dynamic pointwise policy stage; 0 without one.
    pub fn policy_pointwise(&self) -> usize {
        self.pointwise.as_ref().map_or(0, |p| p.outputs)
    }

    /// Protocol actions `R = A - S*S`.
    pub fn protocol_actions(&self) -> usize {
        action_space_size(self.board_size) - self.board_size * self.board_size
    }

    /// The file layout version these weights need: 1 without the dynamic policy stage, 2 with.
    pub fn layout_version(&self) -> u32 {
        if self.pointwise.is_some() {
            2
        } else {
            1
        }
    }

    /// `(name, tensor data, shape)` of every tensor, in file order (the dynamic policy stage's
    /// only with one).
    fn tensors(&self) -> Vec<(&'static str, &Vec<f32>, Vec<usize>)> {
        let (f, h, r) = (self.features, self.value_hidden, self.protocol_actions());
        let mut t = vec![
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
        ];
        if let Some(p) = &self.pointwise {
            let k = p.outputs;
            t.extend([
                ("pw1_w", &p.w1, vec![f, 2 * f]),
                ("pw1_b", &p.b1, vec![f]),
                ("pw2_w", &p.w2, vec![k * f + k, f]),
                ("pw2_b", &p.b2, vec![k * f + k]),
                ("pw_out", &p.out, vec![k]),
            ]);
        }
        t
    }

    /// Checks every tensor has its shape; the error names the tensor.
    pub fn validate(&self) -> Result<()> {
        ensure!(
            self.features >= 1 && self.value_hidden >= 1,
            "line-pattern net: features and value_hidden must be >= 1"
        );
        if let Some(p) = &self.pointwise {
            ensure!(
                (1..=MAX_POINTWISE_OUTPUTS).contains(&p.outputs),
                "line-pattern net: the dynamic policy stage has {} outputs, expected 1 to {MAX_POINTWISE_OUTPUTS}",
                p.outputs
            );
        }
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
        self.serialise(None)
    }

    /// The weights with the pattern table rounded to i16 steps of one scale
    /// (`max|table| / 32767`, as [`super::QuantisedTable`] rounds): what [`Self::to_compact_bytes`]
    /// stores and [`Self::from_compact_bytes`] reads back, bit for bit.
    pub fn quantised(&self) -> (LinePatternWeights, Vec<i16>, f32) {
        let max = self.table.iter().fold(0.0f32, |m, v| m.max(v.abs()));
        let scale = if max > 0.0 { max / 32_767.0 } else { 1.0 };
        let q: Vec<i16> = self.table.iter().map(|v| (v / scale).round() as i16).collect();
        let mut w = self.clone();
        w.table = q.iter().map(|&v| v as f32 * scale).collect();
        (w, q, scale)
    }

    /// The compact form of a shipped model: the table file with the pattern table as i16 (one
    /// scale, metadata `table_scale`, stored as its high and low byte planes; [`Self::quantised`]),
    /// gzip-compressed: about a third of the f32 file. Its checksum is over the weights it reads back as.
    pub fn to_compact_bytes(&self) -> Result<Vec<u8>> {
        use std::io::Write;
        let (w, q, scale) = self.quantised();
        let raw = w.serialise(Some((&q, scale)))?;
        let mut z = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        z.write_all(&raw).context("compressing the line-pattern table")?;
        z.finish().context("compressing the line-pattern table")
    }

    /// Reads [`Self::to_compact_bytes`]'s form (errors start with `what`).
    pub fn from_compact_bytes(bytes: &[u8], what: &str) -> Result<LinePatternWeights> {
        use std::io::Read;
        let mut raw = Vec::new();
        flate2::read::GzDecoder::new(bytes)
            .read_to_end(&mut raw)
            .map_err(|e| anyhow::anyhow!("{what}: not a gzip-compressed line-pattern table ({e})"))?;
        LinePatternWeights::from_bytes(&raw, what)
    }

    /// The table file's bytes; with `table_i16`, the table tensor is those i16 values (which
    /// must be this table divided by the scale) and the metadata carry `table_scale`.
    fn serialise(&self, table_i16: Option<(&[i16], f32)>) -> Result<Vec<u8>> {
        self.validate()?;
        let mut bytes: Vec<(&'static str, safetensors::Dtype, Vec<u8>, Vec<usize>)> = Vec::new();
        for (n, d, s) in self.tensors() {
            match table_i16 {
                // The i16 steps as two byte planes, high then low: the high bytes of a table whose
                // values cluster near zero compress well, which interleaved bytes do not.
                Some((q, _)) if n == "table" => {
                    bytes.push((
                        "table_hi",
                        safetensors::Dtype::I8,
                        q.iter().map(|v| v.to_le_bytes()[1]).collect(),
                        s.clone(),
                    ));
                    bytes.push(("table_lo", safetensors::Dtype::U8, q.iter().map(|v| v.to_le_bytes()[0]).collect(), s));
                }
                _ => bytes.push((n, safetensors::Dtype::F32, d.iter().flat_map(|v| v.to_le_bytes()).collect(), s)),
            }
        }
        let views = bytes
            .iter()
            .map(|(n, t, b, s)| Ok((*n, safetensors::tensor::TensorView::new(*t, s.clone(), b)?)))
            .collect::<Result<Vec<_>, safetensors::SafeTensorError>>()
            .map_err(|e| anyhow::anyhow!("{e:?}"))?;
        let mut meta: HashMap<String, String> = [
            ("format", TABLE_FORMAT.to_string()),
            ("version", self.layout_version().to_string()),
            ("features", self.features.to_string()),
            ("value_hidden", self.value_hidden.to_string()),
            ("board_size", self.board_size.to_string()),
            ("encoder_version", self.encoder_version.to_string()),
            ("policy_pointwise", self.policy_pointwise().to_string()),
            ("checksum", self.checksum()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        if let Some((_, scale)) = table_i16 {
            meta.insert("table_scale".into(), format!("{scale:e}"));
        }
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
        let version = num("version")?;
        ensure!(
            (1..=TABLE_VERSION as usize).contains(&version),
            "{what}: table version {version} but this build reads versions 1 to {TABLE_VERSION}"
        );
        // Version 1 files have no dynamic policy stage (and no `policy_pointwise` metadata).
        let policy_pointwise = if meta.contains_key("policy_pointwise") { num("policy_pointwise")? } else { 0 };
        ensure!(
            (version >= 2) == (policy_pointwise > 0),
            "{what}: table version {version} does not match policy_pointwise {policy_pointwise} (version 2 is the layout with the dynamic policy stage)"
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
            pointwise: None,
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
        // The compact form stores the table as i16 steps of `table_scale` in two byte planes.
        w.table = match meta.get("table_scale") {
            None => read("table")?,
            Some(scale) => {
                let scale: f32 =
                    scale.parse().with_context(|| format!("{what}: metadata 'table_scale' is not a number"))?;
                let plane = |name: &str, dtype: safetensors::Dtype| -> Result<Vec<u8>> {
                    let t = st.tensor(name).map_err(|e| anyhow::anyhow!("{what}: tensor '{name}' missing ({e:?})"))?;
                    ensure!(t.dtype() == dtype, "{what}: tensor '{name}' is not {dtype:?}");
                    Ok(t.data().to_vec())
                };
                let (hi, lo) = (plane("table_hi", safetensors::Dtype::I8)?, plane("table_lo", safetensors::Dtype::U8)?);
                ensure!(hi.len() == lo.len(), "{what}: the table's byte planes differ in length");
                hi.iter().zip(&lo).map(|(&h, &l)| i16::from_le_bytes([l, h]) as f32 * scale).collect()
            }
        };
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
        if policy_pointwise > 0 {
            w.pointwise = Some(PointwiseStage {
                outputs: policy_pointwise,
                w1: read("pw1_w")?,
                b1: read("pw1_b")?,
                w2: read("pw2_w")?,
                b2: read("pw2_b")?,
                out: read("pw_out")?,
            });
        }
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

/// Weights of random values in `[-0.5, 0.5)` for a board of side `size`, `f` feature channels and
/// a value MLP of width `h` (seeded): the stand-in for a trained net of tests and benchmarks.
pub fn random_weights(size: usize, f: usize, h: usize, seed: u64) -> LinePatternWeights {
    use crate::encode::ENCODER_VERSION;
    use rand::{Rng, SeedableRng};

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
        pointwise: None,
    }
}

/// [`random_weights`] with a dynamic policy stage of `k` outputs (its weights seeded too).
pub fn random_weights_pointwise(size: usize, f: usize, h: usize, k: usize, seed: u64) -> LinePatternWeights {
    use rand::{Rng, SeedableRng};

    let mut w = random_weights(size, f, h, seed);
    if k == 0 {
        return w;
    }
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed ^ 0x5eed);
    let mut v = |n: usize| (0..n).map(|_| rng.gen_range(-0.5f32..0.5)).collect::<Vec<f32>>();
    w.pointwise = Some(PointwiseStage {
        outputs: k,
        w1: v(f * 2 * f),
        b1: v(f),
        w2: v((k * f + k) * f),
        b2: v(k * f + k),
        out: v(k),
    });
    w
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_compact_form_reads_back_as_the_i16_rounded_weights() {
        let mut w = random_weights(9, 4, 5, 3);
        // A wide range, so that both byte planes of the i16 steps carry information.
        w.table.iter_mut().enumerate().for_each(|(k, v)| *v *= 1.0 + (k % 97) as f32);
        let (rounded, q, scale) = w.quantised();
        let max = w.table.iter().fold(0.0f32, |m, v| m.max(v.abs()));
        assert_eq!(scale, max / 32_767.0);
        assert!(q.iter().any(|&v| v < -256) && q.iter().any(|&v| v > 256));
        for (k, (&v, &r)) in w.table.iter().zip(&rounded.table).enumerate() {
            // Half a step, and the f32 rounding of `q * scale`.
            let slack = scale / 2.0 + 4.0 * f32::EPSILON * v.abs();
            assert!((v - r).abs() <= slack, "pattern value {k}: {v} rounds to {r}");
            assert_eq!(r, q[k] as f32 * scale);
        }
        assert_eq!(rounded.point_embed, w.point_embed, "only the table is rounded");
        let bytes = w.to_compact_bytes().unwrap();
        assert_eq!(LinePatternWeights::from_compact_bytes(&bytes, "c").unwrap(), rounded);
        // Not gzip, and gzip of something else, are errors naming the source.
        let e = LinePatternWeights::from_compact_bytes(b"plain", "c").unwrap_err().to_string();
        assert!(e.starts_with("c: not a gzip-compressed"), "{e}");
        let mut cut = bytes.clone();
        cut.truncate(bytes.len() / 2);
        assert!(LinePatternWeights::from_compact_bytes(&cut, "c").is_err());
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
        let version = |b: &[u8]| {
            let (_, md) = safetensors::SafeTensors::read_metadata(b).unwrap();
            md.metadata().as_ref().unwrap()["version"].clone()
        };
        assert_eq!(version(&bytes), "1", "a net without the dynamic policy stage keeps layout 1");
        // With the dynamic policy stage: layout 2, its tensors round-trip and count in the checksum.
        let p = random_weights_pointwise(9, 4, 5, 3, 3);
        let stage = p.pointwise.as_ref().unwrap();
        assert_eq!((stage.w2.len(), stage.out.len()), ((3 * 4 + 3) * 4, 3));
        let bytes = p.to_bytes().unwrap();
        assert_eq!(version(&bytes), "2");
        assert_eq!(LinePatternWeights::from_bytes(&bytes, "t").unwrap(), p);
        let mut q = p.clone();
        q.pointwise.as_mut().unwrap().out[2] += 1.0;
        assert_ne!(q.checksum(), p.checksum());
        assert_eq!(
            LinePatternWeights::from_compact_bytes(&p.to_compact_bytes().unwrap(), "c").unwrap().pointwise,
            p.pointwise
        );
    }

    #[test]
    fn a_dynamic_policy_stage_outside_its_output_range_is_an_error() {
        let f = 4;
        let stage = |k: usize| PointwiseStage {
            outputs: k,
            w1: vec![0.0; f * 2 * f],
            b1: vec![0.0; f],
            w2: vec![0.0; (k * f + k) * f],
            b2: vec![0.0; k * f + k],
            out: vec![0.0; k],
        };
        let mut w = random_weights(9, f, 5, 3);
        // The tensors fit `k` in every case: only the range of `k` can be wrong.
        for k in [0, MAX_POINTWISE_OUTPUTS + 1] {
            w.pointwise = Some(stage(k));
            let e = w.validate().unwrap_err().to_string();
            assert!(e.contains(&format!("has {k} outputs, expected 1 to {MAX_POINTWISE_OUTPUTS}")), "{e}");
            assert!(w.to_bytes().is_err(), "a table that does not validate is not written");
        }
        for k in [1, MAX_POINTWISE_OUTPUTS] {
            w.pointwise = Some(stage(k));
            w.validate().unwrap();
        }
    }
}
