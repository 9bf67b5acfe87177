//! The publication gate: play a candidate generation against the incumbent and publish only
//! when the arena says it is not weaker. The training pipeline calls [`gate`] before publishing
//! when its `pipeline.gate` is on (off by default); [`GateConfig::default`] holds the defaults of
//! the pipeline's `gate_*` keys.
//!
//! Decision: with an SPRT configured, pass iff the test accepts H1 (stopping early when it
//! decides); if it is still undecided after `games` games, pass iff the candidate's score is at
//! least `min_score`. Without an SPRT, pass iff the score is at least `min_score` (AlphaGo Zero's
//! gate: 55% over 400 games, Silver et al. 2017).

use anyhow::Result;
use serde::Serialize;

use crate::matches::{run_arena, ArenaConfig, OpeningMode};
use crate::spec::PlayerSpec;
use crate::sprt::{SprtConfig, SprtDecision, SprtStatus};
use crate::stats::Wdl;
use renju_selfplay::eval::EvaluatorLoader;

/// Gate settings.
#[derive(Clone, Debug, PartialEq)]
pub struct GateConfig {
    /// Games at most (per the arena: the 26 openings with both colours). Default 52.
    pub games: usize,
    /// Minimum score of the candidate to pass without an SPRT decision. Default 0.55.
    pub min_score: f64,
    /// Optional early-stopping test; default `0,35,0.05,0.05` (Elo0, Elo1, α, β).
    pub sprt: Option<SprtConfig>,
    /// Arena settings (board, rule, threads, seed); `games`, `openings` and `sprt` are set from
    /// the fields above.
    pub arena: ArenaConfig,
}

impl Default for GateConfig {
    fn default() -> Self {
        GateConfig {
            games: 52,
            min_score: 0.55,
            sprt: Some(SprtConfig { elo0: 0.0, elo1: 35.0, alpha: 0.05, beta: 0.05 }),
            arena: ArenaConfig::default(),
        }
    }
}

/// The gate's verdict.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GateDecision {
    /// Publish the candidate?
    pub pass: bool,
    /// The candidate's results against the incumbent.
    pub candidate: Wdl,
    pub sprt: Option<SprtStatus>,
    /// One line saying why.
    pub reason: String,
}

/// Runs the gate (module docs) for `candidate` against `incumbent` (their names must differ).
/// Errors: as [`run_arena`].
pub fn gate(
    candidate: &PlayerSpec,
    incumbent: &PlayerSpec,
    cfg: &GateConfig,
    loader: &EvaluatorLoader,
) -> Result<GateDecision> {
    let arena = ArenaConfig { games: cfg.games, openings: OpeningMode::Rif26, sprt: cfg.sprt, ..cfg.arena.clone() };
    let s = run_arena(&[candidate.clone(), incumbent.clone()], &arena, loader, |_| {})?;
    Ok(decide(s.matrix.results[0][1], s.sprt, cfg.min_score))
}

/// The decision rule alone, from the candidate's results and the SPRT status.
pub fn decide(candidate: Wdl, sprt: Option<SprtStatus>, min_score: f64) -> GateDecision {
    let score = candidate.score();
    let (pass, reason) = match sprt.map(|s| s.decision) {
        Some(SprtDecision::H1) => {
            (true, format!("SPRT accepted H1 after {} games (score {score:.3})", candidate.games()))
        }
        Some(SprtDecision::H0) => {
            (false, format!("SPRT accepted H0 after {} games (score {score:.3})", candidate.games()))
        }
        _ => (
            score >= min_score,
            format!(
                "score {score:.3} over {} games {} {min_score}",
                candidate.games(),
                if score >= min_score { ">=" } else { "<" }
            ),
        ),
    };
    GateDecision { pass, candidate, sprt, reason }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decision_rule() {
        let w = |wins, losses| Wdl { wins, draws: 0, losses };
        assert!(decide(w(60, 40), None, 0.55).pass);
        assert!(!decide(w(50, 50), None, 0.55).pass);
        let st = |decision| SprtStatus { llr: 0.0, lower: -2.9, upper: 2.9, decision };
        assert!(!decide(w(60, 40), Some(st(SprtDecision::H0)), 0.55).pass);
        assert!(decide(w(50, 50), Some(st(SprtDecision::H1)), 0.55).pass);
        assert!(decide(w(60, 40), Some(st(SprtDecision::Continue)), 0.55).pass);
    }
}
