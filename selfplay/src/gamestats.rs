//! Statistics of finished self-play games, tallied from their [`GameMeta`] (so the trainer can
//! compute them from the shards whoever wrote them): game length, Black's score, the swap rate
//! and the offer counts chosen under the opening protocol (RULES.md §5), resignations and the
//! false-resignation rate of the calibration games (AlphaZero / KataGo resignation check).

use crate::record::{EndReason, GameMeta};
use renju_rules::Action;
use std::collections::BTreeMap;

/// Tallies over a set of games (add them with [`GameStats::add`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GameStats {
    pub games: u64,
    /// Decisions over all games (stones, swaps, offers, picks...).
    pub decisions: u64,
    /// Black's wins, draws and losses (by the colour held at the end of the game).
    pub black_wins: u64,
    pub black_draws: u64,
    pub black_losses: u64,
    /// `Keep` or `Swap` decisions taken (swap offers answered; Lianhuan's take / exchange too).
    pub swap_decisions: u64,
    /// Of those, `Swap`.
    pub swaps: u64,
    /// `ChooseN(n)` decisions by `n` (fifth-move offers declared).
    pub offers_chosen: BTreeMap<u8, u64>,
    /// Games ended by resignation.
    pub resignations: u64,
    /// Games played with resignation disabled (calibration games).
    pub calibration_games: u64,
    /// Calibration games in which a player crossed the resignation threshold.
    pub would_resign: u64,
    /// Of those, games the would-be resigner did not lose (false resignations).
    pub false_resignations: u64,
    /// Recorded positions whose value target is a proven result (`selfplay.proven_value_nodes`).
    pub proven_positions: u64,
    /// Of those, positions whose proven result differs from the game's result.
    pub proven_overruled: u64,
}

