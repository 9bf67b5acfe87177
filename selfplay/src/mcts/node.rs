//! The tree node (32 bytes: the edge from the parent and the statistics of the position it
//! leads to) and the order of a node's children: visited children first, the unvisited ones by
//! prior, descending, of which only the first [`SORTED_PREFIX`] are sorted at expansion
//! ([`ChildSorter`]).

/// No node (an unset child index).
pub(super) const NONE: u32 = u32::MAX;
/// Where a node is in its life.
#[repr(u8)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum NodeState {
    /// Not expanded yet.
    Leaf,
    /// Expanded (children created), waiting for its evaluation.
    Pending,
    /// Expanded with priors.
    Expanded,
    /// Exact value in `terminal` (game over, or proven by a shortcut).
    Terminal,
}
/// Set once a child is known to be legal (deeper children are checked lazily).
pub(super) const F_CHECKED: u8 = 1;
/// Set on a child that is a forbidden point: never selected.
pub(super) const F_PRUNED: u8 = 2;
/// On an expanded node: only its first [`SORTED_PREFIX`] children are sorted by prior; the
/// others (all unvisited, none with a higher prior) are sorted when the scan first reaches them.
pub(super) const F_TAIL_UNSORTED: u8 = 4;
/// Set (with [`crate::mcts::SearchConfig::solver`]) on a node whose game-theoretic value is
/// proven: `terminal` holds it from `Player::First`'s view, `+1` or `-1` (a terminal win or
/// loss, a child that wins for the node's decider, or every live child winning for the
/// opponent).
pub(super) const F_PROVEN: u8 = 8;
/// Set on a node once the VCT check ([`crate::mcts::SearchConfig::vct_nodes`]) has asked its
/// question there (whatever the answer: it is asked once).
pub(super) const F_VCT_ASKED: u8 = 16;
/// Children sorted at expansion; most nodes are visited a few times, so sorting all ~200 (a
/// sixth of a self-play thread's time, measured) is mostly wasted.
pub(super) const SORTED_PREFIX: usize = 16;

/// The order of a fresh node's children: prior descending (NaN equal); a stable sort keeps
/// equal priors in the order the children were made.
pub(super) fn by_prior(x: &Node, y: &Node) -> std::cmp::Ordering {
    y.prior.partial_cmp(&x.prior).unwrap_or(std::cmp::Ordering::Equal)
}

/// One tree node (32 bytes, pinned below): the edge from its parent (`action`, `prior`) and the
/// statistics of the position it leads to. Children of a node are contiguous in the arena.
#[derive(Clone, Copy, Debug)]
pub(super) struct Node {
    pub(super) action: u16,
    pub(super) state: NodeState,
    pub(super) flags: u8,
    /// 0 = First, 1 = Second (valid once expanded).
    pub(super) decider: u8,
    pub(super) prior: f32,
    pub(super) n: u32,
    pub(super) vl: u32,
    /// Sum of backed-up values from First's view (+1 First wins, -1 Second wins).
    pub(super) w: f32,
    /// The exact value from First's view of a `Terminal` node, or of one flagged [`F_PROVEN`].
    pub(super) terminal: f32,
    pub(super) first_child: u32,
    pub(super) num_children: u16,
}

// The node size that the memory figures (`Mcts::tree_size`, the Gomocup brain's memory cap) use.
const _: () = assert!(std::mem::size_of::<Node>() == NODE_BYTES);

/// Bytes per tree node.
pub const NODE_BYTES: usize = 32;

impl Node {
    pub(super) fn new(action: u16, prior: f32, flags: u8) -> Node {
        Node {
            action,
            state: NodeState::Leaf,
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
    pub(super) fn children(&self) -> std::ops::Range<usize> {
        self.first_child as usize..self.first_child as usize + self.num_children as usize
    }
}

/// `+1` when `decider` (0 = First) is First, else `-1`: turns a value from First's view into the
/// decider's and back.
pub(super) fn sign(decider: u8) -> f32 {
    if decider == 0 {
        1.0
    } else {
        -1.0
    }
}

/// Scratch of the partial sort of a fresh node's children (reused from node to node).
#[derive(Default)]
pub(super) struct ChildSorter {
    /// `(prior, position)` keys.
    keys: Vec<(f32, u32)>,
    /// The chosen children, in their new order.
    nodes: Vec<Node>,
}

impl ChildSorter {
    /// A sorter with room for `n` children.
    pub(super) fn with_capacity(n: usize) -> ChildSorter {
        ChildSorter { keys: Vec::with_capacity(n), nodes: Vec::with_capacity(n) }
    }

    /// Orders `kids` (more than [`SORTED_PREFIX`] children, in the order made) as a stable sort
    /// by prior would in its first [`SORTED_PREFIX`] places: the highest priors, kept in order in
    /// one pass over `(prior, position)` keys (a child enters only when it ranks ahead of the
    /// last one kept, so most children cost one comparison); the others follow in the order made,
    /// so that [`sort_tail`] completes the full stable sort.
    pub(super) fn sort_prefix(&mut self, kids: &mut [Node]) {
        // Whether key `a` ranks ahead of key `b`: higher prior, then earlier position (NaN
        // priors compare as equal).
        let ahead = |a: &(f32, u32), b: &(f32, u32)| {
            b.0.partial_cmp(&a.0).unwrap_or(std::cmp::Ordering::Equal).then(a.1.cmp(&b.1)) == std::cmp::Ordering::Less
        };
        let top = &mut self.keys;
        top.clear();
        for (i, c) in kids.iter().enumerate() {
            let k = (c.prior, i as u32);
            if top.len() == SORTED_PREFIX {
                if !ahead(&k, &top[SORTED_PREFIX - 1]) {
                    continue;
                }
                top.pop();
            }
            let at = top.iter().position(|t| ahead(&k, t)).unwrap_or(top.len());
            top.insert(at, k);
        }
        let chosen = &mut self.nodes;
        chosen.clear();
        chosen.extend(top.iter().map(|&(_, i)| kids[i as usize]));
        // The rest keep the order made and end where the slice ends: from the back, each run
        // between two chosen positions moves right past the room the chosen ones leave.
        top.sort_unstable_by_key(|k| k.1);
        let (mut end, mut dest) = (kids.len(), kids.len());
        for &(_, p) in top.iter().rev() {
            let p = p as usize;
            let run = end - (p + 1);
            kids.copy_within(p + 1..end, dest - run);
            dest -= run;
            end = p;
        }
        kids.copy_within(0..end, dest - end);
        debug_assert_eq!(dest - end, SORTED_PREFIX);
        kids[..SORTED_PREFIX].copy_from_slice(chosen);
    }
}

/// Sorts `kids` after the first [`SORTED_PREFIX`] (as [`ChildSorter::sort_prefix`] left them),
/// stably, so equal priors keep the order made.
pub(super) fn sort_tail(kids: &mut [Node]) {
    kids[SORTED_PREFIX..].sort_by(by_prior);
}

/// Sorts `kids` with the visited ones (visits or virtual loss) first, then the unvisited ones by
/// prior, descending: the order PUCT selection's scan (which stops at the first unvisited child) needs after the
/// priors changed.
pub(super) fn sort_visited_first(kids: &mut [Node]) {
    kids.sort_by(|x, y| {
        let (vx, vy) = (x.n + x.vl > 0, y.n + y.vl > 0);
        vy.cmp(&vx).then(y.prior.partial_cmp(&x.prior).unwrap_or(std::cmp::Ordering::Equal))
    });
}
