//! Players: the [`Agent`] trait (the one player abstraction: arena players, the Gomocup brain's
//! thinking, external engines) and the search agent [`MctsAgent`] over any
//! [`Evaluator`](renju_selfplay::eval::Evaluator). Player specs and building agents from them
//! are [`crate::spec`]'s.

use std::time::{Duration, Instant};

use anyhow::{ensure, Context, Result};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use renju_rules::{Action, Game};

use crate::clock::{RootView, Stretch, Watch};
use renju_selfplay::action::{action_from_index, action_space_size};
use renju_selfplay::encode::{encode, NUM_GLOBALS, NUM_PLANES};
use renju_selfplay::eval::Evaluator;
use renju_selfplay::mcts::{
    pick_by_lcb, pick_by_visits, search_parallel, search_until, search_with, Mcts, SearchAlgorithm, SearchConfig,
};

/// Simulations of a Gumbel root search under a time limit alone (it stops at the deadline,
/// playing the best of the actions still in the halving).
pub const GUMBEL_TIME_BUDGET: u32 = 800;

/// A stop request for a search under way ([`Agent::set_interrupt`]).
pub type Interrupt = std::sync::Arc<dyn Fn() -> bool + Send + Sync>;

/// What an agent decided, with its own estimate.
#[derive(Clone, Debug, PartialEq)]
pub struct Choice {
    pub action: Action,
    /// The agent's value of the position (win - loss in `[-1, 1]`) for the deciding player,
    /// when it has one (search agents: the root value).
    pub value: Option<f32>,
    /// Playouts this decision spent (search agents).
    pub playouts: u64,
    /// Visits the root already had from earlier decisions (tree reuse, search agents): the
    /// root ends with `reused + playouts` visits.
    pub reused: u64,
}

/// A root candidate of an agent's last search ([`Agent::candidates`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Candidate {
    pub action: Action,
    /// Root visits of the action.
    pub visits: u64,
    /// Mean value (win - loss in `[-1, 1]`) after the action, for the decider of the searched
    /// position (0 without visits; exactly `+1` / `-1` when the solver proved it).
    pub value: f32,
    /// The principal variation, `action` first (most visited children down the tree).
    pub pv: Vec<Action>,
    /// The searched answers to `action`: `(action, visits, value)`, the value as [`Self::value`]
    /// (for the decider of the searched position) after both actions. Empty when `action` was
    /// not expanded.
    pub replies: Vec<(Action, u64, f32)>,
}

/// A player in a game: anything that picks the deciding player's action. The one player
/// abstraction of the crate: arena players, the Gomocup brain's thinking ([`crate::gomocup`])
/// and external engines ([`crate::engine`]) all implement it.
pub trait Agent: Send {
    /// A new game begins; `seed` seeds any randomness of this game (reproducible arenas).
    fn new_game(&mut self, seed: u64) -> Result<()>;
    /// Choose an action for [`Game::to_decide`] in `game` (which is not over) within the agent's
    /// own limit. Errors mean the agent failed (an engine crashed or answered nonsense); the
    /// arena scores that as a loss.
    fn choose(&mut self, game: &Game) -> Result<Choice>;
    /// As [`Agent::choose`], within `limit` instead of the agent's own (the Gomocup brain's time
    /// per move). Agents with a fixed budget ignore `limit`; the default is [`Agent::choose`].
    fn choose_within(&mut self, game: &Game, limit: &SearchLimit) -> Result<Choice> {
        let _ = limit;
        self.choose(game)
    }
    /// As [`Agent::choose_within`], using time adaptively when `stretch` is given
    /// ([`crate::clock`]): `limit.time` is then ignored for the plan's target and most. Agents
    /// that do not search by time ignore `stretch` (the default).
    fn choose_stretched(&mut self, game: &Game, limit: &SearchLimit, stretch: Option<Stretch>) -> Result<Choice> {
        let _ = stretch;
        self.choose_within(game, limit)
    }
    /// A cheap value (win - loss in `[-1, 1]`) for the deciding player of `game`, or `None` for
    /// agents without an evaluator (the default).
    fn value(&mut self, game: &Game) -> Result<Option<f32>> {
        let _ = game;
        Ok(None)
    }
    /// A check the agent's searches consult between batches: when it returns true the search
    /// stops and the decision is made from what was searched (the Gomocup `YXSTOP`). Agents
    /// that do not search ignore it (the default).
    fn set_interrupt(&mut self, interrupt: Option<Interrupt>) {
        let _ = interrupt;
    }
    /// Search threads for the next decisions (the Gomocup `INFO thread_num`); agents that do not
    /// search in parallel ignore it (the default).
    fn set_threads(&mut self, threads: usize) {
        let _ = threads;
    }
    /// Drops whatever the agent kept from earlier decisions (a search tree): the next decision
    /// starts afresh. For a position that does not follow from the last one by the moves played
    /// (a takeback, a restart). The default does nothing.
    fn forget(&mut self) {}
    /// The root candidates of the last decision when it searched `game` (search agents that keep
    /// their tree, [`SearchSettings::reuse_tree`]), in no particular order, each with a principal
    /// variation of at most `pv_length` actions; empty otherwise (the default).
    fn candidates(&self, game: &Game, pv_length: usize) -> Vec<Candidate> {
        let _ = (game, pv_length);
        Vec::new()
    }
}

