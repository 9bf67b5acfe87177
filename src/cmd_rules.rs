//! `renju-zero rules` (stub).

/// Arguments of `renju-zero rules`.
#[derive(clap::Args)]
pub struct RulesArgs {}

/// Run the command; returns the process exit code.
pub fn run(_args: RulesArgs) -> anyhow::Result<i32> {
    anyhow::bail!("`rules` is not implemented yet")
}
