//! `renju-trainer`: the tch policy-value network and everything around training it.
//!
//! - [`config`]: [`TrainerConfig`] and the architecture presets ([`NetConfig::preset`]).
//! - [`net`]: [`Net`] over both network families, [`NetShape`]; the KataGo-style residual network
//!   ([`net::resnet`]) and the line-pattern (NNUE-style) network with its table export
//!   ([`net::linepattern`]).
//! - [`model`]: the model directory (its files and `config.json`, [`ModelConfig`]), loading with
//!   validation, TorchScript tracing, the [`ModelEvaluator`] (the search crate's `Evaluator`).
//! - [`generations`]: the generation lifecycle of `models/`: `gen-NNNNNN` names, listing,
//!   publishing, `LATEST`, pruning.
//! - [`replay`]: the replay window over self-play shards, symmetry augmentation, the background
//!   batch loader.
//! - [`optim`]: SGD-Nesterov / AdamW with checkpointable state.
//! - [`rundir`]: [`RunDir`], the run directory's layout (the only place that names its parts).
//! - [`process`]: this process's identity (host, pid, subcommand) as logs, locks and leases
//!   record it.
//! - [`runlock`]: [`runlock::RunLock`], the one-trainer-per-run OS lock.
//! - [`store`]: run directories on object storage ([`store::ObjectRun`], `--run s3://...`).
//! - [`training`]: [`Trainer`] (open or resume a run, train steps, checkpoint, publish).
//! - [`metrics`]: the [`MetricsSink`] trait, TensorBoard output and an event-file reader.
//! - [`export`]: a published model written as one file (TorchScript, safetensors or ONNX).
//! - [`onnx`]: the ONNX export in the interface of Rapfi's ONNX Runtime evaluator.
//!
//! Without the default `torch` feature the crate keeps what playing needs and no libtorch:
//! [`config`], [`generations`], reading model directories and line-pattern tables ([`model`]),
//! [`NetShape`], [`rundir`], [`runlock`], [`process`], [`store`]. Networks, training, replay,
//! metrics and export need the feature.

pub mod config;
#[cfg(feature = "torch")]
pub mod export;
pub mod generations;
#[cfg(feature = "torch")]
pub mod metrics;
pub mod model;
pub mod net;
#[cfg(feature = "torch")]
pub mod onnx;
#[cfg(feature = "torch")]
pub mod optim;
pub mod process;
#[cfg(feature = "torch")]
pub mod replay;
pub mod rundir;
pub mod runlock;
pub mod store;
#[cfg(feature = "torch")]
pub mod training;

pub use config::{NetConfig, NetKind, OptimizerConfig, TrainerConfig};
#[cfg(feature = "torch")]
pub use metrics::MetricsSink;
pub use model::ModelConfig;
#[cfg(feature = "torch")]
pub use model::ModelEvaluator;
#[cfg(feature = "torch")]
pub use net::Net;
pub use net::NetShape;
#[cfg(feature = "torch")]
pub use replay::{ReplayWindow, WindowStatus};
pub use rundir::RunDir;
#[cfg(feature = "torch")]
pub use training::{TrainMetrics, Trainer};
