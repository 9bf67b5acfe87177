//! VCF (victory by continuous fours): an exact solver for renju, standard and freestyle by the
//! definitions of RULES.md §2–4, and the defence question (which moves refute an opponent VCF).
//!
//! A VCF for the attacker `A` against the defender `D` (A to move) is a sequence in which every
//! move of A makes a four, every reply of D is forced, and A ends with a five or a four that D
//! cannot stop. The rules applied at each A move, in order:
//! 1. A wins at once with a move that makes a five ([`Board::makes_five`]: for Black under renju
//!    an exact five, even if it also makes a forbidden shape, §4 "five first").
//! 2. If D has a five point (a four of D), A must block it: with two or more D five points A has
//!    lost; with one, A's only move is that point, and it must itself make a four (counter-four).
//! 3. Otherwise A's moves are the four-making moves; each must be a legal move (Black under
//!    renju: not a double-four, double-three or overline, §4).
//! 4. After A's four, D has no five point (A had none to leave open, see 2). If A has two or more
//!    five points (a straight four, or two fours), D cannot block both: A wins. With one, D must
//!    block there; if that point is forbidden to Black (D Black under renju), A wins. Otherwise D
//!    blocks and the search continues at 1 (D's block may itself make a four: rule 2).
//!
//! Search: depth-first over A's four-making moves (read off the board's per-line masks with
//! [`Board::window_points`], nearest to A's previous move first; a four that leaves no defence is
//! looked for among all of them before any is searched deeper) with a transposition table of
//! disproved A-to-move positions keyed by the board's Zobrist hash, and node and time budgets.
//! A node is one A move tried. Results are exact: [`Vcf::NoWin`] only when the search was
//! exhaustive.

use crate::board::{Board, Color, Point, PointSet, Rule, Verdict};
use std::collections::HashSet;
use std::time::{Duration, Instant};

/// Budgets of one solver call. A call that spends either returns [`Vcf::Unknown`].
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Most attacker moves tried (nodes).
    pub nodes: u64,
    /// Wall-clock limit, `None` for no limit (checked every 256 nodes).
    pub time: Option<Duration>,
}

impl Limits {
    /// A node budget and no time limit.
    pub fn nodes(nodes: u64) -> Limits {
        Limits { nodes, time: None }
    }

    /// The instant these limits' time runs out, counted from now (`None`: no time limit).
    pub fn deadline(&self) -> Option<Instant> {
        self.time.map(|t| Instant::now() + t)
    }

    /// `nodes` nodes within the time left before `deadline` (shared by several solver calls);
    /// `None` once it has passed.
    pub fn before(nodes: u64, deadline: Option<Instant>) -> Option<Limits> {
        let time = deadline.map(|d| d.saturating_duration_since(Instant::now()));
        (time != Some(Duration::ZERO)).then_some(Limits { nodes, time })
    }
}

/// The solver's verdict.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Vcf {
    /// A VCF exists: `line` alternates the attacker's moves and the defender's forced replies,
    /// starting and ending with an attacker's move (the last makes a five or leaves no defence).
    Win { line: Vec<Point> },
    /// No VCF exists (the search was exhaustive).
    NoWin,
    /// The budget ran out before the question was decided.
    Unknown,
}

/// Statistics of a solver call.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Attacker moves tried.
    pub nodes: u64,
}

/// Whether `attacker` (to move) has a VCF on `board`; see the module docs for the rules.
pub fn vcf(board: &Board, attacker: Color, limits: &Limits) -> Vcf {
    vcf_with_stats(board, attacker, limits).0
}

/// [`vcf`] that also reports the nodes searched.
pub fn vcf_with_stats(board: &Board, attacker: Color, limits: &Limits) -> (Vcf, Stats) {
    let mut s = Solver::new(board.rule(), attacker, limits);
    let mut b = board.clone();
    let mut line = Vec::new();
    let r = s.attack(&mut b, &mut line, None);
    let v = match r {
        Res::Win => Vcf::Win { line },
        Res::NoWin => Vcf::NoWin,
        Res::Out => Vcf::Unknown,
    };
    (v, Stats { nodes: s.nodes })
}

