//! Gumbel root search: I. Danihelka, A. Guez, J. Schrittwieser, D. Silver, "Policy improvement by
//! planning with Gumbel", ICLR 2022 (the "Gumbel MuZero" root; below the root the tree search is
//! PUCT as in [`crate::mcts`]; the tree runs this procedure at its root).
//!
//! At the root of a move's search with a budget of `n` simulations:
//! 1. **Gumbel-top-k**: draw `g(a) ~ Gumbel(0, 1)` for every legal action and consider the `m =
//!    min(legal actions, considered)` actions of largest `g(a) + logits(a)` (`logits = ln prior`).
//! 2. **Sequential halving** over `ceil(log2 m)` phases: in a phase with `r` actions left each
//!    gets `max(1, floor(n / (phases * r)))` simulations (the last phase gets whatever is left, and
//!    no phase goes past the budget, so exactly `n` are spent); then the better half by
//!    `g + logits + sigma(completed Q)` stays.
//! 3. **The move** is the remaining action of largest `g + logits + sigma(completed Q)` (with
//!    `g = 0` when the search runs without Gumbel noise, as in evaluation).
//! 4. **The policy target** is `softmax(logits + sigma(completed Q))` over every legal action.
//!
//! `sigma(q) = (c_visit + max_b N(b)) * c_scale * (q + 1) / 2` (the paper's monotone transform;
//! values here are win - loss in `[-1, 1]`, mapped to `[0, 1]`). The completed Q of a visited
//! action is its mean value; an unvisited action gets the mixed value (the paper's eq. 33)
//! `v_mix = (v + (sum_b N(b)) / (sum_{b visited} pi(b)) * sum_{b visited} pi(b) q(b)) / (1 + sum_b N(b))`
//! with `v` the network's value of the root and `pi` the prior. Defaults are the paper's: `m <= 16`,
//! `c_visit = 50`, `c_scale = 1`.

use crate::eval::softmax;
use rand::Rng;
use std::collections::VecDeque;

/// The constants of the Gumbel root (module docs).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GumbelParams {
    /// Most actions considered at the root (`m`). Paper: 16.
    pub considered: usize,
    /// `c_visit` of sigma. Paper: 50.
    pub c_visit: f32,
    /// `c_scale` of sigma. Paper: 1.
    pub c_scale: f32,
}

/// A root child as the Gumbel procedure sees it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RootChild {
    /// Caller's key (the search uses the child's node index).
    pub key: u32,
    /// Prior probability (softmax of the policy logits over the legal actions).
    pub prior: f32,
    pub visits: u32,
    /// Mean value from the root decider's view, win - loss in `[-1, 1]` (ignored when unvisited).
    pub q: f32,
}

/// `ln prior`, finite for a zero prior.
fn logit(prior: f32) -> f32 {
    prior.max(1e-30).ln()
}

/// `sigma(q)` for a root whose most visited child has `max_visits` visits (module docs).
pub fn sigma(q: f32, max_visits: u32, p: &GumbelParams) -> f32 {
    (p.c_visit + max_visits as f32) * p.c_scale * (q + 1.0) * 0.5
}

/// The mixed value `v_mix` of the children given the network's root value `value` (module docs).
pub fn mixed_value(value: f32, children: &[RootChild]) -> f32 {
    let total: f64 = children.iter().map(|c| c.visits as f64).sum();
    let visited_prior: f64 = children.iter().filter(|c| c.visits > 0).map(|c| c.prior as f64).sum();
    if total == 0.0 || visited_prior <= 0.0 {
        return value;
    }
    let weighted: f64 = children.iter().filter(|c| c.visits > 0).map(|c| c.prior as f64 * c.q as f64).sum();
    ((value as f64 + total / visited_prior * weighted) / (1.0 + total)) as f32
}

/// Completed Q of every child (same order): its mean value when visited, else `v_mix`.
pub fn completed_q(value: f32, children: &[RootChild]) -> Vec<f32> {
    let mix = mixed_value(value, children);
    children.iter().map(|c| if c.visits > 0 { c.q } else { mix }).collect()
}

/// `logits + sigma(completed Q)` of every child (same order).
fn transformed(value: f32, children: &[RootChild], p: &GumbelParams) -> Vec<f32> {
    let max_n = children.iter().map(|c| c.visits).max().unwrap_or(0);
    completed_q(value, children).iter().zip(children).map(|(&q, c)| logit(c.prior) + sigma(q, max_n, p)).collect()
}

/// The improved policy `softmax(logits + sigma(completed Q))` over the children (same order,
/// sums to 1).
pub fn improved_policy(value: f32, children: &[RootChild], p: &GumbelParams) -> Vec<f32> {
    let mut z = transformed(value, children, p);
    softmax(&mut z);
    z
}

