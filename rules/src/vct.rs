//! VCT (victory by continuous threats): a solver for renju, standard and freestyle by the
//! definitions of RULES.md §2–4, and the defence question (which moves refute an opponent VCT).
//!
//! A VCT for the attacker `A` against the defender `D` (A to move) is a strategy in which every
//! move of A is a threat (a four or a three) and A wins against every defence. It is an AND-OR
//! tree; the solver proves it by search. The rules applied at each A node (A to move), in order:
//! 1. A wins at once with a move that makes a five ([`Board::makes_five`]; for Black under renju
//!    an exact five, even if it also makes a forbidden shape, §4.4).
//! 2. If D has two or more five points, A has lost (no VCT). If D has one, A's only move is that
//!    point, and it must itself be a threat (a four or a three, below).
//! 3. A VCF ([`crate::vcf::vcf`] with a small node budget, [`Options::vcf_nodes`]) is tried
//!    first as a fast win.
//! 4. Otherwise A's moves are the threats, each a legal move for A (Black under renju: not a
//!    forbidden point, §4):
//!    - a **four**: after it A has a five point. With two or more (a straight four, or two
//!      fours), or with one that is forbidden to a black defender under renju, D cannot stop it:
//!      A wins. Otherwise D's only reply is that five point.
//!    - a **three**: a move that makes no four and after which some empty point `q` on one of
//!      the move's lines makes a straight four (RULES.md §3.2: exactly four unbroken stones, both
//!      end points empty and each a five point) whose four stones include the move, and `q` is a
//!      legal move for A (Black under renju: [`Verdict::Legal`], so a three whose straight-four
//!      points are all forbidden to Black is no threat, §3.5). D's replies are exactly the
//!      legal moves of D that either make a four of D (a counter-four: A must then block it,
//!      rule 2) or leave A without any legal straight-four point on the whole board (the
//!      **defence points**). Any other D move loses at once: A plays a straight four, and D, who
//!      has no five point, can block only one end. A black defender under renju cannot reply on
//!      a forbidden point; a three with no reply left wins.
//! 5. A has a VCT if some threat wins against every reply (rules 1–5 again after the reply).
//!
//! Depth: [`Options::max_depth`] bounds the number of A threats (fours and threes) on each branch
//! of the tree; the VCF of rule 3 is a shortcut that may prove wins whose fours run past it.
//! Results are exact for what they claim: [`Vct::Win`] is a true win of the game (the tree above
//! allows D every move that does not lose at once); [`Vct::NoWin`] means the search was
//! exhaustive under the threat definition above (no depth or budget cut anywhere in it); a cut
//! gives [`Vct::Unknown`]. "No VCT" is not "no win": A may still win with quiet moves.
//!
//! Search: iterative deepening on the threat depth, depth-first over A's threats (fours before
//! threes, nearest to A's previous threat first), with a transposition table keyed by the board's
//! Zobrist hash (A is to move at every stored node): proved wins with their proof depth and
//! line, exact disproofs, and depth-bounded failures. A node is one A threat tried; the nodes of
//! the VCF shortcut are counted separately and drawn from the same budget.

use crate::board::{Board, Color, Point, PointSet, Rule, Verdict, DIRS};
use crate::vcf::{self, five_points, Limits, Vcf};
use std::collections::{HashMap, HashSet};
use std::time::Instant;

/// Search options beside the budgets of [`Limits`].
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Options {
    /// Most attacker threats (fours and threes) on one branch of the proof tree.
    pub max_depth: u32,
    /// Node budget of the VCF shortcut at each attacker node; 0 turns the shortcut off.
    pub vcf_nodes: u64,
}

impl Default for Options {
    fn default() -> Options {
        Options { max_depth: 10, vcf_nodes: 500 }
    }
}

/// The solver's verdict.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Vct {
    /// A VCT exists. A proof is a tree (every defender reply to a three is answered); `line` is
    /// its principal branch: the attacker's moves alternating with the defender's replies,
    /// starting and ending with an attacker's move (the last makes a five, or is a four or three
    /// that leaves no reply). At a three the reply shown is the one whose subtree is deepest.
    Win { line: Vec<Point> },
    /// No VCT under the threat definition of the module docs (the search was exhaustive).
    NoWin,
    /// A budget or the depth limit cut the search before the question was decided.
    Unknown,
}

