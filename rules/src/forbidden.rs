//! The exact renju forbidden-move classifier for Black (RULES.md §2–4): overline, double-four
//! and double-three, fake threes resolved recursively to any depth, and a bit-parallel filter of
//! the points that might be forbidden.

use crate::lines::{
    base3_table, drop_centre, line_pos, line_table, run_through_centre, LineEntry, LineMasks, DIRS, PAD, WIN,
};
use crate::point::MAX_SIZE;
use crate::rule::{ForbiddenKind, Verdict};

/// What the recursive verdict needs besides Black's (mutable) line masks: the board side, the
/// masks that block Black (White's stones and the off-board bits) and the two tables, fetched
/// once per top-level call instead of once per point.
pub(crate) struct Ctx<'a> {
    size: usize,
    white: &'a LineMasks,
    off: &'a LineMasks,
    table: &'a [LineEntry],
    b3: &'a [u16; 1024],
}

impl<'a> Ctx<'a> {
    pub(crate) fn new(size: usize, white: &'a LineMasks, off: &'a LineMasks) -> Ctx<'a> {
        Ctx { size, white, off, table: line_table(), b3: base3_table() }
    }
}

/// Black's verdict (renju) on the empty point `(x, y)`, with `black` the black line masks (mutated
/// temporarily during the recursive live-three check and restored). Never returns `Occupied`.
/// RULES.md §2 (five first), §4 (overline > double-four > double-three) and §3 (a three is live
/// only if a straight-four point is Legal after the move, decided recursively to any depth).
pub(crate) fn renju_black(cx: &Ctx, black: &mut LineMasks, x: usize, y: usize) -> Verdict {
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

/// One step of [`candidates`] over all rows at once (vectorisable): cells at the
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

/// Calls `f(x, y, kind)` for each of Black's forbidden points on the board of side `size` with
/// line masks `lines` (black, white) and off-board bits `off` (renju verdicts), in index order.
pub(crate) fn for_each_forbidden(
    size: usize,
    lines: &[LineMasks; 2],
    off: &LineMasks,
    mut f: impl FnMut(usize, usize, ForbiddenKind),
) {
    let cand = candidates(size, lines, off);
    if cand.iter().all(|&r| r == 0) {
        return;
    }
    let mut black = lines[0];
    let cx = Ctx::new(size, &lines[1], off);
    for (y, &row) in cand.iter().enumerate().take(size) {
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

/// Empty points whose black verdict might be forbidden on the board of side `size` with line
/// masks `lines` (black, white) and off-board bits `off`, per row (bit `x + PAD`), a superset
/// computed with bit-parallel counts over whole rows. Only black stones reachable from the
/// point without crossing a white stone or the edge count (every shape of RULES.md §3 lies in
/// one such white-free stretch). Per direction: a live three needs 2 more black stones within
/// distance 3 (its straight four is 4 unbroken stones through the point); a four needs 3 within
/// distance 4; an overline or two fours on one line need 4 within distance 4. So a forbidden
/// point has 4 such stones in one direction, or two directions each with (2 within 3 or 3
/// within 4) (RULES.md §4: double-three, double-four, overline and their combinations).
fn candidates(size: usize, lines: &[LineMasks; 2], off: &LineMasks) -> [u32; MAX_SIZE] {
    const R: usize = MAX_SIZE + 8;
    let n = size;
    // Rows padded by 4 on both sides: black bits and free (not white, on board) bits.
    let mut rb = [0u32; R];
    let mut rf = [0u32; R];
    for y in 0..n {
        rb[y + 4] = lines[0][0][y];
        rf[y + 4] = !(lines[1][0][y] | off[0][y]);
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
        let occupied = lines[0][0][y] | lines[1][0][y] | off[0][y];
        out[y] = (multi[y] | any4[y]) & !occupied;
    }
    out
}
