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

pub mod config;
pub mod export;
pub mod generations;
pub mod metrics;
pub mod model;
pub mod net;
pub mod onnx;
pub mod optim;
pub mod process;
pub mod replay;
pub mod rundir;
pub mod runlock;
pub mod store;
pub mod training;

pub use config::{NetConfig, NetKind, OptimizerConfig, TrainerConfig};
pub use metrics::MetricsSink;
pub use model::{ModelConfig, ModelEvaluator};
pub use net::{Net, NetShape};
pub use replay::{ReplayWindow, WindowStatus};
pub use rundir::RunDir;
pub use training::{TrainMetrics, Trainer};
