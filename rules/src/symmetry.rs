//! The 8 symmetries of the square board (the dihedral group D4): the identity, 3 rotations and
//! 4 reflections. Used for data augmentation, opening recognition (RULES.md §5: an opening in any
//! of its 8 symmetric forms is the same opening) and fifth-move offer checks.

use crate::board::{Board, Point};

/// One of the 8 board symmetries, numbered 0..8: bit 2 = transpose (swap x and y) first, then
/// bit 0 flips x (`x -> size-1-x`) and bit 1 flips y. `Symmetry(0)` is the identity.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Symmetry(pub u8);

impl Symmetry {
    /// All 8 symmetries, identity first.
    pub const ALL: [Symmetry; 8] =
        [Symmetry(0), Symmetry(1), Symmetry(2), Symmetry(3), Symmetry(4), Symmetry(5), Symmetry(6), Symmetry(7)];
    /// The identity.
    pub const IDENTITY: Symmetry = Symmetry(0);

    /// Map a point on a board of side `size` (the point must be on that board).
    pub fn apply(self, p: Point, size: usize) -> Point {
        debug_assert!(self.0 < 8, "symmetry number {} is not in 0..8", self.0);
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

    /// Map a point index `y * size + x`.
    pub fn apply_index(self, index: usize, size: usize) -> usize {
        self.apply(Point::from_index(index, size), size).index(size)
    }

    /// The symmetry that undoes this one: `s.inverse().apply(s.apply(p)) == p`.
    pub fn inverse(self) -> Symmetry {
        // Transpose-then-flip: the inverse flips first then transposes, i.e. swaps the flip bits.
        if self.0 & 4 != 0 {
            Symmetry(4 | ((self.0 & 1) << 1) | ((self.0 & 2) >> 1))
        } else {
            self
        }
    }

    /// `self` followed by `then`: `s.then(t).apply(p) == t.apply(s.apply(p))`.
    pub fn then(self, then: Symmetry) -> Symmetry {
        // Decide on two points whose 8 images are pairwise distinct (any size works; use 5).
        let probe = [Point::new(0, 1), Point::new(1, 3)];
        let want = probe.map(|p| then.apply(self.apply(p, 5), 5));
        *Symmetry::ALL.iter().find(|s| probe.map(|p| s.apply(p, 5)) == want).expect("D4 is closed under composition")
    }

    /// The transformed board: same size, rule and placement order, every stone mapped.
    pub fn apply_board(self, board: &Board) -> Board {
        let mut out = Board::new(board.size(), board.rule()).expect("size already valid");
        for &(p, c) in board.stones() {
            out.place(self.apply(p, board.size()), c);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_eight_images_of_an_asymmetric_point_are_distinct() {
        let imgs: std::collections::HashSet<_> = Symmetry::ALL.iter().map(|s| s.apply(Point::new(1, 3), 15)).collect();
        assert_eq!(imgs.len(), 8);
    }

    #[test]
    fn inverse_and_composition() {
        for s in Symmetry::ALL {
            assert_eq!(s.then(s.inverse()), Symmetry::IDENTITY);
            assert_eq!(s.inverse().then(s), Symmetry::IDENTITY);
            for t in Symmetry::ALL {
                for size in [7usize, 15, 20] {
                    let p = Point::new(2, 5);
                    assert_eq!(s.then(t).apply(p, size), t.apply(s.apply(p, size), size));
                }
            }
        }
    }

    #[test]
    fn known_images() {
        // On 15x15, d4 (3,3): flip x -> l4 (11,3); transpose -> (3,3); rotate-ish 5 -> (11,3).
        assert_eq!(Symmetry(1).apply(Point::new(3, 4), 15), Point::new(11, 4));
        assert_eq!(Symmetry(2).apply(Point::new(3, 4), 15), Point::new(3, 10));
        assert_eq!(Symmetry(4).apply(Point::new(3, 4), 15), Point::new(4, 3));
        assert_eq!(Symmetry(7).apply(Point::new(3, 4), 15), Point::new(10, 11));
        // The centre is fixed by all.
        for s in Symmetry::ALL {
            assert_eq!(s.apply(Point::new(7, 7), 15), Point::new(7, 7));
        }
    }
}
