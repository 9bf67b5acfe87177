//! Sequential probability ratio test for gating: is the candidate at least `elo1` stronger, or at
//! most `elo0`?
//!
//! A. Wald, "Sequential tests of statistical hypotheses", Ann. Math. Statist. 16 (1945): keep
//! playing while `ln(β / (1 - α)) < LLR < ln((1 - β) / α)`; accept H1 at the upper bound, H0 at
//! the lower. `α` is the probability of accepting H1 when H0 holds (a false pass), `β` of
//! accepting H0 when H1 holds.
//!
//! The log-likelihood ratio of W/D/L results uses the normal approximation of the generalised
//! SPRT (M. Van den Bergh, "A practical introduction to the GSPRT", 2016, as used by fishtest):
//! with per-game scores `x ∈ {0, ½, 1}`, sample mean `m` and sample variance `v` over `N` games,
//! and the expected scores `s0`, `s1` of the two hypotheses (logistic Elo, see
//! [`crate::ratings::expected_score`]),
//! `LLR = N * (s1 - s0) * (2m - s0 - s1) / (2v)`.

use anyhow::{ensure, Result};
use serde::Serialize;

use crate::ratings::expected_score;
use crate::stats::Wdl;

/// SPRT parameters: H0 `elo <= elo0` against H1 `elo >= elo1`, error rates `alpha`, `beta`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct SprtConfig {
    pub elo0: f64,
    pub elo1: f64,
    pub alpha: f64,
    pub beta: f64,
}

impl std::str::FromStr for SprtConfig {
    type Err = anyhow::Error;
    /// Parses `elo0,elo1,alpha,beta`, e.g. `0,30,0.05,0.05`. Errors name the bad field.
    fn from_str(s: &str) -> Result<SprtConfig> {
        let parts: Vec<&str> = s.split(',').map(str::trim).collect();
        ensure!(
            parts.len() == 4,
            "--sprt '{s}': expected elo0,elo1,alpha,beta (4 numbers), got {} fields",
            parts.len()
        );
        let mut v = [0.0; 4];
        for (i, (p, name)) in parts.iter().zip(["elo0", "elo1", "alpha", "beta"]).enumerate() {
            v[i] = p.parse().map_err(|_| anyhow::anyhow!("--sprt '{s}': {name} '{p}' is not a number"))?;
        }
        let c = SprtConfig { elo0: v[0], elo1: v[1], alpha: v[2], beta: v[3] };
        c.validate()?;
        Ok(c)
    }
}

/// The state of the test.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SprtDecision {
    /// Not enough evidence yet.
    Continue,
    /// H1 accepted: the candidate is at least `elo1` stronger (pass the gate).
    H1,
    /// H0 accepted: the candidate is at most `elo0` stronger (fail the gate).
    H0,
}

/// The test's statistic and bounds after some games.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct SprtStatus {
    pub llr: f64,
    pub lower: f64,
    pub upper: f64,
    pub decision: SprtDecision,
}

impl SprtConfig {
    /// Checks `elo0 < elo1` and `0 < alpha, beta < 1/2`.
    pub fn validate(&self) -> Result<()> {
        ensure!(self.elo0 < self.elo1, "SPRT: elo0 ({}) must be below elo1 ({})", self.elo0, self.elo1);
        for (name, v) in [("alpha", self.alpha), ("beta", self.beta)] {
            ensure!(v > 0.0 && v < 0.5, "SPRT: {name} = {v} must be in (0, 0.5)");
        }
        Ok(())
    }

    /// Wald's bounds `(ln(β / (1 - α)), ln((1 - β) / α))`.
    pub fn bounds(&self) -> (f64, f64) {
        ((self.beta / (1.0 - self.alpha)).ln(), ((1.0 - self.beta) / self.alpha).ln())
    }

