//! Ratings from game results: a Bradley–Terry maximum-likelihood fit on the Elo scale.
//!
//! # Model
//! Bradley and Terry (Biometrika 39, 1952): player `i` has strength `θ_i` and scores against
//! `j` with probability `p_ij = 1 / (1 + exp(-(θ_i - θ_j)))`. Ratings are reported on the Elo
//! scale, `elo_i = θ_i * 400 / ln 10`, so 100 Elo ≈ a 64% expected score.
//!
//! **Draws** count as half a win for each side (Elo's convention, as in
//! `Wdl::score`): the likelihood uses `s_ij = wins_ij + draws_ij / 2` successes out of
//! `n_ij` games. This keeps the expected score exact and needs no extra parameter. BayesElo
//! (R. Coulom, 2005) instead fits a draw parameter (`drawelo`, a Rao–Kupper-style model); that
//! changes the spread of the ratings only slightly when draws are rare, as they are in renju, so
//! we prefer the parameter-free choice.
//!
//! **Prior** (BayesElo-style, optional): `prior_draws` virtual draws are added between every
//! pair of players that met. It keeps the fit finite when one player won every game; 0 gives the
//! plain maximum-likelihood estimate.
//!
//! # Fit and intervals
//! Newton's method on the log-likelihood with `θ_0 = 0` fixed (the likelihood only sees
//! differences), then shifted so the ratings average 0. The 95% intervals are
//! `± 1.96` standard errors from the inverse of the observed Fisher information (the negative
//! Hessian), transformed with the same centring; they are intervals for each rating relative
//! to the mean of all players.

use anyhow::{bail, ensure, Result};
use serde::Serialize;

use crate::stats::{Wdl, Z95};

/// Elo points per unit of `θ`: `400 / ln 10`.
pub const ELO_PER_NAT: f64 = 400.0 / std::f64::consts::LN_10;

/// Head-to-head results: `results[i][j]` is player `i`'s W/D/L against `j` (the matrix must be
/// consistent: `results[j][i] == results[i][j].flipped()`).
#[derive(Clone, Debug, PartialEq)]
pub struct ResultMatrix {
    pub names: Vec<String>,
    pub results: Vec<Vec<Wdl>>,
}

impl ResultMatrix {
    /// An empty matrix for these players.
    pub fn new(names: Vec<String>) -> ResultMatrix {
        let k = names.len();
        ResultMatrix { names, results: vec![vec![Wdl::default(); k]; k] }
    }
    /// Record one game between `i` and `j`: `score_i` is 1 (i won), 0.5 (draw) or 0 (j won).
    ///
    /// # Panics
    /// When `i == j`, an index is out of range, or the score is not 0, 0.5 or 1.
    pub fn add(&mut self, i: usize, j: usize, score_i: f64) {
        assert!(i != j, "a player cannot play itself");
        let (a, b) = match score_i {
            1.0 => (Wdl { wins: 1, draws: 0, losses: 0 }, Wdl { wins: 0, draws: 0, losses: 1 }),
            0.5 => (Wdl { wins: 0, draws: 1, losses: 0 }, Wdl { wins: 0, draws: 1, losses: 0 }),
            0.0 => (Wdl { wins: 0, draws: 0, losses: 1 }, Wdl { wins: 1, draws: 0, losses: 0 }),
            s => panic!("score {s} is not 0, 0.5 or 1"),
        };
        let r = &mut self.results[i][j];
        r.wins += a.wins;
        r.draws += a.draws;
        r.losses += a.losses;
        let r = &mut self.results[j][i];
        r.wins += b.wins;
        r.draws += b.draws;
        r.losses += b.losses;
    }
    /// A player's results against everyone.
    pub fn total(&self, i: usize) -> Wdl {
        self.results[i].iter().fold(Wdl::default(), |a, r| Wdl {
            wins: a.wins + r.wins,
            draws: a.draws + r.draws,
            losses: a.losses + r.losses,
        })
    }
}

/// One row of the ratings table.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Rating {
    pub name: String,
    /// Rating in Elo, relative to the mean of all players (the mean is 0).
    pub elo: f64,
    /// Lower and upper end of the 95% interval (Elo).
    pub low: f64,
    pub high: f64,
    /// Standard error (Elo).
    pub stderr: f64,
    pub games: u64,
    /// The player's score over all its games (draws half).
    pub score: f64,
}

