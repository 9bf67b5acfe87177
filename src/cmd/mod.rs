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

use renju_selfplay::mcts::{SearchConfig, PLAY_LCB_Z, PLAY_POLICY_TEMPERATURE};

/// The shipped model (the one built into the binary) as the commands name it to a person:
/// `the shipped model (its summary)`.
pub fn shipped_model_named() -> String {
    format!("the shipped model ({})", renju_selfplay::linepattern::shipped::SHIPPED_SUMMARY.trim())
}

/// `--model` as given, or `shipped` when none is, which `command` says on stderr when there is
/// one (`serve` names its model in its own first line instead).
pub fn model_or_shipped(model: Option<&str>, command: Option<&str>) -> String {
    match model {
        Some(m) => m.to_string(),
        None => {
            if let Some(command) = command {
                renju_zero::pipeline::say(&format!("{command}: no --model given; using {}", shipped_model_named()));
            }
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

/// The play-time search options the brain (`gomocup`), `analyze` and `serve` share: the solver
/// checks inside the search, the policy temperature and the move choice.
#[derive(clap::Args)]
pub struct PlaySearchArgs {
    /// VCF check at each node expansion of the search: solver nodes per call (0 = off).
    #[arg(long, default_value_t = SearchConfig::default().vcf_nodes)]
    pub vcf_nodes: u64,
    /// VCT check (fours and threes) in the search: the mover's VCT is asked once at each node
    /// that reaches --vct-visits visits; solver nodes per call (0 = off).
    #[arg(long, default_value_t = SearchConfig::default().vct_nodes)]
    pub vct_nodes: u64,
    /// Visits a node has before the VCT check asks (0: at its expansion).
    #[arg(long, default_value_t = SearchConfig::default().vct_visits)]
    pub vct_visits: u32,
    /// The search's priors are the softmax of the policy logits divided by this (1: as they are;
    /// above 1 the search looks wider than the policy head alone would send it).
    #[arg(long, default_value_t = PLAY_POLICY_TEMPERATURE)]
    pub policy_temperature: f32,
    /// Play the root move with the best lower confidence bound of its value at this many
    /// standard errors, among those with at least a tenth of the most visited move's visits
    /// (`analyze` and `serve` list that move first).
    #[arg(long, value_name = "Z", default_value_t = PLAY_LCB_Z)]
    pub lcb: f32,
    /// Play the most visited root move instead of the best lower confidence bound (for
    /// measuring what the bound brings).
    #[arg(long, conflicts_with = "lcb")]
    pub most_visited: bool,
}

impl PlaySearchArgs {
    /// The search configuration (with the MCTS-solver), the given values checked.
    pub fn config(&self) -> anyhow::Result<SearchConfig> {
        anyhow::ensure!(
            SearchConfig::is_policy_temperature(self.policy_temperature as f64),
            "--policy-temperature {} must be a positive number",
            self.policy_temperature
        );
        Ok(SearchConfig {
            vcf_nodes: self.vcf_nodes,
            vct_nodes: self.vct_nodes,
            vct_visits: self.vct_visits,
            policy_temperature: self.policy_temperature,
            solver: true,
            ..SearchConfig::default()
        })
    }

    /// `SearchSettings::lcb`: `None` with --most-visited, else --lcb, checked.
    pub fn lcb(&self) -> anyhow::Result<Option<f32>> {
        anyhow::ensure!(
            self.lcb.is_finite() && self.lcb >= 0.0,
            "--lcb {} must be a number of standard errors, 0 or more",
            self.lcb
        );
        Ok((!self.most_visited).then_some(self.lcb))
    }
}
