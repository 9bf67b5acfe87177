//! The root of the search: Dirichlet noise on its priors, the Gumbel root search run over the
//! tree (the procedure is [`super::gumbel`]'s), and the statistics the drivers read (visits,
//! values, the policy target, a forced move).

use super::gumbel::{improved_policy, GumbelParams, GumbelSearch, RootChild};
use super::node::NodeState::{Expanded, Leaf, Terminal};
use super::node::{sign, sort_visited_first, Node, F_PROVEN, F_PRUNED, F_TAIL_UNSORTED};
use super::tree::Mcts;
use crate::action::action_space_size;
use rand::{Rng, SeedableRng};
use rand_distr::{Distribution, Gamma};

impl Mcts {
    /// Visits of the root (including those kept by tree reuse).
    pub fn root_visits(&self) -> u32 {
        self.nodes[self.root as usize].n
    }

    /// Ask for Dirichlet noise on the root priors for this move (applied as soon as the root
    /// is expanded; call at the start of a move's search, with nothing pending).
    pub fn add_root_noise<R: Rng>(&mut self, rng: &mut R) {
        self.noise_wanted = true;
        self.apply_noise_if_ready(rng);
    }

    pub(super) fn apply_noise_if_ready<R: Rng>(&mut self, rng: &mut R) {
        let r = self.nodes[self.root as usize];
        if !self.noise_wanted || r.state != Expanded || !self.nothing_pending() {
            return;
        }
        self.noise_wanted = false;
        let live: Vec<usize> = r.children().filter(|&i| self.nodes[i].flags & F_PRUNED == 0).collect();
        if live.len() < 2 || self.cfg.dirichlet_epsilon <= 0.0 {
            return;
        }
        let alpha = (self.cfg.dirichlet_alpha_total / live.len() as f32).max(1e-3);
        let gamma = Gamma::new(alpha as f64, 1.0).expect("positive alpha");
        let eta: Vec<f64> = live.iter().map(|_| gamma.sample(rng)).collect();
        let total: f64 = eta.iter().sum::<f64>().max(1e-300);
        let eps = self.cfg.dirichlet_epsilon;
        for (k, &i) in live.iter().enumerate() {
            let p = self.nodes[i].prior;
            self.nodes[i].prior = (1.0 - eps) * p + eps * (eta[k] / total) as f32;
        }
        self.forcing = self.cfg.forced_playouts > 0.0;
        self.sort_root_after_noise();
    }

    /// Restores [`Mcts::select`]'s invariant at the root after its priors changed: visited
    /// children first, then the unvisited ones by prior, descending. (A plain sort by prior
    /// would put an unvisited child that the noise lifted before visited children, and the scan,
    /// which stops at the first unvisited child, would never score those visited children.)
    pub(super) fn sort_root_after_noise(&mut self) {
        self.nodes[self.root as usize].flags &= !F_TAIL_UNSORTED;
        let kids = self.nodes[self.root as usize].children();
        sort_visited_first(&mut self.nodes[kids]);
    }

    /// Runs this move's search as a Gumbel root search of `budget` simulations (module
    /// [`crate::mcts::gumbel`]; the root's own evaluation, when it is not expanded yet, comes first and
    /// is not counted), with Gumbel noise when `noise` (self-play; evaluation plays without).
    /// Call at the start of a move's search, with nothing pending; [`Mcts::search_remaining`]
    /// then counts the simulations left, [`Mcts::gumbel_action`] and [`Mcts::gumbel_policy`]
    /// give the move and the policy target.
    pub fn start_gumbel<R: Rng>(&mut self, budget: u32, noise: bool, rng: &mut R) {
        self.gumbel = None;
        self.gumbel_wanted = Some((budget.max(1), noise, rng.gen()));
        self.start_gumbel_if_ready();
    }

    pub(super) fn start_gumbel_if_ready(&mut self) {
        let Some((budget, noise, seed)) = self.gumbel_wanted else { return };
        if self.nodes[self.root as usize].state != Expanded || !self.nothing_pending() {
            return;
        }
        self.gumbel_wanted = None;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        self.gumbel = Some(GumbelSearch::new(&self.gumbel_children(), budget, self.gumbel_params(), noise, &mut rng));
    }