    /// The log-likelihood ratio of the candidate's results `r` (module docs); 0 with no games.
    /// The variance is estimated with one virtual win and one virtual loss added (a Laplace
    /// prior): the raw sample variance is 0 whenever every game so far has the same score,
    /// which would let two straight wins decide the test.
    pub fn llr(&self, r: &Wdl) -> f64 {
        let n = r.games() as f64;
        if n == 0.0 {
            return 0.0;
        }
        let m = r.score();
        let m_prior = (r.wins as f64 + 0.5 * r.draws as f64 + 1.0) / (n + 2.0);
        let second_prior = (r.wins as f64 + 0.25 * r.draws as f64 + 1.0) / (n + 2.0);
        let var = second_prior - m_prior * m_prior;
        let (s0, s1) = (expected_score(self.elo0), expected_score(self.elo1));
        n * (s1 - s0) * (2.0 * m - s0 - s1) / (2.0 * var)
    }

    /// The status after results `r` of the candidate.
    pub fn status(&self, r: &Wdl) -> SprtStatus {
        let llr = self.llr(r);
        let (lower, upper) = self.bounds();
        let decision = if llr >= upper {
            SprtDecision::H1
        } else if llr <= lower {
            SprtDecision::H0
        } else {
            SprtDecision::Continue
        };
        SprtStatus { llr, lower, upper, decision }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_validates() {
        let c: SprtConfig = "0, 30, 0.05, 0.1".parse().unwrap();
        assert_eq!(c, SprtConfig { elo0: 0.0, elo1: 30.0, alpha: 0.05, beta: 0.1 });
        assert!("0,30,0.05".parse::<SprtConfig>().unwrap_err().to_string().contains("4 numbers"));
        assert!("0,x,0.05,0.05".parse::<SprtConfig>().unwrap_err().to_string().contains("elo1 'x'"));
        assert!("30,0,0.05,0.05".parse::<SprtConfig>().is_err());
        assert!("0,30,0.7,0.05".parse::<SprtConfig>().is_err());
    }

    #[test]
    fn a_few_straight_wins_do_not_decide() {
        // elo0 = 0, elo1 = 50: s0 = 0.5, s1 = 0.5715. After 2 wins the prior-regularised variance
        // is 3/4 - (3/4)^2 = 0.1875, so LLR = 2 * 0.0715 * (2 - 1.0715) / 0.375 = 0.354, well
        // inside Wald's bounds (+-2.94 for alpha = beta = 0.05).
        let c = SprtConfig { elo0: 0.0, elo1: 50.0, alpha: 0.05, beta: 0.05 };
        let two = Wdl { wins: 2, draws: 0, losses: 0 };
        let llr = c.llr(&two);
        let (s0, s1) = (expected_score(0.0), expected_score(50.0));
        let by_hand = 2.0 * (s1 - s0) * (2.0 - s0 - s1) / (2.0 * 0.1875);
        assert!((llr - by_hand).abs() < 1e-9, "{llr} vs {by_hand}");
        assert!((0.3..0.4).contains(&llr), "{llr}");
        assert_eq!(c.status(&two).decision, SprtDecision::Continue);
        assert_eq!(c.status(&Wdl { wins: 0, draws: 0, losses: 2 }).decision, SprtDecision::Continue);
    }

    #[test]
    fn bounds_and_llr_by_hand() {
        let c = SprtConfig { elo0: 0.0, elo1: 100.0, alpha: 0.05, beta: 0.05 };
        let (lo, hi) = c.bounds();
        assert!((lo - (0.05f64 / 0.95).ln()).abs() < 1e-12 && (hi - 19f64.ln()).abs() < 1e-12);
        // 60 wins, 0 draws, 40 losses: m = 0.6; with the virtual win and loss the variance is
        // v = 61/102 - (61/102)^2 = 0.240388; s0 = 0.5, s1 = 1 / (1 + 10^-0.25) = 0.640065;
        // LLR = 100 * 0.140065 * (1.2 - 1.140065) / (2 * 0.240388) = 1.746091.
        let r = Wdl { wins: 60, draws: 0, losses: 40 };
        assert!((c.llr(&r) - 1.746_091).abs() < 1e-5, "{}", c.llr(&r));
        assert_eq!(c.status(&r).decision, SprtDecision::Continue);
        assert_eq!(c.status(&Wdl { wins: 80, draws: 0, losses: 20 }).decision, SprtDecision::H1);
        assert_eq!(c.status(&Wdl { wins: 35, draws: 10, losses: 55 }).decision, SprtDecision::H0);
        assert_eq!(c.llr(&Wdl::default()), 0.0);
    }
}
