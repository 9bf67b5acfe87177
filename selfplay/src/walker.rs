//! Position trackers used by the search to walk from the root to a leaf and back.
//!
//! - [`FastWalker`]: once colours are settled and play is plain alternation (RULES.md §2), the
//!   search places and undoes stones on one working [`Board`] (no clone per playout) and keeps,
//!   per depth, the sets of points where each colour would make a winning five, updated locally
//!   around each new stone. These give the immediate-win and forced-block shortcuts.
//! - [`GameWalker`]: during the opening protocol (swaps, offers, Lianhuan doubles) the search
//!   clones the root [`Game`] once per playout and applies decisions with [`Game::apply`].

use crate::action::{action_from_index, action_index};
use crate::encode::{encode, encode_zeroed_planes, EncodeInput};
use renju_rules::board::DIRS;
use renju_rules::vcf::{refutations, vcf, Defence, Limits, Vcf};
use renju_rules::vct::{vct_with_options, Options as VctOptions, Vct};
use renju_rules::{Action, Board, Color, DecisionKind, Game, Player, Point, PointSet, Rule, Verdict};

/// Most attacker threats on one branch of the search's VCT check ([`FastWalker::mover_has_vct`]):
/// a small budget is better spent on the short proofs than on deep lines it cannot finish.
pub const VCT_CHECK_DEPTH: u32 = 6;
/// The VCF shortcut's budget at each attacker node of the search's VCT check.
pub const VCT_CHECK_VCF_NODES: u64 = 50;
/// What expanding a position gives.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Expansion {
    /// The position is decided without evaluation: value from `Player::First`'s view.
    Terminal(f32),
    /// The children are forced (immediate win, block of a five): uniform priors, no evaluation.
    Forced,
    /// The children need priors and a value from the evaluator.
    NeedsEval,
}

/// Whether `game` is in plain alternation with colours settled, so that [`FastWalker`] applies.
pub fn is_plain_play(game: &Game) -> bool {
    !game.is_over()
        && game.colours_settled()
        && matches!(game.decision(), DecisionKind::PlaceStone(_))
        && game.pending_offers().is_empty()
        && game.board().stone_count() >= 1
}

/// Plain-play walker over one working board with place / undo.
#[derive(Clone)]
pub struct FastWalker {
    board: Board,
    size: usize,
    rule: Rule,
    /// 0 empty, 1 black, 2 white; index `y * size + x`.
    cells: Vec<u8>,
    black_player: Player,
    stone_cap: Option<usize>,
    root_stones: usize,
    root_color: Color,
    /// `fives[d][c]`: points where colour `c` would win, at depth `d` below the root.
    fives: Vec<[PointSet; 2]>,
}

impl FastWalker {
    /// A walker rooted at `game`, which must be in plain play ([`is_plain_play`]).
    pub fn new(game: &Game) -> FastWalker {
        debug_assert!(is_plain_play(game));
        let board = game.board().clone();
        let size = board.size();
        let mut cells = vec![0u8; size * size];
        for &(p, c) in board.stones() {
            cells[p.index(size)] = 1 + c.index() as u8;
        }
        let root_color = match game.decision() {
            DecisionKind::PlaceStone(c) => c,
            _ => Color::Black,
        };
        let mut w = FastWalker {
            size,
            rule: board.rule(),
            board,
            cells,
            black_player: game.black_player(),
            stone_cap: game.stone_cap(),
            root_stones: game.board().stone_count(),
            root_color,
            fives: Vec::with_capacity(64),
        };
        let mut f = [PointSet::new(), PointSet::new()];
        for i in 0..size * size {
            if w.cells[i] == 0 {
                for c in [Color::Black, Color::White] {
                    if w.makes_five(i, c) {
                        f[c.index()].insert(i);
                    }
                }
            }
        }
        w.fives.push(f);
        w
    }

    #[inline]
    fn cell(&self, x: i32, y: i32) -> u8 {
        if x < 0 || y < 0 || x >= self.size as i32 || y >= self.size as i32 {
            3
        } else {
            self.cells[y as usize * self.size + x as usize]
        }
    }

    /// Length of the run of `c` through empty point `i` in direction `d` if `c` played there.
    #[inline]
    fn run(&self, i: usize, d: (i32, i32), v: u8) -> u32 {
        let (x, y) = ((i % self.size) as i32, (i / self.size) as i32);
        let mut len = 1;
        for s in [1, -1] {
            let (mut cx, mut cy) = (x + s * d.0, y + s * d.1);
            while self.cell(cx, cy) == v {
                len += 1;
                cx += s * d.0;
                cy += s * d.1;
            }
        }
        len
    }

