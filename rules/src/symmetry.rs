//! The 8 symmetries of the square board (the dihedral group D4).

use crate::board::Point;

/// One of the 8 board symmetries, numbered 0..8: bit 2 = transpose first, then bits 0/1 flip
/// x / y. `Symmetry(0)` is the identity. (STUB: the rules-core work completes this module.)
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Symmetry(pub u8);

impl Symmetry {
    /// All 8 symmetries, identity first.
    pub const ALL: [Symmetry; 8] = [
        Symmetry(0), Symmetry(1), Symmetry(2), Symmetry(3),
        Symmetry(4), Symmetry(5), Symmetry(6), Symmetry(7),
    ];
    /// Map a point on a board of side `size`.
    pub fn apply(self, p: Point, size: usize) -> Point {
        let n = size as u8 - 1;
        let (mut x, mut y) = (p.x, p.y);
        if self.0 & 4 != 0 {
            std::mem::swap(&mut x, &mut y);
        }
        if self.0 & 1 != 0 {
            x = n - x;
        }
        if self.0 & 2 != 0 {
            y = n - y;
        }
        Point::new(x, y)
    }
    /// The symmetry that undoes this one.
    pub fn inverse(self) -> Symmetry {
        // Transpose-then-flip: the inverse flips first then transposes, i.e. swaps the flip bits.
        if self.0 & 4 != 0 {
            Symmetry(4 | ((self.0 & 1) << 1) | ((self.0 & 2) >> 1))
        } else {
            self
        }
    }
}
