//! `renju-trainer`: the tch policy-value network and everything around training it.
//!
//! - [`config`]: [`TrainerConfig`] and the architecture presets ([`NetConfig::preset`]).
//! - [`net`]: the KataGo-style residual network ([`net::ResNet`]), [`Net`] over both families, [`NetShape`].
//! - [`linenet`]: the line-pattern (NNUE-style) network and its table export.
//! - [`model`]: published model directories, loading with validation, TorchScript export, the
//!   [`ModelEvaluator`] (the search crate's `Evaluator`).
//! - [`replay`]: the replay window over self-play shards, symmetry augmentation, the background
//!   batch loader.
//! - [`optim`]: SGD-Nesterov / AdamW with checkpointable state.
//! - [`rundir`]: [`RunDir`], the run directory's layout (the only place that names its parts).
//! - [`runlock`]: [`runlock::RunLock`], the one-trainer-per-run OS lock.
//! - [`store`]: run directories on object storage ([`store::ObjectRun`], `--run s3://...`).
//! - [`trainer`]: [`Trainer`] (open or resume a run, train steps, checkpoint, publish).
//! - [`metrics`]: the [`MetricsSink`] trait, TensorBoard output and an event-file reader.
//! - [`export`]: `renju-zero export` as a library function.
//! - [`onnx`]: the ONNX export in the interface of Rapfi's ONNX Runtime evaluator.

pub mod config;
pub mod export;
pub mod linenet;
pub mod metrics;
pub mod model;
pub mod net;
pub mod onnx;
pub mod optim;
pub mod replay;
pub mod rundir;
pub mod runlock;
pub mod store;
pub mod trainer;

pub use config::{NetConfig, NetKind, OptimizerConfig, TrainerConfig};
pub use metrics::MetricsSink;
pub use model::{ModelConfig, ModelEvaluator};
pub use net::{Net, NetShape};
pub use replay::{ReplayWindow, WindowStatus};
pub use rundir::RunDir;
pub use trainer::{TrainMetrics, Trainer};
