//! The board: stones on a square board under a rule variant, with incremental place/undo,
//! Zobrist hashing, the exact verdicts of RULES.md §2–4 and legal-move masks.
//!
//! API contract (other crates rely on it; internals are free to change):
//! - [`Point`] is `(x, y)`, `x` the column (0 = `a`, left), `y` the row (0 = `1`, bottom), RULES.md §1.
//! - The point index used by masks and by the policy head is `y * size + x`.
//! - [`Board::place`] / [`Board::undo`] are incremental and cheap; they do not check legality.
//! - [`Board::classify`] is exact per RULES.md §3–4 (recursive fake threes to any depth).
//!
//! The value types the board works with live in their own modules ([`crate::point`],
//! [`crate::color`], [`crate::rule`]) and are re-exported here; the line-mask representation
//! and the forbidden-point classifier are crate-internal (`lines`, `forbidden`).

pub use crate::color::Color;
pub use crate::lines::DIRS;
pub use crate::point::{check_size, Point, PointSet, SizeError, DEFAULT_SIZE, MAX_SIZE, MIN_SIZE, SIZES};
pub use crate::rule::{ForbiddenKind, ParseRuleError, Rule, Verdict};

use crate::forbidden::{for_each_forbidden, renju_black, Ctx};
use crate::lines::{line_pos, run_through_centre, LineMasks, LINES, PAD, WIN};

/// Zobrist key of a stone (fixed seed, independent of the run): splitmix64 of (index, colour).
#[inline(always)]
fn zobrist(index: usize, c: Color) -> u64 {
    let mut z = 0x243F_6A88_85A3_08D3u64 ^ ((index as u64) << 1 | (c == Color::White) as u64);
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A board position under a rule variant: stones, their placement order, a Zobrist hash, and
/// the exact verdicts of RULES.md §2–4.
///
/// Representation: per-line bit masks for the 4 directions (rows, columns, both diagonals) of
/// each colour, a fixed-capacity move list and the hash; about 3.5 KB, `Clone` is a plain copy
/// (no heap). Sizes 7..=20 ([`MIN_SIZE`], [`MAX_SIZE`]).
#[derive(Clone)]
pub struct Board {
    size: usize,
    rule: Rule,
    /// `lines[0]` black, `lines[1]` white.
    lines: [LineMasks; 2],
    /// Off-board bits of every line (they block like an opponent stone).
    off: LineMasks,
    hash: u64,
    len: usize,
    stones: [(Point, Color); MAX_SIZE * MAX_SIZE],
}

impl std::fmt::Debug for Board {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Board")
            .field("size", &self.size)
            .field("rule", &self.rule)
            .field("stones", &self.stones())
            .finish()
    }
}

impl Board {
    /// An empty board of side `size` under `rule`. Errors with [`SizeError`] unless `size` is in
    /// [`SIZES`] (7..=20, RULES.md §1).
    pub fn new(size: usize, rule: Rule) -> Result<Board, SizeError> {
        check_size(size)?;
        let mut off = [[u32::MAX; LINES]; 4];
        for y in 0..size {
            for x in 0..size {
                for (d, lines) in off.iter_mut().enumerate() {
                    let (l, pos) = line_pos(size, d, x, y);
                    lines[l] &= !(1 << (pos + PAD));
                }
            }
        }
        Ok(Board {
            size,
            rule,
            lines: [[[0; LINES]; 4]; 2],
            off,
            hash: 0,
            len: 0,
            stones: [(Point::new(0, 0), Color::Black); MAX_SIZE * MAX_SIZE],
        })
    }

    /// A board of side `size` under `rule` with `stones` placed in order (no legality check).
    /// Errors with [`SizeError`] on a bad size; panics if a stone is off the board or on an
    /// occupied point (use the notation parser for checked input).
    pub fn with_stones(size: usize, rule: Rule, stones: &[(Point, Color)]) -> Result<Board, SizeError> {
        let mut b = Board::new(size, rule)?;
        for &(p, c) in stones {
            assert!(b.contains(p), "stone {p:?} is off a {size}x{size} board");
            assert!(b.get(p).is_none(), "point {p:?} is already occupied");
            b.place(p, c);
        }
        Ok(b)
    }

