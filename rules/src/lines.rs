//! The line-mask representation of a board and the per-line shape table for Black.
//!
//! Representation: for each of the 4 line directions and each line, one `u32` bit mask per colour,
//! bit `pos + PAD` for the point at position `pos` along the line (PAD = 5 so that an 11-point
//! window around any point is `(mask >> pos) & 0x7FF`, the point itself at window bit 5). Lines:
//!
//! ```text
//! dir 0 (1, 0): line y,          pos x        dir 1 (0, 1): line x,      pos y
//! dir 2 (1, 1): line x-y+size-1, pos x        dir 3 (1,-1): line x+y,    pos x
//! ```
//!
//! `off` holds, per line, the bits that are not on the board (they block like an opponent stone).
//! Black's shape on one line inside such a window is read from a precomputed table
//! (see [`line_table`]) indexed by the base-3 code of the 10 neighbouring cells.

use crate::point::MAX_SIZE;

/// Bit of position 0 along a line: the padding that keeps every 11-point window in the mask.
pub(crate) const PAD: u32 = 5;
/// The 11-point window around a point, after shifting the line mask by its position.
pub(crate) const WIN: u32 = 0x7FF;
/// Lines per direction on the largest board (the diagonals).
pub(crate) const LINES: usize = 2 * MAX_SIZE - 1;
/// The four line directions `(dx, dy)`: horizontal, vertical, diagonal, anti-diagonal (RULES.md
/// §3: a line is a row, a column or a diagonal). Also the order of the board's line masks.
pub const DIRS: [(i32, i32); 4] = [(1, 0), (0, 1), (1, 1), (1, -1)];

/// One bit mask per line for each of the 4 directions ([`DIRS`] order).
pub(crate) type LineMasks = [[u32; LINES]; 4];

/// The line and the position along it of `(x, y)` in direction `d`.
#[inline(always)]
pub(crate) fn line_pos(size: usize, d: usize, x: usize, y: usize) -> (usize, u32) {
    match d {
        0 => (y, x as u32),
        1 => (x, y as u32),
        2 => (x + size - 1 - y, x as u32),
        _ => (x + y, x as u32),
    }
}

/// Length of the unbroken run of set bits through window bit 5 (which is treated as set).
#[inline(always)]
pub(crate) fn run_through_centre(w: u32) -> u32 {
    let right = (w >> 6).trailing_ones().min(5);
    let left = (w << 27).leading_ones().min(5);
    1 + left + right
}

// ----- the per-line table for Black ------------------------------------------------------------

/// Entry of the line table: bits 0..=10 = window positions `q` where one more black stone makes a
/// straight four containing the centre (a "three" through the centre, RULES.md §3; whether `q` is
/// really available is decided by the recursive check); bits 12..=13 = number of fours through the
/// centre (0..=2; a straight four counts once, two fours on the same line count twice, RULES.md §4).
pub(crate) type LineEntry = u16;

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
pub(crate) fn base3_table() -> &'static [u16; 1024] {
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
pub(crate) fn line_table() -> &'static [LineEntry] {
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

/// The 10 cells of an 11-point window without its centre bit (the index of the base-3 table).
#[inline(always)]
pub(crate) fn drop_centre(w: u32) -> usize {
    ((w & 0x1F) | ((w >> 6) << 5)) as usize
}
