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
    /// 0 for Black, 1 for White: the index of per-colour arrays (`[T; 2]`).
    #[inline(always)]
    pub const fn index(self) -> usize {
        match self {
            Color::Black => 0,
            Color::White => 1,
        }
    }
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

impl Rule {
    /// Whether a line of `len` stones of colour `c` wins for `c` under this rule (RULES.md §2
    /// table): freestyle five or more; standard exactly five; renju exactly five for Black, five
    /// or more for White.
    #[inline(always)]
    pub const fn run_wins(self, c: Color, len: usize) -> bool {
        match (self, c) {
            (Rule::Freestyle, _) | (Rule::Renju, Color::White) => len >= 5,
            (Rule::Standard, _) | (Rule::Renju, Color::Black) => len == 5,
        }
    }
}

impl std::fmt::Display for Rule {
    /// `renju`, `standard` or `freestyle` (what [`std::str::FromStr`] and serde read).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Rule::Freestyle => "freestyle",
            Rule::Standard => "standard",
            Rule::Renju => "renju",
        })
    }
}

/// Error from parsing a [`Rule`]: the text that is none of the three names.
#[derive(Clone, Debug, thiserror::Error, PartialEq, Eq)]
#[error("unknown rule '{0}' (expected renju, standard or freestyle)")]
pub struct ParseRuleError(pub String);

