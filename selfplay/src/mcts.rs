//! PUCT Monte-Carlo tree search (AlphaZero, Silver et al. 2018; KataGo, Wu 2019) with batched
//! leaf evaluation.
//!
//! - Priors: softmax of the policy logits over the legal actions of a node.
//! - Selection: `score = Q + c_puct * P * sqrt(N_parent) / (1 + N_child)`; unvisited children use
//!   the first-play urgency `FPU = Q_parent - fpu_reduction * sqrt(sum of visited priors)`
//!   (KataGo). Children are kept with the visited ones first and the unvisited ones sorted by
//!   prior (a fresh node is sorted by prior, and PUCT always visits the unvisited child of highest
//!   prior first, so the visited ones stay a prefix; root noise re-sorts to keep it so), hence
//!   among unvisited children only the first can win the comparison and the scan stops there.
//! - Values are backed up **by player identity**: every node stores the sum of values from
//!   `Player::First`'s view and knows who decides there, so swaps, Lianhuan doubles and offer
//!   picks (which break alternation) are handled exactly.
//! - Batched evaluation with virtual loss: [`Mcts::gather`] runs playouts until it has collected
//!   up to `k` leaves needing evaluation (each in-flight leaf counts as a loss for every decider on
//!   its path), [`Mcts::deliver`] expands them with the evaluator's output and backs up.
//! - Terminal states (five, forbidden move, no legal black move, draw by full board or stone cap)
//!   are exact values; shortcuts in plain play (see [`crate::walker`]): a node whose mover has a
//!   five is a win, one facing two opponent fives a loss, one facing a single five has that block
//!   as its only child. Optionally (`vcf_nodes`) a budgeted VCF check of both sides
//!   (`renju_rules::vcf`) at expansion: a proven win is exact, a proven threat leaves only its
//!   refutations.
//! - Dirichlet noise at the root (AlphaZero: `P = (1 - eps) P + eps Dir(alpha)`), tree reuse
//!   between moves ([`Mcts::advance`]).

use crate::action::action_space_size;
use crate::encode::{NUM_GLOBALS, NUM_PLANES};
pub use crate::gumbel::SearchAlgorithm;
use crate::gumbel::{improved_policy, GumbelParams, GumbelSearch, RootChild};
use crate::walker::{is_plain_play, Expansion, FastWalker, GameWalker};
use rand::{Rng, SeedableRng};
use rand_distr::{Distribution, Gamma};
use renju_rules::{Game, Player};
use serde::{Deserialize, Serialize};

/// Search parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SearchConfig {
    /// Exploration constant of PUCT. Default 1.5 (KataGo's `cpuctExploration` is 1.0 with a
    /// log-growing term; AlphaZero used about 1.25 at small visit counts).
    pub c_puct: f32,
    /// First-play-urgency reduction below the parent's value (KataGo). Default 0.2.
    pub fpu_reduction: f32,
    /// FPU reduction at the root (KataGo uses 0 with noise). Default 0.0.
    pub root_fpu_reduction: f32,
    /// Dirichlet total concentration: `alpha = dirichlet_alpha_total / legal actions`
    /// (KataGo's 10.83; AlphaZero's 0.03 for 361 Go points is about 10.8 in total). Default 10.0.
    pub dirichlet_alpha_total: f32,
    /// Weight of the noise at the root (AlphaZero: 0.25). Default 0.25.
    pub dirichlet_epsilon: f32,
    /// Use the immediate-win / forced-block shortcuts in plain play. Default true.
    pub shortcuts: bool,
    /// Root search: `puct` (default) or `gumbel` ([`crate::gumbel`]: Gumbel-top-k, sequential
    /// halving, the improved policy as the target; PUCT below the root; no Dirichlet noise).
    pub algorithm: SearchAlgorithm,
    /// Gumbel: most root actions considered, `m` (Danihelka et al. 2022: 16). Default 16.
    pub gumbel_considered: usize,
    /// Gumbel: `c_visit` of the transform sigma (paper: 50). Default 50.0.
    pub gumbel_c_visit: f32,
    /// Gumbel: `c_scale` of sigma (paper: 1). Default 1.0.
    pub gumbel_c_scale: f32,
    /// VCF check at node expansion in plain play (with `shortcuts`): the node budget of each
    /// solver call (`renju_rules::vcf`, nodes = attacker moves tried); 0 turns it off. A proven
    /// VCF of the mover makes the node an exact win (at the root: the winning move its only
    /// child); an opponent VCF whose refutations the same budget proves restricts the children
    /// to them (none: an exact loss). Default 0 (off).
    pub vcf_nodes: u64,
}

impl Default for SearchConfig {
    fn default() -> Self {
        SearchConfig {
            c_puct: 1.5,
            fpu_reduction: 0.2,
            root_fpu_reduction: 0.0,
            dirichlet_alpha_total: 10.0,
            dirichlet_epsilon: 0.25,
            shortcuts: true,
            algorithm: SearchAlgorithm::Puct,
            gumbel_considered: 16,
            gumbel_c_visit: 50.0,
            gumbel_c_scale: 1.0,
            vcf_nodes: 0,
        }
    }
}

const NONE: u32 = u32::MAX;
/// Where a node is in its life.
#[repr(u8)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum NodeState {
    /// Not expanded yet.
    Leaf,
    /// Expanded (children created), waiting for its evaluation.
    Pending,
    /// Expanded with priors.
    Expanded,
    /// Exact value in `terminal` (game over, or proven by a shortcut).
    Terminal,
}
use NodeState::{Expanded, Leaf, Pending, Terminal};
const F_CHECKED: u8 = 1;
const F_PRUNED: u8 = 2;
/// On an expanded node: only its first [`SORTED_PREFIX`] children are sorted by prior; the
/// others (all unvisited, none with a higher prior) are sorted when the scan first reaches them.
const F_TAIL_UNSORTED: u8 = 4;
/// Children sorted at expansion; most nodes are visited a few times, so sorting all ~200 (a
/// sixth of a self-play thread's time, measured) is mostly wasted.
const SORTED_PREFIX: usize = 16;

/// The order of a fresh node's children: prior descending (NaN equal); a stable sort keeps
/// equal priors in the order the children were made.
fn by_prior(x: &Node, y: &Node) -> std::cmp::Ordering {
    y.prior.partial_cmp(&x.prior).unwrap_or(std::cmp::Ordering::Equal)
}
/// Children scored together in [`Mcts::select`]'s fast path.
const CHUNK: usize = 8;