impl GameStats {
    /// Tallies `games`.
    pub fn of<'a>(games: impl IntoIterator<Item = &'a GameMeta>) -> GameStats {
        let mut s = GameStats::default();
        for g in games {
            s.add(g);
        }
        s
    }

    /// Adds one game.
    pub fn add(&mut self, g: &GameMeta) {
        self.games += 1;
        self.decisions += g.decisions.len() as u64;
        match g.result.winner {
            None => self.black_draws += 1,
            Some(w) if w == g.result.black_player => self.black_wins += 1,
            Some(_) => self.black_losses += 1,
        }
        for (_, a) in &g.decisions {
            match a {
                Action::Keep => self.swap_decisions += 1,
                Action::Swap => {
                    self.swap_decisions += 1;
                    self.swaps += 1;
                }
                Action::ChooseN(n) => *self.offers_chosen.entry(*n).or_insert(0) += 1,
                _ => {}
            }
        }
        self.proven_positions += u64::from(g.proven_positions);
        self.proven_overruled += u64::from(g.proven_overruled);
        if g.result.reason == EndReason::Resignation {
            self.resignations += 1;
        }
        if g.resign_disabled {
            self.calibration_games += 1;
            // Shards written before `would_resign` existed only know the false resignations.
            if g.would_resign || g.false_resignation {
                self.would_resign += 1;
            }
            if g.false_resignation {
                self.false_resignations += 1;
            }
        }
    }

    /// Mean decisions per game (`None` without games).
    pub fn mean_length(&self) -> Option<f64> {
        (self.games > 0).then(|| self.decisions as f64 / self.games as f64)
    }

    /// Black's score `(wins + draws / 2) / games` (`None` without games).
    pub fn black_score(&self) -> Option<f64> {
        (self.games > 0).then(|| (self.black_wins as f64 + 0.5 * self.black_draws as f64) / self.games as f64)
    }

    /// Fraction of the swap decisions that swapped (`None` when there were none).
    pub fn swap_rate(&self) -> Option<f64> {
        (self.swap_decisions > 0).then(|| self.swaps as f64 / self.swap_decisions as f64)
    }

    /// Mean number of offers declared by `ChooseN` (`None` when never declared).
    pub fn mean_offers(&self) -> Option<f64> {
        let n: u64 = self.offers_chosen.values().sum();
        (n > 0).then(|| self.offers_chosen.iter().map(|(k, v)| *k as f64 * *v as f64).sum::<f64>() / n as f64)
    }

    /// Fraction of the games that ended by resignation.
    pub fn resignation_rate(&self) -> Option<f64> {
        (self.games > 0).then(|| self.resignations as f64 / self.games as f64)
    }

    /// False resignations among the calibration games in which someone would have resigned
    /// (`None` when no such game).
    pub fn false_resignation_rate(&self) -> Option<f64> {
        (self.would_resign > 0).then(|| self.false_resignations as f64 / self.would_resign as f64)
    }

    /// One line for logs: `games 16 | mean length 41.2 | Black 0.531 | swap 0.40 of 25 | offers
    /// {2: 5, 3: 1} | resigned 4 | false resignations 1 of 2`, and `| proven values 7 (2 differ
    /// from the result)` when there were any.
    pub fn summary(&self) -> String {
        let f = |x: Option<f64>, d: usize| x.map_or("-".to_string(), |v| format!("{v:.d$}"));
        let offers = if self.offers_chosen.is_empty() {
            "-".to_string()
        } else {
            self.offers_chosen.iter().map(|(k, v)| format!("{k}:{v}")).collect::<Vec<_>>().join(" ")
        };
        format!(
            "games {} | mean length {} decisions | Black score {} | swap rate {} of {} | offers chosen {offers} | resigned {} | false resignations {} of {}",
            self.games,
            f(self.mean_length(), 1),
            f(self.black_score(), 3),
            f(self.swap_rate(), 2),
            self.swap_decisions,
            self.resignations,
            self.false_resignations,
            self.would_resign
        ) + &if self.proven_positions > 0 {
            format!(" | proven values {} ({} differ from the result)", self.proven_positions, self.proven_overruled)
        } else {
            String::new()
        }
    }

    /// The scalars for TensorBoard as `(tag, value)`: `selfplay/games`, `selfplay/mean_length`,
    /// `selfplay/black_score`, `selfplay/swap_rate`, `selfplay/mean_offers`,
    /// `selfplay/resignation_rate`, `selfplay/false_resignation_rate` (undefined ones left out).
    pub fn scalars(&self) -> Vec<(&'static str, f64)> {
        let mut v = vec![("selfplay/games", self.games as f64)];
        for (tag, x) in [
            ("selfplay/mean_length", self.mean_length()),
            ("selfplay/black_score", self.black_score()),
            ("selfplay/swap_rate", self.swap_rate()),
            ("selfplay/mean_offers", self.mean_offers()),
            ("selfplay/resignation_rate", self.resignation_rate()),
            ("selfplay/false_resignation_rate", self.false_resignation_rate()),
        ] {
            if let Some(x) = x {
                v.push((tag, x));
            }
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::GameResult;
    use renju_rules::Player;

    fn game(decisions: Vec<(Player, Action)>, winner: Option<Player>, black: Player, reason: EndReason) -> GameMeta {
        GameMeta {
            opening: None,
            decisions,
            result: GameResult { winner, reason, black_player: black },
            resign_disabled: false,
            false_resignation: false,
            would_resign: false,
            proven_positions: 0,
            proven_overruled: 0,
            generation_first: 0,
            generation_last: 0,
        }
    }

    #[test]
    fn tallies_colours_swaps_offers_and_resignations() {
        use Player::*;
        let p = |i| Action::Place(renju_rules::Point::from_index(i, 15));
        let a = game(vec![(First, p(0)), (Second, Action::Swap), (First, p(1))], Some(First), Second, EndReason::Five);
        let b = game(
            vec![(First, p(0)), (Second, Action::Keep), (Second, Action::ChooseN(2))],
            Some(First),
            First,
            EndReason::Resignation,
        );
        let mut c = game(vec![(First, Action::Keep), (Second, Action::ChooseN(4))], None, First, EndReason::StoneCap);
        c.resign_disabled = true;
        c.would_resign = true;
        c.false_resignation = true;
        let mut d = game(vec![(First, p(3))], Some(Second), First, EndReason::Five);
        d.resign_disabled = true;
        d.proven_positions = 3;
        d.proven_overruled = 1;
        let s = GameStats::of([&a, &b, &c, &d]);
        assert_eq!(s.games, 4);
        assert_eq!(s.mean_length(), Some(9.0 / 4.0));
        // Black: a lost (First won holding White), b won, c drew, d lost -> (1 + 0.5) / 4.
        assert_eq!((s.black_wins, s.black_draws, s.black_losses), (1, 1, 2));
        assert_eq!(s.black_score(), Some(0.375));
        assert_eq!(s.swap_rate(), Some(1.0 / 3.0));
        assert_eq!(s.mean_offers(), Some(3.0));
        assert_eq!(s.resignations, 1);
        assert_eq!((s.calibration_games, s.would_resign, s.false_resignations), (2, 1, 1));
        assert_eq!(s.false_resignation_rate(), Some(1.0));
        assert!(s.summary().contains("offers chosen 2:1 4:1"), "{}", s.summary());
        assert!(s.summary().ends_with("| proven values 3 (1 differ from the result)"), "{}", s.summary());
        assert!(!GameStats::of([&a]).summary().contains("proven"));
        assert_eq!(GameStats::default().scalars(), vec![("selfplay/games", 0.0)]);
    }
}
