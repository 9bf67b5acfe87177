//! The brain's tactics before the search (RULES.md §2–4 through `renju_rules::vcf` and
//! `renju_rules::vct`), run once at the root of each move, each solver within its root budget
//! ([`super::BrainOptions::root_vcf_nodes`], [`super::BrainOptions::root_vct_nodes`]) and at most a
//! quarter of the move's time:
//!
//! - a VCF of the side to move is played at once;
//! - when the opponent has a VCF and its refutations are proved, the move is one of them: the
//!   agent's if it picked one, else the refutation after which the opponent is worst off by the
//!   agent's value. With a VCT budget, a refutation after which the opponent is proved to have a
//!   VCT is dropped unless every one is (stopping the fours does not help against a VCT);
//! - otherwise, with a VCT budget, the same for VCTs: a VCT of the side to move is played at once
//!   (a proved win: every defence loses), and when the opponent has a VCT and some moves are
//!   proved to refute it, the move is one of those. A VCT threat no move is proved to refute
//!   leaves the search to decide.

use anyhow::{anyhow, Result};
use renju_rules::vcf::{self, refutations, vcf, Limits, Vcf};
use renju_rules::vct::{vct, vct_refutations, Vct, VctDefence};
use renju_rules::{Action, Color, Game, Point};

use crate::agent::Agent;
use crate::wire::format_point;

/// The solver that found a line: `VCF` (fours only) or `VCT` (fours and threes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Solver {
    Vcf,
    Vct,
}

impl std::fmt::Display for Solver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Solver::Vcf => "VCF",
            Solver::Vct => "VCT",
        })
    }
}

/// What the tactics found for the side to move.
#[derive(Clone, Debug, PartialEq)]
pub enum Tactic {
    /// A VCF or VCT: the attacker's moves and the defender's replies, alternating (for a VCT the
    /// principal branch of the proof); play `line[0]`.
    Win { line: Vec<Point>, by: Solver },
    /// The opponent has a VCF or VCT (`threat`) and these moves are proved to refute it (never
    /// empty).
    Defend { threat: Vec<Point>, refutations: Vec<Point>, by: Solver },
    /// Neither (or the budgets were spent first): the search decides alone.
    None,
}

/// The tactics for `mover` (to move in `game`): the VCF questions within `vcf_limits`, then, when
/// they settle nothing and `vct_limits` has nodes, the VCT questions (module docs).
pub fn before_search(game: &Game, mover: Color, vcf_limits: &Limits, vct_limits: &Limits) -> Tactic {
    let board = game.board();
    if vcf_limits.nodes > 0 {
        if let Vcf::Win { line } = vcf(board, mover, vcf_limits) {
            return Tactic::Win { line, by: Solver::Vcf };
        }
        match refutations(board, mover, vcf_limits) {
            vcf::Defence::Threat { threat, refutations } if !refutations.is_empty() => {
                let refutations = without_vct_losses(board, mover, refutations, vct_limits);
                return Tactic::Defend { threat, refutations, by: Solver::Vcf };
            }
            // Every move loses to a VCF: no threat search can help.
            vcf::Defence::Threat { .. } => return Tactic::None,
            vcf::Defence::NoThreat | vcf::Defence::Unknown => {}
        }
    }
    if vct_limits.nodes == 0 {
        return Tactic::None;
    }
    if let Vct::Win { line } = vct(board, mover, vct_limits) {
        return Tactic::Win { line, by: Solver::Vct };
    }
    match vct_refutations(board, mover, vct_limits) {
        VctDefence::Threat { threat, refutations, .. } if !refutations.is_empty() => {
            Tactic::Defend { threat, refutations, by: Solver::Vct }
        }
        _ => Tactic::None,
    }
}

/// The refutations of an opponent VCF (`refutations`, moves of `mover`) after which the opponent
/// is not proved to have a VCT (see [`vct_losses`]). All of them when each loses to a VCT, when
/// there is only one, or without a VCT budget.
fn without_vct_losses(
    board: &renju_rules::Board,
    mover: Color,
    refutations: Vec<Point>,
    vct_limits: &Limits,
) -> Vec<Point> {
    if refutations.len() < 2 {
        return refutations;
    }
    let lost = vct_losses(board, mover, &refutations, vct_limits);
    if lost.len() == refutations.len() {
        return refutations;
    }
    refutations.into_iter().filter(|r| !lost.contains(r)).collect()
}

/// The moves of `moves` (of `mover`, to move on `board`) after which the opponent is proved to
/// have a VCT: each asked within `vct_limits`' nodes, all of them within its time (a move not
/// asked for lack of time is not counted). None without a VCT budget.
fn vct_losses(board: &renju_rules::Board, mover: Color, moves: &[Point], vct_limits: &Limits) -> Vec<Point> {
    if vct_limits.nodes == 0 {
        return Vec::new();
    }
    let deadline = vct_limits.deadline();
    let mut board = board.clone();
    moves
        .iter()
        .copied()
        .filter(|&r| {
            let Some(limits) = Limits::before(vct_limits.nodes, deadline) else { return false };
            board.place(r, mover);
            let lost = matches!(vct(&board, mover.opponent(), &limits), Vct::Win { .. });
            board.undo();
            lost
        })
        .collect()
}