/// One tree node (32 bytes, pinned below): the edge from its parent (`action`, `prior`) and the
/// statistics of the position it leads to. Children of a node are contiguous in the arena.
#[derive(Clone, Copy, Debug)]
struct Node {
    action: u16,
    state: NodeState,
    flags: u8,
    /// 0 = First, 1 = Second (valid once expanded).
    decider: u8,
    prior: f32,
    n: u32,
    vl: u32,
    /// Sum of backed-up values from First's view (+1 First wins, -1 Second wins).
    w: f32,
    terminal: f32,
    first_child: u32,
    num_children: u16,
}

// The node size that the memory figures (`Mcts::tree_size`, the Gomocup brain's memory cap) use.
const _: () = assert!(std::mem::size_of::<Node>() == NODE_BYTES);

/// Bytes per tree node.
pub const NODE_BYTES: usize = 32;

impl Node {
    fn new(action: u16, prior: f32, flags: u8) -> Node {
        Node {
            action,
            state: Leaf,
            flags,
            decider: 0,
            prior,
            n: 0,
            vl: 0,
            w: 0.0,
            terminal: 0.0,
            first_child: NONE,
            num_children: 0,
        }
    }
    /// The arena indices of the children. Only meaningful once the node has children (state
    /// `Pending`, `Expanded`, or a kept `Terminal`); callers check the state first.
    fn children(&self) -> std::ops::Range<usize> {
        self.first_child as usize..self.first_child as usize + self.num_children as usize
    }
}

enum Walker {
    Fast(Box<FastWalker>),
    Game(Box<GameWalker>),
}

impl Walker {
    fn new(game: &Game) -> Walker {
        if is_plain_play(game) {
            Walker::Fast(Box::new(FastWalker::new(game)))
        } else {
            Walker::Game(Box::new(GameWalker::new(game)))
        }
    }
    fn reset(&mut self) {
        match self {
            Walker::Fast(w) => w.reset(),
            Walker::Game(w) => w.reset(),
        }
    }
    fn decider(&self) -> Player {
        match self {
            Walker::Fast(w) => w.decider(),
            Walker::Game(w) => w.decider(),
        }
    }
    fn apply(&mut self, i: usize) -> Option<f32> {
        match self {
            Walker::Fast(w) => w.apply(i),
            Walker::Game(w) => w.apply(i),
        }
    }
    fn expand(&mut self, is_root: bool, cfg: &SearchConfig, out: &mut Vec<u16>) -> Expansion {
        match self {
            Walker::Fast(w) => {
                let e = w.expand(is_root, if cfg.shortcuts { cfg.vcf_nodes } else { 0 }, out);
                if cfg.shortcuts || e == Expansion::NeedsEval {
                    e
                } else {
                    // Without shortcuts: every empty point, evaluated.
                    out.clear();
                    let size = w.board().size();
                    for i in 0..size * size {
                        if w.board().get(renju_rules::Point::from_index(i, size)).is_none() {
                            out.push(i as u16);
                        }
                    }
                    Expansion::NeedsEval
                }
            }
            Walker::Game(w) => w.expand(out),
        }
    }
    fn needs_check(&self) -> bool {
        match self {
            Walker::Fast(w) => w.needs_check(),
            Walker::Game(_) => false,
        }
    }
    fn is_legal(&self, i: usize) -> bool {
        match self {
            Walker::Fast(w) => w.is_legal(i),
            Walker::Game(_) => true,
        }
    }
    /// Encode into a freshly zero-filled `planes` buffer.
    fn encode_zeroed(&self, planes: &mut [f32], globals: &mut [f32]) {
        match self {
            Walker::Fast(w) => w.encode_zeroed(planes, globals),
            Walker::Game(w) => w.encode(planes, globals),
        }
    }
}

/// Counters of one search (since creation or the last [`Mcts::take_stats`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SearchStats {
    /// Playouts completed (backed up): evaluated leaves plus terminal / proven leaves.
    pub playouts: u64,
    /// Leaves sent for evaluation.
    pub evaluations: u64,
    /// Playouts abandoned because they reached a leaf already awaiting evaluation.
    pub collisions: u64,
}

/// One search tree over a [`Game`], reusable across moves.
pub struct Mcts {
    cfg: SearchConfig,
    size: usize,
    nodes: Vec<Node>,
    root: u32,
    walker: Walker,
    /// Paths of leaves awaiting evaluation, flattened; `pending[k] = (leaf, path start, path end)`.
    pending: Vec<(u32, u32, u32)>,
    paths: Vec<u32>,
    path: Vec<u32>,
    scratch: Vec<u16>,
    /// Scratch of [`Mcts::sort_children`]: `(prior, position)` keys and a copy of the children.
    sort_keys: Vec<(f32, u32)>,
    sort_nodes: Vec<Node>,
    noise_wanted: bool,
    /// A Gumbel root search asked for by [`Mcts::start_gumbel`] and not yet started (the root is
    /// not expanded): `(budget, noise, seed of the noise)`.
    gumbel_wanted: Option<(u32, bool, u64)>,
    gumbel: Option<GumbelSearch>,
    stats: SearchStats,
}

fn sign(decider: u8) -> f32 {
    if decider == 0 {
        1.0
    } else {
        -1.0
    }
}

impl Mcts {
    /// A fresh tree rooted at `game` (which must not be over).
    pub fn new(game: &Game, cfg: SearchConfig) -> Mcts {
        let size = game.board().size();
        let mut nodes = Vec::with_capacity(4096);
        nodes.push(Node::new(0, 1.0, F_CHECKED));
        Mcts {
            cfg,
            size,
            nodes,
            root: 0,
            walker: Walker::new(game),
            pending: Vec::new(),
            paths: Vec::new(),
            path: Vec::with_capacity(64),
            scratch: Vec::with_capacity(400),
            sort_keys: Vec::with_capacity(400),
            sort_nodes: Vec::with_capacity(400),
            noise_wanted: false,
            gumbel_wanted: None,
            gumbel: None,
            stats: SearchStats::default(),
        }
    }

    /// The search parameters.
    pub fn config(&self) -> &SearchConfig {
        &self.cfg
    }

