//! The brain's budget for one move, from the manager's `INFO` time and memory limits.
//!
//! Time: `timeout_turn` (0 = as fast as possible), and with a match limit at most
//! `time_left / max(8, empty points / 10)` (renju games here end within 25 moves a side more
//! often than not); [`TURN_SHARE`] of that minus [`TURN_MARGIN`] minus the reserve is the
//! search budget (90% less 10 ms: 170 ms of a 200 ms turn, about what Rapfi spends). With no
//! time information, the brain's default per-move time. The reserve is the largest recent
//! overshoot of a move's answer past its search budget (building the position, answering, a last
//! slow batch), decaying by a quarter per move.
//!
//! Under a match clock the budget is a target, not a limit ([`TimeBudget::plan`],
//! [`crate::clock`]): a settled search stops before it, and an unsettled one may run on to three
//! times the share, but never past a fifth of the time left nor past `timeout_turn` (both with
//! the same share, margin and reserve taken off). With only a turn limit every move may use it
//! all: time saved on one move buys nothing on the next.
//!
//! Nodes: `max_node` (a Yixin-Board extension; 0 or absent: none) caps the playouts per move,
//! so that an engine match can give both sides the same search budget.
//!
//! Memory: `max_memory` caps the playouts so the tree stays under half of it (40 bytes per child
//! node: the search's `NODE_BYTES` = 32 plus a quarter for the node arena's spare capacity); the
//! other half holds the previous move's arena, which the search keeps to build the next tree in.

use std::time::Duration;

use crate::agent::SearchLimit;
use crate::clock::Stretch;

/// The share of a move's time (turn limit, or its share of the match clock) the search may plan
/// on: the rest, with [`TURN_MARGIN`] and the learnt reserve, covers the answer's other work.
pub const TURN_SHARE: f64 = 0.9;
/// Taken off every move's search budget besides [`TURN_SHARE`] and the reserve.
pub const TURN_MARGIN: Duration = Duration::from_millis(10);

/// The manager's limits (`INFO timeout_turn`, `timeout_match`, `time_left` in ms, `max_memory`
/// in bytes, `max_node` in playouts; `None` until sent) and the reserve learnt from past moves.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TimeBudget {
    pub timeout_turn: Option<u64>,
    pub timeout_match: Option<u64>,
    pub time_left: Option<u64>,
    pub max_memory: Option<u64>,
    pub max_node: Option<u64>,
    /// Time reserved per move for what the search budget does not cover (module docs).
    reserve: Duration,
}

impl TimeBudget {
    /// The search limit for a move with `empty` empty points (module docs): `default_turn` when
    /// the manager sent no time limit, playouts at most `max_playouts`, `max_node` and the
    /// memory cap.
    pub fn limit(&self, empty: usize, default_turn: Duration, max_playouts: Option<u64>) -> SearchLimit {
        self.plan(empty, default_turn, max_playouts).0
    }

    /// [`TimeBudget::limit`] and, under a match clock, the time plan of the move (module docs):
    /// the limit's time as its target, and the most the move may take.
    pub fn plan(
        &self,
        empty: usize,
        default_turn: Duration,
        max_playouts: Option<u64>,
    ) -> (SearchLimit, Option<Stretch>) {
        let turn = self.timeout_turn.filter(|&t| t > 0);
        let usable = |ms: u64| Duration::from_millis(ms).mul_f64(TURN_SHARE).saturating_sub(TURN_MARGIN + self.reserve);
        let mut budget: Option<u64> = self.timeout_turn;
        let mut stretch = None;
        if self.timeout_match.is_some_and(|m| m > 0) {
            if let Some(left) = self.time_left {
                let share = left / (empty as u64 / 10).max(8);
                budget = Some(turn.map_or(share, |t| t.min(share)));
                let most = (share * 3).min(left / 5);
                let most = turn.map_or(most, |t| t.min(most));
                let target = usable(budget.unwrap_or(share));
                stretch = Some(Stretch { target, most: usable(most).max(target) });
            }
        }
        let time = match budget {
            Some(ms) => usable(ms),
            None => default_turn,
        };
        let mut playouts = max_playouts;
        if let Some(n) = self.max_node.filter(|&n| n > 0) {
            playouts = Some(playouts.map_or(n, |p| p.min(n)));
        }
        if let Some(mem) = self.max_memory.filter(|&m| m > 0) {
            let node_bytes = (renju_selfplay::mcts::NODE_BYTES * 5 / 4) as u64;
            let cap = (mem / 2 / (node_bytes * empty.max(1) as u64)).max(1);
            playouts = Some(playouts.map_or(cap, |p| p.min(cap)));
        }
        (SearchLimit { playouts, time: Some(time) }, stretch)
    }