impl std::str::FromStr for Rule {
    type Err = ParseRuleError;
    /// `renju`, `standard` or `freestyle`, case-insensitive.
    fn from_str(s: &str) -> Result<Rule, ParseRuleError> {
        match s.to_ascii_lowercase().as_str() {
            "freestyle" => Ok(Rule::Freestyle),
            "standard" => Ok(Rule::Standard),
            "renju" => Ok(Rule::Renju),
            other => Err(ParseRuleError(other.to_string())),
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

// Representation: for each of the 4 line directions and each line, one `u32` bit mask per colour,
// bit `pos + PAD` for the point at position `pos` along the line (PAD = 5 so that an 11-point
// window around any point is `(mask >> pos) & 0x7FF`, the point itself at window bit 5). Lines:
//   dir 0 (1, 0): line y,          pos x        dir 1 (0, 1): line x,      pos y
//   dir 2 (1, 1): line x-y+size-1, pos x        dir 3 (1,-1): line x+y,    pos x
// `off` holds, per line, the bits that are not on the board (they block like an opponent stone).
// Black's shape on one line inside such a window is read from a precomputed table
// (see [`line_table`]) indexed by the base-3 code of the 10 neighbouring cells.

const PAD: u32 = 5;
const WIN: u32 = 0x7FF;
const LINES: usize = 2 * MAX_SIZE - 1;
/// The four line directions `(dx, dy)`: horizontal, vertical, diagonal, anti-diagonal (RULES.md
/// §3: a line is a row, a column or a diagonal). Also the order of the board's line masks.
pub const DIRS: [(i32, i32); 4] = [(1, 0), (0, 1), (1, 1), (1, -1)];

type LineMasks = [[u32; LINES]; 4];

#[inline(always)]
fn line_pos(size: usize, d: usize, x: usize, y: usize) -> (usize, u32) {
    match d {
        0 => (y, x as u32),
        1 => (x, y as u32),
        2 => (x + size - 1 - y, x as u32),
        _ => (x + y, x as u32),
    }
}

/// Zobrist key of a stone (fixed seed, independent of the run): splitmix64 of (index, colour).
#[inline(always)]
fn zobrist(index: usize, c: Color) -> u64 {
    let mut z = 0x243F_6A88_85A3_08D3u64 ^ ((index as u64) << 1 | (c == Color::White) as u64);
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Length of the unbroken run of set bits through window bit 5 (which is treated as set).
#[inline(always)]
fn run_through_centre(w: u32) -> u32 {
    let right = (w >> 6).trailing_ones().min(5);
    let left = (w << 27).leading_ones().min(5);
    1 + left + right
}

// ----- the per-line table for Black ------------------------------------------------------------

/// Entry of the line table: bits 0..=10 = window positions `q` where one more black stone makes a
/// straight four containing the centre (a "three" through the centre, RULES.md §3; whether `q` is
/// really available is decided by the recursive check); bits 12..=13 = number of fours through the
/// centre (0..=2; a straight four counts once, two fours on the same line count twice, RULES.md §4).
type LineEntry = u16;

#[derive(Copy, Clone, PartialEq, Eq)]
enum Cell {
    Empty,
    Black,
    Block,
}

/// Exactly-five test on an 11-cell window: after putting black on `i`, is the run through `i`
/// exactly 5 long and does it contain `must`?
fn window_exact_five(cells: &[Cell; 11], i: usize, must: usize) -> bool {
    let mut c = *cells;
    c[i] = Cell::Black;
    let (mut lo, mut hi) = (i, i);
    while lo > 0 && c[lo - 1] == Cell::Black {
        lo -= 1;
    }
    while hi < 10 && c[hi + 1] == Cell::Black {
        hi += 1;
    }
    // A run touching the window border is at least 6 long whenever it contains the centre and
    // reaches it, so the unknown cells beyond cannot turn a non-five into a five.
    hi - lo + 1 == 5 && lo <= must && must <= hi
}

fn compute_entry(cells: &[Cell; 11]) -> LineEntry {
    debug_assert!(cells[5] == Cell::Black);
    // Fours: five points (exactly five containing the centre).
    let fives: Vec<usize> = (0..11).filter(|&f| cells[f] == Cell::Empty && window_exact_five(cells, f, 5)).collect();
    let fours =
        if fives.len() == 2 && fives[1] - fives[0] == 5 && (fives[0] + 1..fives[1]).all(|i| cells[i] == Cell::Black) {
            1 // straight four: two five points of the same four stones
        } else {
            fives.len().min(3) as u16
        };
    let mut threes: u16 = 0;
    if fours == 0 {
        for q in 0..11 {
            if cells[q] != Cell::Empty {
                continue;
            }
            let mut c = *cells;
            c[q] = Cell::Black;
            let (mut lo, mut hi) = (q, q);
            while lo > 0 && c[lo - 1] == Cell::Black {
                lo -= 1;
            }
            while hi < 10 && c[hi + 1] == Cell::Black {
                hi += 1;
            }
            if hi - lo + 1 == 4
                && lo <= 5
                && 5 <= hi
                && lo >= 1
                && hi <= 9
                && c[lo - 1] == Cell::Empty
                && c[hi + 1] == Cell::Empty
                && window_exact_five(&c, lo - 1, 5)
                && window_exact_five(&c, hi + 1, 5)
            {
                threes |= 1 << q;
            }
        }
    }
    threes | (fours.min(3) << 12)
}

/// Base-3 code (digits 0/1) of a 10-bit mask: `B3[m] = sum of 3^i over set bits i`.
fn base3_table() -> &'static [u16; 1024] {
    static T: std::sync::OnceLock<Box<[u16; 1024]>> = std::sync::OnceLock::new();
    T.get_or_init(|| {
        let mut t = Box::new([0u16; 1024]);
        for m in 0..1024usize {
            let mut v = 0u32;
            let mut p = 1u32;
            for i in 0..10 {
                if m >> i & 1 == 1 {
                    v += p;
                }
                p *= 3;
            }
            t[m] = v as u16;
        }
        t
    })
}

/// The line table: 3^10 entries indexed by `B3[black10] + 2 * B3[blocked10]` where `x10` is the
/// 11-cell window without its centre bit.
fn line_table() -> &'static [LineEntry] {
    static T: std::sync::OnceLock<Vec<LineEntry>> = std::sync::OnceLock::new();
    T.get_or_init(|| {
        let n = 59049usize;
        let mut t = vec![0u16; n];
        for (code, slot) in t.iter_mut().enumerate() {
            let mut cells = [Cell::Empty; 11];
            let mut v = code;
            for k in 0..10 {
                let i = if k < 5 { k } else { k + 1 };
                cells[i] = match v % 3 {
                    0 => Cell::Empty,
                    1 => Cell::Black,
                    _ => Cell::Block,
                };
                v /= 3;
            }
            cells[5] = Cell::Black;
            *slot = compute_entry(&cells);
        }
        t
    })
}

#[inline(always)]
fn drop_centre(w: u32) -> usize {
    ((w & 0x1F) | ((w >> 6) << 5)) as usize
}

/// What the recursive verdict needs besides Black's (mutable) line masks: the board side, the
/// masks that block Black (White's stones and the off-board bits) and the two tables, fetched
/// once per top-level call instead of once per point.
struct Ctx<'a> {
    size: usize,
    white: &'a LineMasks,
    off: &'a LineMasks,
    table: &'a [LineEntry],
    b3: &'a [u16; 1024],
}

impl<'a> Ctx<'a> {
    fn new(size: usize, white: &'a LineMasks, off: &'a LineMasks) -> Ctx<'a> {
        Ctx { size, white, off, table: line_table(), b3: base3_table() }
    }
}