    /// Before a playout of a Gumbel search: starts it or plans its next phase when possible.
    /// Returns whether a playout may run now (the root still needs its evaluation, or a
    /// simulation is planned); `false` at a phase boundary with leaves pending, or when done.
    pub(super) fn plan_gumbel(&mut self) -> bool {
        self.start_gumbel_if_ready();
        let Some(mut g) = self.gumbel.take() else {
            // Not started: the root is not expanded yet; this playout evaluates it.
            return self.nodes[self.root as usize].state == Leaf;
        };
        if g.next().is_none() && self.nothing_pending() {
            g.plan_phase(self.root_net_value(), &self.gumbel_children());
        }
        let ok = g.next().is_some();
        self.gumbel = Some(g);
        ok
    }

    /// The Gumbel constants of the config.
    pub fn gumbel_params(&self) -> GumbelParams {
        GumbelParams {
            considered: self.cfg.gumbel_considered,
            c_visit: self.cfg.gumbel_c_visit,
            c_scale: self.cfg.gumbel_c_scale,
        }
    }

    /// The live root children as the Gumbel root sees them (key = node index).
    fn gumbel_children(&self) -> Vec<RootChild> {
        let r = self.nodes[self.root as usize];
        let s = sign(r.decider);
        r.children()
            .filter(|&i| self.nodes[i].flags & F_PRUNED == 0)
            .map(|i| {
                let c = self.nodes[i];
                RootChild {
                    key: i as u32,
                    prior: c.prior,
                    visits: c.n,
                    q: if c.n > 0 { s * c.w / c.n as f32 } else { 0.0 },
                }
            })
            .collect()
    }

    /// The network's value of the root for its decider: the root's own evaluation, which is its
    /// backed-up sum less its children's (the mean child value when the root was never
    /// evaluated itself, as for a forced move; 0 without visits).
    pub fn root_net_value(&self) -> f32 {
        let r = self.nodes[self.root as usize];
        let (mut n, mut w) = (0u32, 0.0f32);
        if r.state == Expanded {
            for c in &self.nodes[r.children()] {
                n += c.n;
                w += c.w;
            }
        }
        let s = sign(r.decider);
        if r.n > n {
            s * (r.w - w) / (r.n - n) as f32
        } else if n > 0 {
            s * w / n as f32
        } else {
            0.0
        }
    }

    /// Playouts still to run for this move: for a Gumbel search the simulations left (plus one
    /// while the root awaits its evaluation), otherwise `visits` less the root's visits.
    pub fn search_remaining(&self, visits: u32) -> u32 {
        if let Some((budget, _, _)) = self.gumbel_wanted {
            return budget + (self.nodes[self.root as usize].state == Leaf) as u32;
        }
        match &self.gumbel {
            Some(g) => g.left(),
            None => visits.saturating_sub(self.root_visits()),
        }
    }

    /// The move of a finished (or stopped) Gumbel search: the action index of the remaining
    /// root action of largest `g + logits + sigma(completed Q)`; `None` without a Gumbel search.
    pub fn gumbel_action(&self) -> Option<usize> {
        let g = self.gumbel.as_ref()?;
        let key = g.chosen(self.root_net_value(), &self.gumbel_children())?;
        Some(self.nodes[key as usize].action as usize)
    }

    /// The Gumbel policy target over the action space `[A]`: `softmax(logits + sigma(completed
    /// Q))` over the legal root actions (sums to 1); `None` without a Gumbel search.
    pub fn gumbel_policy(&self) -> Option<Vec<f32>> {
        self.gumbel.as_ref()?;
        let ch = self.gumbel_children();
        let pi = improved_policy(self.root_net_value(), &ch, &self.gumbel_params());
        let mut p = vec![0.0; action_space_size(self.size)];
        for (c, x) in ch.iter().zip(pi) {
            p[self.nodes[c.key as usize].action as usize] = x;
        }
        Some(p)
    }

    /// Root statistics: `(action index, visits, prior)` for every non-pruned root child.
    pub fn root_children(&self) -> Vec<(usize, u32, f32)> {
        let r = self.nodes[self.root as usize];
        if r.state != Expanded {
            return Vec::new();
        }
        self.nodes[r.children()]
            .iter()
            .filter(|c| c.flags & F_PRUNED == 0)
            .map(|c| (c.action as usize, c.n, c.prior))
            .collect()
    }

