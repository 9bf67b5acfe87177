//! `renju-arena`: evaluation and research for renju-zero (no torch).
//!
//! - [`agent`]: players ([`agent::Agent`]): PUCT search over any `Evaluator`, external engines;
//!   player specs such as `model:DIR,playouts=200`.
//! - [`engine`]: an external engine driven through the Gomocup (Piskvork) protocol.
//! - [`arena`]: matches between players (`renju-zero arena`): the 26 RIF openings with both
//!   colours or a full opening protocol, parallel games, records, W/D/L per pair.
//! - [`ratings`]: Bradley–Terry maximum-likelihood ratings (Elo scale) with 95% intervals.
//! - [`sprt`]: Wald's sequential probability ratio test for gating.
//! - [`gate`]: the publication gate the training pipeline can call (off by default).
//! - [`openings`]: the opening-balance study (`renju-zero openings`).
//! - [`gomocup`]: the Gomocup brain (`renju-zero gomocup`): protocol parser and state machine
//!   over an abstract move chooser.
//! - [`stats`]: Wilson intervals, Spearman correlation, W/D/L tallies.
//! - [`output`]: CSV / markdown / SVG helpers and crash-safe file writing.

pub mod agent;
pub mod arena;
pub mod engine;
pub mod gate;
pub mod gomocup;
pub mod openings;
pub mod output;
pub mod ratings;
pub mod sprt;
pub mod stats;