    /// Board side (number of lines in each direction).
    pub fn size(&self) -> usize {
        self.size
    }
    /// The rule variant.
    pub fn rule(&self) -> Rule {
        self.rule
    }
    /// Whether `p` is on the board.
    pub fn contains(&self, p: Point) -> bool {
        (p.x as usize) < self.size && (p.y as usize) < self.size
    }
    /// The stone on `p`, if any. `p` must be on the board (debug-asserted; off-board reads `None`).
    #[inline]
    pub fn get(&self, p: Point) -> Option<Color> {
        debug_assert!(self.contains(p), "point {p:?} is off the board");
        let (y, bit) = (p.y as usize, 1u32 << (p.x as u32 + PAD));
        if y >= self.size {
            None
        } else if self.lines[0][0][y] & bit != 0 {
            Some(Color::Black)
        } else if self.lines[1][0][y] & bit != 0 {
            Some(Color::White)
        } else {
            None
        }
    }

    #[inline(always)]
    fn toggle(&mut self, p: Point, c: Color) {
        let (x, y, n) = (p.x as usize, p.y as usize, self.size);
        let m = &mut self.lines[c.index()];
        let bx = 1u32 << (p.x as u32 + PAD);
        // The four `line_pos` cases, unrolled (see the representation in `crate::lines`).
        m[0][y] ^= bx;
        m[1][x] ^= 1 << (p.y as u32 + PAD);
        m[2][x + n - 1 - y] ^= bx;
        m[3][x + y] ^= bx;
        self.hash ^= zobrist(y * n + x, c);
    }

    /// Put a stone of colour `c` on `p`. No legality check (forbidden points, game over);
    /// `p` must be on the board and empty (debug-asserted).
    #[inline]
    pub fn place(&mut self, p: Point, c: Color) {
        debug_assert!(self.contains(p), "point {p:?} is off the board");
        debug_assert!(self.get(p).is_none(), "point {p:?} is occupied");
        self.toggle(p, c);
        self.stones[self.len] = (p, c);
        self.len += 1;
    }

    /// Remove the last placed stone and return it; `None` on an empty board.
    #[inline]
    pub fn undo(&mut self) -> Option<(Point, Color)> {
        if self.len == 0 {
            return None;
        }
        self.len -= 1;
        let (p, c) = self.stones[self.len];
        self.toggle(p, c);
        Some((p, c))
    }

    /// The stones in placement order.
    pub fn stones(&self) -> &[(Point, Color)] {
        &self.stones[..self.len]
    }
    /// Number of stones on the board.
    pub fn stone_count(&self) -> usize {
        self.len
    }
    /// Whether every point holds a stone.
    pub fn is_full(&self) -> bool {
        self.len == self.size * self.size
    }
    /// Zobrist hash of the stones (order-independent; the empty board hashes to 0). The keys are
    /// fixed (splitmix64 of point index and colour), so hashes are stable across runs.
    pub fn hash(&self) -> u64 {
        self.hash
    }

    /// Whether a run through `p` of colour `c` (as if a stone of `c` were there) wins for `c`
    /// in some direction under the rule ([`Rule::run_wins`]).
    fn wins_with(&self, p: Point, c: Color) -> bool {
        let (x, y) = (p.x as usize, p.y as usize);
        (0..4).any(|d| {
            let (l, pos) = line_pos(self.size, d, x, y);
            let r = run_through_centre((self.lines[c.index()][d][l] >> pos) & WIN);
            self.rule.run_wins(c, r as usize)
        })
    }

    /// The verdict on `c` playing `p` (RULES.md §2–4): [`Verdict::Occupied`] if `p` holds a stone;
    /// [`Verdict::Five`] if the move wins (five beats every forbidden shape); under renju for
    /// Black [`Verdict::Forbidden`] with precedence overline > double-four > double-three,
    /// fake threes resolved recursively to any depth; otherwise [`Verdict::Legal`].
    /// Panics if `p` is off the board.
    pub fn classify(&self, p: Point, c: Color) -> Verdict {
        assert!(self.contains(p), "point {p:?} is off a {0}x{0} board", self.size);
        if self.get(p).is_some() {
            return Verdict::Occupied;
        }
        if self.rule == Rule::Renju && c == Color::Black {
            let mut black = self.lines[0];
            let cx = Ctx::new(self.size, &self.lines[1], &self.off);
            return renju_black(&cx, &mut black, p.x as usize, p.y as usize);
        }
        if self.wins_with(p, c) {
            Verdict::Five
        } else {
            Verdict::Legal
        }
    }

