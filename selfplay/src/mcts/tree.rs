//! The search tree [`Mcts`] and its operations: playouts ([`Mcts::gather`]: selection by PUCT,
//! expansion through the position walker, virtual loss), delivery of the evaluations and backup
//! by player identity ([`Mcts::deliver`]), and tree reuse ([`Mcts::advance`] by one decision,
//! [`Mcts::follow`] along the decisions played since the searched position).

use super::config::SearchConfig;
use super::gumbel::GumbelSearch;
use super::node::{
    by_prior, sign, sort_tail, ChildSorter, Node, NodeState, F_CHECKED, F_PROVEN, F_PRUNED, F_TAIL_UNSORTED,
    F_VCT_ASKED, NONE, SORTED_PREFIX,
};
use crate::action::{action_index, action_space_size};
use crate::encode::{NUM_GLOBALS, NUM_PLANES};
use crate::eval::softmax;
use crate::walker::{is_plain_play, Expansion, FastWalker, GameWalker};
use rand::Rng;
use renju_rules::{Game, Player};
use NodeState::{Expanded, Leaf, Pending, Terminal};

/// Children scored together in [`Mcts::select`]'s fast path.
const CHUNK: usize = 8;

pub(super) enum Walker {
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
    /// The sum over those leaves of their depth below the root (the moves from the root's
    /// position to the leaf's).
    pub leaf_depth: u64,
    /// Playouts abandoned because they reached a leaf already awaiting evaluation.
    pub collisions: u64,
    /// Nodes the VCT check proved won for their mover.
    pub vct_wins: u64,
}

/// One search tree over a [`Game`], reusable across moves.
pub struct Mcts {
    pub(super) cfg: SearchConfig,
    pub(super) size: usize,
    pub(super) nodes: Vec<Node>,
    pub(super) root: u32,
    pub(super) walker: Walker,
    /// Paths of leaves awaiting evaluation, flattened; `pending[k] = (leaf, path start, path end)`.
    pub(super) pending: Vec<(u32, u32, u32)>,
    pub(super) paths: Vec<u32>,
    pub(super) path: Vec<u32>,
    pub(super) scratch: Vec<u16>,
    /// Scratch of [`Mcts::sort_children`].
    pub(super) sorter: ChildSorter,
    /// Scratch of [`Mcts::deliver`]: the priors of a leaf's children.
    pub(super) priors: Vec<f32>,
    pub(super) noise_wanted: bool,
    /// This move's root got Dirichlet noise and [`SearchConfig::forced_playouts`] is on: root
    /// selection forces playouts and the policy target is pruned (unset when the root moves).
    pub(super) forcing: bool,
    /// A Gumbel root search asked for by [`Mcts::start_gumbel`] and not yet started (the root is
    /// not expanded): `(budget, noise, seed of the noise)`.
    pub(super) gumbel_wanted: Option<(u32, bool, u64)>,
    pub(super) gumbel: Option<GumbelSearch>,
    pub(super) stats: SearchStats,
    /// Leaves taken out by [`Mcts::take_batch`] and not yet delivered (multi-threaded search).
    pub(super) in_flight: usize,
    /// The node arena of the last tree [`Mcts::advance`] replaced, emptied and reused as the
    /// next one's (see [`SPARE_ARENA_NODES`]).
    pub(super) spare: Vec<Node>,
}

/// The largest node arena (in nodes: 512 MiB) kept for reuse when a tree is replaced
/// ([`Mcts::advance`], [`Mcts::reset`]). A search fills tens of megabytes a second with fresh
/// nodes; writing them into memory the process already has, instead of pages new to it, saves
/// the page faults and the kernel's zeroing (a tenth of a one-thread search's time, measured).
/// A larger arena is freed. The brain's two-thread tree at 0.2 s a move passes 4M nodes (its
/// arena then holds 8M), so a smaller bound would free it after most moves; with `max_memory`
/// the brain keeps its tree under half of the limit, which bounds the kept arena too.
pub(super) const SPARE_ARENA_NODES: usize = 1 << 24;

/// `arena` emptied, to hold another tree; a new, unallocated one when it is larger than
/// [`SPARE_ARENA_NODES`] (that memory is freed).
fn reusable_arena(mut arena: Vec<Node>) -> Vec<Node> {
    if arena.capacity() > SPARE_ARENA_NODES {
        return Vec::new();
    }
    arena.clear();
    arena
}

/// The node arenas of a finished tree ([`Mcts::take_memory`]), to build the next one in
/// ([`Mcts::new_in`]).
#[derive(Default)]
pub struct TreeMemory {
    nodes: Vec<Node>,
    spare: Vec<Node>,
}

/// Leaves of a [`Mcts::gather`] taken out of the tree by [`Mcts::take_batch`], to be evaluated
/// while other threads gather and deliver, and handed back with [`Mcts::deliver_batch`].
/// The children of its leaves travel with it, so that [`LeafBatch::prepare`] can set their
/// priors and order them outside the lock (no other thread touches the children of a leaf
/// awaiting evaluation).
#[derive(Default)]
pub struct LeafBatch {
    pending: Vec<(u32, u32, u32)>,
    paths: Vec<u32>,
    /// The children of every leaf, in leaf order, as made.
    kids: Vec<Node>,
    /// Per leaf: how many of `kids` are its children.
    kid_counts: Vec<u16>,
    /// Per leaf: whether it is the root (its children are sorted in full).
    is_root: Vec<bool>,
    /// Per leaf, once prepared: whether its children's tail is left unsorted.
    tail_unsorted: Vec<bool>,
    prepared: bool,
    /// The tree's [`SearchConfig::policy_temperature`].
    policy_temperature: f32,
}

