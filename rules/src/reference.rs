//! A deliberately simple reference checker written straight from the definitions of RULES.md
//! §2–4, independent of the fast [`crate::board::Board`] code (it shares only the `Point`,
//! `Color`, `Rule`, `Verdict` types and the four directions `DIRS`). It works on a plain grid, tries every extension point by
//! placing stones and re-scanning whole lines, and recurses for the availability of straight-four
//! points. Slow (microseconds to milliseconds per call); used by the differential tests.

use crate::board::{Color, ForbiddenKind, Point, Rule, Verdict, DIRS};

/// A plain grid: `cells[y * size + x]`.
#[derive(Clone, Debug)]
pub struct Grid {
    size: usize,
    cells: Vec<Option<Color>>,
}

impl Grid {
    /// A grid of side `size` holding `stones` (later entries overwrite earlier ones).
    pub fn new(size: usize, stones: &[(Point, Color)]) -> Grid {
        let mut g = Grid { size, cells: vec![None; size * size] };
        for &(p, c) in stones {
            g.set(p.x as i32, p.y as i32, Some(c));
        }
        g
    }
    fn get(&self, x: i32, y: i32) -> Option<Option<Color>> {
        if x < 0 || y < 0 || x >= self.size as i32 || y >= self.size as i32 {
            None // off the board
        } else {
            Some(self.cells[y as usize * self.size + x as usize])
        }
    }
    fn set(&mut self, x: i32, y: i32, v: Option<Color>) {
        self.cells[y as usize * self.size + x as usize] = v;
    }
    /// Number of unbroken stones of `c` through (x, y) along (dx, dy), (x, y) included.
    fn run(&self, x: i32, y: i32, (dx, dy): (i32, i32), c: Color) -> usize {
        let mut n = 1;
        for s in [1, -1] {
            let mut k = 1;
            while self.get(x + s * k * dx, y + s * k * dy) == Some(Some(c)) {
                n += 1;
                k += 1;
            }
        }
        n
    }
}

/// The verdict on `c` playing `p` on a board of side `size` with `stones`, under `rule`, by the
/// plain definitions (see the module docs). Same meaning as [`crate::board::Board::classify`].
pub fn classify(size: usize, rule: Rule, stones: &[(Point, Color)], p: Point, c: Color) -> Verdict {
    let mut g = Grid::new(size, stones);
    classify_grid(&mut g, rule, p.x as i32, p.y as i32, c)
}

/// [`classify`] on a [`Grid`] (which is restored before returning).
pub fn classify_grid(g: &mut Grid, rule: Rule, x: i32, y: i32, c: Color) -> Verdict {
    if g.get(x, y) != Some(None) {
        return Verdict::Occupied;
    }
    g.set(x, y, Some(c));
    let runs: Vec<usize> = DIRS.iter().map(|&d| g.run(x, y, d, c)).collect();
    let v = match (rule, c) {
        (Rule::Freestyle, _) | (Rule::Renju, Color::White) => {
            if runs.iter().any(|&r| r >= 5) { Verdict::Five } else { Verdict::Legal }
        }
        (Rule::Standard, _) => {
            if runs.contains(&5) { Verdict::Five } else { Verdict::Legal }
        }
        (Rule::Renju, Color::Black) => black_after(g, x, y, &runs),
    };
    g.set(x, y, None);
    v
}

/// Black's renju verdict with the black stone already on (x, y).
fn black_after(g: &mut Grid, x: i32, y: i32, runs: &[usize]) -> Verdict {
    if runs.contains(&5) {
        return Verdict::Five; // five first (RULES.md §2, §4.4)
    }
    if runs.iter().any(|&r| r >= 6) {
        return Verdict::Forbidden(ForbiddenKind::Overline);
    }
    let fours: usize = DIRS.iter().map(|&d| fours_on_line(g, x, y, d)).sum();
    if fours >= 2 {
        return Verdict::Forbidden(ForbiddenKind::DoubleFour);
    }
    let threes = DIRS.iter().filter(|&&d| live_three_on_line(g, x, y, d)).count();
    if threes >= 2 {
        return Verdict::Forbidden(ForbiddenKind::DoubleThree);
    }
    Verdict::Legal
}