/// Fit options.
#[derive(Clone, Debug, PartialEq)]
pub struct FitOptions {
    /// Virtual draws added to every pair of players that met (BayesElo-style prior); 0 = pure
    /// maximum likelihood. Default 2 (BayesElo's default prior strength).
    pub prior_draws: f64,
    /// Newton iterations at most. Default 100.
    pub max_iter: usize,
}

impl Default for FitOptions {
    fn default() -> Self {
        FitOptions { prior_draws: 2.0, max_iter: 100 }
    }
}

/// Fits the ratings (module docs). Errors: fewer than 2 players, players not connected by games
/// (their relative strength is unknown), or no finite maximum (with `prior_draws == 0`, a
/// player who won or lost all games); the message names the player.
pub fn fit(m: &ResultMatrix, opts: &FitOptions) -> Result<Vec<Rating>> {
    let k = m.names.len();
    ensure!(k >= 2, "ratings need at least 2 players (got {k})");
    ensure!(m.results.len() == k && m.results.iter().all(|r| r.len() == k), "result matrix is not {k}x{k}");
    // Successes and trials per ordered pair, with the prior.
    let mut s = vec![vec![0.0; k]; k];
    let mut n = vec![vec![0.0; k]; k];
    for i in 0..k {
        for j in 0..k {
            if i == j {
                continue;
            }
            let r = m.results[i][j];
            let g = r.games() as f64;
            if g > 0.0 {
                s[i][j] = r.wins as f64 + 0.5 * r.draws as f64 + 0.5 * opts.prior_draws;
                n[i][j] = g + opts.prior_draws;
            }
        }
    }
    // Connectivity (by games played).
    let mut seen = vec![false; k];
    let mut stack = vec![0];
    seen[0] = true;
    while let Some(i) = stack.pop() {
        for j in 0..k {
            if !seen[j] && n[i][j] > 0.0 {
                seen[j] = true;
                stack.push(j);
            }
        }
    }
    if let Some(j) = seen.iter().position(|&v| !v) {
        bail!(
            "player '{}' is not connected to '{}' by games: their ratings cannot be compared",
            m.names[j],
            m.names[0]
        );
    }
    for i in 0..k {
        let (si, ni): (f64, f64) = (s[i].iter().sum(), n[i].iter().sum());
        if si <= 0.0 || si >= ni {
            bail!(
                "no finite maximum-likelihood rating: '{}' won or lost every game (use a prior, e.g. prior_draws = 2)",
                m.names[i]
            );
        }
    }
    let mut theta = vec![0.0; k];
    let mut converged = false;
    for _ in 0..opts.max_iter {
        let (g, info) = gradient_information(&theta, &s, &n);
        // Reduced system without player 0 (anchored at 0).
        let gr: Vec<f64> = g[1..].to_vec();
        let ir: Vec<Vec<f64>> = info[1..].iter().map(|row| row[1..].to_vec()).collect();
        let Some(inv) = invert(&ir) else {
            bail!("the Fisher information is singular: the results do not determine the ratings");
        };
        let mut max_step: f64 = 0.0;
        let mut step = vec![0.0; k - 1];
        for a in 0..k - 1 {
            step[a] = (0..k - 1).map(|b| inv[a][b] * gr[b]).sum();
            max_step = max_step.max(step[a].abs());
        }
        // Damp large steps (the log-likelihood is concave, Newton may overshoot far out).
        let scale = if max_step > 2.0 { 2.0 / max_step } else { 1.0 };
        for a in 0..k - 1 {
            theta[a + 1] += scale * step[a];
        }
        if let Some(i) = theta.iter().position(|t| t.abs() > 40.0) {
            bail!(
                "no finite maximum-likelihood rating: '{}' won or lost every game (use a prior, e.g. prior_draws = 2)",
                m.names[i]
            );
        }
        if max_step < 1e-10 {
            converged = true;
            break;
        }
    }
    ensure!(converged, "the ratings fit did not converge in {} iterations", opts.max_iter);
    let (_, info) = gradient_information(&theta, &s, &n);
    let ir: Vec<Vec<f64>> = info[1..].iter().map(|row| row[1..].to_vec()).collect();
    let inv = invert(&ir).ok_or_else(|| anyhow::anyhow!("the Fisher information is singular at the optimum"))?;
    // Full covariance with the anchor row/column zero, then centre: A = I - 11^T / k.
    let mut cov = vec![vec![0.0; k]; k];
    for a in 1..k {
        for b in 1..k {
            cov[a][b] = inv[a - 1][b - 1];
        }
    }
    let mean = theta.iter().sum::<f64>() / k as f64;
    let row_mean: Vec<f64> = (0..k).map(|a| cov[a].iter().sum::<f64>() / k as f64).collect();
    let all_mean = row_mean.iter().sum::<f64>() / k as f64;
    Ok((0..k)
        .map(|i| {
            // (A cov A^T)_ii = cov_ii - 2 * mean_j cov_ij + mean_jl cov_jl.
            let var = (cov[i][i] - 2.0 * row_mean[i] + all_mean).max(0.0);
            let elo = (theta[i] - mean) * ELO_PER_NAT;
            let se = var.sqrt() * ELO_PER_NAT;
            let t = m.total(i);
            Rating {
                name: m.names[i].clone(),
                elo,
                low: elo - Z95 * se,
                high: elo + Z95 * se,
                stderr: se,
                games: t.games(),
                score: t.score(),
            }
        })
        .collect())
}