/// Black's verdict (renju) on the empty point `(x, y)`, with `black` the black line masks (mutated
/// temporarily during the recursive live-three check and restored). Never returns `Occupied`.
/// RULES.md §2 (five first), §4 (overline > double-four > double-three) and §3 (a three is live
/// only if a straight-four point is Legal after the move, decided recursively to any depth).
fn renju_black(cx: &Ctx, black: &mut LineMasks, x: usize, y: usize) -> Verdict {
    let size = cx.size;
    let mut overline = false;
    let mut fours = 0u16;
    let mut three_masks = [0u16; 4];
    let mut three_dirs = 0;
    for d in 0..4 {
        let (l, pos) = line_pos(size, d, x, y);
        let bw = (black[d][l] >> pos) & WIN;
        let run = run_through_centre(bw);
        if run == 5 {
            return Verdict::Five;
        }
        if run >= 6 {
            overline = true;
            continue;
        }
        let ww = ((cx.white[d][l] | cx.off[d][l]) >> pos) & WIN;
        let e = cx.table[cx.b3[drop_centre(bw)] as usize + 2 * cx.b3[drop_centre(ww)] as usize];
        fours += e >> 12;
        three_masks[d] = e & 0x7FF;
        three_dirs += (e & 0x7FF != 0) as u32;
    }
    if overline {
        return Verdict::Forbidden(ForbiddenKind::Overline);
    }
    if fours >= 2 {
        return Verdict::Forbidden(ForbiddenKind::DoubleFour);
    }
    if three_dirs < 2 {
        return Verdict::Legal;
    }
    // Recursive check (RULES.md §3 "fake three"): a three is live only if some straight-four
    // point is Legal for Black after this move (not forbidden, not a five).
    set_black(size, black, x, y, true);
    let mut live = 0;
    let mut undecided = three_dirs;
    for d in 0..4 {
        let mut m = three_masks[d];
        if m == 0 {
            continue;
        }
        // Not enough three directions left to reach two live ones: stop early.
        if live + undecided < 2 {
            break;
        }
        undecided -= 1;
        while m != 0 {
            let i = m.trailing_zeros() as i32;
            m &= m - 1;
            let (dx, dy) = DIRS[d];
            let qx = (x as i32 + (i - 5) * dx) as usize;
            let qy = (y as i32 + (i - 5) * dy) as usize;
            if renju_black(cx, black, qx, qy) == Verdict::Legal {
                live += 1;
                break;
            }
        }
        if live >= 2 {
            break;
        }
    }
    set_black(size, black, x, y, false);
    if live >= 2 {
        Verdict::Forbidden(ForbiddenKind::DoubleThree)
    } else {
        Verdict::Legal
    }
}

#[inline(always)]
fn set_black(size: usize, black: &mut LineMasks, x: usize, y: usize, on: bool) {
    for (d, lines) in black.iter_mut().enumerate() {
        let (l, pos) = line_pos(size, d, x, y);
        if on {
            lines[l] |= 1 << (pos + PAD);
        } else {
            lines[l] &= !(1 << (pos + PAD));
        }
    }
}

