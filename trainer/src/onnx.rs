//! Export for other engines: a published model as an ONNX file in the interface of Rapfi's
//! ONNX Runtime evaluator (`Rapfi/eval/onnxevaluator.cpp`, IO version 1; docs/onnx-export.md).
//!
//! - Inputs: `board_input` int8 `[B, 2, S, S]` (plane 0 the stones of the side to move, plane 1
//!   the opponent's, index `[c][y][x]`), `global_input` float32 `[B, 1]` (-1 Black to move,
//!   +1 White).
//! - Outputs: `value` float32 `[B, 3]`, logits of win, loss, draw for the side to move;
//!   `policy` float32 `[B, S, S]`, the placement logits (raw, not softmaxed).
//! - `model_version` = `1 << 48 | rule mask << 32 | board-size mask` ([`RapfiModelVersion`]).
//!
//! The graph feeds the network the stones-only encoding of the position
//! (`renju_selfplay::stones_only`), in the model's encoder version: what the engine cannot give
//! (Black's forbidden points, pending offers, the last three stones, version 3's VCF planes) is
//! zero, the protocol globals are those of an ordinary placement.
//!
//! Route: tch traces that graph (the stones-only inputs, the network, the output layout) to
//! TorchScript, and torch's TorchScript-based ONNX exporter (`torch.onnx.export(...,
//! dynamo=False)`, opset [`OPSET`]) in the project's Python converts it
//! (`trainer/python/rapfi_onnx.py`, embedded as [`SCRIPT`]). Both network families already trace
//! (`model.pt`), so one route serves both, and the exporter, not this crate, owns the ONNX
//! operator mapping.

use crate::model::{load_model, ModelConfig};
use crate::net::Net;
use anyhow::{bail, ensure, Context, Result};
use renju_rules::Rule;
use renju_selfplay::encode::{plane, NUM_GLOBALS, NUM_PLANES};
use renju_selfplay::stones_only::stones_only_globals;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use tch::{CModule, Device, Kind, Tensor};

/// ONNX opset of the exported graph (ONNX Runtime has run it since 1.13).
pub const OPSET: u32 = 17;

/// The Python side of the export (`export`, and the `check` and `run` commands).
pub const SCRIPT: &str = include_str!("../python/rapfi_onnx.py");

/// The Python [`export_onnx`] runs unless told otherwise: the first on PATH (the project's
/// `.venv` after `source scripts/env.sh`).
pub const DEFAULT_PYTHON: &str = "python3";

/// Rapfi's IO version of the interface above ("rapfi_model_v1").
pub const IO_VERSION: u16 = 1;

/// The `model_version` of an ONNX model for Rapfi: `io_version << 48 | rule_mask << 32 |
/// size_mask` (rule mask bits 1 freestyle, 2 standard, 4 renju; size bit `S - 1`). Rapfi skips
/// a model whose masks do not include the game's rule and board size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RapfiModelVersion {
    /// IO version ([`IO_VERSION`]).
    pub io_version: u16,
    /// Rules served (bits of [`rule_bit`]).
    pub rule_mask: u16,
    /// Board sizes served (bit `S - 1` for side `S`).
    pub size_mask: u32,
}

/// Rapfi's rule-mask bit of `rule`.
pub fn rule_bit(rule: Rule) -> u16 {
    match rule {
        Rule::Freestyle => 1,
        Rule::Standard => 2,
        Rule::Renju => 4,
    }
}

impl RapfiModelVersion {
    /// The version of a model for `rule` on boards of side `size` (1..=32).
    pub fn of(rule: Rule, size: usize) -> RapfiModelVersion {
        assert!((1..=32).contains(&size), "board size {size} has no bit in a 32-bit mask");
        RapfiModelVersion { io_version: IO_VERSION, rule_mask: rule_bit(rule), size_mask: 1 << (size - 1) }
    }

    /// The `model_version` field's value.
    pub fn to_i64(self) -> i64 {
        ((self.io_version as i64) << 48) | ((self.rule_mask as i64) << 32) | self.size_mask as i64
    }

    /// Splits a `model_version` as Rapfi does.
    pub fn decode(v: i64) -> RapfiModelVersion {
        RapfiModelVersion {
            io_version: ((v >> 48) & 0xFFFF) as u16,
            rule_mask: ((v >> 32) & 0xFFFF) as u16,
            size_mask: (v & 0xFFFF_FFFF) as u32,
        }
    }

    /// Whether Rapfi loads the model for a game of `rule` on side `size`.
    pub fn serves(&self, rule: Rule, size: usize) -> bool {
        self.io_version == IO_VERSION
            && self.rule_mask & rule_bit(rule) != 0
            && (1..=32).contains(&size)
            && self.size_mask & (1 << (size - 1)) != 0
    }
}

