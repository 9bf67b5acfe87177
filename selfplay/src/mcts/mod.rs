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
//!   refutations. Optionally (`vct_nodes`) a budgeted VCT check of the mover
//!   (`renju_rules::vct`) once a node has `vct_visits` visits: a proven VCT is an exact win.
//! - Dirichlet noise at the root (AlphaZero: `P = (1 - eps) P + eps Dir(alpha)`), tree reuse
//!   between moves ([`Mcts::advance`]).
//!
//! # Files
//! - [`config`]: [`SearchConfig`] and [`SearchAlgorithm`];
//! - `node`: the node layout (32 bytes) and the order of a node's children;
//! - `tree`: [`Mcts`], the tree and its operations: playouts, selection, expansion,
//!   evaluation delivery and backup, tree reuse;
//! - `root`: the root: Dirichlet noise, the Gumbel root search run over the tree, and the root
//!   statistics the drivers read (visits, policy target, values);
//! - [`gumbel`]: the Gumbel root procedure (Gumbel-top-k, sequential halving, the improved
//!   policy);
//! - `drive`: whole searches over an evaluator ([`search_with`], [`search_until`]), over one
//!   evaluator per thread ([`search_parallel`]), and the move choice ([`pick_by_visits`],
//!   [`pick_by_lcb`]).
//!
//! # Threads
//! [`search_parallel`] searches one tree with several threads: the tree sits behind a lock; a
//! thread takes it to deliver its last batch and gather the next one (selection, expansion,
//! encoding: [`Mcts::gather`], virtual loss on the paths), takes the batch out of the tree
//! ([`Mcts::take_batch`]) and evaluates it without the lock, so evaluations run in parallel
//! while the tree work is serial. One thread is exactly [`search_until`].

pub mod config;
mod drive;
pub mod gumbel;
mod node;
mod root;
mod tree;

pub use config::{SearchAlgorithm, SearchConfig, PLAY_LCB_Z, PLAY_POLICY_TEMPERATURE};
pub use drive::{lower_confidence_bound, pick_by_lcb, pick_by_visits, search_parallel, search_until, search_with};
pub use gumbel::GumbelParams;
pub use node::NODE_BYTES;
pub use tree::{LeafBatch, Mcts, SearchStats, TreeMemory};
