//! Small statistics used by the reports: W/D/L tallies, Wilson score intervals and the Spearman
//! rank correlation.

use serde::{Deserialize, Serialize};

/// The 97.5% quantile of the standard normal distribution: a two-sided 95% interval is
/// `estimate ± Z95 * standard error`.
pub const Z95: f64 = 1.959_963_984_540_054;

/// Wins, draws and losses from one side's point of view.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Wdl {
    pub wins: u64,
    pub draws: u64,
    pub losses: u64,
}

impl Wdl {
    /// Number of games.
    pub fn games(&self) -> u64 {
        self.wins + self.draws + self.losses
    }
    /// Score in `[0, 1]`: `(wins + draws / 2) / games`; 0.5 when there are no games.
    pub fn score(&self) -> f64 {
        let n = self.games();
        if n == 0 {
            0.5
        } else {
            (self.wins as f64 + 0.5 * self.draws as f64) / n as f64
        }
    }
    /// The same games seen from the other side.
    pub fn flipped(&self) -> Wdl {
        Wdl { wins: self.losses, draws: self.draws, losses: self.wins }
    }
    /// 95% Wilson interval of the score (see [`wilson`]; the draws count as half a success,
    /// which treats a score as a binomial proportion: a slightly conservative approximation,
    /// since draws lower the per-game variance).
    pub fn score_interval(&self) -> (f64, f64) {
        wilson(self.wins as f64 + 0.5 * self.draws as f64, self.games() as f64, Z95)
    }
}

/// Wilson score interval (E. B. Wilson, "Probable inference, the law of succession, and
/// statistical inference", JASA 22, 1927) for `successes` out of `n` trials at normal quantile
/// `z` (use [`Z95`] for 95%). Returns `(low, high)` within `[0, 1]`; `(0, 1)` when `n == 0`.
pub fn wilson(successes: f64, n: f64, z: f64) -> (f64, f64) {
    if n <= 0.0 {
        return (0.0, 1.0);
    }
    let p = (successes / n).clamp(0.0, 1.0);
    let z2 = z * z;
    let denom = 1.0 + z2 / n;
    let centre = (p + z2 / (2.0 * n)) / denom;
    let half = z * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt() / denom;
    ((centre - half).max(0.0), (centre + half).min(1.0))
}

/// Ranks of `values` (1-based), ties getting the average of the ranks they span
/// ("fractional ranking", as Spearman's coefficient requires).
pub fn average_ranks(values: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..values.len()).collect();
    order.sort_by(|&a, &b| values[a].partial_cmp(&values[b]).unwrap_or(std::cmp::Ordering::Equal));
    let mut ranks = vec![0.0; values.len()];
    let mut i = 0;
    while i < order.len() {
        let mut j = i;
        while j + 1 < order.len() && values[order[j + 1]] == values[order[i]] {
            j += 1;
        }
        let avg = (i + j) as f64 / 2.0 + 1.0;
        for &k in &order[i..=j] {
            ranks[k] = avg;
        }
        i = j + 1;
    }
    ranks
}

/// Pearson correlation of two equally long samples; `None` when shorter than 2 or when either
/// sample is constant.
pub fn pearson(a: &[f64], b: &[f64]) -> Option<f64> {
    if a.len() != b.len() || a.len() < 2 {
        return None;
    }
    let n = a.len() as f64;
    let (ma, mb) = (a.iter().sum::<f64>() / n, b.iter().sum::<f64>() / n);
    let (mut sab, mut saa, mut sbb) = (0.0, 0.0, 0.0);
    for (x, y) in a.iter().zip(b) {
        sab += (x - ma) * (y - mb);
        saa += (x - ma) * (x - ma);
        sbb += (y - mb) * (y - mb);
    }
    if saa <= 0.0 || sbb <= 0.0 {
        return None;
    }
    Some(sab / (saa * sbb).sqrt())
}

/// Spearman's rank correlation (C. Spearman, "The proof and measurement of association between
/// two things", Am. J. Psychol. 15, 1904): the Pearson correlation of the average ranks, which
/// handles ties exactly. `None` as for [`pearson`].
pub fn spearman(a: &[f64], b: &[f64]) -> Option<f64> {
    if a.len() != b.len() {
        return None;
    }
    pearson(&average_ranks(a), &average_ranks(b))
}