/// Number of distinct fours through (x, y) on this line: distinct sets of 4 black stones that,
/// together with (x, y) among them, lie in some 5-point segment whose fifth (empty) point gives
/// exactly five on this line (RULES.md §3 "four"; two fours on the same line count twice).
fn fours_on_line(g: &mut Grid, x: i32, y: i32, (dx, dy): (i32, i32)) -> usize {
    let mut sets: Vec<Vec<i32>> = Vec::new();
    for start in -4..=0 {
        let pts: Vec<i32> = (start..start + 5).collect();
        let mut empty = Vec::new();
        let mut black = Vec::new();
        for &k in &pts {
            match g.get(x + k * dx, y + k * dy) {
                Some(Some(Color::Black)) => black.push(k),
                Some(None) => empty.push(k),
                _ => {}
            }
        }
        if black.len() == 4 && empty.len() == 1 {
            let e = empty[0];
            let (ex, ey) = (x + e * dx, y + e * dy);
            g.set(ex, ey, Some(Color::Black));
            let five = g.run(ex, ey, (dx, dy), Color::Black) == 5;
            g.set(ex, ey, None);
            if five && !sets.contains(&black) {
                sets.push(black);
            }
        }
    }
    sets.len()
}

/// Is there a live three through (x, y) on this line: some empty point q of the line such that
/// black on q makes a straight four (exactly four unbroken stones through both (x, y) and q, both
/// ends empty and each end giving exactly five on this line), and q is Legal for Black in the
/// current position (not forbidden, not a five: RULES.md §3, recursively).
fn live_three_on_line(g: &mut Grid, x: i32, y: i32, (dx, dy): (i32, i32)) -> bool {
    let n = g.size as i32;
    for k in -n..=n {
        let (qx, qy) = (x + k * dx, y + k * dy);
        if k == 0 || g.get(qx, qy) != Some(None) {
            continue;
        }
        g.set(qx, qy, Some(Color::Black));
        let straight = is_straight_four_through(g, x, y, qx, qy, (dx, dy));
        g.set(qx, qy, None);
        if straight && classify_grid(g, Rule::Renju, qx, qy, Color::Black) == Verdict::Legal {
            return true;
        }
    }
    false
}

fn is_straight_four_through(g: &mut Grid, x: i32, y: i32, qx: i32, qy: i32, (dx, dy): (i32, i32)) -> bool {
    // The unbroken run through (x, y).
    let mut lo = 0;
    while g.get(x + (lo - 1) * dx, y + (lo - 1) * dy) == Some(Some(Color::Black)) {
        lo -= 1;
    }
    let mut hi = 0;
    while g.get(x + (hi + 1) * dx, y + (hi + 1) * dy) == Some(Some(Color::Black)) {
        hi += 1;
    }
    if hi - lo + 1 != 4 {
        return false;
    }
    let contains_q = (lo..=hi).any(|k| (x + k * dx, y + k * dy) == (qx, qy));
    if !contains_q {
        return false;
    }
    let ends = [(x + (lo - 1) * dx, y + (lo - 1) * dy), (x + (hi + 1) * dx, y + (hi + 1) * dy)];
    ends.iter().all(|&(ex, ey)| {
        g.get(ex, ey) == Some(None) && {
            g.set(ex, ey, Some(Color::Black));
            let five = g.run(ex, ey, (dx, dy), Color::Black) == 5;
            g.set(ex, ey, None);
            five
        }
    })
}

/// Reference `is_win_at`: does the stone on `p` make a winning line for its colour (RULES.md §2).
pub fn is_win_at(size: usize, rule: Rule, stones: &[(Point, Color)], p: Point) -> bool {
    let g = Grid::new(size, stones);
    let Some(Some(c)) = g.get(p.x as i32, p.y as i32) else { return false };
    let runs: Vec<usize> = DIRS.iter().map(|&d| g.run(p.x as i32, p.y as i32, d, c)).collect();
    match (rule, c) {
        (Rule::Freestyle, _) | (Rule::Renju, Color::White) => runs.iter().any(|&r| r >= 5),
        _ => runs.contains(&5),
    }
}