    /// Whether `c` playing empty point `i` wins (RULES.md §2 table; five beats forbidden shapes).
    fn makes_five(&self, i: usize, c: Color) -> bool {
        let v = 1 + c.index() as u8;
        DIRS.into_iter().any(|d| self.rule.run_wins(c, self.run(i, d, v) as usize))
    }

    /// Colour to place at the current depth.
    pub fn to_move(&self) -> Color {
        let depth = self.board.stone_count() - self.root_stones;
        if depth.is_multiple_of(2) {
            self.root_color
        } else {
            self.root_color.opponent()
        }
    }

    fn player_of(&self, c: Color) -> Player {
        if c == Color::Black {
            self.black_player
        } else {
            self.black_player.other()
        }
    }

    /// The player deciding at the current depth.
    pub fn decider(&self) -> Player {
        self.player_of(self.to_move())
    }

    /// Undo back to the root.
    pub fn reset(&mut self) {
        while self.board.stone_count() > self.root_stones {
            let (p, _) = self.board.undo().expect("stones above the root");
            self.cells[p.index(self.size)] = 0;
        }
        self.fives.truncate(1);
    }

    /// Place a stone on point index `i` for the colour to move. Returns the terminal value
    /// (First's view) when the game ends: a five wins; the stone cap or a full board draws.
    pub fn apply(&mut self, i: usize) -> Option<f32> {
        let c = self.to_move();
        let top = *self.fives.last().expect("root five sets");
        let wins = top[c.index()].contains(i);
        let p = Point::from_index(i, self.size);
        self.board.place(p, c);
        self.cells[i] = 1 + c.index() as u8;
        // Update the five sets: the point is gone for both; around it only c's change.
        let mut f = top;
        f[0].remove(i);
        f[1].remove(i);
        let (x, y) = ((i % self.size) as i32, (i / self.size) as i32);
        let v = 1 + c.index() as u8;
        // Only the first empty point past the run of c through the new stone, on each side of
        // each line, can change: a point further on is cut off from the stone by that empty point.
        for d in DIRS {
            for s in [1i32, -1] {
                let (mut cx, mut cy) = (x + s * d.0, y + s * d.1);
                let mut cv = self.cell(cx, cy);
                while cv == v {
                    cx += s * d.0;
                    cy += s * d.1;
                    cv = self.cell(cx, cy);
                }
                if cv != 0 {
                    continue;
                }
                let j = cy as usize * self.size + cx as usize;
                let l = self.run(j, d, v);
                if self.rule.run_wins(c, l as usize) {
                    f[c.index()].insert(j);
                } else if f[c.index()].contains(j) && !self.makes_five(j, c) {
                    f[c.index()].remove(j);
                }
            }
        }
        self.fives.push(f);
        if wins {
            return Some(if self.player_of(c) == Player::First { 1.0 } else { -1.0 });
        }
        let n = self.board.stone_count();
        if self.stone_cap.is_some_and(|cap| n >= cap) || n == self.size * self.size {
            return Some(0.0);
        }
        None
    }

    /// Whether the colour to move may play point `i` (renju: Black's forbidden points are not).
    pub fn is_legal(&self, i: usize) -> bool {
        let c = self.to_move();
        if c == Color::White || self.rule != Rule::Renju {
            return true;
        }
        !matches!(self.board.classify(Point::from_index(i, self.size), Color::Black), Verdict::Forbidden(_))
    }

    /// Whether legality of the mover's children must be checked lazily (renju, Black to move).
    pub fn needs_check(&self) -> bool {
        self.rule == Rule::Renju && self.to_move() == Color::Black
    }

