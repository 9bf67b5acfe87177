//! Points and point sets of the square board, and the supported board sizes (RULES.md §1).
//!
//! - [`Point`] is `(x, y)`, `x` the column (0 = `a`, left), `y` the row (0 = `1`, bottom).
//! - The point index used by masks and by the policy head is `y * size + x`.

use serde::{Deserialize, Serialize};

/// Smallest supported board side (RULES.md §1).
pub const MIN_SIZE: usize = 7;
/// Largest supported board side (RULES.md §1).
pub const MAX_SIZE: usize = 20;
/// The supported board sides, `MIN_SIZE..=MAX_SIZE`: the one source of the range for every crate.
pub const SIZES: std::ops::RangeInclusive<usize> = MIN_SIZE..=MAX_SIZE;

/// `Ok` when `size` is a supported board side ([`SIZES`]), else [`SizeError`] naming it.
pub fn check_size(size: usize) -> Result<(), SizeError> {
    if SIZES.contains(&size) {
        Ok(())
    } else {
        Err(SizeError(size))
    }
}

/// Default board side: the standard renju board (RULES.md §1).
pub const DEFAULT_SIZE: usize = 15;

/// A board intersection: `x` = column (0 is `a`, the left edge), `y` = row (0 is `1`, the bottom edge).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Point {
    pub x: u8,
    pub y: u8,
}

impl Point {
    /// A point from column and row (0-based). No bounds check: see
    /// [`crate::Board::contains`].
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
    /// Add the indices `start + i` for the set bits `i` of `bits` (`bits` below bit `len`,
    /// `len <= 64`): one row of a board at once.
    #[inline]
    pub(crate) fn insert_bits(&mut self, start: usize, bits: u64, len: usize) {
        let (w, o) = (start >> 6, start & 63);
        self.bits[w] |= bits << o;
        if o + len > 64 {
            self.bits[w + 1] |= bits >> (64 - o);
        }
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
        PointSetIter { bits: &self.bits, word: 0, cur: self.bits[0] }
    }
}

/// Iterator over a [`PointSet`]: one word at a time, lowest set bit first.
struct PointSetIter<'a> {
    bits: &'a [u64; 7],
    word: usize,
    cur: u64,
}

impl Iterator for PointSetIter<'_> {
    type Item = usize;
    #[inline]
    fn next(&mut self) -> Option<usize> {
        while self.cur == 0 {
            self.word += 1;
            if self.word >= self.bits.len() {
                return None;
            }
            self.cur = self.bits[self.word];
        }
        let b = self.cur.trailing_zeros() as usize;
        self.cur &= self.cur - 1;
        Some(self.word * 64 + b)
    }
}

/// Error for an unsupported board size.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("board size {0} is out of range ({MIN_SIZE}..={MAX_SIZE})")]
pub struct SizeError(pub usize);