/// How long a search may run: stop at `playouts` root visits or after `time`, whichever first.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SearchLimit {
    pub playouts: Option<u64>,
    pub time: Option<Duration>,
}

impl Default for SearchLimit {
    /// 200 playouts, no time limit.
    fn default() -> Self {
        SearchLimit { playouts: Some(200), time: None }
    }
}

impl std::fmt::Display for SearchLimit {
    /// As in a player spec, words separated by spaces: `playouts=200`, `time=0.2` (seconds),
    /// `playouts=200 time=0.2`; `unlimited` for neither.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut words = Vec::new();
        if let Some(p) = self.playouts {
            words.push(format!("playouts={p}"));
        }
        if let Some(t) = self.time {
            words.push(format!("time={}", t.as_secs_f64()));
        }
        if words.is_empty() {
            words.push("unlimited".into());
        }
        f.write_str(&words.join(" "))
    }
}

/// Search settings of a player spec.
#[derive(Clone, Debug, PartialEq)]
pub struct SearchSettings {
    pub limit: SearchLimit,
    /// Leaves evaluated per batch. Default 8.
    pub batch: usize,
    /// Decisions `0..explore` of a game (by [`Game::history`] length) are sampled in proportion
    /// to the root visit counts instead of taking the most visited action (diversity). Default 0.
    pub explore: usize,
    /// PUCT parameters (no root noise is used in evaluation). The default turns the solver on
    /// ([`SearchConfig::solver`]): proven wins and losses decide the move.
    pub config: SearchConfig,
    /// Tree reuse: keep the search tree between decisions, so a decision whose position follows
    /// from the last searched one by the moves played starts from that position's subtree with
    /// its visits ([`Mcts::follow`]). Default off: every decision then depends only on the
    /// position and the seed (reproducible arena matches); the Gomocup brain turns it on.
    pub reuse_tree: bool,
    /// Search threads for one decision ([`search_parallel`]), each with its own evaluator (as
    /// many as the agent was built with, [`MctsAgent::with_evaluators`]). Default 1: arena
    /// matches play several games at once instead; the Gomocup brain uses every core.
    pub threads: usize,
    /// Evaluate ordinary placements from the stones-only inputs, as the exported network sees
    /// them inside another engine ([`renju_selfplay::stones_only::StonesOnlyEvaluator`]). Default
    /// off.
    pub stones_only: bool,
    /// The move choice after the search (outside the `explore` decisions and a proven root):
    /// `None` the most visited child ([`pick_by_visits`]), `Some(z)` the best lower confidence
    /// bound of the value at `z` standard errors ([`pick_by_lcb`]). Default `None`.
    pub lcb: Option<f32>,
}

impl Default for SearchSettings {
    fn default() -> Self {
        SearchSettings {
            limit: SearchLimit::default(),
            batch: 8,
            explore: 0,
            config: SearchConfig { solver: true, ..SearchConfig::default() },
            reuse_tree: false,
            threads: 1,
            stones_only: false,
            lcb: None,
        }
    }
}

/// PUCT search ([`renju_selfplay::mcts`]) over an evaluator, no root noise; the most visited
/// action is played (ties: the higher prior), except during the first `explore` decisions of a
/// game, which are sampled in proportion to the visits.
///
/// A fresh tree per decision, unless [`SearchSettings::reuse_tree`]: then the tree of the last
/// decision is kept and followed down the moves played since ([`Mcts::follow`]; a position that
/// does not follow, or [`Agent::forget`] / [`Agent::new_game`], starts afresh). The playout
/// limit then counts the root's visits in total, reused ones included, as KataGo's visit limit
/// does: the limit stands for the quality of the decision and, through the brain's memory cap,
/// for the size of the tree, and both are the total's; under a time limit only the new playouts
/// cost time. (A Gumbel search's budget is its own: the simulations of this decision.)
pub struct MctsAgent {
    /// One evaluator per search thread (at least one).
    evals: Vec<Box<dyn Evaluator>>,
    settings: SearchSettings,
    rng: ChaCha8Rng,
    /// The tree of the last decision and its root position (tree reuse only).
    kept: Option<(Game, Mcts)>,
    /// A tree no longer searched (without tree reuse, the last decision's; with it, one
    /// forgotten), whose memory the next tree starts afresh in ([`Mcts::reset`]).
    recycled: Option<Mcts>,
    /// The time plan of the decision under way ([`Agent::choose_stretched`]).
    stretch: Option<Stretch>,
    /// Stops a search under way when it returns true ([`Agent::set_interrupt`]).
    interrupt: Option<Interrupt>,
}

