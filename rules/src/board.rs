//! The board: points, colours, rule variants, stones, and the exact renju forbidden-move verdicts.
//!
//! API contract (other crates rely on it; internals are free to change):
//! - [`Point`] is `(x, y)`, `x` the column (0 = `a`, left), `y` the row (0 = `1`, bottom), RULES.md §1.
//! - The point index used by masks and by the policy head is `y * size + x`.
//! - [`Board::place`] / [`Board::undo`] are incremental and cheap; they do not check legality.
//! - [`Board::classify`] is exact per RULES.md §3–4 (recursive fake threes to any depth).

use serde::{Deserialize, Serialize};

/// Smallest supported board side (RULES.md §1).
pub const MIN_SIZE: usize = 7;
/// Largest supported board side (RULES.md §1).
pub const MAX_SIZE: usize = 20;
/// Default board side: the standard renju board (RULES.md §1).
pub const DEFAULT_SIZE: usize = 15;

/// A board intersection: `x` = column (0 is `a`, the left edge), `y` = row (0 is `1`, the bottom edge).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Point {
    pub x: u8,
    pub y: u8,
}

impl Point {
    /// A point from column and row (0-based). No bounds check: see [`Board::contains`].
    pub const fn new(x: u8, y: u8) -> Point {
        Point { x, y }
    }
    /// Index `y * size + x`, the layout of masks, planes and the policy head.
    pub fn index(self, size: usize) -> usize {
        self.y as usize * size + self.x as usize
    }
    /// Inverse of [`Point::index`].
    pub fn from_index(index: usize, size: usize) -> Point {
        Point { x: (index % size) as u8, y: (index / size) as u8 }
    }
}

/// Stone colour.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Color {
    Black,
    White,
}

impl Color {
    /// The other colour.
    pub fn opponent(self) -> Color {
        match self {
            Color::Black => Color::White,
            Color::White => Color::Black,
        }
    }
}

/// Rule variant (RULES.md §2 table).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Rule {
    /// Five or overline wins for both; no forbidden moves.
    Freestyle,
    /// Exactly five wins for both; an overline is not a win; no forbidden moves.
    Standard,
    /// Black: exactly five wins, double-three / double-four / overline forbidden;
    /// White: five or overline wins.
    Renju,
}

impl std::str::FromStr for Rule {
    type Err = String;
    fn from_str(s: &str) -> Result<Rule, String> {
        match s.to_ascii_lowercase().as_str() {
            "freestyle" => Ok(Rule::Freestyle),
            "standard" => Ok(Rule::Standard),
            "renju" => Ok(Rule::Renju),
            other => Err(format!("unknown rule '{other}' (expected renju, standard or freestyle)")),
        }
    }
}

/// Why a black move is forbidden (RULES.md §4). Order of precedence when several apply:
/// overline, then double-four, then double-three.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ForbiddenKind {
    Overline,
    DoubleFour,
    DoubleThree,
}

/// The verdict on placing a stone of a colour on a point.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Verdict {
    /// The move wins: a five (exactly five for Black under renju/standard; under renju White's
    /// overline; under freestyle any five or longer).
    Five,
    /// A black move forbidden under renju (never returned for White or other rules).
    Forbidden(ForbiddenKind),
    /// An ordinary legal move.
    Legal,
    /// The point already holds a stone.
    Occupied,
}

/// A set of points as a bitset over indices `y * size + x` (up to 20 x 20 = 400 points).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct PointSet {
    bits: [u64; 7],
}