/// Statistics of a solver call.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Attacker threats tried by the VCT search.
    pub nodes: u64,
    /// Attacker moves tried by the VCF shortcut.
    pub vcf_nodes: u64,
    /// For a win, the proof depth: the most attacker threats on one branch of the proof tree
    /// (fours of a VCF shortcut included, the final five not counted). Otherwise the deepest
    /// iteration searched to the end.
    pub depth: u32,
}

/// Whether `attacker` (to move) has a VCT on `board` with the default [`Options`].
pub fn vct(board: &Board, attacker: Color, limits: &Limits) -> Vct {
    vct_with_options(board, attacker, limits, &Options::default()).0
}

/// [`vct`] that also reports statistics.
pub fn vct_with_stats(board: &Board, attacker: Color, limits: &Limits) -> (Vct, Stats) {
    vct_with_options(board, attacker, limits, &Options::default())
}

/// [`vct`] with explicit [`Options`], reporting statistics.
pub fn vct_with_options(board: &Board, attacker: Color, limits: &Limits, options: &Options) -> (Vct, Stats) {
    let mut s = Solver::new(board.rule(), attacker, limits, options);
    let mut b = board.clone();
    let (r, line) = s.solve(&mut b);
    let v = match r {
        Res::Win(_) => Vct::Win { line },
        Res::NoWin => Vct::NoWin,
        Res::Cut | Res::Out => Vct::Unknown,
    };
    (v, s.stats(r))
}

#[derive(Copy, Clone, PartialEq, Eq, Debug)]
enum Res {
    /// Proved, with the proof depth (attacker threats on the deepest branch).
    Win(u32),
    /// Exhaustively disproved.
    NoWin,
    /// Not proved within the depth limit, and some branch was cut by it.
    Cut,
    /// A budget ran out.
    Out,
}

/// A legal straight-four point of the attacker with the end points of its straight fours.
type StraightFour = (Point, Vec<[Point; 2]>);

/// The point `k` steps from `p` in direction `d`, if on the board.
fn step(b: &Board, p: Point, (dx, dy): (i32, i32), k: i32) -> Option<Point> {
    let (x, y) = (p.x as i32 + k * dx, p.y as i32 + k * dy);
    let n = b.size() as i32;
    if x < 0 || y < 0 || x >= n || y >= n {
        None
    } else {
        Some(Point::new(x as u8, y as u8))
    }
}

struct Solver {
    attacker: Color,
    defender: Color,
    /// Renju with a black attacker: threats and straight-four points must be legal moves.
    attacker_forbidden: bool,
    /// Renju with a black defender: replies must be legal; a forced block on a forbidden point
    /// loses.
    defender_forbidden: bool,
    options: Options,
    limit: u64,
    deadline: Option<Instant>,
    nodes: u64,
    vcf_nodes: u64,
    out: bool,
    /// Proved A-to-move positions: proof depth and principal line.
    won: HashMap<u64, (u32, Vec<Point>)>,
    /// Exhaustively disproved A-to-move positions.
    lost: HashSet<u64>,
    /// A-to-move positions with no win within the stored remaining depth (and some cut).
    cut: HashMap<u64, u32>,
    /// Move-ordering hints: the winning move of a position, keyed by its hash XOR `hint_delta`.
    hint: HashMap<u64, Point>,
    hint_delta: u64,
    /// Deepest iteration finished.
    done_depth: u32,
}

impl Solver {
    fn new(rule: Rule, attacker: Color, limits: &Limits, options: &Options) -> Solver {
        let renju = rule == Rule::Renju;
        Solver {
            attacker,
            defender: attacker.opponent(),
            attacker_forbidden: renju && attacker == Color::Black,
            defender_forbidden: renju && attacker == Color::White,
            options: *options,
            limit: limits.nodes,
            deadline: limits.deadline(),
            nodes: 0,
            vcf_nodes: 0,
            out: false,
            won: HashMap::new(),
            lost: HashSet::new(),
            cut: HashMap::new(),
            hint: HashMap::new(),
            hint_delta: 0,
            done_depth: 0,
        }
    }

    fn stats(&self, r: Res) -> Stats {
        let depth = if let Res::Win(u) = r { u } else { self.done_depth };
        Stats { nodes: self.nodes, vcf_nodes: self.vcf_nodes, depth }
    }