/// Orders root candidates as the engine reports them (`analyze` answers, `YXNBEST` lines): the
/// move it plays (`chosen`) first, then by visits, then by `key`'s third value (larger first).
/// `key` gives an item's `(action, visits, tie-breaker)`.
pub fn sort_chosen_first<T, A: PartialEq>(items: &mut [T], chosen: Option<A>, key: impl Fn(&T) -> (A, u64, f32)) {
    items.sort_by(|x, y| {
        let ((ax, nx, tx), (ay, ny, ty)) = (key(x), key(y));
        let is_chosen = |a: &A| chosen.as_ref() == Some(a);
        is_chosen(&ay).cmp(&is_chosen(&ax)).then(ny.cmp(&nx)).then(ty.total_cmp(&tx))
    });
}

/// The root action [`pick_by_lcb`] picks at `z` among `choices` (the root moves the agent may
/// play, [`Mcts::root_choices`]), their values from `m`.
fn lcb_choice(m: &Mcts, choices: &[(usize, u32, f32)], z: f32) -> Option<usize> {
    let values: Vec<_> = m.root_child_values().into_iter().filter(|v| choices.iter().any(|c| c.0 == v.0)).collect();
    pick_by_lcb(&values, z)
}

impl MctsAgent {
    /// An agent over `eval` with these settings (one search thread).
    pub fn new(eval: Box<dyn Evaluator>, settings: SearchSettings) -> MctsAgent {
        MctsAgent::with_evaluators(vec![eval], settings)
    }

    /// An agent searching with [`SearchSettings::threads`] threads, each with its own evaluator
    /// built from `spec`.
    pub fn per_thread(
        spec: &renju_selfplay::eval::EvaluatorSpec,
        size: usize,
        loader: &renju_selfplay::eval::EvaluatorLoader,
        settings: SearchSettings,
    ) -> Result<MctsAgent> {
        let evals = (0..settings.threads.max(1)).map(|_| spec.build(size, loader)).collect::<Result<_>>()?;
        Ok(MctsAgent::with_evaluators(evals, settings))
    }

    /// An agent searching with up to `evals.len()` threads, one evaluator each (at least one;
    /// [`SearchSettings::threads`] says how many are used).
    ///
    /// # Panics
    /// When `evals` is empty.
    pub fn with_evaluators(evals: Vec<Box<dyn Evaluator>>, settings: SearchSettings) -> MctsAgent {
        assert!(!evals.is_empty(), "an agent needs an evaluator");
        MctsAgent {
            evals,
            settings,
            rng: ChaCha8Rng::seed_from_u64(0),
            kept: None,
            recycled: None,
            stretch: None,
            interrupt: None,
        }
    }

    /// Search threads the next decision uses: [`SearchSettings::threads`], at most one per
    /// evaluator.
    pub fn threads(&self) -> usize {
        self.settings.threads.clamp(1, self.evals.len())
    }

    /// The tree kept from the last decision and its root position (with
    /// [`SearchSettings::reuse_tree`]; `None` before a decision or after [`Agent::forget`]).
    pub fn kept_tree(&self) -> Option<(&Game, &Mcts)> {
        self.kept.as_ref().map(|(g, m)| (g, m))
    }

    /// The settings.
    pub fn settings(&self) -> &SearchSettings {
        &self.settings
    }

    /// The root action (an index) this agent plays from the searched tree `m`: for a proven
    /// root (solver) the most visited of its proven wins, or of the moves not proven lost;
    /// Gumbel's own choice; then, on the first `explore` decisions, a sample in proportion to
    /// the visits (temperature 1), else the best lower confidence bound when
    /// [`SearchSettings::lcb`] is set ([`pick_by_lcb`]), else the most visited. `None` when the
    /// root has no children.
    pub fn root_choice(&mut self, m: &Mcts, explore: bool) -> Option<usize> {
        let choices = m.root_choices();
        if m.root_proven().is_some() {
            return pick_by_visits(&choices, 0.0, &mut self.rng);
        }
        m.gumbel_action()
            .filter(|a| choices.iter().any(|c| c.0 == *a))
            .or_else(|| lcb_choice(m, &choices, self.settings.lcb.filter(|_| !explore)?))
            .or_else(|| pick_by_visits(&choices, if explore { 1.0 } else { 0.0 }, &mut self.rng))
    }

    /// The evaluator's W/D/L (probabilities) for the deciding player of `game`, one evaluation.
    pub fn value_head(&mut self, game: &Game) -> Result<[f32; 3]> {
        let size = game.board().size();
        let mut planes = vec![0.0; NUM_PLANES * size * size];
        let mut globals = vec![0.0; NUM_GLOBALS];
        encode(game, &mut planes, &mut globals);
        let out = self.evals[0].evaluate(&planes, &globals, 1)?;
        ensure!(out.wdl.len() == 3, "evaluator returned {} W/D/L values for 1 position", out.wdl.len());
        Ok([out.wdl[0], out.wdl[1], out.wdl[2]])
    }