    /// Root children with their mean value: `(action index, visits, Q)` where `Q` is the mean
    /// backed-up value from the **root decider's** view (0 for unvisited children; exactly `+1`
    /// or `-1` for a child the solver proved).
    pub fn root_child_values(&self) -> Vec<(usize, u32, f32)> {
        self.child_values_after(&[])
    }

    /// As [`Mcts::root_child_values`] for the children of the node reached from the root by the
    /// action indices `path` (`&[]` is the root); `Q` is still from the **root decider's** view.
    /// Empty when that node is not in the tree or not expanded.
    pub fn child_values_after(&self, path: &[usize]) -> Vec<(usize, u32, f32)> {
        let r = self.nodes[self.root as usize];
        let s = sign(r.decider);
        let mut node = r;
        for &a in path {
            if node.state != Expanded {
                return Vec::new();
            }
            match self.nodes[node.children()].iter().find(|c| c.action as usize == a) {
                Some(c) => node = *c,
                None => return Vec::new(),
            }
        }
        if node.state != Expanded {
            return Vec::new();
        }
        self.nodes[node.children()]
            .iter()
            .filter(|c| c.flags & F_PRUNED == 0)
            .map(|c| {
                let q = if c.flags & F_PROVEN != 0 {
                    s * c.terminal
                } else if c.n > 0 {
                    s * c.w / c.n as f32
                } else {
                    0.0
                };
                (c.action as usize, c.n, q)
            })
            .collect()
    }

    /// The principal variation through the root action `action` (an action index): `action`,
    /// then from each node its most visited child (ties: the higher prior) while that child has
    /// visits; at most `max` actions. Empty when `action` is not a root child.
    pub fn principal_variation(&self, action: usize, max: usize) -> Vec<usize> {
        let r = self.nodes[self.root as usize];
        if r.state != Expanded || max == 0 {
            return Vec::new();
        }
        let Some(mut node) = self.nodes[r.children()].iter().find(|c| c.action as usize == action).copied() else {
            return Vec::new();
        };
        let mut line = vec![action];
        while line.len() < max && node.state == Expanded {
            let best = self.nodes[node.children()]
                .iter()
                .filter(|c| c.flags & F_PRUNED == 0 && c.n > 0)
                .max_by(|a, b| a.n.cmp(&b.n).then(a.prior.partial_cmp(&b.prior).unwrap_or(std::cmp::Ordering::Equal)));
            let Some(&child) = best else { break };
            line.push(child.action as usize);
            node = child;
        }
        line
    }

    /// With [`crate::mcts::SearchConfig::solver`]: the root's proven value for its decider,
    /// exactly `+1` (a proven win) or `-1` (a proven loss); `None` while unproven or without the
    /// solver.
    pub fn root_proven(&self) -> Option<f32> {
        if !self.cfg.solver {
            return None;
        }
        let r = self.nodes[self.root as usize];
        if r.flags & F_PROVEN != 0 {
            Some(sign(r.decider) * r.terminal)
        } else if r.state == Terminal && r.terminal.abs() == 1.0 {
            // Decided at its own expansion (no children): the walker stands at the root.
            Some(if self.walker_decider() == 0 { r.terminal } else { -r.terminal })
        } else {
            None
        }
    }

    /// The root children a move is chosen from, as [`Mcts::root_children`] gives them: all of
    /// them, except with [`crate::mcts::SearchConfig::solver`], where a proven win leaves only
    /// the proven-winning children and the proven-losing ones are dropped while any other is left.
    pub fn root_choices(&self) -> Vec<(usize, u32, f32)> {
        let r = self.nodes[self.root as usize];
        if !self.cfg.solver || r.state != Expanded {
            return self.root_children();
        }
        let s = sign(r.decider);
        let live: Vec<Node> = self.nodes[r.children()].iter().filter(|c| c.flags & F_PRUNED == 0).copied().collect();
        let proven = |c: &Node, win: bool| c.flags & F_PROVEN != 0 && (s * c.terminal > 0.0) == win;
        let wins: Vec<Node> = live.iter().filter(|c| proven(c, true)).copied().collect();
        let keep: Vec<Node> = if !wins.is_empty() {
            wins
        } else if live.iter().all(|c| proven(c, false)) {
            live
        } else {
            live.into_iter().filter(|c| !proven(c, false)).collect()
        };
        keep.iter().map(|c| (c.action as usize, c.n, c.prior)).collect()
    }

