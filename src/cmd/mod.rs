//! One module per subcommand: its clap arguments and the glue from them to the libraries.
//! `export`, `selfplay`, `train` (also `trainer`, `check-run`) and `progress` need the `torch`
//! feature; without it those commands only say so ([`needs_torch`]).

pub mod analyze;
pub mod arena;
pub mod curve;
#[cfg(feature = "torch")]
pub mod export;
pub mod games;
pub mod gomocup;
pub mod openings;
#[cfg(feature = "torch")]
pub mod progress;
pub mod rules;
#[cfg(feature = "torch")]
pub mod selfplay;
pub mod serve;
#[cfg(feature = "torch")]
pub mod train;

/// `--model` as given, or `shipped` (the model built into the binary) when none is, which
/// `command` says on stderr.
pub fn model_or_shipped(model: Option<&str>, command: &str) -> String {
    match model {
        Some(m) => m.to_string(),
        None => {
            renju_zero::pipeline::say(&format!(
                "{command}: no --model given; using the shipped model ({})",
                renju_selfplay::linepattern::shipped::SHIPPED_SUMMARY.trim()
            ));
            "shipped".into()
        }
    }
}

/// The answer of a command that needs libtorch in a build without the `torch` feature.
#[cfg(not(feature = "torch"))]
pub fn needs_torch(command: &str) -> anyhow::Result<i32> {
    anyhow::bail!(
        "`renju-zero {command}` needs libtorch, and this renju-zero was built without the torch feature \
         (--no-default-features): build it with the default features (`source scripts/env.sh && cargo build \
         --release`) to train, run self-play or export"
    )
}
