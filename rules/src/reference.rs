//! A deliberately simple reference checker written straight from the definitions of RULES.md
//! §2–4, independent of the fast [`crate::board::Board`] code (it shares only the `Point`,
//! `Color`, `Rule`, `Verdict` types, the four directions `DIRS` and the notation for messages).
//! It works on a plain grid, tries every extension point by placing stones and re-scanning whole
//! lines, and recurses for the availability of straight-four points. Slow (microseconds to
//! milliseconds per call); used by the differential tests. [`check_vcf_line`] replays a VCF line
//! the same way, for the solver's tests.

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
            if runs.iter().any(|&r| r >= 5) {
                Verdict::Five
            } else {
                Verdict::Legal
            }
        }
        (Rule::Standard, _) => {
            if runs.contains(&5) {
                Verdict::Five
            } else {
                Verdict::Legal
            }
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
    runs_win(rule, c, &runs)
}

/// Whether runs of these lengths through one stone of `c` win by the rule (RULES.md §2 table:
/// freestyle and White under renju five or more, otherwise exactly five).
fn runs_win(rule: Rule, c: Color, runs: &[usize]) -> bool {
    match (rule, c) {
        (Rule::Freestyle, _) | (Rule::Renju, Color::White) => runs.iter().any(|&r| r >= 5),
        _ => runs.contains(&5),
    }
}

/// Whether `c` on the empty (x, y) makes a winning line by the rule (RULES.md §2), by re-scanning
/// the 4 lines; no forbidden-move check (a five wins first, §4.4).
fn wins_by(g: &mut Grid, rule: Rule, x: i32, y: i32, c: Color) -> bool {
    if g.get(x, y) != Some(None) {
        return false;
    }
    g.set(x, y, Some(c));
    let runs: Vec<usize> = DIRS.iter().map(|&d| g.run(x, y, d, c)).collect();
    g.set(x, y, None);
    runs_win(rule, c, &runs)
}

/// Every empty point where `c` would win, by trying each point of the grid.
fn winning_points(g: &mut Grid, rule: Rule, c: Color) -> Vec<(i32, i32)> {
    let n = g.size as i32;
    let mut out = Vec::new();
    for y in 0..n {
        for x in 0..n {
            if wins_by(g, rule, x, y, c) {
                out.push((x, y));
            }
        }
    }
    out
}

/// Reference check of a VCF line (the format of `crate::vcf::Vcf::Win`: the attacker's moves
/// and the defender's replies alternating, attacker first and last), straight from the
/// definitions of RULES.md §2–4, by replaying it on a plain grid. `Ok(())` when the line is a
/// forced win for `attacker` (to move on `stones`):
/// - each attacker move is on an empty point; a move that wins by the rule must be the last;
/// - any other attacker move must be legal (Black under renju: [`classify`] says `Legal`), must
///   leave the defender without a winning point, and must leave the attacker at least one;
/// - the last move leaves two or more winning points, or one that is forbidden to a black
///   defender under renju;
/// - otherwise the defender's reply is the one winning point of the attacker (a forced block),
///   and it must be a legal move for the defender.
///
/// `Err` names the first step that breaks a rule.
pub fn check_vcf_line(
    size: usize,
    rule: Rule,
    stones: &[(Point, Color)],
    attacker: Color,
    line: &[Point],
) -> Result<(), String> {
    let mut g = Grid::new(size, stones);
    let defender = attacker.opponent();
    let name = |p: Point| crate::notation::format_point(p);
    if line.is_empty() || line.len().is_multiple_of(2) {
        return Err(format!("a line has an odd number of moves, this one {}", line.len()));
    }
    for (k, &m) in line.iter().enumerate() {
        let (x, y) = (m.x as i32, m.y as i32);
        if g.get(x, y) != Some(None) {
            return Err(format!("move {k} ({}) is not on an empty point", name(m)));
        }
        if k % 2 == 1 {
            // The defender's reply: the attacker's only winning point, a legal move.
            let threats = winning_points(&mut g, rule, attacker);
            if threats != [(x, y)] {
                return Err(format!("reply {k} ({}) is not the one forced block {threats:?}", name(m)));
            }
            if classify_grid(&mut g, rule, x, y, defender) != Verdict::Legal {
                return Err(format!("reply {k} ({}) is not a legal move", name(m)));
            }
            g.set(x, y, Some(defender));
            continue;
        }
        let last = k + 1 == line.len();
        if wins_by(&mut g, rule, x, y, attacker) {
            return if last { Ok(()) } else { Err(format!("move {k} ({}) already wins", name(m))) };
        }
        if classify_grid(&mut g, rule, x, y, attacker) != Verdict::Legal {
            return Err(format!("move {k} ({}) is not a legal move", name(m)));
        }
        g.set(x, y, Some(attacker));
        if !winning_points(&mut g, rule, defender).is_empty() {
            return Err(format!("after move {k} ({}) the defender can win", name(m)));
        }
        let fives = winning_points(&mut g, rule, attacker);
        if fives.is_empty() {
            return Err(format!("move {k} ({}) makes no four", name(m)));
        }
        if last {
            let (fx, fy) = fives[0];
            let forbidden_block = fives.len() == 1
                && rule == Rule::Renju
                && defender == Color::Black
                && matches!(classify_grid(&mut g, rule, fx, fy, Color::Black), Verdict::Forbidden(_));
            return if fives.len() >= 2 || forbidden_block {
                Ok(())
            } else {
                Err(format!("the last move ({}) leaves a defence at {fives:?}", name(m)))
            };
        }
    }
    unreachable!("the loop returns at the last (attacker's) move")
}