    /// The children of the current position into `out` (point indices), with the shortcuts:
    /// the mover's five wins at once (at the root: the five points are the only children); a
    /// single opponent five-point is the only child (forced block); two or more lose (at the
    /// root: they are the children). With `vcf_nodes > 0`, then the VCF check
    /// ([`renju_rules::vcf`], that node budget per question): a VCF of the mover is a win (at the
    /// root: its first move is the only child); if the opponent has one, the children are its
    /// proven refutations (none proven to exist: a loss, except at the root, which keeps every
    /// move); an undecided question changes nothing.
    pub fn expand(&mut self, is_root: bool, vcf_nodes: u64, out: &mut Vec<u16>) -> Expansion {
        out.clear();
        let c = self.to_move();
        let f = *self.fives.last().expect("five sets");
        let me = self.decider();
        let sign = if me == Player::First { 1.0 } else { -1.0 };
        let own = f[c.index()];
        let opp = f[c.opponent().index()];
        if !own.is_empty() {
            if is_root {
                out.extend(own.iter().map(|i| i as u16));
                return Expansion::Forced;
            }
            return Expansion::Terminal(sign);
        }
        if !opp.is_empty() {
            if opp.len() >= 2 && !is_root {
                return Expansion::Terminal(-sign);
            }
            out.extend(opp.iter().map(|i| i as u16));
            return Expansion::Forced;
        }
        if vcf_nodes > 0 {
            let limits = Limits::nodes(vcf_nodes);
            if let Vcf::Win { line } = vcf(&self.board, c, &limits) {
                if is_root {
                    out.push(line[0].index(self.size) as u16);
                    return Expansion::Forced;
                }
                return Expansion::Terminal(sign);
            }
            if let Defence::Threat { refutations, .. } = refutations(&self.board, c, &limits) {
                if !refutations.is_empty() {
                    out.extend(refutations.iter().map(|p| p.index(self.size) as u16));
                    return Expansion::NeedsEval;
                }
                if !is_root {
                    return Expansion::Terminal(-sign);
                }
            }
        }
        for (i, &v) in self.cells.iter().enumerate() {
            if v == 0 {
                out.push(i as u16);
            }
        }
        Expansion::NeedsEval
    }

    /// Whether the mover has a VCT here that the solver proves within `nodes` (attacker threats
    /// tried, its VCF shortcut's moves included), at most [`VCT_CHECK_DEPTH`] threats deep.
    pub fn mover_has_vct(&self, nodes: u64) -> bool {
        let options = VctOptions { max_depth: VCT_CHECK_DEPTH, vcf_nodes: VCT_CHECK_VCF_NODES };
        matches!(vct_with_options(&self.board, self.to_move(), &Limits::nodes(nodes), &options).0, Vct::Win { .. })
    }

    /// Encode the current position.
    pub fn encode(&self, planes: &mut [f32], globals: &mut [f32]) {
        planes.fill(0.0);
        self.encode_zeroed(planes, globals);
    }

    /// [`FastWalker::encode`] into an all-zero `planes` buffer (the search's freshly
    /// zero-filled leaf buffers), without zeroing it a second time.
    pub(crate) fn encode_zeroed(&self, planes: &mut [f32], globals: &mut [f32]) {
        let c = self.to_move();
        let inp = EncodeInput {
            board: &self.board,
            decider_is_black: c == Color::Black,
            decision: DecisionKind::PlaceStone(c),
            pending_offers: &[],
            colours_settled: true,
        };
        encode_zeroed_planes(&inp, planes, globals);
    }

    /// The working board (at the current depth).
    pub fn board(&self) -> &Board {
        &self.board
    }
}

/// Opening-phase walker: clone the root game per playout and apply decisions.
#[derive(Clone)]
pub struct GameWalker {
    root: Game,
    cur: Game,
    acts: Vec<Action>,
}

impl GameWalker {
    /// A walker rooted at `game`.
    pub fn new(game: &Game) -> GameWalker {
        GameWalker { root: game.clone(), cur: game.clone(), acts: Vec::new() }
    }
    /// Back to the root.
    pub fn reset(&mut self) {
        self.cur.clone_from(&self.root);
    }
    /// Who decides now.
    pub fn decider(&self) -> Player {
        self.cur.to_decide()
    }
    /// Apply the action with index `i`; the terminal value (First's view) if the game ends.
    pub fn apply(&mut self, i: usize) -> Option<f32> {
        let size = self.cur.board().size();
        let a = action_from_index(i, size).expect("action index in range");
        self.cur.apply(a).expect("search applies legal actions only");
        self.cur.outcome().map(|o| match o.winner {
            Some(Player::First) => 1.0,
            Some(Player::Second) => -1.0,
            None => 0.0,
        })
    }
    /// Children: the legal actions.
    pub fn expand(&mut self, out: &mut Vec<u16>) -> Expansion {
        out.clear();
        let size = self.cur.board().size();
        self.cur.legal_actions_into(&mut self.acts);
        out.extend(self.acts.iter().map(|&a| action_index(a, size) as u16));
        if out.is_empty() {
            // Only reachable if the game is over (the caller checks outcomes on apply).
            return Expansion::Terminal(0.0);
        }
        Expansion::NeedsEval
    }
    /// Encode the current position.
    pub fn encode(&self, planes: &mut [f32], globals: &mut [f32]) {
        encode(&self.cur, planes, globals);
    }
}
