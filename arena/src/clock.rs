//! Adaptive time use for one decision: the search aims at a target time, may stop before it when
//! the move is settled, and may run past it, up to a most, while it is not.
//!
//! - **Before the target**, once a quarter of it has passed, the search stops when the move the
//!   agent would play is the most visited root child and that child cannot be overtaken before
//!   the target: its lead in visits over the second exceeds the playouts still to come at the
//!   rate seen so far. The move played at the target would be the same, so the time is saved for
//!   later moves. A move chosen by its value's lower confidence bound may differ from the most
//!   visited; then the search goes on.
//! - **At the target** it goes on, up to the most, while the search is unsettled: the move that
//!   would be played is not the most visited child, the second child has at least three quarters
//!   of the best one's visits, the move that would be played changed within the last quarter of
//!   this decision's playouts, or the root value moved by more than [`VALUE_MOVE`] since half the
//!   target.
//! - A proven or forced root ends the search (the agent's own checks), whatever the clock says.
//!
//! The Gomocup brain plans the target and the most from the match clock ([`crate::gomocup`]'s
//! `time` module); the most never passes the turn limit.

use std::time::Duration;

/// A decision's time plan: aim at `target`, never pass `most` (at least `target`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stretch {
    pub target: Duration,
    pub most: Duration,
}

/// The root's state as the clock sees it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RootView {
    /// The most visited child (its action index).
    pub best: usize,
    pub best_visits: u64,
    /// Visits of the second most visited child (0 with one child).
    pub second_visits: u64,
    /// The child the agent would play if the search stopped now (its action index): `best`
    /// when the move is the most visited, another child when it is chosen by a lower confidence
    /// bound.
    pub chosen: usize,
    /// The root value for its decider.
    pub value: f32,
}

impl RootView {
    /// From `(action index, visits, prior)` root children (as [`renju_selfplay::mcts::Mcts::root_children`]
    /// gives them), the root value and the child the agent would play (`None`: the most
    /// visited); `None` without children. The best is the most visited, ties to the higher
    /// prior, as the move choice by visits has it.
    pub fn of(children: &[(usize, u32, f32)], value: f32, chosen: Option<usize>) -> Option<RootView> {
        let best = children.iter().max_by(|a, b| a.1.cmp(&b.1).then(a.2.total_cmp(&b.2)))?;
        let second = children.iter().filter(|c| c.0 != best.0).map(|c| c.1).max().unwrap_or(0);
        Some(RootView {
            best: best.0,
            best_visits: best.1 as u64,
            second_visits: second as u64,
            value,
            chosen: chosen.unwrap_or(best.0),
        })
    }
}

/// A root value change larger than this (win - loss scale) since half the target keeps the search
/// going past it.
pub const VALUE_MOVE: f32 = 0.1;

/// Watches one decision's search against its [`Stretch`] (module docs).
#[derive(Clone, Debug)]
pub struct Watch {
    stretch: Stretch,
    /// The move that would be played, as last seen.
    chosen: Option<usize>,
    /// This decision's playouts when the move that would be played last changed.
    chosen_since: u64,
    /// The root value first seen at or after half the target.
    half_value: Option<f32>,
}

impl Watch {
    pub fn new(stretch: Stretch) -> Watch {
        Watch { stretch, chosen: None, chosen_since: 0, half_value: None }
    }