/// A 95% percentile-bootstrap interval (B. Efron, "Bootstrap methods", Ann. Statist. 7, 1979)
/// of the Spearman correlation between the Black scores of `groups` and `ordinal`, resampling the
/// games: each of `resamples` replicates redraws every group's games with replacement from its
/// own `(black wins, draws, black losses)` and correlates the replicate's scores (wins + draws
/// / 2 over games) with `ordinal`. Replicates whose correlation is undefined (all scores equal)
/// are left out. `None` when the lengths differ, a group has no games, or fewer than half the
/// replicates are defined. Deterministic for a `seed`.
pub fn spearman_bootstrap(
    groups: &[(u64, u64, u64)],
    ordinal: &[f64],
    resamples: usize,
    seed: u64,
) -> Option<(f64, f64)> {
    use rand::{Rng, SeedableRng};
    if groups.len() != ordinal.len() || groups.iter().any(|&(w, d, l)| w + d + l == 0) {
        return None;
    }
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut values = Vec::with_capacity(resamples);
    let mut scores = vec![0.0; groups.len()];
    for _ in 0..resamples {
        for (score, &(w, d, l)) in scores.iter_mut().zip(groups) {
            let n = w + d + l;
            let mut points = 0.0;
            for _ in 0..n {
                let k = rng.gen_range(0..n);
                points += if k < w {
                    1.0
                } else if k < w + d {
                    0.5
                } else {
                    0.0
                };
            }
            *score = points / n as f64;
        }
        if let Some(r) = spearman(&scores, ordinal) {
            values.push(r);
        }
    }
    if values.len() * 2 < resamples.max(1) {
        return None;
    }
    values.sort_by(f64::total_cmp);
    let at = |q: f64| values[((q * (values.len() - 1) as f64).round() as usize).min(values.len() - 1)];
    Some((at(0.025), at(0.975)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bootstrap_interval_holds_the_estimate_and_narrows_with_games() {
        // Black scores 0.2, 0.5, 0.8 against ordinals 0, 1, 2: Spearman +1 on the counts.
        let ord = [0.0, 1.0, 2.0];
        let few = [(2, 0, 8), (5, 0, 5), (8, 0, 2)];
        let many = [(200, 0, 800), (500, 0, 500), (800, 0, 200)];
        let (lo, hi) = spearman_bootstrap(&few, &ord, 400, 7).unwrap();
        assert!(lo <= 1.0 && hi == 1.0 && lo < 0.9, "10 games each leave room: [{lo}, {hi}]");
        assert_eq!(spearman_bootstrap(&many, &ord, 400, 7), Some((1.0, 1.0)), "1000 games each settle it");
        assert_eq!(spearman_bootstrap(&few, &ord, 400, 7), spearman_bootstrap(&few, &ord, 400, 7), "seeded");
        // Equal results everywhere: every replicate can still differ, but a group without games,
        // mismatched lengths and all-undefined replicates give no interval.
        assert_eq!(spearman_bootstrap(&[(1, 0, 0), (0, 0, 0)], &[0.0, 1.0], 100, 1), None);
        assert_eq!(spearman_bootstrap(&few, &ord[..2], 100, 1), None);
        assert_eq!(
            spearman_bootstrap(&[(3, 0, 0), (4, 0, 0)], &[0.0, 1.0], 100, 1),
            None,
            "scores always 1: undefined"
        );
    }

    #[test]
    fn wilson_matches_hand_computation() {
        // 8 of 10 at z = 1.96: centre = (0.8 + 0.19208) / 1.38416 = 0.716738...,
        // half = 1.96 * sqrt(0.016 + 0.009604) / 1.38416 = 0.226581...
        let (lo, hi) = wilson(8.0, 10.0, 1.96);
        assert!((lo - 0.490_157).abs() < 1e-5, "{lo}");
        assert!((hi - 0.943_319).abs() < 1e-5, "{hi}");
        assert_eq!(wilson(0.0, 0.0, Z95), (0.0, 1.0));
        let (lo0, _) = wilson(0.0, 5.0, Z95);
        assert_eq!(lo0, 0.0);
    }

    #[test]
    fn ranks_average_ties() {
        assert_eq!(average_ranks(&[10.0, 20.0, 20.0, 5.0]), vec![2.0, 3.5, 3.5, 1.0]);
    }

    #[test]
    fn spearman_known_values() {
        assert_eq!(spearman(&[1.0, 2.0, 3.0], &[10.0, 20.0, 30.0]), Some(1.0));
        assert_eq!(spearman(&[1.0, 2.0, 3.0], &[3.0, 2.0, 1.0]), Some(-1.0));
        // Classic textbook case without ties: d = (0, -1, 1, 0, 0), rho = 1 - 6*2/(5*24) = 0.9.
        let r = spearman(&[1.0, 2.0, 3.0, 4.0, 5.0], &[1.0, 3.0, 2.0, 4.0, 5.0]).unwrap();
        assert!((r - 0.9).abs() < 1e-12, "{r}");
        assert_eq!(spearman(&[1.0, 1.0], &[1.0, 2.0]), None);
    }

    #[test]
    fn wdl_score() {
        let w = Wdl { wins: 3, draws: 2, losses: 5 };
        assert_eq!(w.games(), 10);
        assert!((w.score() - 0.4).abs() < 1e-12);
        assert_eq!(w.flipped(), Wdl { wins: 5, draws: 2, losses: 3 });
    }
}