/// The top-level `model_version` (field 5) of a serialized ONNX `ModelProto`, `None` when the
/// field is absent (the last occurrence counts, as in any protobuf parser). Errors: bytes that
/// are not a well-formed protobuf message.
pub fn read_model_version(bytes: &[u8]) -> Result<Option<i64>> {
    fn varint(b: &[u8], at: &mut usize) -> Result<u64> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let Some(&byte) = b.get(*at) else { bail!("truncated varint at byte {at}") };
            *at += 1;
            v |= ((byte & 0x7f) as u64) << shift;
            if byte & 0x80 == 0 {
                return Ok(v);
            }
        }
        bail!("varint longer than 10 bytes before byte {at}")
    }
    let (mut at, mut version) = (0usize, None);
    while at < bytes.len() {
        let key = varint(bytes, &mut at)?;
        let skip = match key & 7 {
            0 => {
                let v = varint(bytes, &mut at)?;
                if key >> 3 == 5 {
                    version = Some(v as i64);
                }
                0
            }
            1 => 8,
            2 => varint(bytes, &mut at)? as usize,
            5 => 4,
            w => bail!("wire type {w} at byte {at} is not in an ONNX model"),
        };
        at = at.checked_add(skip).filter(|&e| e <= bytes.len()).context("a field runs past the end of the file")?;
    }
    Ok(version)
}

/// The stones-only encoding as tensor operations of the graph's inputs, for one model: its
/// constants (the globals' rows, the value reordering) are made once, outside any trace (a
/// tensor created inside a trace is recorded as the operation that allocated it, not with its
/// values).
pub struct StonesOnlyGraph {
    encoder_version: u32,
    planes: usize,
    points: f64,
    /// The globals of White to move on an empty board, and what Black to move and a stone
    /// fraction of one add to them (`[1, G]` each).
    white_row: Tensor,
    black_step: Tensor,
    fraction_step: Tensor,
    /// Our value order (win, draw, loss) to Rapfi's (win, loss, draw).
    rapfi_value_order: Tensor,
}

impl StonesOnlyGraph {
    /// The graph of a model of `config`. Errors: an encoder version without a stones-only graph.
    pub fn new(config: &ModelConfig) -> Result<StonesOnlyGraph> {
        ensure!(
            matches!(config.encoder_version, 1..=3),
            "encoder version {} has no stones-only graph",
            config.encoder_version
        );
        // The globals are affine in the colour and the stone fraction: rows of the one definition.
        let (rule, size) = (config.rule, config.board_size);
        let row = |black: bool, stones: usize| stones_only_globals(black, stones, rule, size);
        let diff = |a: [f32; NUM_GLOBALS], b: [f32; NUM_GLOBALS]| {
            Tensor::from_slice(&a.iter().zip(&b).map(|(x, y)| x - y).collect::<Vec<f32>>()).view([1, -1])
        };
        Ok(StonesOnlyGraph {
            encoder_version: config.encoder_version,
            planes: config.shape.planes,
            points: (size * size) as f64,
            white_row: Tensor::from_slice(&row(false, 0)).view([1, -1]),
            black_step: diff(row(true, 0), row(false, 0)),
            fraction_step: diff(row(false, size * size), row(false, 0)), // a one at the stone fraction
            rapfi_value_order: Tensor::from_slice(&[0i64, 2, 1]),
        })
    }

    /// The network inputs of `board [n, 2, S, S]` (own, opponent stones; any kind) and
    /// `side [n, 1]` (negative: Black to move): `(planes [n, C, S, S], globals [n, G])` in the
    /// model's encoder version, equal to `renju_selfplay::stones_only::to_stones_only` of the
    /// position converted to that version, except that version 3's VCF planes are zero. Shapes
    /// come from the inputs, so a trace takes any batch size.
    pub fn inputs(&self, board: &Tensor, side: &Tensor) -> (Tensor, Tensor) {
        let b = board.to_kind(Kind::Float);
        let (own, opp) = (b.narrow(1, 0, 1), b.narrow(1, 1, 1));
        let black = side.lt(0.0).to_kind(Kind::Float); // [n, 1]
        let ones = own.ones_like();
        let colour = &ones * black.view([-1, 1, 1, 1]);
        let mut v2: Vec<Tensor> = (0..NUM_PLANES).map(|_| own.zeros_like()).collect();
        v2[plane::OWN] = own.shallow_clone();
        v2[plane::OPPONENT] = opp.shallow_clone();
        v2[plane::DECIDER_IS_BLACK] = colour.shallow_clone();
        v2[plane::ONES] = ones.shallow_clone();
        let planes = match self.encoder_version {
            // Black and white stones, then version 2's planes from the forbidden points on.
            1 => {
                let white = &ones - &colour;
                let black_stones = &own * &colour + &opp * &white;
                let white_stones = &opp * &colour + &own * &white;
                let mut v1 = vec![black_stones, white_stones];
                v1.extend(v2.drain(plane::FORBIDDEN..));
                Tensor::cat(&v1, 1)
            }
            3 => {
                v2.extend([own.zeros_like(), own.zeros_like()]);
                Tensor::cat(&v2, 1)
            }
            _ => Tensor::cat(&v2, 1),
        };
        debug_assert_eq!(planes.size()[1] as usize, self.planes);
        let fraction = b.sum_dim_intlist([1i64, 2, 3].as_slice(), false, Kind::Float).view([-1, 1]) / self.points;
        let globals = &self.white_row + &black * &self.black_step + fraction * &self.fraction_step;
        (planes, globals)
    }