    /// Whether the search goes on, `elapsed` after the decision began, with `searched` playouts
    /// of this decision done and the root as `root` (module docs).
    pub fn go_on(&mut self, elapsed: Duration, searched: u64, root: &RootView) -> bool {
        let Stretch { target, most } = self.stretch;
        if elapsed >= most.max(target) {
            return false;
        }
        if self.chosen != Some(root.chosen) {
            self.chosen = Some(root.chosen);
            self.chosen_since = searched;
        }
        let settled_choice = root.chosen == root.best;
        if self.half_value.is_none() && elapsed >= target / 2 {
            self.half_value = Some(root.value);
        }
        let lead = root.best_visits.saturating_sub(root.second_visits);
        if elapsed < target {
            if elapsed >= target / 4 && searched > 0 && !elapsed.is_zero() {
                let rate = searched as f64 / elapsed.as_secs_f64();
                let to_come = rate * (target - elapsed).as_secs_f64();
                return !settled_choice || lead as f64 <= to_come;
            }
            return true;
        }
        let close = root.second_visits * 4 >= root.best_visits * 3;
        let changed = self.chosen_since * 4 > searched * 3;
        let moving = self.half_value.is_some_and(|v| (v - root.value).abs() > VALUE_MOVE);
        !settled_choice || close || changed || moving
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: fn(u64) -> Duration = Duration::from_millis;

    /// The most visited child is the move that would be played.
    fn view(best: usize, best_visits: u64, second_visits: u64, value: f32) -> RootView {
        RootView { best, best_visits, second_visits, value, chosen: best }
    }

    #[test]
    fn root_view_takes_the_most_visited_then_the_prior() {
        let ch = [(3, 10, 0.1), (5, 40, 0.2), (7, 40, 0.5), (9, 2, 0.9)];
        assert_eq!(RootView::of(&ch, 0.3, None).unwrap(), view(7, 40, 40, 0.3));
        assert_eq!(RootView::of(&ch, 0.3, Some(3)).unwrap(), RootView { chosen: 3, ..view(7, 40, 40, 0.3) });
        assert_eq!(RootView::of(&[(4, 6, 1.0)], 0.0, None).unwrap(), view(4, 6, 0, 0.0));
        assert_eq!(RootView::of(&[], 0.0, None), None);
    }

    #[test]
    fn a_lead_that_cannot_be_caught_stops_before_the_target() {
        let stretch = Stretch { target: MS(400), most: MS(1200) };
        // 100 ms in, 1,000 playouts: 3,000 more by the target.
        let mut w = Watch::new(stretch);
        assert!(w.go_on(MS(100), 1000, &view(1, 900, 100, 0.2)), "a lead of 800 < 3,000 to come");
        // 300 ms in, 3,000 playouts: 1,000 more by the target; a lead of 2,500 cannot be caught.
        assert!(!w.go_on(MS(300), 3000, &view(1, 2700, 200, 0.2)));
        // Before a quarter of the target the search always goes on, however large the lead.
        let mut w = Watch::new(stretch);
        assert!(w.go_on(MS(50), 1000, &view(1, 1000, 0, 0.2)));
        // The same lead, but the move that would be played (by its bound) is another child:
        // the search goes on; once the choice is the most visited again, it stops.
        let mut w = Watch::new(stretch);
        let other = RootView { chosen: 2, ..view(1, 2700, 200, 0.2) };
        assert!(w.go_on(MS(300), 3000, &other));
        assert!(!w.go_on(MS(310), 3100, &view(1, 2800, 200, 0.2)));
    }

    #[test]
    fn an_unsettled_search_runs_past_the_target_up_to_the_most() {
        let stretch = Stretch { target: MS(400), most: MS(1200) };
        // Close: the second has 3/4 of the best's visits.
        let mut w = Watch::new(stretch);
        assert!(w.go_on(MS(400), 4000, &view(1, 2000, 1500, 0.0)));
        assert!(!w.go_on(MS(1200), 12000, &view(1, 6000, 5900, 0.0)), "never past the most");
        // Settled: a clear best since long, the value steady: stop at the target.
        let mut w = Watch::new(stretch);
        assert!(w.go_on(MS(100), 1000, &view(1, 600, 300, 0.1)));
        assert!(w.go_on(MS(200), 2000, &view(1, 1200, 600, 0.1)));
        assert!(!w.go_on(MS(400), 4000, &view(1, 2400, 1000, 0.12)));
        // The best changed in the last quarter of the playouts: go on, until it has held long enough.
        let mut w = Watch::new(stretch);
        assert!(w.go_on(MS(100), 1000, &view(1, 600, 300, 0.1)));
        assert!(w.go_on(MS(390), 3900, &view(2, 1500, 1450, 0.1)), "a lead of 50 < 100 to come");
        assert!(w.go_on(MS(400), 4000, &view(2, 1700, 1100, 0.1)), "best since 3,900 of 4,000");
        assert!(!w.go_on(MS(600), 6000, &view(2, 3000, 1500, 0.1)), "held since 3,900 of 6,000");
        // The value moved by more than VALUE_MOVE since half the target.
        let mut w = Watch::new(stretch);
        assert!(w.go_on(MS(200), 2000, &view(1, 1200, 500, 0.4)));
        assert!(w.go_on(MS(400), 4000, &view(1, 2400, 1000, 0.25)));
        assert!(!w.go_on(MS(500), 5000, &view(1, 3000, 1200, 0.35)), "back within 0.1 of 0.4");
        // The move that would be played is not the most visited: go on past the target, up to
        // the most.
        let mut w = Watch::new(stretch);
        let other = |ms: u64| RootView { chosen: 2, ..view(1, ms * 6, ms * 2, 0.1) };
        assert!(w.go_on(MS(100), 1000, &other(100)));
        assert!(w.go_on(MS(400), 4000, &other(400)), "the choice is not the most visited");
        assert!(!w.go_on(MS(1200), 12000, &other(1200)), "never past the most");
    }

    #[test]
    fn without_room_to_stretch_the_target_is_the_limit() {
        let mut w = Watch::new(Stretch { target: MS(200), most: MS(200) });
        assert!(w.go_on(MS(150), 1500, &view(1, 500, 480, 0.0)));
        assert!(!w.go_on(MS(200), 2000, &view(1, 700, 690, 0.0)));
    }
}