/// One step of [`Board::black_candidates`] over all rows at once (vectorisable): cells at the
/// next distance on one side (`shift` of the rows `b`, `f`), cut off after the first non-free
/// cell (`reach`), added to the saturating bit-sliced counters `a[j]` = "at least j+1 stones".
#[inline(always)]
fn count_step(
    a: &mut [[u32; MAX_SIZE]; 4],
    reach: &mut [u32; MAX_SIZE],
    b: &[u32; MAX_SIZE],
    f: &[u32; MAX_SIZE],
    shift: impl Fn(u32) -> u32,
) {
    for y in 0..MAX_SIZE {
        reach[y] &= shift(f[y]);
        let w = shift(b[y]) & reach[y];
        a[3][y] |= a[2][y] & w;
        a[2][y] |= a[1][y] & w;
        a[1][y] |= a[0][y] & w;
        a[0][y] |= w;
    }
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
        // The four `line_pos` cases, unrolled (see the representation notes above).
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

    /// Empty points whose black verdict might be forbidden, per row (bit `x + PAD`), a superset
    /// computed with bit-parallel counts over whole rows. Only black stones reachable from the
    /// point without crossing a white stone or the edge count (every shape of RULES.md §3 lies in
    /// one such white-free stretch). Per direction: a live three needs 2 more black stones within
    /// distance 3 (its straight four is 4 unbroken stones through the point); a four needs 3 within
    /// distance 4; an overline or two fours on one line need 4 within distance 4. So a forbidden
    /// point has 4 such stones in one direction, or two directions each with (2 within 3 or 3
    /// within 4) (RULES.md §4: double-three, double-four, overline and their combinations).
    fn black_candidates(&self) -> [u32; MAX_SIZE] {
        const R: usize = MAX_SIZE + 8;
        let n = self.size;
        // Rows padded by 4 on both sides: black bits and free (not white, on board) bits.
        let mut rb = [0u32; R];
        let mut rf = [0u32; R];
        for y in 0..n {
            rb[y + 4] = self.lines[0][0][y];
            rf[y + 4] = !(self.lines[1][0][y] | self.off[0][y]);
        }
        let mut seen = [0u32; MAX_SIZE];
        let mut multi = [0u32; MAX_SIZE];
        let mut any4 = [0u32; MAX_SIZE];
        for d in 0..4 {
            let mut a = [[0u32; MAX_SIZE]; 4];
            let mut two3 = [0u32; MAX_SIZE];
            let mut reach = [[u32::MAX; MAX_SIZE]; 2];
            for k in 1..=4usize {
                if k == 4 {
                    two3 = a[1];
                }
                for (side, reach) in reach.iter_mut().enumerate() {
                    // Row offset and shift of the cell at distance k on this side.
                    let (dy, sh): (isize, i32) = match (d, side) {
                        (0, 0) => (0, k as i32),
                        (0, _) => (0, -(k as i32)),
                        (1, 0) => (k as isize, 0),
                        (1, _) => (-(k as isize), 0),
                        (2, 0) => (k as isize, k as i32),
                        (2, _) => (-(k as isize), -(k as i32)),
                        (_, 0) => (-(k as isize), k as i32),
                        _ => (k as isize, -(k as i32)),
                    };
                    let src = (4 + dy) as usize;
                    let b: &[u32; MAX_SIZE] = rb[src..src + MAX_SIZE].try_into().unwrap();
                    let f: &[u32; MAX_SIZE] = rf[src..src + MAX_SIZE].try_into().unwrap();
                    if sh >= 0 {
                        count_step(&mut a, reach, b, f, |v| v >> sh);
                    } else {
                        count_step(&mut a, reach, b, f, |v| v << -sh);
                    }
                }
            }
            for y in 0..MAX_SIZE {
                let active = two3[y] | a[2][y];
                multi[y] |= seen[y] & active;
                seen[y] |= active;
                any4[y] |= a[3][y];
            }
        }
        let mut out = [0u32; MAX_SIZE];
        for y in 0..n {
            let occupied = self.lines[0][0][y] | self.lines[1][0][y] | self.off[0][y];
            out[y] = (multi[y] | any4[y]) & !occupied;
        }
        out
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
            let start = y * n;
            let (w, o) = (start >> 6, start & 63);
            set.bits[w] |= e << o;
            if o + n > 64 {
                set.bits[w + 1] |= e >> (64 - o);
            }
        }
        if self.rule == Rule::Renju && c == Color::Black {
            self.for_each_forbidden(|x, y, _| set.remove(y * n + x));
        }
        set
    }

    /// Calls `f(x, y, kind)` for each of Black's forbidden points (renju verdicts, whatever the
    /// rule), in index order.
    fn for_each_forbidden(&self, mut f: impl FnMut(usize, usize, ForbiddenKind)) {
        let cand = self.black_candidates();
        if cand.iter().all(|&r| r == 0) {
            return;
        }
        let mut black = self.lines[0];
        let cx = Ctx::new(self.size, &self.lines[1], &self.off);
        for (y, &row) in cand.iter().enumerate().take(self.size) {
            let mut m = row;
            while m != 0 {
                let x = (m.trailing_zeros() - PAD) as usize;
                m &= m - 1;
                if let Verdict::Forbidden(k) = renju_black(&cx, &mut black, x, y) {
                    f(x, y, k);
                }
            }
        }
    }

    fn forbidden_iter(&self) -> Vec<(Point, ForbiddenKind)> {
        let mut out = Vec::new();
        self.for_each_forbidden(|x, y, k| out.push((Point::new(x as u8, y as u8), k)));
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
