//! The search parameters ([`SearchConfig`]) and the root search they select
//! ([`SearchAlgorithm`]).

use serde::{Deserialize, Serialize};

/// The policy temperature ([`SearchConfig::policy_temperature`]) of the searches that play and
/// analyse (the Gomocup brain, `analyze`, `serve`): at 2 the search spreads its playouts wider
/// than the policy head alone would (measured against Rapfi on the 26 RIF openings:
/// docs/experiments/2026-12-play-time-levers.md). Self-play, the arena's search players and
/// the learning curve keep 1, the setting every strength-ladder figure was measured with.
pub const PLAY_POLICY_TEMPERATURE: f32 = 2.0;

/// The standard errors of the lower confidence bound by which the Gomocup brain chooses its move
/// ([`crate::mcts::pick_by_lcb`]) instead of taking the most visited one (measured against Rapfi
/// on the 26 RIF openings: docs/experiments/2026-12-play-time-levers.md). Everything else keeps
/// the most visited move.
pub const PLAY_LCB_Z: f32 = 2.0;

/// Search parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SearchConfig {
    /// Exploration constant of PUCT. Default 1.5 (KataGo's `cpuctExploration` is 1.0 with a
    /// log-growing term; AlphaZero used about 1.25 at small visit counts).
    pub c_puct: f32,
    /// First-play-urgency reduction below the parent's value (KataGo). Default 0.2.
    pub fpu_reduction: f32,
    /// FPU reduction at the root (KataGo uses 0 with noise). Default 0.0.
    pub root_fpu_reduction: f32,
    /// Dirichlet total concentration: `alpha = dirichlet_alpha_total / legal actions`
    /// (KataGo's 10.83; AlphaZero's 0.03 for 361 Go points is about 10.8 in total). Default 10.0.
    pub dirichlet_alpha_total: f32,
    /// Weight of the noise at the root (AlphaZero: 0.25). Default 0.25.
    pub dirichlet_epsilon: f32,
    /// Use the immediate-win / forced-block shortcuts in plain play. Default true.
    pub shortcuts: bool,
    /// Root search: `puct` (default) or `gumbel` ([`crate::mcts::gumbel`]: Gumbel-top-k, sequential
    /// halving, the improved policy as the target; PUCT below the root; no Dirichlet noise).
    pub algorithm: SearchAlgorithm,
    /// Gumbel: most root actions considered, `m` (Danihelka et al. 2022: 16). Default 16.
    pub gumbel_considered: usize,
    /// Gumbel: `c_visit` of the transform sigma (paper: 50). Default 50.0.
    pub gumbel_c_visit: f32,
    /// Gumbel: `c_scale` of sigma (paper: 1). Default 1.0.
    pub gumbel_c_scale: f32,
    /// VCF check at node expansion in plain play (with `shortcuts`): the node budget of each
    /// solver call (`renju_rules::vcf`, nodes = attacker moves tried); 0 turns it off. A proven
    /// VCF of the mover makes the node an exact win (at the root: the winning move its only
    /// child); an opponent VCF whose refutations the same budget proves restricts the children
    /// to them (none: an exact loss). Default 0 (off).
    pub vcf_nodes: u64,
    /// VCT check in plain play (with `shortcuts`): when a playout reaches a node (not the root)
    /// that has `vct_visits` visits, the mover's VCT is asked once (`renju_rules::vct`, this
    /// node budget, nodes = attacker threats tried with its VCF shortcut's moves); a proven VCT
    /// makes the node an exact win for its mover, which the solver propagates. 0 turns it off.
    /// Default 0 (off).
    pub vct_nodes: u64,
    /// Visits a node has before the VCT check asks its question (0: at its expansion, before
    /// the evaluation). A call of a few hundred nodes costs a few playouts' time, so the busier
    /// nodes are the ones worth it. Default 8.
    pub vct_visits: u32,
    /// MCTS-solver (Winands, Björnsson, Saito 2008): proven wins and losses (terminal positions,
    /// the shortcuts' and the VCF check's results) propagate up the tree: a node is a proven win
    /// for its decider when a child is, a proven loss when every live child is a proven win for
    /// the opponent. Selection takes a proven-winning child at once and skips proven-losing ones
    /// (unless all are); a proven root ends the search, and its value is exactly `+1` or `-1`.
    /// Default false (self-play's searches stay as they are); the arena's and the Gomocup
    /// brain's search players turn it on.
    pub solver: bool,
    /// Forced playouts and policy-target pruning (KataGo, Wu 2019, §3.1) at a root given
    /// Dirichlet noise (self-play's full searches): a visited root child with fewer than
    /// `sqrt(k * P * N)` visits (`P` its noised prior, `N` the root's visits) is taken before
    /// PUCT is asked, so that a move the noise lifted gets a real look; the policy target and
    /// the move choice then take back from every child but the most visited one the playouts
    /// PUCT would not have given it (at most its forced ones), and drop a child left with a
    /// single visit. This is `k` (KataGo: 2); 0 turns both off. Default 0 (off).
    pub forced_playouts: f32,
    /// Policy temperature of the search (lc0's policy softmax temperature): a node's children
    /// get the softmax of their logits divided by it as their priors, so above 1 the search
    /// looks wider than the policy head alone would send it. The policy target (visit counts)
    /// is unchanged. Must be positive. Default 1.0 (the policy head's own priors).
    pub policy_temperature: f32,
}

impl Default for SearchConfig {
    fn default() -> Self {
        SearchConfig {
            c_puct: 1.5,
            fpu_reduction: 0.2,
            root_fpu_reduction: 0.0,
            dirichlet_alpha_total: 10.0,
            dirichlet_epsilon: 0.25,
            shortcuts: true,
            algorithm: SearchAlgorithm::Puct,
            gumbel_considered: 16,
            gumbel_c_visit: 50.0,
            gumbel_c_scale: 1.0,
            vcf_nodes: 0,
            vct_nodes: 0,
            vct_visits: 8,
            solver: false,
            forced_playouts: 0.0,
            policy_temperature: 1.0,
        }
    }
}

impl SearchConfig {
    /// Whether `t` can be a [`SearchConfig::policy_temperature`]: a positive, finite number
    /// (the logits are divided by it). Every place that takes one from a user checks it here
    /// and names its own option in the error.
    pub fn is_policy_temperature(t: f64) -> bool {
        t > 0.0 && t.is_finite()
    }
}

/// Which root search a [`crate::mcts::SearchConfig`] runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SearchAlgorithm {
    /// AlphaZero's PUCT at every node, visit counts as the policy target (default).
    #[default]
    Puct,
    /// Gumbel root search ([`crate::mcts::gumbel`]), PUCT below the root.
    Gumbel,
}

impl std::str::FromStr for SearchAlgorithm {
    type Err = anyhow::Error;
    fn from_str(s: &str) -> anyhow::Result<SearchAlgorithm> {
        match s {
            "puct" => Ok(SearchAlgorithm::Puct),
            "gumbel" => Ok(SearchAlgorithm::Gumbel),
            other => anyhow::bail!("unknown search algorithm '{other}' (expected puct or gumbel)"),
        }
    }
}
