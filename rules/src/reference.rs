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

/// The threat game of `crate::vct`, restated on a plain grid straight from the definitions
/// (RULES.md §2–4), for the VCT solver's tests. Attacker `a`, defender `d`.
struct RefVct {
    rule: Rule,
    a: Color,
    d: Color,
}

impl RefVct {
    /// Whether some stone of `c` lies within `k` points of (x, y) in both coordinates.
    fn near(&self, g: &Grid, x: i32, y: i32, c: Color, k: i32) -> bool {
        (-k..=k).any(|dy| (-k..=k).any(|dx| g.get(x + dx, y + dy) == Some(Some(c))))
    }

    /// Every empty point where `c` would win. A winning point touches a stone of `c` (its five
    /// is unbroken), so only those points are tried.
    fn wins(&self, g: &mut Grid, c: Color) -> Vec<(i32, i32)> {
        let n = g.size as i32;
        let mut out = Vec::new();
        for y in 0..n {
            for x in 0..n {
                if g.get(x, y) == Some(None) && self.near(g, x, y, c, 1) && wins_by(g, self.rule, x, y, c) {
                    out.push((x, y));
                }
            }
        }
        out
    }

    /// Whether `c` may play the empty (x, y): Black under renju only on a point that is not
    /// forbidden.
    fn legal(&self, g: &mut Grid, x: i32, y: i32, c: Color) -> bool {
        match classify_grid(g, self.rule, x, y, c) {
            Verdict::Occupied | Verdict::Forbidden(_) => false,
            Verdict::Legal | Verdict::Five => true,
        }
    }

    /// Whether the attacker's stone on the empty (x, y) makes a straight four on the line
    /// (dx, dy): exactly four unbroken attacker stones through it, containing (mx, my) if given,
    /// both ends empty and each end making a winning line on this line.
    fn straight_four(&self, g: &mut Grid, x: i32, y: i32, (dx, dy): (i32, i32), m: Option<(i32, i32)>) -> bool {
        let a = self.a;
        g.set(x, y, Some(a));
        let mut lo = 0;
        while g.get(x + (lo - 1) * dx, y + (lo - 1) * dy) == Some(Some(a)) {
            lo -= 1;
        }
        let mut hi = 0;
        while g.get(x + (hi + 1) * dx, y + (hi + 1) * dy) == Some(Some(a)) {
            hi += 1;
        }
        let contains_m = m.is_none_or(|(mx, my)| (lo..=hi).any(|k| (x + k * dx, y + k * dy) == (mx, my)));
        let ok = hi - lo + 1 == 4
            && contains_m
            && [lo - 1, hi + 1].iter().all(|&k| {
                let (ex, ey) = (x + k * dx, y + k * dy);
                g.get(ex, ey) == Some(None) && {
                    g.set(ex, ey, Some(a));
                    let run = g.run(ex, ey, (dx, dy), a);
                    g.set(ex, ey, None);
                    runs_win(self.rule, a, &[run])
                }
            });
        g.set(x, y, None);
        ok
    }

    /// Whether the empty (x, y) is a legal straight-four point of the attacker (with the four
    /// stones containing `m`, if given, on the line through `m`).
    fn straight_four_point(&self, g: &mut Grid, x: i32, y: i32, m: Option<(i32, i32)>) -> bool {
        DIRS.iter().any(|&dir| self.straight_four(g, x, y, dir, m))
            && classify_grid(g, self.rule, x, y, self.a) == Verdict::Legal
    }

    /// Whether the attacker has a legal straight-four point anywhere (such a point touches an
    /// attacker stone).
    fn any_straight_four_point(&self, g: &mut Grid) -> bool {
        let n = g.size as i32;
        (0..n).any(|y| {
            (0..n).any(|x| {
                g.get(x, y) == Some(None) && self.near(g, x, y, self.a, 1) && self.straight_four_point(g, x, y, None)
            })
        })
    }