    /// Search value (win - loss) of the root for the deciding player, in `[-1, 1]`: the mean
    /// backed-up value, or with the solver a proven root's exact `+1` or `-1`.
    pub fn root_value(&self) -> f32 {
        if let Some(v) = self.root_proven() {
            return v;
        }
        let r = self.nodes[self.root as usize];
        if r.n == 0 {
            0.0
        } else {
            sign(r.decider) * r.w / r.n as f32
        }
    }

    /// The root visit distribution over the action space `[A]`, summing to 1 (the normalised
    /// priors while no child has a visit yet, as for a forced move; all zero before expansion).
    /// With forced playouts ([`crate::mcts::SearchConfig::forced_playouts`]) on this move, the
    /// visits are [`Mcts::target_visits`]'s.
    pub fn policy_target(&self) -> Vec<f32> {
        let mut p = vec![0.0; action_space_size(self.size)];
        let ch = self.target_visits();
        let total: u32 = ch.iter().map(|c| c.1).sum();
        if total > 0 {
            for (a, n, _) in ch {
                p[a] = n as f32 / total as f32;
            }
        } else {
            // No child visited yet (a forced move decided after the root's own visit): priors.
            let tp: f32 = ch.iter().map(|c| c.2).sum();
            for (a, _, pr) in &ch {
                p[*a] = if tp > 0.0 { pr / tp } else { 1.0 / ch.len() as f32 };
            }
        }
        p
    }

    /// [`Mcts::root_children`] with the visits a policy target and a move choice count: as they
    /// are, except on a move with forced playouts ([`crate::mcts::SearchConfig::forced_playouts`]),
    /// where every child but the most visited keeps only the visits PUCT would have given it
    /// against that child (KataGo's policy-target pruning): the fewest `n'` with
    /// `Q + c P sqrt(N) / (1 + n') <= U*`, `U*` the most visited child's PUCT score, but never
    /// fewer than its visits less its forced playouts; a child left with one visit or none gets
    /// 0. Proven children keep their visits.
    pub fn target_visits(&self) -> Vec<(usize, u32, f32)> {
        let r = self.nodes[self.root as usize];
        if !self.forcing || r.state != Expanded {
            return self.root_children();
        }
        let live: Vec<Node> = self.nodes[r.children()].iter().filter(|x| x.flags & F_PRUNED == 0).copied().collect();
        let best = (0..live.len()).max_by_key(|&j| live[j].n);
        let s = sign(r.decider);
        let c = self.cfg.c_puct;
        let sqrt_n = (r.n as f32).sqrt();
        let puct = |x: &Node, n: f32| s * x.w / x.n as f32 + c * x.prior * sqrt_n / (1.0 + n);
        // The most visited child's PUCT score (none while no child has a visit).
        let u_best = best.map(|b| live[b]).filter(|t| t.n > 0).map(|t| puct(&t, t.n as f32));
        live.iter()
            .enumerate()
            .map(|(j, x)| {
                let visits = match u_best {
                    Some(u_best) if Some(j) != best && x.n > 0 && x.flags & F_PROVEN == 0 => {
                        let q = s * x.w / x.n as f32;
                        let forced = (self.cfg.forced_playouts * x.prior * r.n as f32).sqrt();
                        // The fewest visits at which PUCT no longer prefers this child to the best.
                        let wanted = if u_best > q {
                            (c * x.prior * sqrt_n / (u_best - q) - 1.0).ceil().max(0.0)
                        } else {
                            x.n as f32
                        };
                        let kept = wanted.max(x.n as f32 - forced.floor()).min(x.n as f32) as u32;
                        if kept <= 1 {
                            0
                        } else {
                            kept
                        }
                    }
                    _ => x.n,
                };
                (x.action as usize, visits, x.prior)
            })
            .collect()
    }

    /// Whether the root is expanded with a single legal child (a forced move: no search needed).
    pub fn root_forced(&self) -> Option<usize> {
        let ch = self.root_children();
        (ch.len() == 1).then(|| ch[0].0)
    }
}