/// Gradient of the log-likelihood and the Fisher information matrix (negative Hessian).
fn gradient_information(theta: &[f64], s: &[Vec<f64>], n: &[Vec<f64>]) -> (Vec<f64>, Vec<Vec<f64>>) {
    let k = theta.len();
    let mut g = vec![0.0; k];
    let mut info = vec![vec![0.0; k]; k];
    for i in 0..k {
        for j in 0..k {
            if i == j || n[i][j] == 0.0 {
                continue;
            }
            let p = 1.0 / (1.0 + (-(theta[i] - theta[j])).exp());
            g[i] += s[i][j] - n[i][j] * p;
            let w = n[i][j] * p * (1.0 - p);
            info[i][i] += w;
            info[i][j] -= w;
        }
    }
    (g, info)
}

/// Inverse of a small square matrix by Gauss–Jordan elimination with partial pivoting; `None`
/// when (numerically) singular.
// Gauss-Jordan elimination reads row `c` while writing row `r`: index loops are clearer here.
#[allow(clippy::needless_range_loop)]
fn invert(a: &[Vec<f64>]) -> Option<Vec<Vec<f64>>> {
    let k = a.len();
    let mut m: Vec<Vec<f64>> = a
        .iter()
        .enumerate()
        .map(|(i, row)| {
            let mut r = row.clone();
            r.extend((0..k).map(|j| if i == j { 1.0 } else { 0.0 }));
            r
        })
        .collect();
    for c in 0..k {
        let piv = (c..k).max_by(|&x, &y| m[x][c].abs().partial_cmp(&m[y][c].abs()).unwrap())?;
        if m[piv][c].abs() < 1e-12 {
            return None;
        }
        m.swap(c, piv);
        let d = m[c][c];
        for v in m[c].iter_mut() {
            *v /= d;
        }
        for r in 0..k {
            if r != c {
                let f = m[r][c];
                if f != 0.0 {
                    for j in 0..2 * k {
                        m[r][j] -= f * m[c][j];
                    }
                }
            }
        }
    }
    Some(m.into_iter().map(|r| r[k..].to_vec()).collect())
}

