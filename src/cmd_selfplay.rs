//! `renju-zero selfplay` (stub).

/// Arguments of `renju-zero selfplay`.
#[derive(clap::Args)]
pub struct SelfplayArgs {}

/// Run the command; returns the process exit code.
pub fn run(_args: SelfplayArgs) -> anyhow::Result<i32> {
    anyhow::bail!("`selfplay` is not implemented yet")
}