    /// Iterative deepening over the threat depth, 0 to `max_depth`, on `b` (A to move). A
    /// result that is still [`Res::Cut`] at `max_depth` stays one.
    fn solve(&mut self, b: &mut Board) -> (Res, Vec<Point>) {
        self.done_depth = 0;
        for depth in 0..=self.options.max_depth {
            let mut line = Vec::new();
            let r = self.attack(b, depth, None, &mut line);
            if matches!(r, Res::NoWin | Res::Cut) {
                self.done_depth = depth;
            }
            if r != Res::Cut {
                return (r, line);
            }
        }
        (Res::Cut, Vec::new())
    }

    fn spent(&self) -> u64 {
        self.nodes + self.vcf_nodes
    }

    /// Spend one node; `false` when a budget is spent.
    fn spend(&mut self) -> bool {
        if self.out || self.spent() >= self.limit {
            self.out = true;
            return false;
        }
        self.nodes += 1;
        if self.nodes.is_multiple_of(256) {
            if let Some(d) = self.deadline {
                if Instant::now() >= d {
                    self.out = true;
                    return false;
                }
            }
        }
        true
    }

    fn legal_for(&self, b: &Board, p: Point, c: Color) -> bool {
        let forbidden = if c == self.attacker { self.attacker_forbidden } else { self.defender_forbidden };
        if forbidden {
            !matches!(b.classify(p, Color::Black), Verdict::Forbidden(_) | Verdict::Occupied)
        } else {
            b.get(p).is_none()
        }
    }

    /// Whether A's stone on the empty `q` makes a straight four along direction `d` (with `m`
    /// among its four stones, if given): the ends. Geometry only; A must have no five point.
    fn straight_four_along(&self, b: &mut Board, q: Point, d: (i32, i32), m: Option<Point>) -> Option<[Point; 2]> {
        let a = self.attacker;
        b.place(q, a);
        let mut lo = 0;
        while step(b, q, d, lo - 1).is_some_and(|p| b.get(p) == Some(a)) {
            lo -= 1;
        }
        let mut hi = 0;
        while step(b, q, d, hi + 1).is_some_and(|p| b.get(p) == Some(a)) {
            hi += 1;
        }
        let mut out = None;
        let through = m.is_none_or(|m| (lo..=hi).any(|k| step(b, q, d, k) == Some(m)));
        if hi - lo + 1 == 4 && through {
            if let (Some(e1), Some(e2)) = (step(b, q, d, lo - 1), step(b, q, d, hi + 1)) {
                // An end that makes a five makes it on this line: A had no five point before q.
                if b.makes_five(e1, a) && b.makes_five(e2, a) {
                    out = Some([e1, e2]);
                }
            }
        }
        b.undo();
        out
    }

    /// Whether `q` is a legal straight-four point of A (any direction): its straight fours' ends.
    fn legal_straight_four(&self, b: &mut Board, q: Point) -> Option<Vec<[Point; 2]>> {
        if b.get(q).is_some() {
            return None;
        }
        let ends: Vec<[Point; 2]> = DIRS.iter().filter_map(|&d| self.straight_four_along(b, q, d, None)).collect();
        if ends.is_empty() || (self.attacker_forbidden && b.classify(q, Color::Black) != Verdict::Legal) {
            return None;
        }
        Some(ends)
    }

    /// Every legal straight-four point of A on the board (A has no five point).
    fn straight_fours(&self, b: &mut Board) -> Vec<StraightFour> {
        let n = b.size();
        let mut out = Vec::new();
        for i in b.window_points(self.attacker, 3).iter() {
            let q = Point::from_index(i, n);
            if let Some(e) = self.legal_straight_four(b, q) {
                out.push((q, e));
            }
        }
        out
    }

    /// Whether A has a legal straight-four point; `known` are the ones before D's last stone,
    /// tried first.
    fn has_straight_four(&self, b: &mut Board, known: &[StraightFour]) -> bool {
        known.iter().any(|(q, _)| self.legal_straight_four(b, *q).is_some()) || !self.straight_fours(b).is_empty()
    }

    /// Whether A's stone on the empty `m` (legal, no five) makes a four.
    fn makes_four(&self, b: &mut Board, m: Point) -> bool {
        b.place(m, self.attacker);
        let four = !five_points(b, self.attacker).is_empty();
        b.undo();
        four
    }