impl LeafBatch {
    /// Number of leaves.
    pub fn len(&self) -> usize {
        self.pending.len()
    }

    /// Whether the batch holds no leaf.
    pub fn is_empty(&self) -> bool {
        self.pending.is_empty()
    }

    /// Sets the priors of the leaves' children from `logits` (`[k, A]`) and orders them as
    /// [`Mcts::deliver`] would (the same functions), without the tree: [`Mcts::deliver_batch`]
    /// then only copies them in and backs the values up. Called without the lock.
    ///
    /// # Panics
    /// When `logits` does not hold a row per leaf.
    pub fn prepare(&mut self, logits: &[f32]) {
        let k = self.len();
        assert!(k > 0 && logits.len().is_multiple_of(k), "prepare: {} logits for {k} leaves", logits.len());
        let a = logits.len() / k;
        let mut priors = Vec::new();
        let mut sorter = ChildSorter::default();
        self.tail_unsorted.clear();
        let mut at = 0;
        for j in 0..k {
            let n = self.kid_count(j);
            let kids = &mut self.kids[at..at + n];
            set_priors(kids, &logits[j * a..(j + 1) * a], self.policy_temperature, &mut priors);
            self.tail_unsorted.push(order_children(kids, self.is_root[j], &mut sorter));
            at += n;
        }
        self.prepared = true;
    }

    /// Children of leaf `j`.
    fn kid_count(&self, j: usize) -> usize {
        self.kid_counts[j] as usize
    }
}

impl Mcts {
    /// A fresh tree rooted at `game` (which must not be over).
    pub fn new(game: &Game, cfg: SearchConfig) -> Mcts {
        Mcts::new_in(game, cfg, TreeMemory::default())
    }