    /// Our value logits `[n, 3]` (win, draw, loss) in Rapfi's order (win, loss, draw).
    pub fn rapfi_value(&self, value: &Tensor) -> Tensor {
        value.index_select(1, &self.rapfi_value_order)
    }
}

/// Traces the graph of the module docs for `net` (CPU, f32, frozen variables) to TorchScript:
/// `forward(board_input int8 [n, 2, S, S], global_input f32 [n, 1]) -> f32 [n, 3 + S*S]`,
/// columns `0..3` the `value` logits (win, loss, draw), then the `policy` logits (index
/// `y*S + x`). One output, because a saved TorchScript method returns one value; the export
/// script splits it into the two named outputs.
pub fn trace_rapfi_module(net: &Net, config: &ModelConfig) -> Result<CModule> {
    let s = config.board_size as i64;
    let graph = StonesOnlyGraph::new(config)?;
    // One position of each colour, so that every colour-dependent path is traced.
    let board = Tensor::zeros([2, 2, s, s], (Kind::Int8, Device::Cpu));
    let side = Tensor::from_slice(&[-1f32, 1.0]).view([2, 1]);
    let module = tch::no_grad(|| {
        CModule::create_by_tracing("RapfiNet", "forward", &[board, side], &mut |inp| {
            let (policy, value) = match net {
                Net::Res(_) => {
                    let (planes, globals) = graph.inputs(&inp[0], &inp[1]);
                    net.forward(&planes, &globals, false)
                }
                // The line-pattern net runs the positions of each colour through that colour's
                // weights, selected by index; ONNX Runtime cannot run an empty selection (a batch
                // of one position has one colour), so every position goes with its
                // colour-swapped twin and the first half of the outputs is kept.
                Net::Line(_) => {
                    let board = Tensor::cat(&[&inp[0], &inp[0]], 0);
                    let side = Tensor::cat(&[inp[1].shallow_clone(), inp[1].neg()], 0);
                    let (planes, globals) = graph.inputs(&board, &side);
                    let (p, v) = net.forward(&planes, &globals, false);
                    let first = |t: Tensor| t.view([2, -1, t.size()[1]]).select(0, 0);
                    (first(p), first(v))
                }
            };
            vec![Tensor::cat(&[graph.rapfi_value(&value), policy.narrow(1, 0, s * s)], 1)]
        })
    })?;
    Ok(module)
}