/// The defence question for `mover` (to move), as `YXSEARCHDEFEND` asks it: the opponent's VCF
/// within `vcf_limits`, then, without one, its VCT within `vct_limits` (0 nodes: not asked).
#[derive(Clone, Debug, PartialEq)]
pub enum Defence {
    /// The opponent has a VCF or VCT (`threat`) and exactly (VCF) or at least (VCT: moves the
    /// depth limit left undecided are left out) these moves refute it. For a VCF with a VCT
    /// budget, `lose_to_vct` holds the refutations after which the opponent is proved to have a
    /// VCT (stopping its fours does not stop its threes); empty otherwise.
    Refuted { threat: Vec<Point>, refutations: Vec<Point>, by: Solver, lose_to_vct: Vec<Point> },
    /// The opponent has a VCF or VCT and no move is proved to refute it.
    Lost { threat: Vec<Point>, by: Solver },
    /// No VCF, and no VCT (or none asked for).
    NoThreat,
    /// A budget ran out first.
    Unknown,
}

/// The defence question (see [`Defence`]).
pub fn defence(board: &renju_rules::Board, mover: Color, vcf_limits: &Limits, vct_limits: &Limits) -> Defence {
    match refutations(board, mover, vcf_limits) {
        vcf::Defence::Threat { threat, refutations } if refutations.is_empty() => {
            return Defence::Lost { threat, by: Solver::Vcf }
        }
        vcf::Defence::Threat { threat, refutations } => {
            let lose_to_vct = vct_losses(board, mover, &refutations, vct_limits);
            return Defence::Refuted { threat, refutations, by: Solver::Vcf, lose_to_vct };
        }
        vcf::Defence::Unknown => return Defence::Unknown,
        vcf::Defence::NoThreat => {}
    }
    if vct_limits.nodes == 0 {
        return Defence::NoThreat;
    }
    match vct_refutations(board, mover, vct_limits) {
        VctDefence::Threat { threat, refutations, .. } if refutations.is_empty() => {
            Defence::Lost { threat, by: Solver::Vct }
        }
        VctDefence::Threat { threat, refutations, .. } => {
            Defence::Refuted { threat, refutations, by: Solver::Vct, lose_to_vct: Vec::new() }
        }
        VctDefence::NoThreat => Defence::NoThreat,
        VctDefence::Unknown => Defence::Unknown,
    }
}

/// The move against the opponent's threat: `chosen` if it is one of `refutations`, else the
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

/// A midgame of a match against Rapfi, Black to move. White's diagonal three e10 f9 g8 makes a
/// four-three threat (a VCF); exactly d11 and h7, its two ends, stop the VCF. After d11 White
/// still wins by a VCT (as the game went); after h7 no VCT is found within a million nodes.
/// Used by the tactics' tests and the protocol's (`YXSEARCHDEFEND`).
#[cfg(test)]
pub(super) const VCF_REFUTATION_LOSING_TO_A_VCT: &str = "h8 h9 i7 g9 i9 g7 f8 g8 g10 i10 j11 g6 g5 d9 f7 f9 e9 e10";

#[cfg(test)]
mod tests {
    use super::*;
    use renju_rules::notation::{parse_moves, parse_point};
    use renju_rules::Rule;

    const MOVES: &str = VCF_REFUTATION_LOSING_TO_A_VCT;
    const SAFE: &str = "h7";

    fn position() -> Game {
        Game::from_position(15, Rule::Renju, &parse_moves(MOVES, 15).unwrap()).unwrap()
    }

    #[test]
    fn a_vcf_refutation_that_loses_to_a_vct_is_dropped() {
        let game = position();
        assert_eq!(game.next_color(), Color::Black);
        let (d11, safe) = (parse_point("d11", 15).unwrap(), parse_point(SAFE, 15).unwrap());
        // The solvers' answers: exactly these two stop White's VCF; after d11 White has a VCT,
        // after h7 none is found.
        let vcf_limits = Limits::nodes(1_000_000);
        let vcf::Defence::Threat { mut refutations, .. } = refutations(game.board(), Color::Black, &vcf_limits) else {
            panic!("White threatens a VCF here")
        };
        refutations.sort_by_key(|p| p.index(15));
        let mut both = vec![d11, safe];
        both.sort_by_key(|p| p.index(15));
        assert_eq!(refutations, both);
        let after = |p: Point| {
            let mut b = game.board().clone();
            b.place(p, Color::Black);
            vct(&b, Color::White, &Limits::nodes(1_000_000))
        };
        assert!(matches!(after(d11), Vct::Win { .. }));
        assert!(!matches!(after(safe), Vct::Win { .. }));
        // With a VCT budget the tactics keep the safe refutation alone; without one, both.
        let with = before_search(&game, Color::Black, &vcf_limits, &Limits::nodes(20_000));
        assert!(
            matches!(&with, Tactic::Defend { refutations, by: Solver::Vcf, .. } if refutations == &vec![safe]),
            "{with:?}"
        );
        let without = before_search(&game, Color::Black, &vcf_limits, &Limits::nodes(0));
        let Tactic::Defend { refutations: mut kept, .. } = without else { panic!("{without:?}") };
        kept.sort_by_key(|p| p.index(15));
        assert_eq!(kept, both);
        // The defence question names both refutations, and d11 as losing to a VCT when it has
        // the budget to ask.
        let asked = defence(game.board(), Color::Black, &vcf_limits, &Limits::nodes(20_000));
        let Defence::Refuted { refutations: mut named, by: Solver::Vcf, lose_to_vct, .. } = asked else {
            panic!("{asked:?}")
        };
        named.sort_by_key(|p| p.index(15));
        assert_eq!((named, lose_to_vct), (both.clone(), vec![d11]));
        let unasked = defence(game.board(), Color::Black, &vcf_limits, &Limits::nodes(0));
        assert!(matches!(&unasked, Defence::Refuted { lose_to_vct, .. } if lose_to_vct.is_empty()), "{unasked:?}");
    }
}