    /// [`Mcts::new`] in the memory of an earlier tree's node arenas ([`Mcts::take_memory`]):
    /// the same tree. The larger arena holds the new tree, the other is kept as its spare.
    pub fn new_in(game: &Game, cfg: SearchConfig, memory: TreeMemory) -> Mcts {
        let size = game.board().size();
        let TreeMemory { mut nodes, mut spare } = memory;
        if nodes.capacity() < spare.capacity() {
            std::mem::swap(&mut nodes, &mut spare);
        }
        let mut nodes = reusable_arena(nodes);
        nodes.reserve(4096);
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
            sorter: ChildSorter::with_capacity(400),
            priors: Vec::with_capacity(400),
            noise_wanted: false,
            forcing: false,
            gumbel_wanted: None,
            gumbel: None,
            stats: SearchStats::default(),
            in_flight: 0,
            spare: reusable_arena(spare),
        }
    }

    /// Takes the node arenas out of this tree, for [`Mcts::new_in`]; the tree is left empty and
    /// must not be searched again (only dropped, or replaced).
    pub fn take_memory(&mut self) -> TreeMemory {
        TreeMemory { nodes: std::mem::take(&mut self.nodes), spare: std::mem::take(&mut self.spare) }
    }

    /// Starts afresh at `game` (which must not be over): the same tree as [`Mcts::new`] with this
    /// tree's configuration, in this tree's memory.
    pub fn reset(&mut self, game: &Game) {
        let memory = self.take_memory();
        *self = Mcts::new_in(game, self.cfg.clone(), memory);
    }

    /// The search parameters.
    pub fn config(&self) -> &SearchConfig {
        &self.cfg
    }

    /// Number of leaves awaiting [`Mcts::deliver`].
    pub fn pending(&self) -> usize {
        self.pending.len()
    }

    /// The decider at the root (0 = First) as the walker, standing at the root between
    /// playouts, sees it.
    pub(super) fn walker_decider(&self) -> u8 {
        self.walker.decider().index() as u8
    }

    /// Counters since the last call; resets them.
    pub fn take_stats(&mut self) -> SearchStats {
        std::mem::take(&mut self.stats)
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
        if order_children(&mut self.nodes[kids], node == self.root, &mut self.sorter) {
            self.nodes[node as usize].flags |= F_TAIL_UNSORTED;
        }
    }

    /// The partial order of [`Mcts::sort_children`] for a node of more than [`SORTED_PREFIX`]
    /// children: the sorted prefix, then the rest in the order made; sets [`F_TAIL_UNSORTED`].
    #[cfg(test)]
    fn sort_prefix(&mut self, node: u32) {
        let kids = self.nodes[node as usize].children();
        self.sorter.sort_prefix(&mut self.nodes[kids]);
        self.nodes[node as usize].flags |= F_TAIL_UNSORTED;
    }

    /// Sorts the children of `node` after the first [`SORTED_PREFIX`] (see [`F_TAIL_UNSORTED`]),
    /// stably, so equal priors keep the order made.
    fn sort_tail(&mut self, node: u32) {
        let kids = self.nodes[node as usize].children();
        sort_tail(&mut self.nodes[kids]);
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
            if added >= max_leaves || self.root_proven().is_some() {
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
                    self.stats.leaf_depth += self.path.len() as u64 - 1;
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
            if depth > 0
                && self.cfg.vct_nodes > 0
                && self.cfg.shortcuts
                && nd.flags & (F_VCT_ASKED | F_PROVEN) == 0
                && nd.n >= self.cfg.vct_visits
                && matches!(nd.state, Leaf | Expanded)
            {
                if let Some(v) = self.vct_check(node) {
                    self.backup_direct(v);
                    return PlayoutEnd::Done;
                }
            }
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
                Expanded if depth > 0 && nd.flags & F_PROVEN != 0 => {
                    // A proven node (solver): its exact value, as a terminal one.
                    self.backup_direct(nd.terminal);
                    return PlayoutEnd::Done;
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

    /// The VCT check at `node`, where the walker stands (see
    /// [`crate::mcts::SearchConfig::vct_nodes`]): asks once whether the mover has a VCT; with
    /// one, makes the node an exact win for the mover (a leaf becomes terminal, an expanded
    /// node proven) and returns that value from First's view.
    fn vct_check(&mut self, node: u32) -> Option<f32> {
        self.nodes[node as usize].flags |= F_VCT_ASKED;
        let Walker::Fast(w) = &self.walker else { return None };
        if !w.mover_has_vct(self.cfg.vct_nodes) {
            return None;
        }
        let v = if w.decider() == Player::First { 1.0 } else { -1.0 };
        let n = &mut self.nodes[node as usize];
        if n.state == Leaf {
            n.state = Terminal;
        } else {
            n.flags |= F_PROVEN;
        }
        n.terminal = v;
        self.stats.vct_wins += 1;
        Some(v)
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
        if is_root && self.forcing {
            if let Some(i) = self.forced_child(node) {
                return Some(i);
            }
        }
        let mut visited_prior = 0.0f32;
        let mut best = None;
        let mut best_score = f32::NEG_INFINITY;
        // The first proven-losing child seen (solver).
        let mut lost = None;
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
                    if ch.iter().all(|x| x.flags & (F_PRUNED | F_PROVEN) == 0 && x.n + x.vl != 0) {
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
                if ch.flags & F_PROVEN != 0 {
                    // Solver: a proven win for the decider is taken at once; a proven loss is
                    // skipped (taken only when every live child is one).
                    let at = (start + k - 1) as u32;
                    if s * ch.terminal > 0.0 {
                        return Some(at);
                    }
                    lost.get_or_insert(at);
                    visited_prior += ch.prior;
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
        best.or(lost)
    }

    /// The first live, visited child of the root with fewer visits (in flight included) than
    /// its forced playouts, `sqrt(k * P * N)` ([`SearchConfig::forced_playouts`]).
    fn forced_child(&self, node: u32) -> Option<u32> {
        let nd = self.nodes[node as usize];
        let total = (nd.n + nd.vl) as f32;
        let k = self.cfg.forced_playouts;
        nd.children().find_map(|i| {
            let ch = self.nodes[i];
            let nn = ch.n + ch.vl;
            let live = ch.flags & (F_PRUNED | F_PROVEN) == 0 && nn > 0;
            (live && (nn as f32) < (k * ch.prior * total).sqrt()).then_some(i as u32)
        })
    }

    fn backup_direct(&mut self, v_first: f32) {
        for &i in &self.path {
            let n = &mut self.nodes[i as usize];
            n.n += 1;
            n.w += v_first;
        }
        self.stats.playouts += 1;
        if self.cfg.solver {
            self.propagate_proof();
        }
    }

    /// Solver: after a playout that ended at an exact value, marks the end of the path proven
    /// (a terminal win or loss) and the proof up the path while it holds: a parent is proven
    /// when the proven child wins for the parent's decider, or when every live child of the
    /// parent is a proven win for the opponent. Children not yet visited are not proven, so a
    /// parent with one is not proven lost (its forbidden points are pruned when selection reaches
    /// them). A draw proves nothing.
    fn propagate_proof(&mut self) {
        let Some(&leaf) = self.path.last() else { return };
        let nd = self.nodes[leaf as usize];
        if nd.flags & F_PROVEN == 0 {
            if nd.state != Terminal || nd.terminal.abs() != 1.0 {
                return;
            }
            self.nodes[leaf as usize].flags |= F_PROVEN;
        }
        for k in (1..self.path.len()).rev() {
            let (c, p) = (self.path[k] as usize, self.path[k - 1] as usize);
            let v = self.nodes[c].terminal;
            let pn = self.nodes[p];
            if pn.flags & F_PROVEN != 0 {
                break;
            }
            let s = sign(pn.decider);
            let proven = s * v > 0.0
                || self.nodes[pn.children()]
                    .iter()
                    .all(|x| x.flags & F_PRUNED != 0 || (x.flags & F_PROVEN != 0 && s * x.terminal < 0.0));
            if !proven {
                break;
            }
            let n = &mut self.nodes[p];
            n.flags |= F_PROVEN;
            n.terminal = v;
        }
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
            set_priors(&mut self.nodes[nd.children()], row, self.cfg.policy_temperature, &mut self.priors);
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

    /// Takes the leaves awaiting evaluation out of the tree (their virtual loss stays), so that
    /// more can be gathered before they are delivered: a thread of a multi-threaded search
    /// evaluates its batch outside the lock on the tree. Deliver it with
    /// [`Mcts::deliver_batch`].
    pub fn take_batch(&mut self) -> LeafBatch {
        let mut b = LeafBatch {
            pending: std::mem::take(&mut self.pending),
            paths: std::mem::take(&mut self.paths),
            policy_temperature: self.cfg.policy_temperature,
            ..LeafBatch::default()
        };
        for &(leaf, _, _) in &b.pending {
            let nd = self.nodes[leaf as usize];
            b.kids.extend_from_slice(&self.nodes[nd.children()]);
            b.kid_counts.push(nd.num_children);
            b.is_root.push(leaf == self.root);
        }
        self.in_flight += b.len();
        b
    }

    /// [`Mcts::deliver`] for a batch taken by [`Mcts::take_batch`] (`logits: [k, A]`, `wdl:
    /// [k, 3]` for its `k` leaves in order). Requires no leaves pending outside batches.
    /// A batch [`LeafBatch::prepare`]d already has its children's priors and order: they are
    /// copied in as they are (`logits` is not read again).
    pub fn deliver_batch<R: Rng>(&mut self, batch: LeafBatch, logits: &[f32], wdl: &[f32], rng: &mut R) {
        assert!(self.pending.is_empty(), "deliver_batch with leaves pending outside batches");
        self.in_flight -= batch.len();
        if !batch.prepared {
            self.pending = batch.pending;
            self.paths = batch.paths;
            self.deliver(logits, wdl, rng);
            return;
        }
        let k = batch.len();
        assert_eq!(wdl.len(), k * 3, "deliver: wdl has {} floats, expected {k} leaves x 3", wdl.len());
        let mut at = 0;
        for (j, &(leaf, ps, pe)) in batch.pending.iter().enumerate() {
            let nd = self.nodes[leaf as usize];
            let n = batch.kid_count(j);
            self.nodes[nd.children()].copy_from_slice(&batch.kids[at..at + n]);
            at += n;
            let node = &mut self.nodes[leaf as usize];
            node.state = Expanded;
            if batch.tail_unsorted[j] {
                node.flags |= F_TAIL_UNSORTED;
            }
            let w = &wdl[j * 3..j * 3 + 3];
            let v = (w[0] - w[2]) * sign(nd.decider);
            for &i in &batch.paths[ps as usize..pe as usize] {
                let n = &mut self.nodes[i as usize];
                n.vl -= 1;
                n.n += 1;
                n.w += v;
            }
            self.stats.playouts += 1;
        }
        self.apply_noise_if_ready(rng);
        self.start_gumbel_if_ready();
    }

    /// Whether no leaf awaits evaluation, in the tree or in a taken batch.
    pub(super) fn nothing_pending(&self) -> bool {
        self.pending.is_empty() && self.in_flight == 0
    }

    /// Move the root to the child reached by `action` (tree reuse), with `game` the position
    /// after it. Nodes outside the kept subtree are dropped. Requires nothing pending.
    pub fn advance(&mut self, action: usize, game: &Game) {
        assert!(self.nothing_pending(), "advance with leaves pending evaluation");
        self.noise_wanted = false;
        self.forcing = false;
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
        let mut fresh = std::mem::take(&mut self.spare);
        fresh.reserve(self.nodes.len().max(4096));
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
        self.spare = reusable_arena(std::mem::replace(&mut self.nodes, fresh));
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

    /// Tree reuse along the decisions played: `from` is the position the tree is rooted at and
    /// `to` the position to search next. When `to` follows from `from` by the decisions in its
    /// history (the same board size, rule, protocol and stone cap, `from`'s history a prefix of
    /// `to`'s, every further decision legal when replayed), the root moves down those decisions
    /// ([`Mcts::advance`] per decision), keeping the subtree with its visits (none when a
    /// decision's node was never expanded). Otherwise the tree starts afresh at `to`. Either way
    /// the root then is `to` with this move's root state unset (no noise asked for, no Gumbel
    /// search) and only legal children. Returns whether `to` followed from `from`. Requires
    /// nothing pending and `to` not over.
    pub fn follow(&mut self, from: &Game, to: &Game) -> bool {
        let (fh, th) = (from.history(), to.history());
        if from.same_setup(to) && th.len() >= fh.len() && th[..fh.len()] == *fh {
            let extra = &th[fh.len()..];
            if extra.is_empty() {
                // The same position: the tree as it stands, its root state unset as advance does.
                assert!(self.nothing_pending(), "follow with leaves pending evaluation");
                self.noise_wanted = false;
                self.forcing = false;
                self.gumbel_wanted = None;
                self.gumbel = None;
                return true;
            }
            let size = to.board().size();
            let mut g = from.clone();
            for (k, &(_, a)) in extra.iter().enumerate() {
                if g.apply(a).is_err() {
                    break;
                }
                let last = k + 1 == extra.len();
                self.advance(action_index(a, size), if last { to } else { &g });
                if last {
                    return true;
                }
            }
        }
        self.reset(to);
        false
    }

    /// Visits of the node reached from the root by the action indices `actions` (0 when it is
    /// not in the tree); `&[]` is the root.
    pub fn visits_after(&self, actions: &[usize]) -> u32 {
        let mut node = self.nodes[self.root as usize];
        for &a in actions {
            if node.state != Expanded {
                return 0;
            }
            match self.nodes[node.children()].iter().find(|c| c.action as usize == a) {
                Some(c) => node = *c,
                None => return 0,
            }
        }
        node.n
    }

    /// Number of nodes in the arena (memory use is [`NODE_BYTES`] = 32 bytes per node, plus the
    /// arena's spare capacity).
    pub fn tree_size(&self) -> usize {
        self.nodes.len()
    }
}

/// Sets the priors of a fresh node's children: the softmax of their logits in `row` (`[A]`)
/// divided by `temperature` (at 1 the logits as they are, bit for bit: a product with 1.0 is
/// exact); `scratch` holds the logits meanwhile.
fn set_priors(kids: &mut [Node], row: &[f32], temperature: f32, scratch: &mut Vec<f32>) {
    scratch.clear();
    let inv = 1.0 / temperature;
    scratch.extend(kids.iter().map(|ch| row[ch.action as usize] * inv));
    softmax(scratch);
    for (ch, &p) in kids.iter_mut().zip(scratch.iter()) {
        ch.prior = p;
    }
}

/// Orders a fresh node's children for [`Mcts::select`] as a stable sort by prior would: all of
/// them when `whole` (the root: root noise and the Gumbel root go through every child in order)
/// or when there are at most [`SORTED_PREFIX`], else only the prefix
/// ([`ChildSorter::sort_prefix`]). Returns whether the tail is left unsorted
/// ([`F_TAIL_UNSORTED`]).
fn order_children(kids: &mut [Node], whole: bool, sorter: &mut ChildSorter) -> bool {
    if kids.len() <= SORTED_PREFIX || whole {
        kids.sort_by(by_prior);
        return false;
    }
    sorter.sort_prefix(kids);
    true
}

enum PlayoutEnd {
    Done,
    Leaf,
    Collision,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::{Evaluator, HeuristicEvaluator};
    use crate::mcts::search_with;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;
    use renju_rules::{Action, Point, Protocol, Rule};

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

    /// Free renju from the centre after h8 i9 h9: a quiet opening (no four, no three), White to
    /// move, the position most tree tests search.
    fn three_stone_opening() -> Game {
        let mut g = Game::new(15, Rule::Renju, Protocol::Free { centre: true }, None).unwrap();
        for (x, y) in [(7, 7), (8, 8), (7, 8)] {
            g.apply(Action::Place(Point::new(x, y))).unwrap();
        }
        g
    }

    fn reused_tree(seed: u64) -> Mcts {
        let mut g = three_stone_opening();
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut m = Mcts::new(&g, SearchConfig::default());
        let mut ev = HeuristicEvaluator::new(15);
        search_with(&mut m, 400, 8, &mut rng, |p, gl, n| ev.evaluate(p, gl, n)).unwrap();
        let (best, _, _) = m.root_children().into_iter().max_by_key(|c| c.1).unwrap();
        g.apply(crate::action::action_from_index(best, 15).unwrap()).unwrap();
        m.advance(best, &g);
        m
    }

    /// The most visited child of the node reached by `path` (action indices), with its visits.
    fn most_visited_after(m: &Mcts, path: &[usize], size: usize) -> (usize, u32) {
        (0..size * size)
            .map(|a| {
                let mut p = path.to_vec();
                p.push(a);
                (a, m.visits_after(&p))
            })
            .max_by_key(|x| x.1)
            .unwrap()
    }

    /// `SearchStats::leaf_depth` is the sum over the evaluated leaves of their depth below the
    /// root: without the shortcuts (no node expanded to a forced reply) every expanded node was
    /// such a leaf, so it equals the depths of the expanded nodes summed over the tree.
    #[test]
    fn leaf_depth_sums_the_depths_of_the_evaluated_leaves() {
        let g = three_stone_opening();
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let mut m = Mcts::new(&g, SearchConfig { shortcuts: false, ..SearchConfig::default() });
        let mut ev = HeuristicEvaluator::new(15);
        search_with(&mut m, 300, 8, &mut rng, |p, gl, n| ev.evaluate(p, gl, n)).unwrap();
        let st = m.take_stats();
        let (mut expanded, mut depths, mut stack) = (0u64, 0u64, vec![(m.root, 0u64)]);
        while let Some((node, d)) = stack.pop() {
            let nd = m.nodes[node as usize];
            assert!(nd.state != Pending, "nothing is pending after a search");
            if nd.state == Expanded {
                expanded += 1;
                depths += d;
                stack.extend(nd.children().map(|c| (c as u32, d + 1)));
            }
        }
        assert_eq!(st.evaluations, expanded);
        assert_eq!(st.leaf_depth, depths);
        assert!(st.leaf_depth > st.evaluations, "the search went below the root's children");
    }

    /// Follow keeps the subtree of the decisions played with its visits (the node of the
    /// position two decisions down), keeps the tree as it stands for the same position, and
    /// starts afresh for a position that does not follow (another history, another rule).
    #[test]
    fn follow_keeps_the_subtree_of_the_decisions_played() {
        let g = three_stone_opening();
        let search = |m: &mut Mcts, visits: u32| {
            let mut rng = ChaCha8Rng::seed_from_u64(3);
            let mut ev = HeuristicEvaluator::new(15);
            search_with(m, visits, 8, &mut rng, |p, gl, n| ev.evaluate(p, gl, n)).unwrap();
        };
        let mut m = Mcts::new(&g, SearchConfig::default());
        search(&mut m, 600);
        let (a, na) = most_visited_after(&m, &[], 15);
        let (b, nb) = most_visited_after(&m, &[a], 15);
        assert!(na > nb && nb > 0, "{na} {nb}");
        let mut g2 = g.clone();
        g2.apply(crate::action::action_from_index(a, 15).unwrap()).unwrap();
        g2.apply(crate::action::action_from_index(b, 15).unwrap()).unwrap();
        assert!(m.follow(&g, &g2));
        assert_eq!(m.root_visits(), nb, "the root starts at the grandchild's visits");
        // The kept root is a root: its children are the legal moves of `g2`.
        let kids = m.root_children();
        assert!(kids.iter().all(|c| g2.is_legal(crate::action::action_from_index(c.0, 15).unwrap())));
        search(&mut m, nb + 50);
        assert_eq!(m.root_visits(), nb + 50);
        // The same position again: nothing lost.
        assert!(m.follow(&g2, &g2));
        assert_eq!(m.root_visits(), nb + 50);
        // A position that does not extend g2 (its last stone elsewhere): afresh.
        let mut other = g.clone();
        other.apply(crate::action::action_from_index(a, 15).unwrap()).unwrap();
        let elsewhere = (0..225).find(|&i| i != b && other.is_legal(Action::Place(Point::from_index(i, 15)))).unwrap();
        other.apply(Action::Place(Point::from_index(elsewhere, 15))).unwrap();
        assert!(!m.follow(&g2, &other));
        assert_eq!(m.root_visits(), 0);
        // The same stones under another rule: afresh.
        let mut m = Mcts::new(&g, SearchConfig::default());
        search(&mut m, 100);
        let mut free = Game::new(15, Rule::Freestyle, Protocol::Free { centre: true }, None).unwrap();
        for &(_, act) in g2.history() {
            free.apply(act).unwrap();
        }
        assert!(!m.follow(&g, &free));
        assert_eq!(m.root_visits(), 0);
    }

    /// The principal variation follows the most visited child from the root action down:
    /// every step is the most visited reply (`visits_after` over every action), the visits never
    /// grow along it, and it stops at a node with no visited child or at `max` actions.
    #[test]
    fn principal_variation_follows_the_most_visited_children() {
        let g = three_stone_opening();
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let mut m = Mcts::new(&g, SearchConfig::default());
        let mut ev = HeuristicEvaluator::new(15);
        search_with(&mut m, 800, 8, &mut rng, |p, gl, n| ev.evaluate(p, gl, n)).unwrap();
        let (first, _) = most_visited_after(&m, &[], 15);
        let pv = m.principal_variation(first, 6);
        assert!(pv.len() >= 3 && pv.len() <= 6, "{pv:?}");
        assert_eq!(pv[0], first);
        for k in 1..pv.len() {
            let (best, n) = most_visited_after(&m, &pv[..k], 15);
            assert!(n > 0);
            assert_eq!(m.visits_after(&pv[..=k]), n, "step {k}: {pv:?} (most visited: {best})");
            assert!(m.visits_after(&pv[..=k]) <= m.visits_after(&pv[..k]));
        }
        if pv.len() < 6 {
            assert_eq!(most_visited_after(&m, &pv, 15).1, 0, "stops only where nothing is visited");
        }
        assert_eq!(m.principal_variation(first, 1), vec![first]);
        assert!(m.principal_variation(g.board().stones()[0].0.index(15), 5).is_empty(), "an occupied point");
    }

    /// The children of a node below the root, valued from the root decider's view: their visits
    /// are the tree's, and a node's backed-up sum is its own leaf value (within `[-1, 1]`) plus
    /// its children's, so the replies' visit-weighted values add up to the move's within 1.
    #[test]
    fn child_values_after_a_move_are_from_the_root_deciders_view() {
        let g = three_stone_opening();
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let mut m = Mcts::new(&g, SearchConfig::default());
        let mut ev = HeuristicEvaluator::new(15);
        search_with(&mut m, 800, 8, &mut rng, |p, gl, n| ev.evaluate(p, gl, n)).unwrap();
        assert_eq!(m.child_values_after(&[]), m.root_child_values());
        let mut checked = 0;
        for (a, n, q) in m.root_child_values().into_iter().filter(|c| c.1 >= 20) {
            let replies = m.child_values_after(&[a]);
            assert!(!replies.is_empty());
            let mut sum = 0.0;
            for &(b, nb, qb) in &replies {
                assert_eq!(nb, m.visits_after(&[a, b]));
                sum += nb as f32 * qb;
            }
            let own = n as f32 * q - sum;
            assert!(own.abs() <= 1.0 + 1e-3, "move {a}: {n} x {q} against the replies' {sum}");
            checked += 1;
        }
        assert!(checked > 0);
        assert!(m.child_values_after(&[g.board().stones()[0].0.index(15)]).is_empty(), "an occupied point");
    }

    /// The priors of a node's children are the softmax of their logits divided by the policy
    /// temperature, computed here from the definition in f64 (at 1 the logits as they are).
    #[test]
    fn priors_are_the_softmax_of_the_logits_over_the_policy_temperature() {
        let mut g = Game::new(15, Rule::Renju, Protocol::Free { centre: true }, None).unwrap();
        for (x, y) in [(7, 7), (8, 8), (7, 8), (6, 6)] {
            g.apply(Action::Place(Point::new(x, y))).unwrap();
        }
        let mut ev = HeuristicEvaluator::new(15);
        let mut spreads = Vec::new();
        for t in [1.0f32, 0.5, 2.5] {
            let mut m = Mcts::new(&g, SearchConfig { policy_temperature: t, ..SearchConfig::default() });
            let (mut planes, mut legal) = (Vec::new(), Vec::new());
            assert_eq!(m.gather(1, 1, &mut planes, &mut legal), 1, "the root is the first leaf");
            let out = ev.evaluate(&planes, &legal, 1).unwrap();
            let mut rng = ChaCha8Rng::seed_from_u64(1);
            m.deliver(&out.policy_logits, &out.wdl, &mut rng);
            let kids = &m.nodes[m.nodes[m.root as usize].children()];
            assert!(kids.len() > 100);
            let z: f64 = kids.iter().map(|c| (out.policy_logits[c.action as usize] as f64 / t as f64).exp()).sum();
            for c in kids {
                let want = (out.policy_logits[c.action as usize] as f64 / t as f64).exp() / z;
                assert!((c.prior as f64 - want).abs() < 1e-5, "T {t}, action {}: {} against {want}", c.action, c.prior);
            }
            let top = kids.iter().map(|c| c.prior).fold(0.0f32, f32::max);
            spreads.push(top);
        }
        // A cooler temperature sharpens the priors, a warmer one flattens them.
        assert!(spreads[1] > spreads[0] && spreads[0] > spreads[2], "largest priors {spreads:?}");
    }

    /// A batch taken out, prepared without the tree and delivered leaves the tree exactly as
    /// delivering the same evaluations in place does (every node field, in order), at the
    /// root's own expansion and deeper, where only a prefix of the children is sorted.
    #[test]
    fn a_prepared_batch_delivers_exactly_what_deliver_does() {
        for policy_temperature in [1.0, 1.7] {
            prepared_batch_matches_deliver(SearchConfig { policy_temperature, ..SearchConfig::default() });
        }
    }

    fn prepared_batch_matches_deliver(cfg: SearchConfig) {
        let mut g = Game::new(15, Rule::Renju, Protocol::Free { centre: false }, None).unwrap();
        for (x, y) in [(7, 7), (8, 8), (7, 8)] {
            g.apply(Action::Place(Point::new(x, y))).unwrap();
        }
        let mut ev = HeuristicEvaluator::new(15);
        let (mut a, mut b) = (Mcts::new(&g, cfg.clone()), Mcts::new(&g, cfg));
        let mut rng = ChaCha8Rng::seed_from_u64(2);
        for round in 0..40 {
            let (mut pa, mut ga, mut pb, mut gb) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
            let ka = a.gather(8, 8, &mut pa, &mut ga);
            let kb = b.gather(8, 8, &mut pb, &mut gb);
            assert_eq!((ka, &pa), (kb, &pb), "round {round}: the same leaves");
            if ka == 0 {
                continue;
            }
            let out = ev.evaluate(&pa, &ga, ka).unwrap();
            a.deliver(&out.policy_logits, &out.wdl, &mut rng);
            let mut batch = b.take_batch();
            assert_eq!(b.in_flight, ka);
            batch.prepare(&out.policy_logits);
            b.deliver_batch(batch, &out.policy_logits, &out.wdl, &mut rng);
            assert_eq!(b.in_flight, 0);
            assert_eq!(a.nodes.len(), b.nodes.len());
            for (i, (x, y)) in a.nodes.iter().zip(&b.nodes).enumerate() {
                let same = (x.action, x.state, x.flags, x.decider, x.n, x.vl, x.first_child, x.num_children)
                    == (y.action, y.state, y.flags, y.decider, y.n, y.vl, y.first_child, y.num_children)
                    && (x.prior.to_bits(), x.w.to_bits(), x.terminal.to_bits())
                        == (y.prior.to_bits(), y.w.to_bits(), y.terminal.to_bits());
                assert!(same, "round {round}, node {i}: {x:?} != {y:?}");
            }
        }
        assert!(a.root_visits() > 100);
    }

    /// A tree started afresh in an earlier tree's memory ([`Mcts::reset`], after searches and
    /// tree reuse filled both of its arenas) searches exactly as a new one: the same nodes in the
    /// same order with the same statistics.
    #[test]
    fn a_reset_tree_searches_as_a_new_one() {
        let mut g = Game::new(15, Rule::Renju, Protocol::Free { centre: true }, None).unwrap();
        for (x, y) in [(7, 7), (8, 8), (6, 8), (8, 6)] {
            g.apply(Action::Place(Point::new(x, y))).unwrap();
        }
        let search = |m: &mut Mcts, visits: u32| {
            let mut rng = ChaCha8Rng::seed_from_u64(3);
            let mut ev = HeuristicEvaluator::new(15);
            search_with(m, visits, 4, &mut rng, |p, gl, n| ev.evaluate(p, gl, n)).unwrap();
        };
        let mut used = Mcts::new(&g, SearchConfig::default());
        search(&mut used, 300);
        let mut next = g.clone();
        let best = used.root_choices().iter().max_by_key(|c| c.1).unwrap().0;
        next.apply(crate::action::action_from_index(best, 15).unwrap()).unwrap();
        used.advance(best, &next);
        search(&mut used, 600);
        assert!(used.spare.capacity() > 0, "advance kept the old arena");
        let mut other = next.clone();
        other.apply(Action::Place(Point::new(3, 3))).unwrap();
        used.reset(&other);
        let mut fresh = Mcts::new(&other, SearchConfig::default());
        search(&mut used, 500);
        search(&mut fresh, 500);
        let key = |m: &Mcts| -> Vec<(u16, u32, u32, u32, u32)> {
            m.nodes.iter().map(|n| (n.action, n.n, n.w.to_bits(), n.prior.to_bits(), n.first_child)).collect()
        };
        assert_eq!(used.nodes.len(), fresh.nodes.len());
        assert_eq!(key(&used), key(&fresh));
        assert_eq!(used.root_choices(), fresh.root_choices());
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

    /// A noised search of a 3-stone free-renju position with forced playouts `k`, one leaf a batch.
    fn forced_search(k: f32, seed: u64) -> (Mcts, Game) {
        let g = three_stone_opening();
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut m = Mcts::new(&g, SearchConfig { forced_playouts: k, ..SearchConfig::default() });
        let mut ev = HeuristicEvaluator::new(15);
        // The root's own evaluation, then noise on its priors, then the search.
        search_with(&mut m, 1, 1, &mut rng, |p, gl, n| ev.evaluate(p, gl, n)).unwrap();
        m.add_root_noise(&mut rng);
        search_with(&mut m, 600, 1, &mut rng, |p, gl, n| ev.evaluate(p, gl, n)).unwrap();
        (m, g)
    }

    /// Visited root children short of `sqrt(k P N)` by more than the one playout the growth of
    /// `N` since their last forced visit can account for.
    fn short_of_forced(m: &Mcts, k: f32) -> Vec<(u16, u32, f32)> {
        let r = m.nodes[m.root as usize];
        m.nodes[r.children()]
            .iter()
            .filter(|c| c.flags & (F_PRUNED | F_PROVEN) == 0 && c.n > 0)
            .map(|c| (c.action, c.n, (k * c.prior * r.n as f32).sqrt()))
            .filter(|&(_, n, want)| (n as f32) + 1.0 < want)
            .collect()
    }

    #[test]
    fn forced_playouts_give_every_visited_root_child_its_share() {
        for seed in 0..4 {
            let (m, _) = forced_search(2.0, seed);
            assert_eq!(short_of_forced(&m, 2.0), vec![], "seed {seed}");
            // Without forcing the same search leaves some child short: the check can fail.
            let (plain, _) = forced_search(0.0, seed);
            assert!(!short_of_forced(&plain, 2.0).is_empty(), "seed {seed}: nothing to force");
        }
    }

    #[test]
    fn pruned_target_visits_follow_the_definition() {
        let k = 2.0f32;
        for seed in 0..4 {
            let (m, g) = forced_search(k, seed);
            let r = m.nodes[m.root as usize];
            let s = sign(r.decider);
            let raw = m.root_children();
            let live: Vec<Node> = m.nodes[r.children()].iter().filter(|c| c.flags & F_PRUNED == 0).copied().collect();
            let best = (0..live.len()).max_by_key(|&j| live[j].n).unwrap();
            let c = m.cfg.c_puct;
            let puct = |x: &Node, n: u32| s * x.w / x.n as f32 + c * x.prior * (r.n as f32).sqrt() / (1.0 + n as f32);
            let u_best = puct(&live[best], live[best].n);
            // From the definition: the fewest visits, counted up from 0, at which the child's
            // PUCT score is no longer above the best child's, but no fewer than its visits less
            // its forced playouts; one visit left or none is pruned.
            let expected: Vec<u32> = live
                .iter()
                .enumerate()
                .map(|(j, x)| {
                    if j == best || x.n == 0 {
                        return x.n;
                    }
                    let fewest = (0..=x.n).find(|&n| puct(x, n) <= u_best).unwrap_or(x.n);
                    let forced = (k * x.prior * r.n as f32).sqrt().floor() as u32;
                    let kept = fewest.max(x.n.saturating_sub(forced));
                    if kept <= 1 {
                        0
                    } else {
                        kept
                    }
                })
                .collect();
            let got: Vec<u32> = m.target_visits().iter().map(|c| c.1).collect();
            assert_eq!(got, expected, "seed {seed}");
            let (before, after) = (raw.iter().map(|c| c.1).sum::<u32>(), got.iter().sum::<u32>());
            assert!(after < before, "seed {seed}: nothing pruned ({after} of {before})");
            // The policy target is the pruned visits, normalised.
            let p = m.policy_target();
            for (a, n, _) in m.target_visits() {
                assert!((p[a] - n as f32 / after as f32).abs() < 1e-6);
            }
            // Once the root moves on, nothing is pruned any more.
            let mut m = m;
            let (a, _, _) = raw[best];
            let mut g2 = g.clone();
            g2.apply(crate::action::action_from_index(a, 15).unwrap()).unwrap();
            m.advance(a, &g2);
            assert_eq!(m.target_visits(), m.root_children());
        }
    }
}