    /// Searches `game` within `limit` and returns the search tree (root = `game`). Stops early
    /// when the root has a single legal child (a forced move).
    ///
    /// Under a time limit the search goes one network batch at a time and looks at the clock
    /// after each: it starts another batch only when the slowest batch so far still fits in the
    /// time left, so a slow network overshoots by less than one batch at most (the first batch
    /// always runs: a move needs one evaluation). (Gumbel search keeps its own deadline check.)
    pub fn search(&mut self, game: &Game, limit: &SearchLimit) -> Result<Mcts> {
        ensure!(!game.is_over(), "search: the game is over");
        let start = Instant::now();
        let mut m = Mcts::new(game, self.settings.config.clone());
        self.search_tree(&mut m, game, limit, start)?;
        Ok(m)
    }

    /// The tree for a decision in `game` (not over): the kept one followed down the moves played
    /// since its root when [`SearchSettings::reuse_tree`] (afresh when `game` does not follow),
    /// else a fresh one.
    fn tree_for(&mut self, game: &Game) -> Mcts {
        if let Some((from, mut m)) = self.kept.take() {
            m.follow(&from, game);
            return m;
        }
        match self.recycled.take() {
            Some(mut m) if *m.config() == self.settings.config => {
                m.reset(game);
                m
            }
            _ => Mcts::new(game, self.settings.config.clone()),
        }
    }

    /// Drops the kept tree's search, keeping its memory for the next tree.
    fn forget_tree(&mut self) {
        if let Some((_, m)) = self.kept.take() {
            self.recycled = Some(m);
        }
    }

    /// Runs the search of [`MctsAgent::search`] on `m` (rooted at `game`: a fresh tree, or a
    /// kept one followed to `game`), timed from `start`; the playout limit counts the root's
    /// visits (type docs). Calls on the same tree continue its search (the analysis engine runs
    /// its searches in slices this way).
    pub fn search_tree(&mut self, m: &mut Mcts, game: &Game, limit: &SearchLimit, start: Instant) -> Result<()> {
        let cap = limit.playouts.unwrap_or(u64::MAX).clamp(1, u32::MAX as u64 - 1);
        let batch = self.settings.batch.max(1);
        // With a time plan ([`Agent::choose_stretched`]) the search may run to the plan's most,
        // and the clock decides between slices whether it goes on ([`crate::clock`]).
        let stretch = self.stretch;
        let time = stretch.map(|s| s.most.max(s.target)).or(limit.time);
        let mut watch = stretch.map(Watch::new);
        let first = m.root_visits() as u64;
        let interrupt = self.interrupt.clone();
        // The clock watches the move that would be played: by its bound, past the sampled
        // opening decisions, when the agent chooses so.
        let lcb = self.settings.lcb.filter(|_| game.history().len() >= self.settings.explore);
        let mut go_on = |m: &Mcts| -> bool {
            if interrupt.as_ref().is_some_and(|stop| stop()) {
                return false;
            }
            let Some(w) = watch.as_mut() else { return true };
            let chosen = lcb.and_then(|z| lcb_choice(m, &m.root_choices(), z));
            let Some(root) = RootView::of(&m.root_children(), m.root_value(), chosen) else { return true };
            w.go_on(start.elapsed(), (m.root_visits() as u64).saturating_sub(first), &root)
        };
        let chunk = if time.is_some() || self.interrupt.is_some() { batch as u64 } else { cap };
        let threads = self.threads();
        if self.settings.config.algorithm == SearchAlgorithm::Gumbel {
            let eval = &mut self.evals[0];
            // Gumbel noise only on the sampled opening decisions; deterministic otherwise.
            let budget = limit.playouts.map_or(GUMBEL_TIME_BUDGET, |p| p.clamp(1, u32::MAX as u64 - 1) as u32);
            let noise = game.history().len() < self.settings.explore;
            m.start_gumbel(budget, noise, &mut self.rng);
            let deadline = stretch.map(|s| s.target).or(limit.time).map(|t| start + t);
            search_until(m, 0, batch, deadline, &mut self.rng, |p, g, n| eval.evaluate(p, g, n))?;
            return Ok(());
        }
        let done = |m: &Mcts| m.root_visits() as u64 >= cap || m.root_forced().is_some() || m.root_proven().is_some();
        if threads > 1 {
            // The root's own evaluation first (one thread), so that a forced or proven root
            // stops here as below; then the threads, which start a batch only when the slowest
            // so far still fits in the time left, as one thread does. With a time plan they
            // search in slices of a tenth of the target, the clock consulted after each; with an
            // interrupt, in slices of at most 10 ms.
            if m.root_visits() == 0 {
                let eval = &mut self.evals[0];
                search_with(m, 1, 1, &mut self.rng, |p, g, n| eval.evaluate(p, g, n))?;
            }
            if m.root_forced().is_some() || m.root_proven().is_some() {
                return Ok(());
            }
            let deadline = time.map(|t| start + t);
            let slice = stretch.map(|s| (s.target / 10).max(Duration::from_millis(2)));
            let slice = match (slice, &self.interrupt) {
                (Some(sl), Some(_)) => Some(sl.min(Duration::from_millis(10))),
                (None, Some(_)) => Some(Duration::from_millis(10)),
                (sl, None) => sl,
            };
            let mut fs: Vec<_> = self.evals[..threads]
                .iter_mut()
                .map(|e| move |p: &[f32], g: &[f32], n: usize| e.evaluate(p, g, n))
                .collect();
            loop {
                let until = match (slice, deadline) {
                    (Some(sl), Some(d)) => Some(d.min(Instant::now() + sl)),
                    (Some(sl), None) => Some(Instant::now() + sl),
                    (None, d) => d,
                };
                // A slice that reaches the deadline is the last: the threads stop before it as
                // one search would.
                let last = until == deadline;
                search_parallel(m, cap as u32, batch, until, &mut self.rng, &mut fs)?;
                if slice.is_none() || last || done(m) || !go_on(m) {
                    return Ok(());
                }
            }
        }
        let eval = &mut self.evals[0];
        let mut slowest = Duration::ZERO;
        loop {
            let before = start.elapsed();
            let target = (m.root_visits() as u64 + chunk).min(cap) as u32;
            search_with(m, target, batch, &mut self.rng, |p, g, n| eval.evaluate(p, g, n))?;
            if done(m) || !go_on(m) {
                break;
            }
            if let Some(t) = time {
                let now = start.elapsed();
                slowest = slowest.max(now - before);
                if now + slowest >= t {
                    break;
                }
            }
        }
        Ok(())
    }
}