    /// Whether A's stone on the empty `m` (legal, no four) makes a three (module docs).
    fn makes_three(&self, b: &mut Board, m: Point) -> bool {
        b.place(m, self.attacker);
        let mut found = false;
        'dirs: for &d in DIRS.iter() {
            for k in [-3, -2, -1, 1, 2, 3] {
                let Some(q) = step(b, m, d, k) else { continue };
                if b.get(q).is_none()
                    && self.straight_four_along(b, q, d, Some(m)).is_some()
                    && (!self.attacker_forbidden || b.classify(q, Color::Black) == Verdict::Legal)
                {
                    found = true;
                    break 'dirs;
                }
            }
        }
        b.undo();
        found
    }

    /// Sort nearest to `near` first (Chebyshev distance, then index).
    fn order(b: &Board, moves: &mut [Point], near: Option<Point>) {
        if let Some(q) = near {
            let n = b.size();
            moves.sort_by_key(|p| (p.x.abs_diff(q.x).max(p.y.abs_diff(q.y)), p.index(n)));
        }
    }

    /// A's legal four-making moves (A has no five point).
    fn four_moves(&self, b: &mut Board, near: Option<Point>) -> Vec<Point> {
        let n = b.size();
        let mut out = Vec::new();
        for i in b.window_points(self.attacker, 3).iter() {
            let m = Point::from_index(i, n);
            if self.makes_four(b, m) && self.legal_for(b, m, self.attacker) {
                out.push(m);
            }
        }
        Self::order(b, &mut out, near);
        out
    }

    /// A's legal three-making moves that make no four (A has no five point). With `first`,
    /// stops after the first one found.
    fn three_moves(&self, b: &mut Board, near: Option<Point>, first: bool) -> Vec<Point> {
        let n = b.size();
        let fours = b.window_points(self.attacker, 3);
        let mut out = Vec::new();
        for i in b.window_points(self.attacker, 2).iter() {
            let m = Point::from_index(i, n);
            if fours.contains(i) && self.makes_four(b, m) {
                continue;
            }
            if self.makes_three(b, m) && self.legal_for(b, m, self.attacker) {
                out.push(m);
                if first {
                    break;
                }
            }
        }
        Self::order(b, &mut out, near);
        out
    }

    /// Move the hinted winning move of this position, if among `moves`, to the front.
    fn apply_hint(&self, b: &Board, moves: &mut [Point]) {
        if let Some(h) = self.hint.get(&(b.hash() ^ self.hint_delta)) {
            if let Some(k) = moves.iter().position(|m| m == h) {
                moves[..=k].rotate_right(1);
            }
        }
    }

    fn record_win(&mut self, h: u64, depth: u32, line: &[Point]) {
        self.won.insert(h, (depth, line.to_vec()));
    }

    fn record_cut(&mut self, h: u64, r: u32) {
        let e = self.cut.entry(h).or_insert(r);
        *e = (*e).max(r);
    }

    /// The VCF shortcut: a win with its proof depth and line.
    fn vcf_shortcut(&mut self, b: &Board) -> Option<(u32, Vec<Point>)> {
        let left = self.limit.saturating_sub(self.spent());
        let budget = self.options.vcf_nodes.min(left);
        if budget == 0 {
            return None;
        }
        let Some(limits) = Limits::before(budget, self.deadline) else {
            self.out = true;
            return None;
        };
        let (v, st) = vcf::vcf_with_stats(b, self.attacker, &limits);
        self.vcf_nodes += st.nodes;
        let Vcf::Win { line } = v else { return None };
        // Threats: A's moves, less a final five.
        let mut r = b.clone();
        for &p in &line[..line.len() - 1] {
            r.place(p, if r.stone_count() % 2 == b.stone_count() % 2 { self.attacker } else { self.defender });
        }
        let last_five = r.makes_five(line[line.len() - 1], self.attacker);
        let a_moves = line.len().div_ceil(2) as u32;
        Some((a_moves - last_five as u32, line))
    }

    /// A to move on `b` with `r` threats left; on a win, `line` gets the principal line.
    fn attack(&mut self, b: &mut Board, r: u32, near: Option<Point>, line: &mut Vec<Point>) -> Res {
        let (a, d) = (self.attacker, self.defender);
        if let Some(&p) = five_points(b, a).first() {
            line.push(p);
            return Res::Win(0);
        }
        let h = b.hash();
        if let Some((u, l)) = self.won.get(&h) {
            if *u <= r {
                line.extend_from_slice(l);
                return Res::Win(*u);
            }
        }
        if self.lost.contains(&h) {
            return Res::NoWin;
        }
        if self.cut.get(&h).is_some_and(|&r0| r <= r0) {
            return Res::Cut;
        }
        let threats = five_points(b, d);
        if threats.len() >= 2 {
            self.lost.insert(h);
            return Res::NoWin;
        }
        if let Some((u, l)) = self.vcf_shortcut(b) {
            self.record_win(h, u, &l);
            line.extend_from_slice(&l);
            return Res::Win(u);
        }
        if self.out {
            return Res::Out;
        }
        // The candidate threats: the forced block, or every four and (lazily) every three.
        let forced = threats.first().copied();
        let mut fours = Vec::new();
        let mut threes = Vec::new();
        if let Some(f) = forced {
            if self.legal_for(b, f, a) {
                if self.makes_four(b, f) {
                    fours.push(f);
                } else if self.makes_three(b, f) {
                    threes.push(f);
                }
            }
        } else {
            fours = self.four_moves(b, near);
        }
        if r == 0 {
            let any = !fours.is_empty()
                || !threes.is_empty()
                || (forced.is_none() && !self.three_moves(b, near, true).is_empty());
            if any {
                self.record_cut(h, 0);
                return Res::Cut;
            }
            self.lost.insert(h);
            return Res::NoWin;
        }
        self.apply_hint(b, &mut fours);
        let mut cut = false;
        // Fours: one that leaves no defence wins at once; the others keep their forced reply.
        let mut blocks = Vec::with_capacity(fours.len());
        for &m in &fours {
            if !self.spend() {
                return Res::Out;
            }
            b.place(m, a);
            let fives = five_points(b, a);
            let forbidden_block = fives.len() == 1
                && self.defender_forbidden
                && matches!(b.classify(fives[0], Color::Black), Verdict::Forbidden(_));
            b.undo();
            if fives.len() >= 2 || forbidden_block {
                line.push(m);
                self.record_win(h, 1, &[m]);
                return Res::Win(1);
            }
            blocks.push((m, fives[0]));
        }
        for (m, f) in blocks {
            b.place(m, a);
            b.place(f, d);
            let mut sub = vec![m, f];
            let res = self.attack(b, r - 1, Some(m), &mut sub);
            b.undo();
            b.undo();
            match res {
                Res::Win(u) => {
                    self.record_win(h, u + 1, &sub);
                    line.extend_from_slice(&sub);
                    return Res::Win(u + 1);
                }
                Res::Out => return Res::Out,
                Res::Cut => cut = true,
                Res::NoWin => {}
            }
        }
        if forced.is_none() {
            threes = self.three_moves(b, near, false);
        }
        self.apply_hint(b, &mut threes);
        for m in threes {
            if !self.spend() {
                return Res::Out;
            }
            b.place(m, a);
            let mut sub = vec![m];
            let res = self.defend(b, r, m, &mut sub);
            b.undo();
            match res {
                Res::Win(u) => {
                    self.record_win(h, u, &sub);
                    line.extend_from_slice(&sub);
                    return Res::Win(u);
                }
                Res::Out => return Res::Out,
                Res::Cut => cut = true,
                Res::NoWin => {}
            }
        }
        if cut {
            self.record_cut(h, r);
            Res::Cut
        } else {
            self.lost.insert(h);
            Res::NoWin
        }
    }

    /// D's replies after A's three (A and D have no five point): the legal moves of D that make
    /// a four or leave A no legal straight-four point, in that order of discovery: defence
    /// points near the straight fours first, then D's fours, then (Black attacker under renju,
    /// whose straight-four points may turn forbidden) any other point.
    fn replies(&self, b: &mut Board) -> Vec<Point> {
        let d = self.defender;
        let n = b.size();
        let known = self.straight_fours(b);
        let mut geometry = PointSet::new();
        for (q, ends) in &known {
            geometry.insert(q.index(n));
            for e in ends.iter().flatten() {
                geometry.insert(e.index(n));
            }
        }
        let mut seen = PointSet::new();
        let mut out = Vec::new();
        for i in geometry.iter() {
            let p = Point::from_index(i, n);
            seen.insert(i);
            if b.get(p).is_some() || !self.legal_for(b, p, d) {
                continue;
            }
            b.place(p, d);
            let defends = !self.has_straight_four(b, &known) || !five_points(b, d).is_empty();
            b.undo();
            if defends {
                out.push(p);
            }
        }
        for i in b.window_points(d, 3).iter() {
            let p = Point::from_index(i, n);
            if seen.contains(i) || !self.legal_for(b, p, d) {
                continue;
            }
            seen.insert(i);
            b.place(p, d);
            let defends =
                !five_points(b, d).is_empty() || (self.attacker_forbidden && !self.has_straight_four(b, &known));
            b.undo();
            if defends {
                out.push(p);
            }
        }
        if self.attacker_forbidden {
            // A white stone off the straight fours' lines may still change whether a
            // straight-four point is forbidden (fake threes, RULES.md §3.5).
            for i in b.legal_mask(d).iter() {
                if seen.contains(i) {
                    continue;
                }
                let p = Point::from_index(i, n);
                b.place(p, d);
                // Off the straight fours' points their shape stands; only legality may change.
                let defends = !known.iter().any(|(q, _)| b.classify(*q, Color::Black) == Verdict::Legal)
                    && !self.has_straight_four(b, &known);
                b.undo();
                if defends {
                    out.push(p);
                }
            }
        }
        out
    }

    /// After A's three `m` (on `b`), D to move; `r` counts the three. On a win `line` gets the
    /// deepest reply's branch.
    fn defend(&mut self, b: &mut Board, r: u32, m: Point, line: &mut Vec<Point>) -> Res {
        let d = self.defender;
        let replies = self.replies(b);
        let mut best: Option<(u32, Vec<Point>)> = None;
        let mut cut = false;
        for p in replies {
            b.place(p, d);
            let mut sub = vec![p];
            let res = self.attack(b, r - 1, Some(m), &mut sub);
            b.undo();
            match res {
                Res::NoWin => return Res::NoWin,
                Res::Out => return Res::Out,
                Res::Cut => cut = true,
                Res::Win(u) => {
                    if best.as_ref().is_none_or(|(bu, _)| u > *bu) {
                        best = Some((u, sub));
                    }
                }
            }
        }
        if cut {
            return Res::Cut;
        }
        match best {
            Some((u, sub)) => {
                line.extend(sub);
                Res::Win(u + 1)
            }
            None => Res::Win(1),
        }
    }
}