/// The state of one move's Gumbel root search: the sampled noise, the actions still in the
/// halving, and the simulations planned for the current phase.
#[derive(Clone, Debug)]
pub struct GumbelSearch {
    params: GumbelParams,
    budget: u32,
    spent: u32,
    phases: u32,
    phase: u32,
    /// `(key, g)` of every child, `g = 0` without noise.
    noise: Vec<(u32, f32)>,
    /// Keys of the actions still considered.
    remaining: Vec<u32>,
    /// Keys of the simulations planned and not yet spent, in order.
    plan: VecDeque<u32>,
}

impl GumbelSearch {
    /// Starts a search of `budget` simulations over `children` (the expanded root's legal
    /// children), with Gumbel noise drawn from `rng` when `noise`, else `g = 0`.
    pub fn new<R: Rng>(
        children: &[RootChild],
        budget: u32,
        params: GumbelParams,
        noise: bool,
        rng: &mut R,
    ) -> GumbelSearch {
        let noise: Vec<(u32, f32)> = children
            .iter()
            .map(|c| {
                let g = if noise {
                    let u: f64 = rng.gen_range(f64::MIN_POSITIVE..1.0);
                    -(-u.ln()).ln() as f32
                } else {
                    0.0
                };
                (c.key, g)
            })
            .collect();
        let mut order: Vec<usize> = (0..children.len()).collect();
        let score = |i: usize| noise[i].1 + logit(children[i].prior);
        order.sort_by(|&a, &b| score(b).partial_cmp(&score(a)).unwrap_or(std::cmp::Ordering::Equal));
        let m = params.considered.max(1).min(children.len());
        let remaining: Vec<u32> = order[..m].iter().map(|&i| children[i].key).collect();
        let phases = if m <= 1 { 1 } else { usize::BITS - (m - 1).leading_zeros() };
        GumbelSearch { params, budget, spent: 0, phases, phase: 0, noise, remaining, plan: VecDeque::new() }
    }

    /// Simulations of the budget not yet spent.
    pub fn left(&self) -> u32 {
        self.budget - self.spent
    }

    /// Whether the whole budget is spent.
    pub fn finished(&self) -> bool {
        self.spent >= self.budget
    }

    /// The key of the root child the next simulation must go through, if one is planned.
    pub fn next(&self) -> Option<u32> {
        self.plan.front().copied()
    }

    /// Marks the planned simulation of [`GumbelSearch::next`] as spent.
    pub fn spend(&mut self) {
        if self.plan.pop_front().is_some() {
            self.spent += 1;
        }
    }

    /// `g + logits + sigma(completed Q)` of the children.
    fn scores(&self, value: f32, children: &[RootChild]) -> Vec<(u32, f32)> {
        let t = transformed(value, children, &self.params);
        children.iter().zip(t).map(|(c, x)| (c.key, x + self.g(c.key))).collect()
    }

    fn g(&self, key: u32) -> f32 {
        self.noise.iter().find(|n| n.0 == key).map_or(0.0, |n| n.1)
    }