impl PointSet {
    /// The empty set.
    pub const fn new() -> PointSet {
        PointSet { bits: [0; 7] }
    }
    /// Whether the point with this index is in the set.
    pub fn contains(&self, index: usize) -> bool {
        self.bits[index >> 6] >> (index & 63) & 1 == 1
    }
    /// Add an index.
    pub fn insert(&mut self, index: usize) {
        self.bits[index >> 6] |= 1 << (index & 63);
    }
    /// Remove an index.
    pub fn remove(&mut self, index: usize) {
        self.bits[index >> 6] &= !(1 << (index & 63));
    }
    /// Number of indices in the set.
    pub fn len(&self) -> usize {
        self.bits.iter().map(|w| w.count_ones() as usize).sum()
    }
    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.bits.iter().all(|&w| w == 0)
    }
    /// The indices in increasing order.
    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.bits.iter().enumerate().flat_map(|(i, &w)| {
            let mut w = w;
            std::iter::from_fn(move || {
                if w == 0 {
                    None
                } else {
                    let b = w.trailing_zeros() as usize;
                    w &= w - 1;
                    Some(i * 64 + b)
                }
            })
        })
    }
}

/// Error for an unsupported board size.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("board size {0} is out of range ({MIN_SIZE}..={MAX_SIZE})")]
pub struct SizeError(pub usize);

// ---------------------------------------------------------------------------------------------
// The Board itself is implemented below this line (representation chosen for speed).
// Required public API (signatures are the contract):
//
//   Board::new(size: usize, rule: Rule) -> Result<Board, SizeError>
//   fn size(&self) -> usize;  fn rule(&self) -> Rule;  fn contains(&self, p: Point) -> bool
//   fn get(&self, p: Point) -> Option<Color>
//   fn place(&mut self, p: Point, c: Color)      // no legality check; debug_assert on occupied
//   fn undo(&mut self) -> Option<(Point, Color)> // removes the last placed stone
//   fn stones(&self) -> &[(Point, Color)]        // placement order
//   fn stone_count(&self) -> usize;  fn is_full(&self) -> bool
//   fn hash(&self) -> u64                        // Zobrist, incremental
//   fn classify(&self, p: Point, c: Color) -> Verdict
//   fn legal_mask(&self, c: Color) -> PointSet   // empty points where `c` may play (renju: Black's forbidden excluded)
//   fn forbidden_points(&self) -> Vec<(Point, ForbiddenKind)> // Black's, under renju; empty otherwise
//   fn is_win_at(&self, p: Point) -> bool        // does the stone on `p` form a winning line for its colour under the rule
// ---------------------------------------------------------------------------------------------

/// A board position under a rule variant. (STUB: the rules-core work replaces the body.)
#[derive(Clone, Debug)]
pub struct Board {
    size: usize,
    rule: Rule,
    stones: Vec<(Point, Color)>,
}

impl Board {
    /// An empty board of side `size` (7..=20) under `rule`.
    pub fn new(size: usize, rule: Rule) -> Result<Board, SizeError> {
        if !(MIN_SIZE..=MAX_SIZE).contains(&size) {
            return Err(SizeError(size));
        }
        Ok(Board { size, rule, stones: Vec::new() })
    }
    pub fn size(&self) -> usize { self.size }
    pub fn rule(&self) -> Rule { self.rule }
    pub fn contains(&self, p: Point) -> bool { (p.x as usize) < self.size && (p.y as usize) < self.size }
    pub fn get(&self, _p: Point) -> Option<Color> { todo!() }
    pub fn place(&mut self, _p: Point, _c: Color) { todo!() }
    pub fn undo(&mut self) -> Option<(Point, Color)> { todo!() }
    pub fn stones(&self) -> &[(Point, Color)] { &self.stones }
    pub fn stone_count(&self) -> usize { self.stones.len() }
    pub fn is_full(&self) -> bool { self.stones.len() == self.size * self.size }
    pub fn hash(&self) -> u64 { todo!() }
    pub fn classify(&self, _p: Point, _c: Color) -> Verdict { todo!() }
    pub fn legal_mask(&self, _c: Color) -> PointSet { todo!() }
    pub fn forbidden_points(&self) -> Vec<(Point, ForbiddenKind)> { todo!() }
    pub fn is_win_at(&self, _p: Point) -> bool { todo!() }
}