/// Expected score of a player rated `elo_diff` Elo above its opponent (the logistic model above).
pub fn expected_score(elo_diff: f64) -> f64 {
    1.0 / (1.0 + 10f64.powf(-elo_diff / 400.0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn two_players_closed_form() {
        // A beats B 30 times in 40 games. Maximum likelihood: p = 0.75, so the difference is
        // 400 * log10(3) = 190.848 Elo, each side ±95.424 from the mean. The variance of
        // θ_A - θ_B is 1 / (n p (1 - p)) = 1 / 7.5, so each centred rating has standard error
        // sqrt(1/7.5) / 2 nats = 0.182574 * 173.7178 = 31.716 Elo.
        let mut m = ResultMatrix::new(vec!["A".into(), "B".into()]);
        for g in 0..40 {
            m.add(0, 1, if g < 30 { 1.0 } else { 0.0 });
        }
        let r = fit(&m, &FitOptions { prior_draws: 0.0, ..Default::default() }).unwrap();
        assert!((r[0].elo - 95.424).abs() < 1e-3, "{:?}", r);
        assert!((r[1].elo + 95.424).abs() < 1e-3);
        assert!((r[0].stderr - 31.716).abs() < 1e-2, "{}", r[0].stderr);
        assert!((r[0].high - r[0].elo - 1.959964 * r[0].stderr).abs() < 1e-4);
        assert_eq!(r[0].games, 40);
        assert!((r[0].score - 0.75).abs() < 1e-12);
    }

    #[test]
    fn draws_count_half() {
        // 10 wins, 20 draws, 10 losses: score 0.5, equal ratings.
        let mut m = ResultMatrix::new(vec!["A".into(), "B".into()]);
        for g in 0..40 {
            m.add(0, 1, [1.0, 0.5, 0.5, 0.0][g % 4]);
        }
        let r = fit(&m, &FitOptions { prior_draws: 0.0, ..Default::default() }).unwrap();
        assert!(r[0].elo.abs() < 1e-9 && r[1].elo.abs() < 1e-9);
    }

    #[test]
    fn recovers_known_elo_from_synthetic_games() {
        // Four players at 0, 100, 200, 400 Elo, every pair 3000 games (fixed seed). Draw
        // probability 0.6 * min(p, 1 - p) keeps the expected score p. Each difference has a
        // standard error below 8 Elo here, so 25 Elo is more than 3 standard errors.
        let truth = [0.0, 100.0, 200.0, 400.0];
        let names: Vec<String> = (0..4).map(|i| format!("P{i}")).collect();
        let mut m = ResultMatrix::new(names);
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        for i in 0..4 {
            for j in i + 1..4 {
                let p = expected_score(truth[i] - truth[j]);
                let d = 0.6 * p.min(1.0 - p);
                for _ in 0..3000 {
                    let u: f64 = rng.gen();
                    let s = if u < p - d / 2.0 {
                        1.0
                    } else if u < p + d / 2.0 {
                        0.5
                    } else {
                        0.0
                    };
                    m.add(i, j, s);
                }
            }
        }
        let r = fit(&m, &FitOptions { prior_draws: 0.0, ..Default::default() }).unwrap();
        let mean_truth = truth.iter().sum::<f64>() / 4.0;
        for i in 0..4 {
            let want = truth[i] - mean_truth;
            assert!((r[i].elo - want).abs() < 25.0, "player {i}: {} vs {want}", r[i].elo);
            assert!(r[i].stderr > 1.0 && r[i].stderr < 10.0, "stderr {}", r[i].stderr);
        }
        for i in 0..3 {
            let d = r[i + 1].elo - r[i].elo;
            let want = truth[i + 1] - truth[i];
            assert!((d - want).abs() < 25.0, "difference {i}: {d} vs {want}");
        }
    }

    #[test]
    fn errors_name_the_problem() {
        let mut m = ResultMatrix::new(vec!["A".into(), "B".into(), "C".into()]);
        m.add(0, 1, 1.0);
        m.add(0, 1, 0.0);
        let e = fit(&m, &FitOptions::default()).unwrap_err().to_string();
        assert!(e.contains("'C' is not connected"), "{e}");
        let mut m = ResultMatrix::new(vec!["A".into(), "B".into()]);
        m.add(0, 1, 1.0);
        let e = fit(&m, &FitOptions { prior_draws: 0.0, ..Default::default() }).unwrap_err().to_string();
        assert!(e.contains("won or lost every game"), "{e}");
        // With the prior the same data gives a finite, positive rating difference.
        let r = fit(&m, &FitOptions::default()).unwrap();
        assert!(r[0].elo > 0.0 && r[0].elo.is_finite());
        assert!(fit(&ResultMatrix::new(vec!["A".into()]), &FitOptions::default()).is_err());
    }
}