    /// Points where `c` may play: every empty point, minus (renju, Black) the forbidden points.
    /// Bits are indices `y * size + x`.
    pub fn legal_mask(&self, c: Color) -> PointSet {
        let n = self.size;
        let mut set = PointSet::new();
        let row_bits = (1u64 << n) - 1;
        for y in 0..n {
            let empty = !(self.lines[0][0][y] | self.lines[1][0][y] | self.off[0][y]);
            let e = (empty >> PAD) as u64 & row_bits;
            set.insert_bits(y * n, e, n);
        }
        if self.rule == Rule::Renju && c == Color::Black {
            for_each_forbidden(self.size, &self.lines, &self.off, |x, y, _| set.remove(y * n + x));
        }
        set
    }

    fn forbidden_iter(&self) -> Vec<(Point, ForbiddenKind)> {
        let mut out = Vec::new();
        for_each_forbidden(self.size, &self.lines, &self.off, |x, y, k| out.push((Point::new(x as u8, y as u8), k)));
        out
    }

    /// Black's forbidden points under renju with their kinds, in index order; empty under the
    /// other rules (RULES.md §4: White has none).
    pub fn forbidden_points(&self) -> Vec<(Point, ForbiddenKind)> {
        if self.rule != Rule::Renju {
            return Vec::new();
        }
        self.forbidden_iter()
    }

    /// Whether the stone on `p` forms a winning line for its colour under the rule (RULES.md §2):
    /// freestyle five or more; standard exactly five; renju exactly five for Black and five or
    /// more for White. `false` if `p` is empty.
    pub fn is_win_at(&self, p: Point) -> bool {
        match self.get(p) {
            None => false,
            Some(c) => self.wins_with(p, c),
        }
    }
}

/// Threat points read off the per-line masks, for the VCF solver ([`crate::vcf`]).
impl Board {
    /// Whether `c` playing the empty point `p` wins by the rule (RULES.md §2 table; for Black
    /// under renju an exact five, whatever forbidden shape it also makes: five first, §4.4).
    /// `false` if `p` holds a stone. Cheaper than [`Board::classify`]: no forbidden-move check.
    pub fn makes_five(&self, p: Point, c: Color) -> bool {
        self.get(p).is_none() && self.wins_with(p, c)
    }

    /// The empty points that lie in some window of 5 consecutive points on a line holding exactly
    /// `stones` stones of `c`, no stone of the other colour and no off-board point (bits are
    /// indices `y * size + x`). With `stones = 4` this is a superset of the points where `c` makes
    /// a five; with `stones = 3`, a superset of the points where a stone of `c` makes a four when
    /// `c` has no four yet (RULES.md §3: a four is a line where one more stone makes a five, and
    /// that five lies in such a window). Computed bit-parallel over whole lines, ~116 lines on 15x15.
    pub fn window_points(&self, c: Color, stones: u32) -> PointSet {
        let n = self.size;
        let own_lines = &self.lines[c.index()];
        let opp_lines = &self.lines[c.opponent().index()];
        let mut set = PointSet::new();
        for d in 0..4 {
            let count = if d < 2 { n } else { 2 * n - 1 };
            for l in 0..count {
                let own = own_lines[d][l];
                if own == 0 {
                    continue;
                }
                let free = !(opp_lines[d][l] | self.off[d][l]);
                // Bit s of `all_free` / of the counters: the window of bits s..s+4.
                let all_free = free & free >> 1 & free >> 2 & free >> 3 & free >> 4;
                let (mut s0, mut s1, mut s2) = (0u32, 0u32, 0u32);
                for k in 0..5 {
                    let v = own >> k;
                    let c0 = s0 & v;
                    s0 ^= v;
                    let c1 = s1 & c0;
                    s1 ^= c0;
                    s2 |= c1;
                }
                let want = if stones & 1 == 1 { s0 } else { !s0 }
                    & if stones & 2 == 2 { s1 } else { !s1 }
                    & if stones & 4 == 4 { s2 } else { !s2 };
                let w = all_free & want;
                if w == 0 {
                    continue;
                }
                let mut pts = (w | w << 1 | w << 2 | w << 3 | w << 4) & free & !own;
                while pts != 0 {
                    let pos = (pts.trailing_zeros() - PAD) as usize;
                    pts &= pts - 1;
                    let (x, y) = match d {
                        0 => (pos, l),
                        1 => (l, pos),
                        2 => (pos, pos + n - 1 - l),
                        _ => (pos, l - pos),
                    };
                    set.insert(y * n + x);
                }
            }
        }
        set
    }
}
