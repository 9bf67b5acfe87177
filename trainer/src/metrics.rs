//! Training metrics behind a small trait, with a TensorBoard implementation (tensorboard-rs) and
//! a reader of TensorBoard event files for checks and tools.
//!
//! Tags written by the trainer: `loss/total`, `loss/policy`, `loss/value`, `loss/l2`,
//! `train/lr`, `train/samples_per_sec`, `train/grad_norm`, `train/policy_entropy` (nats),
//! `train/value_accuracy` (fraction of samples whose most likely W/D/L is the game result),
//! `replay/total_samples`, `replay/window_samples`; the pipeline adds the self-play statistics
//! of each generation (`selfplay/*`, see `renju_selfplay::gamestats::GameStats::scalars`). The
//! step axis is the training step.

use anyhow::{ensure, Context, Result};
use std::path::Path;

/// Receives scalar metrics.
pub trait MetricsSink: Send {
    /// Records `value` of `tag` at training step `step`.
    fn scalar(&mut self, tag: &str, step: u64, value: f64);
    /// Makes everything recorded so far durable (best effort).
    fn flush(&mut self) {}
}

/// Discards everything.
pub struct NullSink;

impl MetricsSink for NullSink {
    fn scalar(&mut self, _tag: &str, _step: u64, _value: f64) {}
}

/// Keeps everything in memory (tests, tools).
#[derive(Default)]
pub struct MemorySink {
    /// `(tag, step, value)` in the order recorded.
    pub records: Vec<(String, u64, f64)>,
}

impl MetricsSink for MemorySink {
    fn scalar(&mut self, tag: &str, step: u64, value: f64) {
        self.records.push((tag.to_string(), step, value));
    }
}

/// Writes TensorBoard event files (`events.out.tfevents.*`) into a log directory.
pub struct TensorBoardSink {
    writer: tensorboard_rs::summary_writer::SummaryWriter,
}

impl TensorBoardSink {
    /// Creates `logdir` if needed and opens a new event file in it.
    pub fn new(logdir: &Path) -> Result<TensorBoardSink> {
        std::fs::create_dir_all(logdir)
            .with_context(|| format!("creating TensorBoard directory {}", logdir.display()))?;
        Ok(TensorBoardSink { writer: tensorboard_rs::summary_writer::SummaryWriter::new(logdir) })
    }
}

impl MetricsSink for TensorBoardSink {
    fn scalar(&mut self, tag: &str, step: u64, value: f64) {
        self.writer.add_scalar(tag, value as f32, step as usize);
    }
    fn flush(&mut self) {
        self.writer.flush();
    }
}

/// Reads the scalar summaries of a TensorBoard event file: `(tag, step, value)` in file order.
///
/// Parses the TFRecord framing (u64 length, u32 masked CRC, data, u32 masked CRC; CRCs not
/// checked) and the few protobuf fields needed: `Event.step` (2, varint), `Event.summary` (5),
/// `Summary.value` (1), `Value.tag` (1), `Value.simple_value` (2, fixed32).
pub fn read_scalars(path: &Path) -> Result<Vec<(String, i64, f32)>> {
    let bytes = std::fs::read(path).with_context(|| format!("reading event file {}", path.display()))?;
    let mut out = Vec::new();
    let mut pos = 0usize;
    while pos < bytes.len() {
        ensure!(pos + 12 <= bytes.len(), "{}: truncated record header at byte {pos}", path.display());
        let len = u64::from_le_bytes(bytes[pos..pos + 8].try_into().unwrap()) as usize;
        let start = pos + 12;
        ensure!(start + len + 4 <= bytes.len(), "{}: truncated record at byte {pos}", path.display());
        let event = &bytes[start..start + len];
        pos = start + len + 4;
        let mut step = 0i64;
        let mut summaries = Vec::new();
        for (field, val) in proto_fields(event).with_context(|| format!("{}: bad event", path.display()))? {
            match (field, val) {
                (2, Field::Varint(v)) => step = v as i64,
                (5, Field::Bytes(b)) => summaries.push(b),
                _ => {}
            }
        }
        for s in summaries {
            for (field, val) in proto_fields(s)? {
                if let (1, Field::Bytes(v)) = (field, val) {
                    let mut tag = String::new();
                    let mut value = None;
                    for (f, x) in proto_fields(v)? {
                        match (f, x) {
                            (1, Field::Bytes(t)) => tag = String::from_utf8_lossy(t).into_owned(),
                            (2, Field::Fixed32(u)) => value = Some(f32::from_bits(u)),
                            _ => {}
                        }
                    }
                    if let Some(value) = value {
                        out.push((tag, step, value));
                    }
                }
            }
        }
    }
    Ok(out)
}

enum Field<'a> {
    Varint(u64),
    Fixed64,
    Fixed32(u32),
    Bytes(&'a [u8]),
}

fn varint(b: &[u8], pos: &mut usize) -> Result<u64> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        ensure!(*pos < b.len(), "truncated varint");
        let byte = b[*pos];
        *pos += 1;
        v |= ((byte & 0x7f) as u64) << shift;
        if byte & 0x80 == 0 {
            return Ok(v);
        }
    }
    anyhow::bail!("varint too long")
}

fn proto_fields(b: &[u8]) -> Result<Vec<(u64, Field<'_>)>> {
    let mut out = Vec::new();
    let mut pos = 0;
    while pos < b.len() {
        let key = varint(b, &mut pos)?;
        let (field, wire) = (key >> 3, key & 7);
        let val = match wire {
            0 => Field::Varint(varint(b, &mut pos)?),
            1 => {
                ensure!(pos + 8 <= b.len(), "truncated fixed64");
                pos += 8;
                Field::Fixed64
            }
            2 => {
                let n = varint(b, &mut pos)? as usize;
                ensure!(pos + n <= b.len(), "truncated length-delimited field");
                pos += n;
                Field::Bytes(&b[pos - n..pos])
            }
            5 => {
                ensure!(pos + 4 <= b.len(), "truncated fixed32");
                pos += 4;
                Field::Fixed32(u32::from_le_bytes(b[pos - 4..pos].try_into().unwrap()))
            }
            w => anyhow::bail!("unsupported protobuf wire type {w}"),
        };
        out.push((field, val));
    }
    Ok(out)
}