/// The answer to the defence question for the side to move.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum VctDefence {
    /// The opponent has no VCT even if the side to move passed: nothing to refute.
    NoThreat,
    /// The opponent has a VCT (`threat`, its principal line, played as if the side to move
    /// passed). `refutations` are the legal moves after which the opponent has no VCT (proved
    /// exhaustively; a move making a five counts); `undecided` are the moves after which the
    /// depth limit cut the opponent's search. Every other legal move loses to a VCT.
    Threat { threat: Vec<Point>, refutations: Vec<Point>, undecided: Vec<Point> },
    /// The budget ran out (or the depth limit cut the first question) before the sets were known.
    Unknown,
}

/// Which moves of `defender` (to move) refute the opponent's VCT, within `limits` for the whole
/// question (every search draws from the same node budget and deadline), default [`Options`].
///
/// Exact: every legal move is examined by a full search for the opponent; the searches share one
/// transposition table, and the winning moves of the first proof are tried first.
pub fn vct_refutations(board: &Board, defender: Color, limits: &Limits) -> VctDefence {
    vct_refutations_with_options(board, defender, limits, &Options::default())
}

/// [`vct_refutations`] with explicit [`Options`].
pub fn vct_refutations_with_options(board: &Board, defender: Color, limits: &Limits, options: &Options) -> VctDefence {
    let attacker = defender.opponent();
    let mut s = Solver::new(board.rule(), attacker, limits, options);
    let mut b = board.clone();
    let (r, threat) = s.solve(&mut b);
    match r {
        Res::Win(_) => {}
        Res::NoWin => return VctDefence::NoThreat,
        Res::Cut | Res::Out => return VctDefence::Unknown,
    }
    let base = b.hash();
    s.hint = s.won.iter().map(|(&h, (_, l))| (h, l[0])).collect();
    let n = b.size();
    let mut refutations = Vec::new();
    let mut undecided = Vec::new();
    for i in b.legal_mask(defender).iter() {
        let m = Point::from_index(i, n);
        if b.makes_five(m, defender) {
            refutations.push(m);
            continue;
        }
        b.place(m, defender);
        s.hint_delta = b.hash() ^ base;
        let (r, _) = s.solve(&mut b);
        b.undo();
        match r {
            Res::Win(_) => {}
            Res::NoWin => refutations.push(m),
            Res::Cut => undecided.push(m),
            Res::Out => return VctDefence::Unknown,
        }
    }
    VctDefence::Threat { threat, refutations, undecided }
}