    /// Attacker to move with `r` threats left: is there a VCT?
    fn attack(&self, g: &mut Grid, r: u32) -> bool {
        if !self.wins(g, self.a).is_empty() {
            return true;
        }
        let threats = self.wins(g, self.d);
        if threats.len() >= 2 || r == 0 {
            return false;
        }
        let n = g.size as i32;
        let candidates: Vec<(i32, i32)> = if threats.len() == 1 {
            threats
        } else {
            (0..n).flat_map(|y| (0..n).map(move |x| (x, y))).filter(|&(x, y)| self.near(g, x, y, self.a, 4)).collect()
        };
        candidates.into_iter().any(|(x, y)| self.threat_wins(g, x, y, r))
    }

    /// The attacker plays (x, y) with `r` threats left (no five for the attacker, at most a
    /// forced block to make): is it a threat that wins against every reply?
    fn threat_wins(&self, g: &mut Grid, x: i32, y: i32, r: u32) -> bool {
        let (a, d) = (self.a, self.d);
        if g.get(x, y) != Some(None) || !self.legal(g, x, y, a) {
            return false;
        }
        g.set(x, y, Some(a));
        let fives = self.wins(g, a);
        let result = if !fives.is_empty() {
            // A four: two five points, or a forbidden block, cannot be stopped.
            let (fx, fy) = fives[0];
            if fives.len() >= 2 || !self.legal(g, fx, fy, d) {
                true
            } else {
                g.set(fx, fy, Some(d));
                let w = self.attack(g, r - 1);
                g.set(fx, fy, None);
                w
            }
        } else if self.makes_three(g, x, y) {
            // Every legal reply that makes a four or leaves no straight-four point.
            let n = g.size as i32;
            let mut all = true;
            'replies: for py in 0..n {
                for px in 0..n {
                    if g.get(px, py) != Some(None) || !self.legal(g, px, py, d) {
                        continue;
                    }
                    g.set(px, py, Some(d));
                    let reply = !self.wins(g, d).is_empty() || !self.any_straight_four_point(g);
                    let w = !reply || self.attack(g, r - 1);
                    g.set(px, py, None);
                    if !w {
                        all = false;
                        break 'replies;
                    }
                }
            }
            all
        } else {
            false
        };
        g.set(x, y, None);
        result
    }

    /// With the attacker's stone on (x, y) and no attacker five point: does some empty point on
    /// the stone's lines make a legal straight four containing the stone?
    fn makes_three(&self, g: &mut Grid, x: i32, y: i32) -> bool {
        DIRS.iter().any(|&(dx, dy)| {
            (-4..=4).any(|k| {
                let (qx, qy) = (x + k * dx, y + k * dy);
                k != 0
                    && g.get(qx, qy) == Some(None)
                    && self.straight_four(g, qx, qy, (dx, dy), Some((x, y)))
                    && classify_grid(g, self.rule, qx, qy, self.a) == Verdict::Legal
            })
        })
    }
}

/// Reference check of a VCT's first move, straight from the definitions (RULES.md §2–4), by a
/// plain AND-OR search on a grid: `attacker` (to move on `stones`) plays `first_move`, and wins
/// against every defence with at most `depth` threats on each branch (the first move counted).
///
/// The threat game is that of `crate::vct`: the attacker wins at once with a five; facing one
/// five point of the defender the attacker must block there (two: lost); every attacker move is
/// legal and a four (the defender must take the five point; two five points, or one forbidden
/// to a black defender under renju, win) or a three (the move is one of the four stones of a
/// straight four that some legal empty point would make); after a three, the defender's replies
/// are the legal moves that make a four or leave the attacker no legal straight-four point on
/// the board. Slow: keep `depth` at 2 or 3.
pub fn check_vct_win(
    size: usize,
    rule: Rule,
    stones: &[(Point, Color)],
    attacker: Color,
    first_move: Point,
    depth: u32,
) -> bool {
    let mut g = Grid::new(size, stones);
    let v = RefVct { rule, a: attacker, d: attacker.opponent() };
    let (x, y) = (first_move.x as i32, first_move.y as i32);
    if wins_by(&mut g, rule, x, y, attacker) {
        return true;
    }
    if !v.wins(&mut g, attacker).is_empty() || depth == 0 {
        return false; // a five elsewhere was the win; the first move must be it
    }
    let threats = v.wins(&mut g, v.d);
    if threats.len() >= 2 || (threats.len() == 1 && threats[0] != (x, y)) {
        return false;
    }
    v.threat_wins(&mut g, x, y, depth)
}

