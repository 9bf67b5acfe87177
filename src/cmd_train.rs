//! `renju-zero train` (stub).

/// Arguments of `renju-zero train`.
#[derive(clap::Args)]
pub struct TrainArgs {}

/// Run the command; returns the process exit code.
pub fn run(_args: TrainArgs) -> anyhow::Result<i32> {
    anyhow::bail!("`train` is not implemented yet")
}
