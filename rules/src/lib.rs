//! `renju-rules`: the rules of renju and gomoku as specified in `docs/RULES.md`.
//!
//! - [`point`]: points, point sets and the supported board sizes.
//! - [`color`]: the colour of a stone.
//! - [`rule`]: the rule variants and the verdict on a move ([`Verdict`], [`ForbiddenKind`]).
//! - [`board`]: the [`Board`] with incremental place/undo, Zobrist hashing, exact forbidden-move
//!   classification and legal-move masks (re-exports the value types above). Internally the
//!   line-mask representation (`lines`) and the recursive forbidden-point classifier
//!   (`forbidden`) have their own modules.
//! - [`symmetry`]: the 8 symmetries of the square board.
//! - [`notation`]: parsing and printing moves (`h8`) and games (`h8 h9 j10`), ASCII boards.
//! - [`opening`]: the 26 canonical renju openings (RULES.md §5), recognised in any symmetric form.
//! - [`protocol`]: the opening protocols (RULES.md §5): [`Protocol`], its string grammar and
//!   validation.
//! - [`game`]: a whole game under an opening protocol (RULES.md §5) as a state machine over
//!   decisions that a search can play.
//! - [`vcf`]: the VCF (victory by continuous fours) solver and the defence question.
//! - [`vct`]: the VCT (victory by continuous threats: fours and threes) solver and its defence
//!   question.
//! - [`query`]: position queries as JSON objects (a position by its stone lists; a move to
//!   classify or a side to solve VCF for) and their answers.
//!
//! This crate never depends on torch.

pub mod board;
pub mod color;
mod forbidden;
pub mod game;
mod lines;
pub mod notation;
pub mod opening;
pub mod point;
pub mod protocol;
pub mod query;
pub mod reference;
pub mod rule;
pub mod symmetry;
pub mod vcf;
pub mod vct;

pub use board::Board;
pub use color::Color;
pub use game::{Action, DecisionKind, Game, GameError, Outcome, OutcomeReason, Player};
pub use opening::Opening;
pub use point::{Point, PointSet};
pub use protocol::{InvalidProtocol, ParseProtocolError, Protocol};
pub use rule::{ForbiddenKind, Rule, Verdict};
pub use symmetry::Symmetry;