/// The points where `c` makes a five now (exact by the rule, [`Board::makes_five`]).
pub fn five_points(board: &Board, c: Color) -> Vec<Point> {
    let n = board.size();
    board.window_points(c, 4).iter().map(|i| Point::from_index(i, n)).filter(|&p| board.makes_five(p, c)).collect()
}

#[derive(Copy, Clone, PartialEq, Eq, Debug)]
enum Res {
    Win,
    NoWin,
    Out,
}

struct Solver {
    attacker: Color,
    /// Renju with a black defender: a forced block on a forbidden point loses.
    defender_forbidden: bool,
    /// Renju with a black attacker: attacking fours must be legal moves.
    attacker_forbidden: bool,
    limit: u64,
    deadline: Option<Instant>,
    nodes: u64,
    out: bool,
    disproved: HashSet<u64>,
}

impl Solver {
    fn new(rule: Rule, attacker: Color, limits: &Limits) -> Solver {
        let renju = rule == Rule::Renju;
        Solver {
            attacker,
            defender_forbidden: renju && attacker == Color::White,
            attacker_forbidden: renju && attacker == Color::Black,
            limit: limits.nodes,
            deadline: limits.deadline(),
            nodes: 0,
            out: false,
            disproved: HashSet::new(),
        }
    }

