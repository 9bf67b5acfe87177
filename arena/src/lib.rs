//! `renju-arena`: evaluation and research for renju-zero (no torch).
//!
//! - [`agent`]: the one player trait ([`agent::Agent`]) and PUCT search over any `Evaluator`.
//! - [`analysis`]: the analysis engine (`renju-zero analyze`): JSON-lines queries searched
//!   concurrently, answered with candidates, values, principal variations, forbidden points, VCF.
//! - [`clock`]: adaptive time use for one decision: stop early when the move is settled, run
//!   past the target while it is not.
//! - [`spec`]: player specs such as `model:DIR,playouts=200` and building agents from them.
//! - [`engine`]: an external engine as an agent, driven through the Gomocup (Piskvork) protocol.
//! - [`wire`]: the Gomocup wire format (coordinates, the rule bitmask, the line reader of an
//!   engine process), shared by the brain, the engine client and test harnesses.
//! - [`matches`]: matches between players (`renju-zero arena`): the 26 RIF openings with both
//!   colours or a full opening protocol, parallel games, records, W/D/L per pair.
//! - [`ratings`]: Bradley–Terry maximum-likelihood ratings (Elo scale) with 95% intervals.
//! - [`records`]: game records in the formats renju tools read (SGF, Piskvork `.psq`) from
//!   `games.jsonl` and self-play shards (`renju-zero games export`).
//! - [`sprt`]: Wald's sequential probability ratio test for gating.
//! - [`curve`]: the learning curve (`renju-zero curve`): generations of a run against fixed
//!   opponents in the training distribution, `curve.csv` and `curve.svg`.
//! - [`gatekeeper`]: the publication gate the training pipeline can call (off by default): a
//!   candidate against the incumbent and the pass/fail rule.
//! - [`openings`]: the opening-balance study (`renju-zero openings`).
//! - [`gomocup`]: the Gomocup brain (`renju-zero gomocup`): protocol dispatch, the brain's state
//!   machine over any agent, its time budget and its tactics before the search.
//! - [`stats`]: Wilson intervals, Spearman correlation, W/D/L tallies.
//! - [`output`]: CSV / markdown / SVG helpers (files go through `renju_fs`).

pub mod agent;
pub mod analysis;
pub mod clock;
pub mod curve;
pub mod engine;
pub mod gatekeeper;
pub mod gomocup;
pub mod matches;
pub mod openings;
pub mod output;
pub mod ratings;
pub mod records;
pub mod spec;
pub mod sprt;
pub mod stats;
pub mod wire;
