//! `renju-selfplay`: the search and self-play half of renju-zero (no torch).
//!
//! - [`action`]: the fixed action space (DESIGN.md) and legality masks.
//! - [`encode`]: the versioned position encoder (planes + globals).
//! - [`eval`]: the batched [`eval::Evaluator`] trait, uniform and heuristic evaluators.
//! - [`linepattern`]: the line-pattern (NNUE-style) network: pattern encoding, table file, table evaluator.
//! - [`stones_only`]: the stones-only encoding (what an engine that knows only the stones can give).
//! - [`record`]: self-play shards (npz) writer and validating reader.
//! - [`gamestats`]: statistics of finished games (length, Black's score, swaps, offers, resignations).
//! - [`walker`]: position trackers for the search (place/undo on one board in plain play).
//! - [`mcts`]: PUCT search with batched leaf evaluation and virtual loss, and the Gumbel root
//!   search (Danihelka et al. 2022, [`mcts::gumbel`]) it can run at the root.
//! - [`server`]: the batching inference server (one evaluator thread, hot-swappable generations).
//! - [`worker`]: self-play workers, [`worker::SelfplayConfig`], [`worker::run_selfplay`].

pub mod action;
pub mod encode;
pub mod eval;
pub mod gamestats;
pub mod linepattern;
pub mod mcts;
pub mod record;
pub mod server;
pub mod stones_only;
pub mod walker;
pub mod worker;