impl Agent for MctsAgent {
    fn new_game(&mut self, seed: u64) -> Result<()> {
        self.rng = ChaCha8Rng::seed_from_u64(seed);
        self.forget_tree();
        Ok(())
    }
    fn choose(&mut self, game: &Game) -> Result<Choice> {
        let limit = self.settings.limit;
        self.choose_within(game, &limit)
    }
    /// Searches and picks an action (type docs) within `limit`.
    fn choose_within(&mut self, game: &Game, limit: &SearchLimit) -> Result<Choice> {
        ensure!(!game.is_over(), "search: the game is over");
        let start = Instant::now();
        let mut m = self.tree_for(game);
        let reused = m.root_visits() as u64;
        // On an error the tree is dropped (leaves may be pending).
        self.search_tree(&mut m, game, limit, start)?;
        let size = game.board().size();
        // Sampling in proportion to the visits (temperature 1) during the first `explore`
        // decisions, the most visited child afterwards.
        let explore = game.history().len() < self.settings.explore;
        let pick = self.root_choice(&m, explore);
        let action = pick
            .and_then(|c| action_from_index(c, size))
            .filter(|&a| game.is_legal(a))
            .or_else(|| game.legal_actions().into_iter().next())
            .context("no legal action")?;
        debug_assert!(action_space_size(size) > 0);
        let root_visits = m.root_visits() as u64;
        let choice = Choice { action, value: Some(m.root_value()), playouts: root_visits - reused, reused };
        if self.settings.reuse_tree {
            self.kept = Some((game.clone(), m));
        } else {
            self.recycled = Some(m);
        }
        Ok(choice)
    }
    /// The value head's win - loss.
    fn value(&mut self, game: &Game) -> Result<Option<f32>> {
        let w = self.value_head(game)?;
        Ok(Some(w[0] - w[2]))
    }
    fn set_threads(&mut self, threads: usize) {
        self.settings.threads = threads.max(1);
    }
    fn set_interrupt(&mut self, interrupt: Option<Interrupt>) {
        self.interrupt = interrupt;
    }
    fn forget(&mut self) {
        self.forget_tree();
    }
    fn choose_stretched(&mut self, game: &Game, limit: &SearchLimit, stretch: Option<Stretch>) -> Result<Choice> {
        self.stretch = stretch;
        let c = self.choose_within(game, limit);
        self.stretch = None;
        c
    }
    fn candidates(&self, game: &Game, pv_length: usize) -> Vec<Candidate> {
        let Some((root, m)) = self.kept_tree() else { return Vec::new() };
        if !(root.same_setup(game) && root.history() == game.history()) {
            return Vec::new();
        }
        let size = game.board().size();
        let actions = |v: Vec<usize>| v.into_iter().filter_map(|a| action_from_index(a, size)).collect::<Vec<_>>();
        m.root_child_values()
            .into_iter()
            .filter_map(|(a, n, q)| {
                let replies = m
                    .child_values_after(&[a])
                    .into_iter()
                    .filter_map(|(b, nb, qb)| Some((action_from_index(b, size)?, nb as u64, qb)))
                    .collect();
                Some(Candidate {
                    action: action_from_index(a, size)?,
                    visits: n as u64,
                    value: q,
                    pv: actions(m.principal_variation(a, pv_length)),
                    replies,
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn candidates_are_reported_chosen_first_then_by_visits_then_the_tie_breaker() {
        // (action, visits, tie-breaker)
        let mut c = vec![(1, 50u64, 0.1f32), (2, 80, 0.0), (3, 50, 0.3), (4, 10, 0.9)];
        sort_chosen_first(&mut c, Some(4), |k| *k);
        assert_eq!(c.iter().map(|k| k.0).collect::<Vec<_>>(), [4, 2, 3, 1]);
        // No chosen move (or one not among them): by visits, then the tie-breaker.
        sort_chosen_first(&mut c, None::<i32>, |k| *k);
        assert_eq!(c.iter().map(|k| k.0).collect::<Vec<_>>(), [2, 3, 1, 4]);
        sort_chosen_first(&mut c, Some(7), |k| *k);
        assert_eq!(c.iter().map(|k| k.0).collect::<Vec<_>>(), [2, 3, 1, 4]);
    }

    #[test]
    fn search_agent_plays_a_legal_move_and_respects_the_playout_cap() {
        use renju_selfplay::eval::HeuristicEvaluator;
        let mut g = Game::new(9, renju_rules::Rule::Renju, renju_rules::Protocol::Free { centre: true }, None).unwrap();
        let s = SearchSettings { limit: SearchLimit { playouts: Some(16), time: None }, ..Default::default() };
        let mut a = MctsAgent::new(Box::new(HeuristicEvaluator::new(9)), s);
        a.new_game(1).unwrap();
        for _ in 0..4 {
            let c = a.choose(&g).unwrap();
            assert!(g.is_legal(c.action));
            assert!(c.playouts <= 16 + 8, "{}", c.playouts);
            g.apply(c.action).unwrap();
        }
    }

    /// Two search threads with an interrupt (searched in slices): a time limit still ends the
    /// search, a true interrupt ends it at once, and so does a time plan's most.
    #[test]
    fn sliced_searches_end_at_the_time_limit_and_at_an_interrupt() {
        use renju_rules::Point;
        use renju_selfplay::eval::HeuristicEvaluator;
        let stones = [(7, 7), (8, 8), (7, 8)].map(|(x, y)| Point::new(x, y));
        let g = Game::from_position(15, renju_rules::Rule::Renju, &stones).unwrap();
        let agent = |stop: bool| {
            let evals: Vec<Box<dyn Evaluator>> =
                vec![Box::new(HeuristicEvaluator::new(15)), Box::new(HeuristicEvaluator::new(15))];
            let mut a = MctsAgent::with_evaluators(evals, SearchSettings { threads: 2, ..Default::default() });
            a.set_interrupt(Some(std::sync::Arc::new(move || stop)));
            a
        };
        let timed = SearchLimit { playouts: None, time: Some(Duration::from_millis(100)) };
        // Without the stop: the limit ends it (a search that ignored it would run for ever).
        let t = Instant::now();
        let c = agent(false).choose_within(&g, &timed).unwrap();
        assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
        assert!(c.playouts > 8, "{c:?}");
        // With the stop: the root's evaluation and at most one slice.
        let unlimited = SearchLimit { playouts: None, time: None };
        let t = Instant::now();
        agent(true).choose_within(&g, &unlimited).unwrap();
        assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
        // A time plan's most ends it too.
        let plan = Stretch { target: Duration::from_millis(50), most: Duration::from_millis(100) };
        let t = Instant::now();
        agent(false).choose_stretched(&g, &unlimited, Some(plan)).unwrap();
        assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
    }

    /// `lcb: Some(z)` plays the root move [`pick_by_lcb`] picks from the searched candidates
    /// (their visits and values), `None` the most visited; at z = 0 (the best value among the
    /// moves with a tenth of the most visits) the two differ in some of these positions.
    #[test]
    fn the_lcb_choice_is_the_best_bound_among_the_searched_moves() {
        use renju_rules::Point;
        use renju_selfplay::action::action_index;
        use renju_selfplay::eval::HeuristicEvaluator;
        let mut differ = 0;
        for (i, stones) in [
            vec![(7, 7), (8, 8), (7, 8)],
            vec![(7, 7), (8, 7), (6, 8), (8, 9)],
            vec![(7, 7), (6, 6), (8, 6), (9, 5), (6, 8)],
            vec![(7, 7), (7, 8), (8, 6), (6, 8), (9, 5)],
            vec![(7, 7), (8, 8), (6, 6), (9, 9), (6, 8)],
        ]
        .into_iter()
        .enumerate()
        {
            let pts: Vec<Point> = stones.iter().map(|&(x, y)| Point::new(x, y)).collect();
            let g = Game::from_position(15, renju_rules::Rule::Renju, &pts).unwrap();
            let pick = |lcb: Option<f32>| {
                let s = SearchSettings {
                    limit: SearchLimit { playouts: Some(400), time: None },
                    reuse_tree: true,
                    lcb,
                    ..Default::default()
                };
                let mut a = MctsAgent::new(Box::new(HeuristicEvaluator::new(15)), s);
                a.new_game(i as u64).unwrap();
                let c = a.choose(&g).unwrap();
                let idx = |x: Action| action_index(x, 15);
                let cands: Vec<(usize, u32, f32)> =
                    a.candidates(&g, 1).iter().map(|c| (idx(c.action), c.visits as u32, c.value)).collect();
                (idx(c.action), cands)
            };
            for z in [0.0, 1.0, 3.0] {
                let (chosen, cands) = pick(Some(z));
                assert_eq!(Some(chosen), pick_by_lcb(&cands, z), "position {i}, z = {z}");
            }
            let (most, cands) = pick(None);
            assert_eq!(Some(most), pick_by_visits(&cands, 0.0, &mut ChaCha8Rng::seed_from_u64(0)), "position {i}");
            differ += usize::from(pick(Some(0.0)).0 != most);
        }
        assert!(differ > 0, "the best value was the most visited move in every position");
    }

    /// Two search threads (two evaluators): legal moves, the playout limit exactly (the
    /// threads count leaves in flight), the tree kept between moves; `set_threads(1)` and an
    /// agent built with one evaluator search with one.
    #[test]
    fn two_search_threads_play_legal_moves_within_the_limit() {
        use renju_rules::Point;
        use renju_selfplay::eval::HeuristicEvaluator;
        let stones = [(7, 7), (8, 8), (7, 8)].map(|(x, y)| Point::new(x, y));
        let mut g = Game::from_position(15, renju_rules::Rule::Renju, &stones).unwrap();
        let s = SearchSettings {
            limit: SearchLimit { playouts: Some(300), time: None },
            threads: 2,
            reuse_tree: true,
            ..Default::default()
        };
        let evals: Vec<Box<dyn Evaluator>> =
            vec![Box::new(HeuristicEvaluator::new(15)), Box::new(HeuristicEvaluator::new(15))];
        let mut a = MctsAgent::with_evaluators(evals, s.clone());
        assert_eq!(a.threads(), 2);
        a.new_game(1).unwrap();
        for _ in 0..6 {
            let c = a.choose(&g).unwrap();
            assert!(g.is_legal(c.action));
            assert!(c.reused + c.playouts == 300 || c.value.is_some_and(|v| v.abs() == 1.0), "{c:?}");
            g.apply(c.action).unwrap();
        }
        a.set_threads(1);
        assert_eq!(a.threads(), 1);
        a.set_threads(8);
        assert_eq!(a.threads(), 2, "at most one thread per evaluator");
        assert_eq!(MctsAgent::new(Box::new(HeuristicEvaluator::new(15)), s).threads(), 1);
    }

    /// Tree reuse: after a search, our move and the opponent's answer, the next decision starts
    /// at the visits of that position's node in the kept tree (not 0) and searches up to the
    /// limit in total; a position that does not follow (an unrelated BOARD) starts from 0, and
    /// so does any position after `forget` (TAKEBACK).
    #[test]
    fn reused_tree_starts_at_the_visits_of_the_position_played() {
        use renju_rules::{Point, Rule};
        use renju_selfplay::action::action_index;
        use renju_selfplay::eval::HeuristicEvaluator;
        let cap = 300u64;
        let s = SearchSettings {
            limit: SearchLimit { playouts: Some(cap), time: None },
            reuse_tree: true,
            ..Default::default()
        };
        let mut a = MctsAgent::new(Box::new(HeuristicEvaluator::new(15)), s);
        a.new_game(1).unwrap();
        let pts = |v: &[(u8, u8)]| v.iter().map(|&(x, y)| Point::new(x, y)).collect::<Vec<_>>();
        let mut g = Game::from_position(15, Rule::Renju, &pts(&[(7, 7), (8, 8), (7, 8)])).unwrap();
        let c1 = a.choose(&g).unwrap();
        assert_eq!((c1.reused, c1.playouts), (0, cap), "a fresh tree");
        g.apply(c1.action).unwrap();
        // The opponent answers with its reply of most visits in the kept tree.
        let (root, tree) = a.kept_tree().unwrap();
        assert_eq!(root.history().len(), 3);
        let mine = action_index(c1.action, 15);
        let (reply, want) = (0..225).map(|o| (o, tree.visits_after(&[mine, o]))).max_by_key(|x| x.1).unwrap();
        assert!(want > 0);
        g.apply(Action::Place(Point::from_index(reply, 15))).unwrap();
        let c2 = a.choose(&g).unwrap();
        assert_eq!(c2.reused, want as u64, "the root starts at the reply's visits");
        assert_eq!(c2.reused + c2.playouts, cap, "the limit counts the total");
        // An unrelated position (a BOARD of another game): afresh.
        let other = Game::from_position(15, Rule::Renju, &pts(&[(3, 3), (11, 11), (3, 4), (11, 10)])).unwrap();
        let c3 = a.choose(&other).unwrap();
        assert_eq!((c3.reused, c3.playouts), (0, cap));
        // The same position again keeps every visit and, the limit reached, searches no more.
        let c4 = a.choose(&other).unwrap();
        assert_eq!((c4.reused, c4.playouts), (cap, 0));
        // After forget (a TAKEBACK) even the same position starts afresh.
        a.forget();
        assert!(a.kept_tree().is_none());
        let c5 = a.choose(&other).unwrap();
        assert_eq!((c5.reused, c5.playouts), (0, cap));
        // Without reuse every decision starts afresh.
        let mut fresh = MctsAgent::new(
            Box::new(HeuristicEvaluator::new(15)),
            SearchSettings { limit: SearchLimit { playouts: Some(cap), time: None }, ..Default::default() },
        );
        fresh.choose(&other).unwrap();
        assert_eq!(fresh.choose(&other).unwrap().reused, 0);
        assert!(fresh.kept_tree().is_none());
    }

    /// The solver (on by default): a five is a proven win, played after a few playouts with the
    /// value exactly +1, even with the shortcuts off; against a double four every move is a
    /// proven loss, reported as exactly -1, and a legal move is still played.
    #[test]
    fn the_solver_plays_a_proven_win_at_once_and_reports_a_proven_loss() {
        use renju_rules::{Point, Rule};
        use renju_selfplay::eval::HeuristicEvaluator;
        let pts = |v: &[(u8, u8)]| v.iter().map(|&(x, y)| Point::new(x, y)).collect::<Vec<_>>();
        // Black (to move) has a four on row 7, closed at (2, 7): the five is (7, 7).
        let g = Game::from_position(
            15,
            Rule::Renju,
            &pts(&[(3, 7), (2, 7), (4, 7), (0, 0), (5, 7), (14, 0), (6, 7), (0, 14)]),
        )
        .unwrap();
        for shortcuts in [true, false] {
            let mut s = SearchSettings { limit: SearchLimit { playouts: Some(16), time: None }, ..Default::default() };
            assert!(s.config.solver, "on by default for search players");
            s.config.shortcuts = shortcuts;
            let mut a = MctsAgent::new(Box::new(HeuristicEvaluator::new(15)), s);
            a.new_game(1).unwrap();
            let c = a.choose(&g).unwrap();
            assert_eq!(c.action, Action::Place(Point::new(7, 7)), "shortcuts {shortcuts}");
            assert_eq!(c.value, Some(1.0));
            assert!(c.playouts < 16, "stopped once proven: {} playouts", c.playouts);
        }
        // White to move against Black's fours on row 7 and column 10: lost whatever White does.
        let g = Game::from_position(
            15,
            Rule::Renju,
            &pts(&[
                (3, 7),
                (2, 7),
                (4, 7),
                (10, 2),
                (5, 7),
                (0, 0),
                (6, 7),
                (14, 0),
                (10, 3),
                (0, 14),
                (10, 4),
                (14, 14),
                (10, 5),
                (0, 10),
                (10, 6),
            ]),
        )
        .unwrap();
        let mut a = MctsAgent::new(Box::new(HeuristicEvaluator::new(15)), SearchSettings::default());
        let c = a.choose(&g).unwrap();
        assert_eq!(c.value, Some(-1.0));
        assert!(g.is_legal(c.action));
        assert!(c.playouts < 200, "{} playouts", c.playouts);
    }

    #[test]
    fn gumbel_agent_spends_its_playouts_and_plays_legal_moves() {
        use renju_selfplay::eval::HeuristicEvaluator;
        let mut g = Game::new(9, renju_rules::Rule::Renju, renju_rules::Protocol::Swap1, None).unwrap();
        let mut s =
            SearchSettings { limit: SearchLimit { playouts: Some(12), time: None }, explore: 2, ..Default::default() };
        s.config.algorithm = SearchAlgorithm::Gumbel;
        let mut a = MctsAgent::new(Box::new(HeuristicEvaluator::new(9)), s);
        a.new_game(3).unwrap();
        for _ in 0..6 {
            let c = a.choose(&g).unwrap();
            assert!(g.is_legal(c.action), "{:?}", c.action);
            // A fresh tree: the root's evaluation plus exactly the 12 simulations.
            assert_eq!(c.playouts, 13);
            g.apply(c.action).unwrap();
        }
    }
}