    /// Visits of the root (including those kept by tree reuse).
    pub fn root_visits(&self) -> u32 {
        self.nodes[self.root as usize].n
    }

    /// Number of leaves awaiting [`Mcts::deliver`].
    pub fn pending(&self) -> usize {
        self.pending.len()
    }

    /// Counters since the last call; resets them.
    pub fn take_stats(&mut self) -> SearchStats {
        std::mem::take(&mut self.stats)
    }

    /// Ask for Dirichlet noise on the root priors for this move (applied as soon as the root
    /// is expanded; call at the start of a move's search, with nothing pending).
    pub fn add_root_noise<R: Rng>(&mut self, rng: &mut R) {
        self.noise_wanted = true;
        self.apply_noise_if_ready(rng);
    }

    fn apply_noise_if_ready<R: Rng>(&mut self, rng: &mut R) {
        let r = self.nodes[self.root as usize];
        if !self.noise_wanted || r.state != Expanded || !self.pending.is_empty() {
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
        self.sort_root_after_noise();
    }

    /// Restores [`Mcts::select`]'s invariant at the root after its priors changed: visited
    /// children first, then the unvisited ones by prior, descending. (A plain sort by prior
    /// would put an unvisited child that the noise lifted before visited children, and the scan,
    /// which stops at the first unvisited child, would never score those visited children.)
    fn sort_root_after_noise(&mut self) {
        self.nodes[self.root as usize].flags &= !F_TAIL_UNSORTED;
        let kids = self.nodes[self.root as usize].children();
        self.nodes[kids].sort_by(|x, y| {
            let (vx, vy) = (x.n + x.vl > 0, y.n + y.vl > 0);
            vy.cmp(&vx).then(y.prior.partial_cmp(&x.prior).unwrap_or(std::cmp::Ordering::Equal))
        });
    }

    /// Order the children of the freshly expanded `node` for [`Mcts::select`] as a stable sort
    /// by prior (descending; equal priors in the order made, as the line-pattern net gives
    /// identical logits to points with identical surroundings) would. Only the first
    /// [`SORTED_PREFIX`] are placed now: the highest priors, chosen by a selection over
    /// `(prior, position)` keys and sorted; the others follow in the order made, and
    /// [`Mcts::sort_tail`] sorts them stably if the scan ever reaches them. The final order is
    /// the full stable sort's, so the search is the same, only cheaper.
    fn sort_children(&mut self, node: u32) {
        let kids = self.nodes[node as usize].children();
        let n = kids.len();
        if n <= SORTED_PREFIX || node == self.root {
            // The root in full: root noise and the Gumbel root go through every child in order.
            self.nodes[kids].sort_by(by_prior);
            return;
        }
        self.sort_prefix(node);
    }

    /// The partial order of [`Mcts::sort_children`] for a node of more than [`SORTED_PREFIX`]
    /// children: the sorted prefix, then the rest in the order made; sets [`F_TAIL_UNSORTED`].
    fn sort_prefix(&mut self, node: u32) {
        let kids = self.nodes[node as usize].children();
        let n = kids.len();
        let key_order = |a: &(f32, u32), b: &(f32, u32)| {
            b.0.partial_cmp(&a.0).unwrap_or(std::cmp::Ordering::Equal).then(a.1.cmp(&b.1))
        };
        let keys = &mut self.sort_keys;
        keys.clear();
        keys.extend(self.nodes[kids.clone()].iter().enumerate().map(|(i, c)| (c.prior, i as u32)));
        keys.select_nth_unstable_by(SORTED_PREFIX - 1, key_order);
        keys[..SORTED_PREFIX].sort_unstable_by(key_order);
        let top = &mut keys[..SORTED_PREFIX];
        let out = &mut self.sort_nodes;
        out.clear();
        out.extend(top.iter().map(|&(_, i)| self.nodes[kids.start + i as usize]));
        // The rest in the order made: walk the positions, skipping the chosen ones (sorted).
        top.sort_unstable_by_key(|k| k.1);
        let mut next = top.iter().map(|k| k.1 as usize).peekable();
        for i in 0..n {
            if next.peek() == Some(&i) {
                next.next();
            } else {
                out.push(self.nodes[kids.start + i]);
            }
        }
        self.nodes[kids].copy_from_slice(out);
        self.nodes[node as usize].flags |= F_TAIL_UNSORTED;
    }

    /// Sorts the children of `node` after the first [`SORTED_PREFIX`] (see [`F_TAIL_UNSORTED`]),
    /// stably, so equal priors keep the order made.
    fn sort_tail(&mut self, node: u32) {
        let kids = self.nodes[node as usize].children();
        self.nodes[kids.start + SORTED_PREFIX..kids.end].sort_by(by_prior);
        self.nodes[node as usize].flags &= !F_TAIL_UNSORTED;
    }

    /// Run playouts until `max_leaves` leaves await evaluation, or `max_playouts` playouts were
    /// attempted (terminal ones complete at once). The leaves' encodings are appended to
    /// `planes` (`[k, C, S, S]`) and `globals` (`[k, G]`). Returns the number of leaves added.
    pub fn gather(
        &mut self,
        max_leaves: usize,
        max_playouts: usize,
        planes: &mut Vec<f32>,
        globals: &mut Vec<f32>,
    ) -> usize {
        let mut added = 0;
        let pl = NUM_PLANES * self.size * self.size;
        for _ in 0..max_playouts {
            if added >= max_leaves {
                break;
            }
            let gumbel = self.gumbel.is_some() || self.gumbel_wanted.is_some();
            if gumbel && !self.plan_gumbel() {
                break;
            }
            let forced = self.gumbel.as_ref().and_then(|g| g.next()).is_some();
            let end = self.playout();
            if forced && !matches!(end, PlayoutEnd::Collision) {
                self.gumbel.as_mut().expect("gumbel search").spend();
            }
            match end {
                PlayoutEnd::Done => {}
                PlayoutEnd::Collision => {
                    self.stats.collisions += 1;
                    self.walker.reset();
                    break;
                }
                PlayoutEnd::Leaf => {
                    let s = planes.len();
                    planes.resize(s + pl, 0.0);
                    let g = globals.len();
                    globals.resize(g + NUM_GLOBALS, 0.0);
                    self.walker.encode_zeroed(&mut planes[s..], &mut globals[g..]);
                    added += 1;
                    self.stats.evaluations += 1;
                }
            }
            self.walker.reset();
        }
        added
    }

    /// One playout from the root.
    fn playout(&mut self) -> PlayoutEnd {
        self.path.clear();
        let mut node = self.root;
        self.path.push(node);
        let mut depth = 0usize;
        loop {
            let nd = self.nodes[node as usize];
            match nd.state {
                Terminal => {
                    let v = nd.terminal;
                    self.backup_direct(v);
                    return PlayoutEnd::Done;
                }
                Pending => return PlayoutEnd::Collision,
                Leaf => {
                    let decider = self.walker.decider().index() as u8;
                    let mut acts = std::mem::take(&mut self.scratch);
                    let mut e = self.walker.expand(depth == 0, &self.cfg, &mut acts);
                    let checked = if !self.walker.needs_check() {
                        F_CHECKED
                    } else if depth == 0 {
                        e = self.repair_root_actions(&mut acts, e, decider);
                        F_CHECKED
                    } else {
                        // Deeper children are checked lazily, in `select`.
                        0
                    };
                    match e {
                        Expansion::Terminal(v) => {
                            self.scratch = acts;
                            let n = &mut self.nodes[node as usize];
                            n.state = Terminal;
                            n.terminal = v;
                            self.backup_direct(v);
                            return PlayoutEnd::Done;
                        }
                        Expansion::Forced => {
                            let p = 1.0 / acts.len() as f32;
                            self.create_children(node, decider, &acts, p, checked);
                            self.nodes[node as usize].state = Expanded;
                            self.scratch = acts;
                            continue;
                        }
                        Expansion::NeedsEval => {
                            self.create_children(node, decider, &acts, 0.0, checked);
                            self.scratch = acts;
                            self.nodes[node as usize].state = Pending;
                            for &i in &self.path {
                                self.nodes[i as usize].vl += 1;
                            }
                            let s = self.paths.len() as u32;
                            self.paths.extend_from_slice(&self.path);
                            self.pending.push((node, s, self.paths.len() as u32));
                            return PlayoutEnd::Leaf;
                        }
                    }
                }
                Expanded => {
                    let forced = if depth == 0 { self.gumbel.as_ref().and_then(|g| g.next()) } else { None };
                    let Some(child) = forced.or_else(|| self.select(node, depth == 0)) else {
                        // Every child was pruned as forbidden: Black has no legal move and loses.
                        let v = -sign(nd.decider);
                        let n = &mut self.nodes[node as usize];
                        n.state = Terminal;
                        n.terminal = v;
                        self.backup_direct(v);
                        return PlayoutEnd::Done;
                    };
                    let action = self.nodes[child as usize].action as usize;
                    let t = self.walker.apply(action);
                    if let Some(v) = t {
                        let c = &mut self.nodes[child as usize];
                        if c.state == Leaf {
                            c.state = Terminal;
                            c.terminal = v;
                        }
                    }
                    self.path.push(child);
                    node = child;
                    depth += 1;
                }
            }
        }
    }

    /// Root legality repair: the root's children must be exactly the legal moves (policy targets
    /// never hold a forbidden point), while deeper children are checked lazily. Drops the
    /// forbidden ones from `acts`; when the only block of a five was forbidden (Black cannot
    /// block), every legal move becomes a child to evaluate; with no legal move left the root
    /// decider has lost. Returns the expansion to apply.
    fn repair_root_actions(&self, acts: &mut Vec<u16>, e: Expansion, decider: u8) -> Expansion {
        let w = &self.walker;
        acts.retain(|&a| w.is_legal(a as usize));
        let mut e = e;
        if acts.is_empty() && e == Expansion::Forced {
            if let Walker::Fast(fw) = &self.walker {
                let size = self.size;
                acts.extend(
                    (0..size * size)
                        .filter(|&i| {
                            fw.board().get(renju_rules::Point::from_index(i, size)).is_none() && fw.is_legal(i)
                        })
                        .map(|i| i as u16),
                );
            }
            e = Expansion::NeedsEval;
        }
        if acts.is_empty() {
            e = Expansion::Terminal(-sign(decider));
        }
        e
    }

    /// Runs this move's search as a Gumbel root search of `budget` simulations (module
    /// [`crate::gumbel`]; the root's own evaluation, when it is not expanded yet, comes first and
    /// is not counted), with Gumbel noise when `noise` (self-play; evaluation plays without).
    /// Call at the start of a move's search, with nothing pending; [`Mcts::search_remaining`]
    /// then counts the simulations left, [`Mcts::gumbel_action`] and [`Mcts::gumbel_policy`]
    /// give the move and the policy target.
    pub fn start_gumbel<R: Rng>(&mut self, budget: u32, noise: bool, rng: &mut R) {
        self.gumbel = None;
        self.gumbel_wanted = Some((budget.max(1), noise, rng.gen()));
        self.start_gumbel_if_ready();
    }

    fn start_gumbel_if_ready(&mut self) {
        let Some((budget, noise, seed)) = self.gumbel_wanted else { return };
        if self.nodes[self.root as usize].state != Expanded || !self.pending.is_empty() {
            return;
        }
        self.gumbel_wanted = None;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        self.gumbel = Some(GumbelSearch::new(&self.gumbel_children(), budget, self.gumbel_params(), noise, &mut rng));
    }

    /// Before a playout of a Gumbel search: starts it or plans its next phase when possible.
    /// Returns whether a playout may run now (the root still needs its evaluation, or a
    /// simulation is planned); `false` at a phase boundary with leaves pending, or when done.
    fn plan_gumbel(&mut self) -> bool {
        self.start_gumbel_if_ready();
        let Some(mut g) = self.gumbel.take() else {
            // Not started: the root is not expanded yet; this playout evaluates it.
            return self.nodes[self.root as usize].state == Leaf;
        };
        if g.next().is_none() && self.pending.is_empty() {
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

    fn create_children(&mut self, node: u32, decider: u8, acts: &[u16], prior: f32, flags: u8) {
        let first = self.nodes.len() as u32;
        self.nodes.extend(acts.iter().map(|&a| Node::new(a, prior, flags)));
        let n = &mut self.nodes[node as usize];
        n.first_child = first;
        n.num_children = acts.len() as u16;
        n.decider = decider;
    }

    /// PUCT selection among the children of `node`; lazily prunes forbidden black points.
    fn select(&mut self, node: u32, is_root: bool) -> Option<u32> {
        let nd = self.nodes[node as usize];
        let s = sign(nd.decider);
        let parent_n = (nd.n + nd.vl) as f32;
        let sqrt_n = parent_n.max(1.0).sqrt();
        let parent_q = if nd.n > 0 { s * nd.w / nd.n as f32 } else { 0.0 };
        let fpu_red = if is_root { self.cfg.root_fpu_reduction } else { self.cfg.fpu_reduction };
        let c = self.cfg.c_puct;
        let mut visited_prior = 0.0f32;
        let mut best = None;
        let mut best_score = f32::NEG_INFINITY;
        let std::ops::Range { mut start, end } = nd.children();
        // Scan the visited children over a slice (no bounds checks) up to the first unvisited
        // live child; that one is checked for legality (if not yet), scored with the FPU and
        // ends the scan, or, when forbidden, is pruned and the scan resumes after it.
        loop {
            let mut stop = None;
            let kids = &self.nodes[start..end];
            let mut k = 0;
            while k < kids.len() {
                // Fast path: CHUNK live visited children in a row. Their scores are computed
                // independently (the compiler may use vector arithmetic: the same IEEE operations
                // in the same order per child, so the same values), then the running prior sum
                // and the first-maximum comparison go through them in order, as below.
                if let Some(ch) = kids.get(k..k + CHUNK) {
                    let ch: &[Node; CHUNK] = ch.try_into().expect("chunk");
                    if ch.iter().all(|x| x.flags & F_PRUNED == 0 && x.n + x.vl != 0) {
                        let mut sc = [0.0f32; CHUNK];
                        for (o, x) in sc.iter_mut().zip(ch) {
                            let nn = x.n + x.vl;
                            let q = (s * x.w - x.vl as f32) / nn as f32;
                            *o = q + c * x.prior * sqrt_n / (1.0 + nn as f32);
                        }
                        for (j, (&score, x)) in sc.iter().zip(ch).enumerate() {
                            visited_prior += x.prior;
                            if score > best_score {
                                best_score = score;
                                best = Some((start + k + j) as u32);
                            }
                        }
                        k += CHUNK;
                        continue;
                    }
                }
                let ch = &kids[k];
                k += 1;
                if ch.flags & F_PRUNED != 0 {
                    continue;
                }
                let nn = ch.n + ch.vl;
                if nn == 0 {
                    stop = Some(start + k - 1);
                    break;
                }
                visited_prior += ch.prior;
                let q = (s * ch.w - ch.vl as f32) / nn as f32;
                let score = q + c * ch.prior * sqrt_n / (1.0 + nn as f32);
                if score > best_score {
                    best_score = score;
                    best = Some((start + k - 1) as u32);
                }
            }
            let Some(i) = stop else { break };
            if self.nodes[node as usize].flags & F_TAIL_UNSORTED != 0 && i >= nd.first_child as usize + SORTED_PREFIX {
                // The scan reached the unsorted tail: sort it and look again from here (its
                // best child comes first; nothing before `i` changes).
                self.sort_tail(node);
                start = i;
                continue;
            }
            let ch = self.nodes[i];
            if ch.flags & F_CHECKED == 0 {
                if !self.walker.is_legal(ch.action as usize) {
                    self.nodes[i].flags |= F_PRUNED;
                    start = i + 1;
                    continue;
                }
                self.nodes[i].flags |= F_CHECKED;
            }
            let q = parent_q - fpu_red * visited_prior.sqrt();
            let score = q + c * ch.prior * sqrt_n;
            if score > best_score {
                best = Some(i as u32);
            }
            break;
        }
        best
    }

    fn backup_direct(&mut self, v_first: f32) {
        for &i in &self.path {
            let n = &mut self.nodes[i as usize];
            n.n += 1;
            n.w += v_first;
        }
        self.stats.playouts += 1;
    }

    /// Deliver the evaluator's output for the leaves of the last [`Mcts::gather`] calls, in
    /// order: `logits: [k, A]`, `wdl: [k, 3]` (deciding player's view). Expands the leaves (softmax
    /// of the logits over their children) and backs the values up, removing the virtual loss.
    ///
    /// # Panics
    /// When the lengths do not match the number of pending leaves.
    pub fn deliver<R: Rng>(&mut self, logits: &[f32], wdl: &[f32], rng: &mut R) {
        let a = action_space_size(self.size);
        let k = self.pending.len();
        assert_eq!(logits.len(), k * a, "deliver: logits has {} floats, expected {k} leaves x {a}", logits.len());
        assert_eq!(wdl.len(), k * 3, "deliver: wdl has {} floats, expected {k} leaves x 3", wdl.len());
        let pending = std::mem::take(&mut self.pending);
        for (j, &(leaf, ps, pe)) in pending.iter().enumerate() {
            let row = &logits[j * a..(j + 1) * a];
            let nd = self.nodes[leaf as usize];
            let (c0, c1) = (nd.children().start, nd.children().end);
            let mut m = f32::NEG_INFINITY;
            for ch in &self.nodes[c0..c1] {
                m = m.max(row[ch.action as usize]);
            }
            let mut total = 0.0;
            // The exponentials go into the priors directly, then are normalised in place.
            for ch in &mut self.nodes[c0..c1] {
                let e = (row[ch.action as usize] - m).exp();
                ch.prior = e;
                total += e;
            }
            let inv = if total > 0.0 && total.is_finite() { 1.0 / total } else { 0.0 };
            for ch in &mut self.nodes[c0..c1] {
                ch.prior = if inv > 0.0 { ch.prior * inv } else { 1.0 / (c1 - c0) as f32 };
            }
            self.nodes[leaf as usize].state = Expanded;
            self.sort_children(leaf);
            let w = &wdl[j * 3..j * 3 + 3];
            let v = (w[0] - w[2]) * sign(nd.decider);
            for &i in &self.paths[ps as usize..pe as usize] {
                let n = &mut self.nodes[i as usize];
                n.vl -= 1;
                n.n += 1;
                n.w += v;
            }
            self.stats.playouts += 1;
        }
        self.paths.clear();
        self.pending = pending;
        self.pending.clear();
        self.apply_noise_if_ready(rng);
        self.start_gumbel_if_ready();
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
    /// backed-up value from the **root decider's** view (0 for unvisited children).
    pub fn root_child_values(&self) -> Vec<(usize, u32, f32)> {
        let r = self.nodes[self.root as usize];
        if r.state != Expanded {
            return Vec::new();
        }
        let s = sign(r.decider);
        self.nodes[r.children()]
            .iter()
            .filter(|c| c.flags & F_PRUNED == 0)
            .map(|c| (c.action as usize, c.n, if c.n > 0 { s * c.w / c.n as f32 } else { 0.0 }))
            .collect()
    }

    /// Search value (win - loss) of the root for the deciding player, in `[-1, 1]`.
    pub fn root_value(&self) -> f32 {
        let r = self.nodes[self.root as usize];
        if r.n == 0 {
            0.0
        } else {
            sign(r.decider) * r.w / r.n as f32
        }
    }

    /// The root visit distribution over the action space `[A]`, summing to 1 (the normalised
    /// priors while no child has a visit yet, as for a forced move; all zero before expansion).
    pub fn policy_target(&self) -> Vec<f32> {
        let mut p = vec![0.0; action_space_size(self.size)];
        let ch = self.root_children();
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

    /// Move the root to the child reached by `action` (tree reuse), with `game` the position
    /// after it. Nodes outside the kept subtree are dropped. Requires nothing pending.
    pub fn advance(&mut self, action: usize, game: &Game) {
        assert!(self.pending.is_empty(), "advance with leaves pending evaluation");
        self.noise_wanted = false;
        self.gumbel_wanted = None;
        self.gumbel = None;
        let r = self.nodes[self.root as usize];
        let mut keep = NONE;
        if r.state == Expanded {
            for i in r.children() {
                if self.nodes[i].action as usize == action {
                    keep = i as u32;
                }
            }
        }
        let mut fresh = Vec::with_capacity(self.nodes.len().max(4096));
        if keep != NONE && self.nodes[keep as usize].state == Expanded {
            // Breadth-first copy keeps children contiguous.
            let mut root = self.nodes[keep as usize];
            root.prior = 1.0;
            fresh.push(root);
            let mut q = 0usize;
            while q < fresh.len() {
                let nd: Node = fresh[q];
                if nd.first_child != NONE && nd.num_children > 0 && nd.state == Expanded {
                    let start = fresh.len() as u32;
                    fresh.extend_from_slice(&self.nodes[nd.children()]);
                    fresh[q].first_child = start;
                } else {
                    fresh[q].first_child = NONE;
                    fresh[q].num_children = 0;
                    if fresh[q].state != Terminal {
                        fresh[q].state = Leaf;
                    }
                }
                q += 1;
            }
            // The kept root's children legality was checked lazily; check them all now.
        } else {
            fresh.push(Node::new(0, 1.0, F_CHECKED));
        }
        self.nodes = fresh;
        self.root = 0;
        self.walker = Walker::new(game);
        // The root's children in their full order (root noise and the Gumbel root go through
        // them in order): a kept interior node may still have its tail unsorted.
        if self.nodes[0].flags & F_TAIL_UNSORTED != 0 {
            self.sort_tail(0);
        }
        // Root children must be exactly legal (the policy target never holds a forbidden point).
        let r = self.nodes[0];
        if r.state == Expanded {
            let mut live = 0;
            for i in r.children() {
                let c = self.nodes[i];
                if c.flags & (F_CHECKED | F_PRUNED) == 0 {
                    let legal = self.walker.is_legal(c.action as usize);
                    self.nodes[i].flags |= if legal { F_CHECKED } else { F_PRUNED };
                }
                live += (self.nodes[i].flags & F_PRUNED == 0) as usize;
            }
            if live == 0 {
                // Only forbidden blocks were kept: start afresh so the root lists every legal move.
                self.nodes.clear();
                self.nodes.push(Node::new(0, 1.0, F_CHECKED));
            }
        }
    }

    /// Number of nodes in the arena (memory use is [`NODE_BYTES`] = 32 bytes per node, plus the
    /// arena's spare capacity).
    pub fn tree_size(&self) -> usize {
        self.nodes.len()
    }

    /// Whether the root is expanded with a single legal child (a forced move: no search needed).
    pub fn root_forced(&self) -> Option<usize> {
        let ch = self.root_children();
        (ch.len() == 1).then(|| ch[0].0)
    }
}

enum PlayoutEnd {
    Done,
    Leaf,
    Collision,
}

/// Run a whole search on one tree with a synchronous evaluator call per batch: playouts until
/// the root has `visits` visits, leaves evaluated `batch` at a time by `eval`
/// (`planes, globals, n -> (logits, wdl)`). Used by tests, benches and single-game play.
pub fn search_with<R: Rng, F>(mcts: &mut Mcts, visits: u32, batch: usize, rng: &mut R, eval: F) -> anyhow::Result<()>
where
    F: FnMut(&[f32], &[f32], usize) -> anyhow::Result<crate::eval::EvalOutput>,
{
    search_until(mcts, visits, batch, None, rng, eval)
}

/// [`search_with`], stopping early (after the current batch) once `deadline` has passed. A
/// Gumbel search ([`Mcts::start_gumbel`]) runs until its budget is spent (`visits` is ignored).
pub fn search_until<R: Rng, F>(
    mcts: &mut Mcts,
    visits: u32,
    batch: usize,
    deadline: Option<std::time::Instant>,
    rng: &mut R,
    mut eval: F,
) -> anyhow::Result<()>
where
    F: FnMut(&[f32], &[f32], usize) -> anyhow::Result<crate::eval::EvalOutput>,
{
    let mut planes = Vec::new();
    let mut globals = Vec::new();
    let mut stalls = 0;
    while mcts.search_remaining(visits) > 0 {
        if deadline.is_some_and(|d| std::time::Instant::now() >= d) {
            break;
        }
        planes.clear();
        globals.clear();
        let before = mcts.root_visits();
        let want = mcts.search_remaining(visits) as usize;
        let k = mcts.gather(batch.min(want).max(1), want.max(1), &mut planes, &mut globals);
        if k > 0 {
            let out = eval(&planes, &globals, k)?;
            mcts.deliver(&out.policy_logits, &out.wdl, rng);
        }
        if mcts.root_visits() == before {
            stalls += 1;
            anyhow::ensure!(stalls < 1000, "search made no progress (root visits stuck at {before})");
        } else {
            stalls = 0;
        }
    }
    Ok(())
}

/// Picks a root action from `(action index, visits, prior)` children (as
/// [`Mcts::root_children`] gives them), the one move-choice rule of self-play and the arena:
/// with `temperature` below 0.01, or no visits at all, the most visited child (ties: the higher
/// prior, then the later child); otherwise a child sampled in proportion to `N^(1/T)` (AlphaZero's
/// move temperature). `None` when there are no children.
pub fn pick_by_visits<R: Rng>(children: &[(usize, u32, f32)], temperature: f32, rng: &mut R) -> Option<usize> {
    let best = children
        .iter()
        .max_by(|a, b| a.1.cmp(&b.1).then(a.2.partial_cmp(&b.2).unwrap_or(std::cmp::Ordering::Equal)))?;
    if temperature < 0.01 || best.1 == 0 {
        return Some(best.0);
    }
    let mx = best.1 as f64;
    let w: Vec<f64> = children.iter().map(|c| (c.1 as f64 / mx).powf(1.0 / temperature as f64)).collect();
    let total: f64 = w.iter().sum();
    let mut r = rng.gen::<f64>() * total;
    for (c, wi) in children.iter().zip(&w) {
        if r < *wi {
            return Some(c.0);
        }
        r -= wi;
    }
    Some(best.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::{Evaluator, HeuristicEvaluator};
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;
    use renju_rules::{Action, Point, Protocol, Rule};

    #[test]
    fn pick_by_visits_argmax_ties_and_temperature() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        assert_eq!(pick_by_visits(&[], 1.0, &mut rng), None);
        // Most visited; equal visits go to the higher prior.
        let ch = [(3, 10, 0.1), (5, 12, 0.2), (7, 12, 0.5), (9, 0, 0.9)];
        assert_eq!(pick_by_visits(&ch, 0.0, &mut rng), Some(7));
        // No visits at all: the highest prior.
        assert_eq!(pick_by_visits(&[(1, 0, 0.2), (2, 0, 0.7)], 1.0, &mut rng), Some(2));
        // Temperature 1 samples in proportion to the visits: unvisited children never.
        let mut counts = [0usize; 10];
        for _ in 0..2000 {
            counts[pick_by_visits(&ch, 1.0, &mut rng).unwrap()] += 1;
        }
        assert_eq!(counts[9], 0);
        let share = counts[3] as f64 / 2000.0;
        assert!((share - 10.0 / 34.0).abs() < 0.04, "{counts:?}");
    }

    /// PUCT scores of every live child of `node`, from the definitions in the module docs
    /// (visited: `Q + c P sqrt(N) / (1 + n)`; unvisited: `FPU + c P sqrt(N)`), no virtual loss.
    fn reference_scores(m: &Mcts, node: u32, is_root: bool) -> Vec<(u32, f32)> {
        let nd = m.nodes[node as usize];
        let s = sign(nd.decider);
        let sqrt_n = (nd.n as f32).max(1.0).sqrt();
        let live: Vec<u32> = nd.children().filter(|&i| m.nodes[i].flags & F_PRUNED == 0).map(|i| i as u32).collect();
        let visited_prior: f32 = live.iter().map(|&i| m.nodes[i as usize]).filter(|c| c.n > 0).map(|c| c.prior).sum();
        let red = if is_root { m.cfg.root_fpu_reduction } else { m.cfg.fpu_reduction };
        let fpu = s * nd.w / nd.n.max(1) as f32 - red * visited_prior.sqrt();
        live.iter()
            .map(|&i| {
                let c = m.nodes[i as usize];
                let u = m.cfg.c_puct * c.prior * sqrt_n;
                (i, if c.n > 0 { s * c.w / c.n as f32 + u / (1.0 + c.n as f32) } else { fpu + u })
            })
            .collect()
    }

    fn reused_tree(seed: u64) -> Mcts {
        let mut g = Game::new(15, Rule::Renju, Protocol::Free { centre: true }, None).unwrap();
        for (x, y) in [(7, 7), (8, 8), (7, 8)] {
            g.apply(Action::Place(Point::new(x, y))).unwrap();
        }
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut m = Mcts::new(&g, SearchConfig::default());
        let mut ev = HeuristicEvaluator::new(15);
        search_with(&mut m, 400, 8, &mut rng, |p, gl, n| ev.evaluate(p, gl, n)).unwrap();
        let (best, _, _) = m.root_children().into_iter().max_by_key(|c| c.1).unwrap();
        g.apply(crate::action::action_from_index(best, 15).unwrap()).unwrap();
        m.advance(best, &g);
        m
    }

    /// The partial sort's two steps give exactly the full stable sort by prior, ties included
    /// (the line-pattern net gives equal priors to points with equal surroundings): the prefix
    /// holds the first `SORTED_PREFIX` of it, the rest stays in the order made, and sorting the
    /// tail completes it.
    #[test]
    fn sort_prefix_then_tail_is_the_stable_sort_by_prior() {
        let g = Game::new(15, Rule::Renju, Protocol::Free { centre: false }, None).unwrap();
        for (seed, levels) in [(1u64, 3u32), (2, 5), (3, 40), (4, 100_000)] {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let mut m = Mcts::new(&g, SearchConfig::default());
            let mut ev = HeuristicEvaluator::new(15);
            search_with(&mut m, 1, 1, &mut rng, |p, gl, n| ev.evaluate(p, gl, n)).unwrap();
            let root = m.root;
            let kids: Vec<usize> = m.nodes[root as usize].children().collect();
            // Priors from `levels` values: few levels give long runs of ties.
            for &i in &kids {
                m.nodes[i].prior = (1 + rng.gen_range(0..levels)) as f32 / levels as f32;
            }
            let made: Vec<(u16, f32)> = kids.iter().map(|&i| (m.nodes[i].action, m.nodes[i].prior)).collect();
            let mut want = made.clone();
            want.sort_by(|a, b| b.1.partial_cmp(&a.1).unwrap()); // stable
            m.sort_prefix(root);
            let got =
                |m: &Mcts| -> Vec<(u16, f32)> { kids.iter().map(|&i| (m.nodes[i].action, m.nodes[i].prior)).collect() };
            let after = got(&m);
            assert_eq!(after[..SORTED_PREFIX], want[..SORTED_PREFIX], "seed {seed}: the prefix");
            let rest: Vec<(u16, f32)> =
                made.iter().filter(|c| !want[..SORTED_PREFIX].iter().any(|w| w.0 == c.0)).cloned().collect();
            assert_eq!(after[SORTED_PREFIX..], rest[..], "seed {seed}: the rest in the order made");
            m.sort_tail(root);
            assert_eq!(got(&m), want, "seed {seed}: prefix + sorted tail");
        }
    }

    /// Children are sorted only 16 deep at expansion; select must still be the PUCT argmax over
    /// every live child (the reference scores all of them, in no particular order) once the scan
    /// goes past the sorted prefix, and the order must then be the full sort by prior.
    #[test]
    fn select_past_the_sorted_prefix_is_still_the_puct_argmax() {
        let g = Game::new(15, Rule::Renju, Protocol::Free { centre: false }, None).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let mut m = Mcts::new(&g, SearchConfig::default());
        let mut ev = HeuristicEvaluator::new(15);
        search_with(&mut m, 1, 1, &mut rng, |p, gl, n| ev.evaluate(p, gl, n)).unwrap();
        let root = m.root;
        let kids: Vec<usize> = m.nodes[root as usize].children().collect();
        assert!(kids.len() > 3 * SORTED_PREFIX, "{} children", kids.len());
        let raw: Vec<f32> = kids.iter().map(|_| rng.gen_range(0.01f32..1.0)).collect();
        let total: f32 = raw.iter().sum();
        for (&i, &p) in kids.iter().zip(&raw) {
            m.nodes[i].prior = p / total;
        }
        m.sort_prefix(root); // what an interior node gets (the root itself is sorted in full)
        assert!(m.nodes[root as usize].flags & F_TAIL_UNSORTED != 0);
        let mut distinct = std::collections::HashSet::new();
        for step in 0..400 {
            // The reference's scores by action (select may reorder the children).
            let scores: Vec<(u16, f32)> =
                reference_scores(&m, root, true).into_iter().map(|(i, sc)| (m.nodes[i as usize].action, sc)).collect();
            let best = scores.iter().fold(f32::NEG_INFINITY, |b, x| b.max(x.1));
            let got = m.select(root, true).expect("a child");
            let a = m.nodes[got as usize];
            let score = scores.iter().find(|x| x.0 == a.action).expect("a live child").1;
            assert_eq!(score, best, "step {step}: select chose action {} of a lower score", a.action);
            // Every visit is a loss for the root's decider, so new children keep being tried.
            let v = -sign(m.nodes[root as usize].decider);
            m.nodes[got as usize].n += 1;
            m.nodes[got as usize].w += v;
            m.nodes[root as usize].n += 1;
            m.nodes[root as usize].w += v;
            distinct.insert(a.action);
        }
        assert!(distinct.len() > 2 * SORTED_PREFIX, "the scan went past the prefix: {} children tried", distinct.len());
        assert_eq!(m.nodes[root as usize].flags & F_TAIL_UNSORTED, 0, "the tail was sorted");
        // Visited children form a prefix in prior order, the unvisited follow in prior order.
        let order: Vec<Node> = m.nodes[m.nodes[root as usize].children()].to_vec();
        let first_unvisited = order.iter().position(|c| c.n == 0).unwrap();
        assert!(order[first_unvisited..].iter().all(|c| c.n == 0));
        for w in order.windows(2) {
            assert!(by_prior(&w[0], &w[1]) != std::cmp::Ordering::Greater, "not sorted by prior");
        }
    }

    #[test]
    fn select_after_root_noise_on_a_reused_tree_scores_every_visited_child() {
        // Hand-made case: a visited child with a much higher Q (0.9 against a root value of
        // -0.5) than an unvisited child that the noise lifted above it (prior 0.05 against 0.01;
        // every other child prior 0). Sorted by prior alone, the lifted child would come first
        // and end the scan before the strong child.
        let mut m = reused_tree(1);
        let r = m.nodes[m.root as usize];
        let kids: Vec<usize> = r.children().collect();
        let visited: Vec<usize> = kids.iter().copied().filter(|&i| m.nodes[i].n > 0).collect();
        assert!(visited.len() >= 2, "the reused root should have visited children");
        let s = sign(r.decider);
        let strong = visited[0];
        for &i in &kids {
            m.nodes[i].prior = 0.0;
            if m.nodes[i].n > 0 {
                let n = m.nodes[i].n as f32;
                m.nodes[i].w = s * -0.5 * n;
            }
        }
        let n = m.nodes[strong].n as f32;
        m.nodes[strong].w = s * 0.9 * n;
        m.nodes[strong].prior = 0.01;
        let lifted = *kids.iter().find(|&&i| m.nodes[i].n == 0).unwrap();
        m.nodes[lifted].prior = 0.05;
        let root_n = m.nodes[m.root as usize].n as f32;
        let root = m.root as usize;
        m.nodes[root].w = s * -0.5 * root_n;
        m.sort_root_after_noise();
        let scores = reference_scores(&m, m.root, true);
        let (best_ref, _) = scores.iter().copied().fold((0, f32::NEG_INFINITY), |b, x| if x.1 > b.1 { x } else { b });
        assert_eq!(m.nodes[best_ref as usize].n, n as u32, "PUCT prefers the strong visited child here");
        assert_eq!(m.select(m.root, true), Some(best_ref));
        // Real noise (weight 1: the priors are all noise), many seeds: select is the argmax of
        // the PUCT formula over every live child.
        for seed in 0..40 {
            let mut m = reused_tree(seed % 4);
            m.cfg.dirichlet_epsilon = 1.0;
            m.add_root_noise(&mut ChaCha8Rng::seed_from_u64(seed));
            let root = m.root;
            let scores = reference_scores(&m, root, true);
            let max = scores.iter().map(|x| x.1).fold(f32::NEG_INFINITY, f32::max);
            let got = m.select(root, true).unwrap();
            let got_score = scores.iter().find(|x| x.0 == got).unwrap().1;
            assert!(
                (got_score - max).abs() <= 1e-6 * max.abs().max(1.0),
                "seed {seed}: selected {got_score}, best {max}"
            );
        }
    }
}