/// Reference: whether `attacker` (to move) has a VCT with at most `depth` threats on each branch,
/// by [`check_vct_win`]'s rules tried on every first move.
pub fn has_vct(size: usize, rule: Rule, stones: &[(Point, Color)], attacker: Color, depth: u32) -> bool {
    let mut g = Grid::new(size, stones);
    let v = RefVct { rule, a: attacker, d: attacker.opponent() };
    v.attack(&mut g, depth)
}

/// Reference replay of one branch of a VCT (the principal line of `crate::vct::Vct::Win`: the
/// attacker's moves alternating with the defender's replies, attacker first and last) by the
/// threat game of [`check_vct_win`]. `Ok(())` when every attacker move is legal and a threat
/// (or the five), every defender move is one of the defender's replies to the threat before it
/// (the five point after a four; a reply as defined after a three), and the last attacker move
/// makes a five or leaves the defender no reply. A branch says nothing of the other replies;
/// [`check_vct_win`] checks them all.
pub fn check_vct_line(
    size: usize,
    rule: Rule,
    stones: &[(Point, Color)],
    attacker: Color,
    line: &[Point],
) -> Result<(), String> {
    let mut g = Grid::new(size, stones);
    let v = RefVct { rule, a: attacker, d: attacker.opponent() };
    let name = |p: Point| crate::notation::format_point(p);
    if line.len().is_multiple_of(2) {
        return Err(format!("a line has an odd number of moves, this one {}", line.len()));
    }
    let mut k = 0;
    while k < line.len() {
        let m = line[k];
        let (x, y) = (m.x as i32, m.y as i32);
        let last = k + 1 == line.len();
        if g.get(x, y) != Some(None) {
            return Err(format!("move {k} ({}) is not on an empty point", name(m)));
        }
        if wins_by(&mut g, rule, x, y, attacker) {
            return if last { Ok(()) } else { Err(format!("move {k} ({}) already wins", name(m))) };
        }
        if !v.wins(&mut g, attacker).is_empty() {
            return Err(format!("move {k} ({}) misses a five", name(m)));
        }
        let threats = v.wins(&mut g, v.d);
        if threats.len() >= 2 || (threats.len() == 1 && threats[0] != (x, y)) {
            return Err(format!("move {k} ({}) leaves the defender a five", name(m)));
        }
        if !v.legal(&mut g, x, y, attacker) {
            return Err(format!("move {k} ({}) is not a legal move", name(m)));
        }
        g.set(x, y, Some(attacker));
        let fives = v.wins(&mut g, attacker);
        let three = fives.is_empty() && v.makes_three(&mut g, x, y);
        if fives.is_empty() && !three {
            return Err(format!("move {k} ({}) is no threat", name(m)));
        }
        // The defender's replies to this threat.
        let n = size as i32;
        let mut replies = Vec::new();
        if let Some(&(fx, fy)) = fives.first() {
            if fives.len() == 1 && v.legal(&mut g, fx, fy, v.d) {
                replies.push((fx, fy));
            }
        } else {
            for py in 0..n {
                for px in 0..n {
                    if g.get(px, py) != Some(None) || !v.legal(&mut g, px, py, v.d) {
                        continue;
                    }
                    g.set(px, py, Some(v.d));
                    if !v.wins(&mut g, v.d).is_empty() || !v.any_straight_four_point(&mut g) {
                        replies.push((px, py));
                    }
                    g.set(px, py, None);
                }
            }
        }
        if last {
            return if replies.is_empty() {
                Ok(())
            } else {
                Err(format!("the last move ({}) leaves replies {replies:?}", name(m)))
            };
        }
        let r = line[k + 1];
        if !replies.contains(&(r.x as i32, r.y as i32)) {
            return Err(format!("reply {} ({}) is not among the replies {replies:?}", k + 1, name(r)));
        }
        g.set(r.x as i32, r.y as i32, Some(v.d));
        k += 2;
    }
    unreachable!("the loop returns at the last (attacker's) move")
}
