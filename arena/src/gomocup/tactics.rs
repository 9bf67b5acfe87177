//! The brain's tactics before the search (RULES.md §2–4 through `renju_rules::vcf`), run once at
//! the root of each move within the root VCF budget ([`super::BrainOptions::root_vcf_nodes`])
//! and at most a quarter of the move's time:
//!
//! - a VCF of the side to move is played at once;
//! - when the opponent has a VCF and its refutations are proved, the move is one of them: the
//!   agent's if it picked one, else the refutation after which the opponent is worst off by the
//!   agent's value.

use anyhow::{anyhow, Result};
use renju_rules::vcf::{refutations, vcf, Defence, Limits, Vcf};
use renju_rules::{Action, Color, Game, Point};

use crate::agent::Agent;
use crate::wire::format_point;

/// What the tactics found for the side to move.
#[derive(Clone, Debug, PartialEq)]
pub enum Tactic {
    /// A VCF: the attacker's moves and the defender's forced replies, alternating; play `line[0]`.
    Win { line: Vec<Point> },
    /// The opponent has a VCF (`threat`) and these moves are proved to refute it (never empty).
    Defend { threat: Vec<Point>, refutations: Vec<Point> },
    /// Neither (or the budget was spent first): the search decides alone.
    None,
}

/// The tactics for `mover` (to move in `game`) within `limits` (module docs).
pub fn before_search(game: &Game, mover: Color, limits: &Limits) -> Tactic {
    if let Vcf::Win { line } = vcf(game.board(), mover, limits) {
        return Tactic::Win { line };
    }
    match refutations(game.board(), mover, limits) {
        Defence::Threat { threat, refutations } if !refutations.is_empty() => Tactic::Defend { threat, refutations },
        _ => Tactic::None,
    }
}

/// The move against the opponent's VCF: `chosen` if it is one of `refutations`, else the
/// refutation after which the opponent (to decide there) has the lowest value by `agent` (a
/// game it has already lost counts -1).
pub fn defend(game: &Game, chosen: Action, refutations: &[Point], agent: &mut dyn Agent) -> Result<Point> {
    if let Action::Place(p) = chosen {
        if refutations.contains(&p) {
            return Ok(p);
        }
    }
    let mut best = (f32::INFINITY, refutations[0]);
    for &r in refutations {
        let mut g = game.clone();
        let at = format_point(r, game.board().size());
        g.apply(Action::Place(r)).map_err(|e| anyhow!("refutation {at}: {e}"))?;
        let v = if g.is_over() { -1.0 } else { agent.value(&g)?.unwrap_or(0.0) };
        if v < best.0 {
            best = (v, r);
        }
    }
    Ok(best.1)
}