    /// Plans the next phase once the previous one is spent (and evaluated): halves the
    /// remaining actions by score (from the second phase on) and queues each one's simulations,
    /// interleaved. Does nothing while simulations are planned or when the budget is spent.
    pub fn plan_phase(&mut self, value: f32, children: &[RootChild]) {
        if !self.plan.is_empty() || self.finished() || self.remaining.is_empty() {
            return;
        }
        if self.phase > 0 && self.remaining.len() > 1 {
            let scores = self.scores(value, children);
            let score = |k: u32| scores.iter().find(|s| s.0 == k).map_or(f32::NEG_INFINITY, |s| s.1);
            self.remaining.sort_by(|&a, &b| score(b).partial_cmp(&score(a)).unwrap_or(std::cmp::Ordering::Equal));
            self.remaining.truncate(self.remaining.len().div_ceil(2));
        }
        let r = self.remaining.len() as u32;
        let last = self.phase + 1 >= self.phases || r == 1;
        let per = if last { self.left().div_ceil(r) } else { (self.budget / (self.phases * r)).max(1) };
        let mut left = self.left();
        'fill: for _ in 0..per {
            for &k in &self.remaining {
                if left == 0 {
                    break 'fill;
                }
                self.plan.push_back(k);
                left -= 1;
            }
        }
        self.phase += 1;
    }

    /// The key of the move: the remaining action of largest `g + logits + sigma(completed Q)`.
    pub fn chosen(&self, value: f32, children: &[RootChild]) -> Option<u32> {
        let scores = self.scores(value, children);
        let mut best: Option<(u32, f32)> = None;
        for &k in &self.remaining {
            let s = scores.iter().find(|x| x.0 == k).map_or(f32::NEG_INFINITY, |x| x.1);
            if best.is_none_or(|b| s > b.1) {
                best = Some((k, s));
            }
        }
        best.map(|b| b.0)
    }

    /// The number of sequential-halving phases, `ceil(log2 m)` (1 for a single action).
    pub fn phases(&self) -> u32 {
        self.phases
    }

    /// The actions still in the halving.
    pub fn remaining(&self) -> &[u32] {
        &self.remaining
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    const PAPER: GumbelParams = GumbelParams { considered: 16, c_visit: 50.0, c_scale: 1.0 };

    #[test]
    fn improved_policy_equals_the_formula_on_a_hand_built_root() {
        // Priors 0.5 / 0.3 / 0.2, visits 2 / 1 / 0, Q 0.5 / -0.5 / -, network value 0.1,
        // c_visit 2, c_scale 0.5. By hand:
        // v_mix = (0.1 + 3 / 0.8 * (0.5 * 0.5 + 0.3 * -0.5)) / (1 + 3) = 0.11875;
        // completed Q = 0.5, -0.5, 0.11875; sigma = (2 + 2) * 0.5 * (q + 1) / 2 = 1.5, 0.5, 1.11875;
        // softmax(ln p + sigma) = 0.669375, 0.147750, 0.182875.
        let ch = [
            RootChild { key: 10, prior: 0.5, visits: 2, q: 0.5 },
            RootChild { key: 11, prior: 0.3, visits: 1, q: -0.5 },
            RootChild { key: 12, prior: 0.2, visits: 0, q: 0.0 },
        ];
        let p = GumbelParams { considered: 16, c_visit: 2.0, c_scale: 0.5 };
        assert!((mixed_value(0.1, &ch) - 0.11875).abs() < 1e-6);
        assert_eq!(completed_q(0.1, &ch)[..2], [0.5, -0.5]);
        let pi = improved_policy(0.1, &ch, &p);
        for (got, want) in pi.iter().zip([0.669_375_2, 0.147_749_6, 0.182_875_2]) {
            assert!((got - want).abs() < 1e-5, "{pi:?}");
        }
        // No visits at all: the improved policy is the prior (sigma is the same for every action).
        let fresh: Vec<RootChild> = ch.iter().map(|c| RootChild { visits: 0, ..*c }).collect();
        for (got, c) in improved_policy(0.3, &fresh, &PAPER).iter().zip(&fresh) {
            assert!((got - c.prior).abs() < 1e-6);
        }
    }

    /// Runs a whole search against fixed action values (`values[i]` for child `i`, as if every
    /// simulation returned it exactly); returns the visits and the chosen key.
    fn simulate(priors: &[f32], values: &[f32], budget: u32, params: GumbelParams, seed: u64) -> (Vec<u32>, u32) {
        let mut ch: Vec<RootChild> =
            priors.iter().enumerate().map(|(i, &p)| RootChild { key: i as u32, prior: p, visits: 0, q: 0.0 }).collect();
        let mut g = GumbelSearch::new(&ch, budget, params, true, &mut ChaCha8Rng::seed_from_u64(seed));
        let mut guard = 0;
        while !g.finished() {
            g.plan_phase(0.0, &ch);
            while let Some(k) = g.next() {
                let c = &mut ch[k as usize];
                c.visits += 1;
                c.q = values[k as usize];
                g.spend();
            }
            guard += 1;
            assert!(guard < 100, "no progress");
        }
        (ch.iter().map(|c| c.visits).collect(), g.chosen(0.0, &ch).unwrap())
    }

    #[test]
    fn sequential_halving_spends_exactly_the_budget() {
        for (actions, considered) in [(1, 16), (2, 16), (3, 16), (10, 16), (40, 16), (40, 4), (5, 1)] {
            for budget in [1, 2, 3, 5, 8, 16, 17, 31, 50, 64, 200] {
                let priors = vec![1.0 / actions as f32; actions];
                let values: Vec<f32> = (0..actions).map(|i| (i as f32 / actions as f32) - 0.5).collect();
                let p = GumbelParams { considered, ..PAPER };
                let (visits, _) = simulate(&priors, &values, budget, p, budget as u64);
                assert_eq!(visits.iter().sum::<u32>(), budget, "{actions} actions, m <= {considered}, budget {budget}");
                assert!(visits.iter().filter(|&&v| v > 0).count() <= considered.min(actions));
            }
        }
        // 16 considered, 64 simulations: 4 phases of 16, 8, 4, 2 actions, 1 / 2 / 4 / 8+ each.
        let (visits, _) = simulate(&[1.0 / 40.0; 40], &[0.0; 40], 64, PAPER, 1);
        let mut v: Vec<u32> = visits.into_iter().filter(|&x| x > 0).collect();
        v.sort_unstable();
        assert_eq!(v.len(), 16);
        assert_eq!(v.iter().sum::<u32>(), 64);
        assert_eq!(&v[..8], &[1; 8]);
    }

    #[test]
    fn uniform_prior_and_one_clearly_winning_action_picks_it() {
        for seed in 0..20 {
            for (actions, budget) in [(8, 16), (16, 32), (3, 6)] {
                let winner = (seed as usize * 7) % actions;
                let mut values = vec![-0.2; actions];
                values[winner] = 1.0;
                let (visits, chosen) = simulate(&vec![1.0 / actions as f32; actions], &values, budget, PAPER, seed);
                assert_eq!(
                    chosen as usize, winner,
                    "seed {seed}, {actions} actions, budget {budget}: visits {visits:?}"
                );
            }
        }
    }
}