    /// Spend one node; `false` when a budget is spent.
    fn spend(&mut self) -> bool {
        if self.out || self.nodes >= self.limit {
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

    /// The attacker's four-making moves that are legal, nearest to `near` first.
    fn four_moves(&self, b: &mut Board, near: Option<Point>) -> Vec<Point> {
        let a = self.attacker;
        let n = b.size();
        let mut out: Vec<Point> = Vec::new();
        for i in b.window_points(a, 3).iter() {
            let m = Point::from_index(i, n);
            if self.makes_four(b, m) {
                out.push(m);
            }
        }
        if let Some(q) = near {
            out.sort_by_key(|p| (p.x.abs_diff(q.x).max(p.y.abs_diff(q.y)), p.index(n)));
        }
        out
    }

    /// Whether the attacker's stone on the empty point `m` is legal and makes a four (no five:
    /// the caller has already looked for one).
    fn makes_four(&self, b: &mut Board, m: Point) -> bool {
        if self.attacker_forbidden && b.classify(m, Color::Black) != Verdict::Legal {
            return false;
        }
        b.place(m, self.attacker);
        let four = !five_points(b, self.attacker).is_empty();
        b.undo();
        four
    }

    /// Attacker to move on `b`; on a win, `line` is extended with the winning continuation.
    fn attack(&mut self, b: &mut Board, line: &mut Vec<Point>, near: Option<Point>) -> Res {
        let (a, d) = (self.attacker, self.attacker.opponent());
        if let Some(&p) = five_points(b, a).first() {
            line.push(p);
            return Res::Win;
        }
        if self.disproved.contains(&b.hash()) {
            return Res::NoWin;
        }
        let threats = five_points(b, d);
        let moves = match threats.len() {
            0 => self.four_moves(b, near),
            1 if self.makes_four(b, threats[0]) => vec![threats[0]],
            _ => Vec::new(),
        };
        // First pass: a four that leaves no defence ends the line at once (shortest finish);
        // the others keep their forced reply for the second pass.
        let mut forced: Vec<(Point, Point)> = Vec::with_capacity(moves.len());
        for m in moves {
            if !self.spend() {
                return Res::Out;
            }
            b.place(m, a);
            let fives = five_points(b, a);
            debug_assert!(!fives.is_empty(), "{m:?} was generated as a four");
            let blocked_by_forbidden = fives.len() == 1
                && self.defender_forbidden
                && matches!(b.classify(fives[0], Color::Black), Verdict::Forbidden(_));
            b.undo();
            if fives.len() >= 2 || blocked_by_forbidden {
                line.push(m);
                return Res::Win;
            }
            forced.push((m, fives[0]));
        }
        for (m, f) in forced {
            b.place(m, a);
            b.place(f, d);
            line.push(m);
            line.push(f);
            let r = self.attack(b, line, Some(m));
            b.undo();
            b.undo();
            match r {
                Res::Win => return Res::Win,
                Res::Out => return Res::Out,
                Res::NoWin => line.truncate(line.len() - 2),
            }
        }
        self.disproved.insert(b.hash());
        Res::NoWin
    }
}

/// Whether `line` (attacker's move first, alternating with the defender's replies, as in
/// [`Vcf::Win`]) is still a VCF for `attacker` on `board`, by the rules of the module docs.
/// Cheap: no search. Used to skip defender moves that leave a known line intact.
pub fn line_wins(board: &Board, attacker: Color, line: &[Point]) -> bool {
    let s = Solver::new(board.rule(), attacker, &Limits::nodes(u64::MAX));
    let (a, d) = (attacker, attacker.opponent());
    let mut b = board.clone();
    let mut k = 0;
    while k < line.len() {
        let m = line[k];
        if !b.contains(m) || b.get(m).is_some() {
            return false;
        }
        if b.makes_five(m, a) {
            return k + 1 == line.len();
        }
        let threats = five_points(&b, d);
        if threats.len() > 1 || (threats.len() == 1 && threats[0] != m) || !s.makes_four(&mut b, m) {
            return false;
        }
        b.place(m, a);
        let fives = five_points(&b, a);
        let forbidden_block = fives.len() == 1
            && s.defender_forbidden
            && matches!(b.classify(fives[0], Color::Black), Verdict::Forbidden(_));
        if k + 1 == line.len() {
            return fives.len() >= 2 || forbidden_block;
        }
        if fives.len() != 1 || forbidden_block || line[k + 1] != fives[0] {
            return false;
        }
        b.place(fives[0], d);
        k += 2;
    }
    false
}

/// The answer to the defence question for the side to move.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Defence {
    /// The opponent has no VCF even if the side to move passed: nothing to refute.
    NoThreat,
    /// The opponent has a VCF (`threat`, played as if the side to move passed); `refutations`
    /// are exactly the legal moves after which the opponent has none (a move making a five
    /// counts). Empty: every move loses to a VCF.
    Threat { threat: Vec<Point>, refutations: Vec<Point> },
    /// The budget ran out before the set was proved.
    Unknown,
}

/// Which moves of `defender` (to move) refute the opponent's VCF, within `limits` for the whole
/// question (every solver call draws from the same node budget and deadline).
///
/// Exact: every legal move is examined; a move that leaves one of the opponent's known winning
/// lines valid ([`line_wins`]) is not a refutation, any other gets a full solver call (whose win,
/// if any, joins the known lines).
pub fn refutations(board: &Board, defender: Color, limits: &Limits) -> Defence {
    let attacker = defender.opponent();
    let deadline = limits.deadline();
    let mut left = limits.nodes;
    let call = |b: &Board, left: &mut u64| -> Vcf {
        let Some(limits) = Limits::before(*left, deadline) else { return Vcf::Unknown };
        let (v, st) = vcf_with_stats(b, attacker, &limits);
        *left = left.saturating_sub(st.nodes);
        v
    };
    let threat = match call(board, &mut left) {
        Vcf::Win { line } => line,
        Vcf::NoWin => return Defence::NoThreat,
        Vcf::Unknown => return Defence::Unknown,
    };
    let mut lines = vec![threat.clone()];
    let mut refutations = Vec::new();
    let mut b = board.clone();
    let n = b.size();
    let legal: PointSet = b.legal_mask(defender);
    for i in legal.iter() {
        let m = Point::from_index(i, n);
        if b.makes_five(m, defender) {
            refutations.push(m);
            continue;
        }
        b.place(m, defender);
        let known = lines.iter().any(|l| line_wins(&b, attacker, l));
        if !known {
            match call(&b, &mut left) {
                Vcf::Win { line } => lines.push(line),
                Vcf::NoWin => refutations.push(m),
                Vcf::Unknown => return Defence::Unknown,
            }
        }
        b.undo();
    }
    Defence::Threat { threat, refutations }
}