    /// Learns from one answer: it took `elapsed` against a search budget of `budget`; whatever
    /// it took beyond that is overhead to reserve on later moves.
    pub fn record_answer(&mut self, elapsed: Duration, budget: Duration) {
        let over = elapsed.saturating_sub(budget);
        self.reserve = (self.reserve * 3 / 4).max(over);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limit_from_turn_match_and_memory() {
        let t = TimeBudget {
            timeout_turn: Some(1000),
            timeout_match: Some(100_000),
            time_left: Some(8_000),
            max_memory: Some(8_000_000),
            ..TimeBudget::default()
        };
        let l = t.limit(200, Duration::from_secs(5), None);
        // min(1000, 8000 / max(8, 20)) = 400 ms -> 0.9 * 400 - 10 = 350 ms.
        assert_eq!(l.time, Some(Duration::from_millis(350)));
        // 8e6 / 2 / (40 * 200) = 500 playouts.
        assert_eq!(l.playouts, Some(500));
        // A smaller playout cap of the brain wins over the memory cap.
        assert_eq!(t.limit(200, Duration::from_secs(5), Some(100)).playouts, Some(100));
        // The manager's node budget caps the playouts too; 0 means none.
        let nodes = |n| TimeBudget { max_node: Some(n), ..t.clone() };
        assert_eq!(nodes(300).limit(200, Duration::from_secs(5), None).playouts, Some(300));
        assert_eq!(nodes(300).limit(200, Duration::from_secs(5), Some(100)).playouts, Some(100));
        assert_eq!(nodes(0).limit(200, Duration::from_secs(5), None).playouts, Some(500));
    }

    #[test]
    fn a_match_clock_gives_a_target_and_a_most() {
        let t = TimeBudget { timeout_match: Some(10_000), time_left: Some(8_000), ..TimeBudget::default() };
        let (l, s) = t.plan(200, Duration::from_secs(5), None);
        // share = 8000 / 20 = 400 ms -> target 0.9 * 400 - 10 = 350 ms; most = min(1200, 1600)
        // = 1200 ms -> 0.9 * 1200 - 10 = 1070 ms.
        assert_eq!(l.time, Some(Duration::from_millis(350)));
        assert_eq!(s, Some(Stretch { target: Duration::from_millis(350), most: Duration::from_millis(1070) }));
        // Little time left: never more than a fifth of it.
        // (40 empty points: share = 1600 / 8 = 200 ms, three times that is 600 > 1600 / 5 = 320;
        // 0.9 * 200 - 10 = 170 ms, 0.9 * 320 - 10 = 278 ms.)
        let low = TimeBudget { time_left: Some(1_600), ..t.clone() };
        let (_, s) = low.plan(40, Duration::from_secs(5), None);
        assert_eq!(s, Some(Stretch { target: Duration::from_millis(170), most: Duration::from_millis(278) }));
        // A turn limit caps the most: 1000 ms -> 890 ms.
        let turn = TimeBudget { timeout_turn: Some(1000), ..t.clone() };
        let (_, s) = turn.plan(200, Duration::from_secs(5), None);
        assert_eq!(s, Some(Stretch { target: Duration::from_millis(350), most: Duration::from_millis(890) }));
        // A turn limit alone, or a match limit of 0 (none): no plan, the turn is the budget.
        let only_turn = TimeBudget { timeout_turn: Some(200), timeout_match: Some(0), ..TimeBudget::default() };
        assert_eq!(only_turn.plan(200, Duration::from_secs(5), None).1, None);
        assert_eq!(TimeBudget::default().plan(200, Duration::from_secs(5), None).1, None);
    }

    #[test]
    fn no_time_information_uses_the_default_turn() {
        let l = TimeBudget::default().limit(225, Duration::from_secs(5), Some(7));
        assert_eq!(l, SearchLimit { playouts: Some(7), time: Some(Duration::from_secs(5)) });
    }

    #[test]
    fn overshoot_is_reserved_and_decays() {
        let mut t = TimeBudget { timeout_turn: Some(400), ..TimeBudget::default() };
        let limit = |t: &TimeBudget| t.limit(100, Duration::ZERO, None).time.unwrap();
        assert_eq!(limit(&t), Duration::from_millis(350)); // 0.9 * 400 - 10
        t.record_answer(Duration::from_millis(430), Duration::from_millis(350));
        assert_eq!(limit(&t), Duration::from_millis(270), "80 ms overshoot reserved");
        t.record_answer(Duration::from_millis(200), Duration::from_millis(270));
        assert_eq!(limit(&t), Duration::from_millis(290), "no overshoot: the reserve decays to 60 ms");
    }
}