/// Removes a scratch directory when dropped.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Exports the model in `model_dir` (a generation directory, or a models directory with
/// `LATEST`) to the ONNX file `out` (which must not exist): traces the graph, converts it with
/// `python` (which must import torch and onnx: the project's `.venv`, `scripts/env.sh`), stamps
/// `model_version` and checks the stamp in the written bytes. Returns the model's config and
/// the version. Errors name what was missing or failed, with the Python error's last lines.
pub fn export_onnx(model_dir: &Path, out: &Path, python: &OsStr) -> Result<(ModelConfig, RapfiModelVersion)> {
    ensure!(!out.exists(), "{} already exists; refusing to overwrite it", out.display());
    let mut m = load_model(model_dir, Device::Cpu)?;
    m.vs.freeze();
    let config = m.config.clone();
    let version = RapfiModelVersion::of(config.rule, config.board_size);
    let module = trace_rapfi_module(&m.net, &config).context("tracing the ONNX graph")?;
    let mut scratch_name = out.file_name().context("the output path names no file")?.to_os_string();
    scratch_name.push(format!(".{}.tmp", std::process::id()));
    let scratch = Scratch(out.with_file_name(scratch_name));
    std::fs::create_dir_all(&scratch.0).with_context(|| format!("creating {}", scratch.0.display()))?;
    let (pt, onnx) = (scratch.0.join("graph.pt"), scratch.0.join("model.onnx"));
    module.save(&pt).with_context(|| format!("writing {}", pt.display()))?;
    // A file, not `python -c`: TorchScript compiles the script's wrapper from its source.
    let script = scratch.0.join("rapfi_onnx.py");
    std::fs::write(&script, SCRIPT).with_context(|| format!("writing {}", script.display()))?;
    let doc = format!(
        "renju-zero generation {} ({:?} net, encoder version {}, {:?} {}x{}): Rapfi ONNX IO version {IO_VERSION}, \
         stones-only inputs",
        config.generation, config.net.kind, config.encoder_version, config.rule, config.board_size, config.board_size
    );
    let run = std::process::Command::new(python)
        .arg(&script)
        .arg("export")
        .arg(&pt)
        .arg(&onnx)
        .args(["--size", &config.board_size.to_string()])
        .args(["--model-version", &version.to_i64().to_string()])
        .args(["--opset", &OPSET.to_string()])
        .args(["--doc", &doc])
        .output();
    let run = match run {
        Ok(r) => r,
        Err(e) => bail!(
            "could not start '{}' ({e}): the ONNX export runs torch's exporter in Python; `source scripts/env.sh` \
             puts the project's .venv (torch, onnx) first on PATH, or pass --python",
            python.to_string_lossy()
        ),
    };
    if !run.status.success() {
        let err = String::from_utf8_lossy(&run.stderr);
        let tail: Vec<&str> = err.lines().rev().take(12).collect();
        bail!(
            "'{}' failed to convert the graph to ONNX ({}):\n{}",
            python.to_string_lossy(),
            run.status,
            tail.into_iter().rev().collect::<Vec<_>>().join("\n")
        );
    }
    let bytes = std::fs::read(&onnx).with_context(|| format!("reading {}", onnx.display()))?;
    let stamped = read_model_version(&bytes).with_context(|| format!("{} is not an ONNX model", onnx.display()))?;
    ensure!(
        stamped == Some(version.to_i64()),
        "{}: model_version {stamped:?}, expected {:#018x}",
        onnx.display(),
        version.to_i64()
    );
    renju_fs::write_atomic(out, &bytes)?;
    Ok((config, version))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_version_of_15x15_renju_is_rapfis_example() {
        let v = RapfiModelVersion::of(Rule::Renju, 15);
        assert_eq!(v.to_i64(), 0x0001_0004_0000_4000);
        assert_eq!(RapfiModelVersion::decode(v.to_i64()), v);
        assert!(v.serves(Rule::Renju, 15));
        assert!(!v.serves(Rule::Standard, 15) && !v.serves(Rule::Freestyle, 15));
        assert!(!v.serves(Rule::Renju, 14) && !v.serves(Rule::Renju, 16) && !v.serves(Rule::Renju, 0));
        assert_eq!(RapfiModelVersion::of(Rule::Freestyle, 20).to_i64(), 0x0001_0001_0008_0000);
        assert_eq!(RapfiModelVersion::of(Rule::Standard, 7).to_i64(), 0x0001_0002_0000_0040);
        let unknown_io = RapfiModelVersion { io_version: 2, ..v };
        assert!(!unknown_io.serves(Rule::Renju, 15));
    }

    #[test]
    fn model_version_is_read_from_the_top_level_of_a_model_proto() {
        // ir_version 8 (field 1, varint), producer_name "pt" (field 2, bytes), a graph (field
        // 7) holding a nested varint field 5 that is not the model's, then model_version.
        let mut bytes = vec![0x08, 0x08, 0x12, 0x02, b'p', b't', 0x3a, 0x02, 0x28, 0x07];
        assert_eq!(read_model_version(&bytes).unwrap(), None, "the graph's field 5 is not read");
        bytes.push(0x28);
        let v = RapfiModelVersion::of(Rule::Renju, 15).to_i64() as u64;
        let mut rest = v;
        loop {
            let b = (rest & 0x7f) as u8;
            rest >>= 7;
            bytes.push(if rest == 0 { b } else { b | 0x80 });
            if rest == 0 {
                break;
            }
        }
        assert_eq!(read_model_version(&bytes).unwrap(), Some(v as i64));
        // A length running past the end, and a group wire type, are errors.
        assert!(read_model_version(&[0x3a, 0x05, 0x00]).is_err());
        assert!(read_model_version(&[0x0b]).is_err());
        assert!(read_model_version(&[0x28, 0x80]).is_err(), "truncated varint");
    }
}
