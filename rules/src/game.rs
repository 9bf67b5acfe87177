//! A whole game under an opening protocol (RULES.md §5) as a state machine over decisions.
//!
//! Players are identified independently of colour: [`Player::First`] makes the first decision
//! (the tentative Black, 假先), [`Player::Second`] the other (tentative White, 假后). Swaps,
//! Lianhuan exchanges and offer picks change who holds which colour or who decides next, which is
//! why a search must back values up by [`Player`], never by alternation.
//!
//! Every decision is one [`Action`]: a board point (place a stone, place one fifth-move offer,
//! or pick the offer on that point) or one of the protocol actions (keep/swap, single/double,
//! choose N). Offers are placed one point per decision; an offer set of N is N decisions.
//!
//! Stone `k` (1-based, counting only stones on the board) is black when `k` is odd and white when
//! it is even, under every protocol (RULES.md §5: Lianhuan's ①③⑤ are black, 2 4 6 white).
//!
//! # The protocols as decision sequences
//! Notation: `F` = [`Player::First`], `S` = [`Player::Second`], `B`/`W` = whoever holds
//! Black/White at that moment. After the listed opening decisions, play is *normal*: the holder of
//! the colour of the next stone places it anywhere legal.
//! - `free`: F places stone 1 (anywhere); `free-centre`: F places stone 1 on the centre.
//! - `swap1`: F places stone 1 anywhere; W (= S) decides [`Action::Keep`] / [`Action::Swap`].
//! - `rif`: F stone 1 on the centre; S stone 2 in the central 3x3; F stone 3 in the central 5x5;
//!   W decides Keep/Swap; W places stone 4 anywhere; B places 2 offers (one
//!   [`DecisionKind::PlaceOffer`] decision each); W picks the offer that stays (a `Place` on it,
//!   it becomes stone 5; the other is removed); W places stone 6, and so on.
//! - `fifth-n:N`: as `rif` with N offers (N = 1: B simply places stone 5, nobody picks).
//!   `fifth-n` (alias `yamaguchi`): after stone 3, F declares N with [`Action::ChooseN`], then
//!   the swap decision.
//! - `designated:D4[,swap][,offers=K]`: the three stones of the opening are on the board from the
//!   start (no decisions, not in [`Game::history`]); with `swap` W decides Keep/Swap; W places
//!   stone 4; with K >= 2, B places K offers and W picks; else B places stone 5.
//!   `designated:any`: stone 1 is put on the centre automatically, then F chooses the opening in
//!   canonical orientation with two decisions: white stone 2 on one of the two canonical points
//!   (h9 direct / i9 indirect on 15x15), then black stone 3 on one of the 13 points that make a
//!   canonical opening with it. Then as above.
//! - `black-sets`: F places stones 1, 2, 3 (black, white, black) anywhere; S decides Keep (S stays
//!   White) or Swap (S takes Black); W places stone 4.
//! - `lianhuan` (seed 001): the mover places stone k; for k <= 5 the same player then decides
//!   [`Action::Single`] (the opponent places stone k+1) or [`Action::Double`] (the same player
//!   also places stone k+1; then the opponent decides Keep = place stone k+2 themselves, or Swap
//!   = "exchange", the doubler places stone k+2). Colours are fixed once stone 6 is placed (or,
//!   after a 5+6 double, once the opponent has decided): the player who places stone 7 is Black.
//! - `soosorv:N`: as `designated:any`, F puts one of the 26 openings (stone 1 automatically on
//!   the centre, then the canonical stone 2 and stone 3); W (= S) decides Keep/Swap; W places
//!   stone 4 anywhere; the same W declares the number of offers with [`Action::ChooseN`]
//!   (`1..=N`); B decides Keep/Swap; B places that many offers and W picks (one offer: B simply
//!   places stone 5). `soosorv:N,D4`: the opening's three stones are on the board from the start.
//! - `taraguchi:N`: F places stone 1 on the centre; after each of stones 1, 2, 3 and 4 the holder
//!   of the next colour decides Keep/Swap, and the holder of that colour places the next stone in
//!   the central 3x3, 5x5, 7x7. After stone 4 B chooses between the two continuations with
//!   [`Action::ChooseN`]: `ChooseN(1)` (choice 1: B decides Keep/Swap, B places stone 5 in the
//!   central 9x9, W decides Keep/Swap, W places stone 6) or `ChooseN(N)` (choice 2: B places N
//!   offers anywhere, W picks). `taraguchi:N,D4`: the opening's three stones are on the board
//!   from the start and the swap after stone 3 comes first.
//! - `swap2`: F places stones 1, 2, 3 (black, white, black) anywhere; S decides
//!   ([`DecisionKind::SwapKeepOrDouble`]) [`Action::Swap`] (S takes Black), [`Action::Keep`] (S
//!   stays White and places stone 4) or [`Action::Double`] (S places stones 4 and 5, white and
//!   black, and F then decides Keep = F stays Black, or Swap = F takes White). `swap2:D4`: the
//!   opening's three stones are on the board from the start, S's choice comes first.
//!
//! The three rules in official use need no action beyond those of the older protocols: the
//! Soosõrv declaration and the Taraguchi choice are `ChooseN` (the legal counts are the rule's),
//! Swap2's "two more stones" is `Double`.
//!
//! # Game end (RULES.md §2)
//! A five (exactly five for Black under renju/standard; White's overline wins under renju; any
//! five-or-longer under freestyle) wins for the player who placed it, also during the opening.
//! A black stone on a forbidden point (renju) is placed and loses at once
//! ([`OutcomeReason::ForbiddenMove`]); such points are never in [`Game::legal_actions`]. A full
//! board, or `stone_cap` stones on the board, is a draw. Black to move with every allowed point
//! forbidden loses ([`OutcomeReason::NoLegalMove`]).

use crate::board::{Board, Color, Point, Rule, SizeError, Verdict};
use crate::opening::{self, Opening};
pub use crate::protocol::{InvalidProtocol, ParseProtocolError, Protocol, MAX_OFFERS};
use crate::symmetry::Symmetry;
use serde::{Deserialize, Serialize};
use std::fmt;

/// A player, independent of colour. `First` places stone 1 (or makes the first decision).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Player {
    First,
    Second,
}

impl Player {
    /// 0 for [`Player::First`], 1 for [`Player::Second`]: the index of per-player arrays.
    #[inline(always)]
    pub const fn index(self) -> usize {
        match self {
            Player::First => 0,
            Player::Second => 1,
        }
    }
    /// The other player.
    pub fn other(self) -> Player {
        match self {
            Player::First => Player::Second,
            Player::Second => Player::First,
        }
    }
}

/// A decision: a board point or a protocol action.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Action {
    /// Place a stone / place an offer / pick the offer on this point (see [`DecisionKind`]).
    Place(Point),
    /// Keep colours (decline a swap), or after a Lianhuan double: take the next stone yourself.
    Keep,
    /// Swap colours, or after a Lianhuan double: exchange (the doubler places the next stone too).
    Swap,
    /// Lianhuan: stop after the stone just placed.
    Single,
    /// Lianhuan: place the next stone (of the other colour) as well. Swap2: place stones 4 and 5
    /// and hand the choice of colour back.
    Double,
    /// Declare the number of fifth-move offers: fifth-n (1..=MAX_OFFERS), Soosõrv-N (1..=N),
    /// Taraguchi-N (1 = one stone 5 in the central 9x9, N = N offers anywhere).
    ChooseN(u8),
}

/// What kind of decision the deciding player faces now.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum DecisionKind {
    /// Place one stone of this colour (legal actions: `Place` on legal points).
    PlaceStone(Color),
    /// Swap colours or keep them.
    SwapOrKeep,
    /// Declare the number of fifth-move offers.
    ChooseN,
    /// Place offer `index` (0-based) of `total` candidate black fifth stones.
    PlaceOffer { index: u8, total: u8 },
    /// Pick one of the pending offers (`Place` on an offer point); the others are removed.
    PickOffer,
    /// Lianhuan: after placing a stone, stop (Single) or place the next one too (Double).
    SingleOrDouble,
    /// Lianhuan: after the opponent's double, take the next stone (Keep) or exchange (Swap).
    ExchangeOrTake,
    /// Swap2 after stone 3: take Black (Swap), stay White (Keep), or place stones 4 and 5
    /// (Double).
    SwapKeepOrDouble,
}

/// Why a game ended.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum OutcomeReason {
    /// A five (or an overline where it wins).
    Five,
    /// Black played a forbidden point (renju): White wins.
    ForbiddenMove,
    /// Black to move and every empty point is forbidden (RULES.md §2): White wins.
    NoLegalMove,
    /// The board is full: draw.
    BoardFull,
    /// The stone cap was reached: draw.
    StoneCap,
}

/// The end of a game. `winner: None` is a draw.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Outcome {
    pub winner: Option<Player>,
    pub winner_color: Option<Color>,
    pub reason: OutcomeReason,
}

/// Illegal input to [`Game::apply`] or [`Game::new`]. Messages name points as `h8`.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum GameError {
    #[error("the game is over")]
    GameOver,
    #[error("point {} is occupied", point_name(*.0))]
    Occupied(Point),
    #[error("point {0} is off the board")]
    OffBoard(String),
    #[error("action {action} is not legal here (expected {expected})")]
    Illegal { action: String, expected: String },
    /// The protocol's parameters are out of range (e.g. `fifth-n:0`, `offers=11`).
    #[error("invalid protocol {protocol}: {why}")]
    InvalidProtocol { protocol: String, why: InvalidProtocol },
    /// Bad board size.
    #[error(transparent)]
    Size(#[from] SizeError),
    /// `stone_cap` of 0.
    #[error("stone cap must be at least 1 (got {0})")]
    InvalidStoneCap(usize),
}

/// Name of a point for messages: `h8` ([`crate::notation::format_point`]); a column beyond `z`
/// (only possible for off-board input) is written `(x,y)`.
pub(crate) fn point_name(p: Point) -> String {
    if p.x < 26 {
        crate::notation::format_point(p)
    } else {
        format!("({},{})", p.x, p.y)
    }
}

impl fmt::Display for Action {
    /// `h8`, `keep`, `swap`, `single`, `double`, `choose-n:3`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Action::Place(p) => f.write_str(&point_name(*p)),
            Action::Keep => f.write_str("keep"),
            Action::Swap => f.write_str("swap"),
            Action::Single => f.write_str("single"),
            Action::Double => f.write_str("double"),
            Action::ChooseN(n) => write!(f, "choose-n:{n}"),
        }
    }
}

impl Action {
    /// Reads an action as its [`fmt::Display`] writes it: a point (`h8`, see
    /// [`crate::notation::parse_point`]) on a board of side `size`, `keep`, `swap`, `single`,
    /// `double` or `choose-n:N`. Errors name the token and why it was rejected.
    pub fn parse(token: &str, size: usize) -> Result<Action, crate::notation::NotationError> {
        Ok(match token {
            "keep" => Action::Keep,
            "swap" => Action::Swap,
            "single" => Action::Single,
            "double" => Action::Double,
            t => match t.strip_prefix("choose-n:") {
                Some(n) => Action::ChooseN(n.parse().map_err(|_| crate::notation::NotationError::Malformed {
                    token: t.to_string(),
                    reason: "the number of offers must be a number from 1 up (e.g. `choose-n:3`)".to_string(),
                })?),
                None => Action::Place(crate::notation::parse_point(t, size)?),
            },
        })
    }
}

impl fmt::Display for Player {
    /// `first` / `second`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Player::First => "first",
            Player::Second => "second",
        })
    }
}

// ------------------------------------------------------------------------------------------
// The state machine
// ------------------------------------------------------------------------------------------

/// Where a stone may go, beyond "empty and not forbidden".
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Region {
    Any,
    /// Only the centre point.
    Centre,
    /// Within this Chebyshev distance of the centre (1: central 3x3, 2: central 5x5).
    Square(u8),
    /// Designated-any stone 2: the canonical direct / indirect white points.
    CanonicalWhite,
    /// Designated-any stone 3: points making a canonical opening with the stone-2 on the board.
    CanonicalBlack3,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Stage {
    Place(Region),
    SwapOrKeep,
    ChooseN,
    PlaceOffer,
    PickOffer,
    SingleOrDouble,
    ExchangeOrTake { doubler: Player },
    SwapKeepOrDouble,
}

/// A game in progress: board + protocol state + history + outcome.
///
/// Cloning copies the board, the decision history and a few bytes of state (offers live in a
/// fixed array), so `clone` + [`Game::apply`] is cheap enough for tree search.
#[derive(Clone, Debug)]
pub struct Game {
    board: Board,
    protocol: Protocol,
    stone_cap: Option<usize>,
    stage: Stage,
    to_decide: Player,
    black_player: Player,
    history: Vec<(Player, Action)>,
    /// Pending offers: the first `n_offers` entries.
    offers: [Point; MAX_OFFERS as usize],
    n_offers: u8,
    /// The number of offers in effect (0 until known, e.g. before ChooseN).
    offers_total: u8,
    /// Bit i set: `Symmetry(i)` maps the 4-stone position onto itself (computed at offer 1).
    offer_syms: u8,
    /// Bit k set: the swap decision offered after stone k has been made.
    swaps_decided: u16,
    /// Swap2: Second chose to place stones 4 and 5.
    doubled: bool,
    /// Lianhuan: the next stone is the second stone of a double.
    lian_second: bool,
    settled: bool,
    outcome: Option<Outcome>,
}

impl Game {
    /// A new game on a `size` x `size` board (7..=20) under `rule` and `protocol`.
    /// `stone_cap`: optional draw when this many stones are on the board (RULES.md §2).
    /// Errors: bad size ([`GameError::Size`]), protocol parameters out of range
    /// ([`GameError::InvalidProtocol`]), a cap of 0 ([`GameError::InvalidStoneCap`]).
    pub fn new(size: usize, rule: Rule, protocol: Protocol, stone_cap: Option<usize>) -> Result<Game, GameError> {
        let board = Board::new(size, rule)?;
        protocol.validate().map_err(|why| GameError::InvalidProtocol { protocol: protocol.to_string(), why })?;
        if stone_cap == Some(0) {
            return Err(GameError::InvalidStoneCap(0));
        }
        let offers_total = match &protocol {
            Protocol::Rif => 2,
            Protocol::FifthN { n } => n.unwrap_or(0),
            Protocol::Designated { offers, .. } => (*offers).max(1),
            _ => 0,
        };
        let mut g = Game {
            board,
            protocol,
            stone_cap,
            stage: Stage::Place(Region::Any),
            to_decide: Player::First,
            black_player: Player::First,
            history: Vec::with_capacity(64),
            offers: [Point::new(0, 0); MAX_OFFERS as usize],
            n_offers: 0,
            offers_total,
            offer_syms: 1,
            swaps_decided: 0,
            doubled: false,
            lian_second: false,
            settled: false,
            outcome: None,
        };
        let start = match g.protocol {
            Protocol::Designated { opening, .. } | Protocol::Soosorv { opening, .. } => Some(opening),
            Protocol::Taraguchi { opening: Some(o), .. } | Protocol::Swap2 { opening: Some(o) } => Some(Some(o)),
            _ => None,
        };
        match start {
            Some(Some(o)) => {
                let [b1, w2, b3] = o.stones(size);
                g.board.place(b1, Color::Black);
                g.board.place(w2, Color::White);
                g.board.place(b3, Color::Black);
            }
            Some(None) => g.board.place(opening::centre(size), Color::Black),
            None => {}
        }
        g.schedule();
        Ok(g)
    }

    /// An analysis position as it stands (a renju puzzle, an engine manager's `BOARD`): the
    /// stones of `moves` (move order, Black first, colours alternating) put on the board under
    /// the free protocol, the player of the next colour to decide. The stones are not replayed
    /// through the forbidden-move rules, so a black stone may sit on a point that is forbidden
    /// now (RULES.md §2 judges a forbidden move when it is played, not afterwards); a five
    /// already on the board ends the game (outcome `Five` for its colour), and under renju a
    /// Black to move with no legal point loses (`NoLegalMove`), as in play. Errors: bad size
    /// ([`GameError::Size`]), a point off the board ([`GameError::OffBoard`]) or given twice
    /// ([`GameError::Occupied`]).
    pub fn from_position(size: usize, rule: Rule, moves: &[Point]) -> Result<Game, GameError> {
        let mut g = Game::new(size, rule, Protocol::Free { centre: false }, None)?;
        for (k, &p) in moves.iter().enumerate() {
            if !g.board.contains(p) {
                return Err(GameError::OffBoard(point_name(p)));
            }
            if g.board.get(p).is_some() {
                return Err(GameError::Occupied(p));
            }
            let (who, c) =
                if k.is_multiple_of(2) { (Player::First, Color::Black) } else { (Player::Second, Color::White) };
            g.board.place(p, c);
            g.history.push((who, Action::Place(p)));
        }
        if let Some(&p) = moves.iter().find(|&&p| g.board.is_win_at(p)) {
            let c = g.board.get(p).expect("a stone of the position");
            let winner = if c == Color::Black { Player::First } else { Player::Second };
            g.outcome = Some(Outcome { winner: Some(winner), winner_color: Some(c), reason: OutcomeReason::Five });
        } else if g.board.is_full() {
            g.outcome = Some(Outcome { winner: None, winner_color: None, reason: OutcomeReason::BoardFull });
        }
        g.schedule();
        Ok(g)
    }

    /// The board (stones placed so far; pending offers are not on it).
    pub fn board(&self) -> &Board {
        &self.board
    }
    /// The protocol being played.
    pub fn protocol(&self) -> &Protocol {
        &self.protocol
    }
    /// The stone cap given to [`Game::new`].
    pub fn stone_cap(&self) -> Option<usize> {
        self.stone_cap
    }
    /// Whether `other` is a game of the same setup (board size, rule, protocol, stone cap), so
    /// that its decisions can continue or repeat this game's.
    pub fn same_setup(&self, other: &Game) -> bool {
        self.board.size() == other.board.size()
            && self.board.rule() == other.board.rule()
            && self.protocol == other.protocol
            && self.stone_cap == other.stone_cap
    }
    /// Who decides now. Meaningless once the game is over.
    pub fn to_decide(&self) -> Player {
        self.to_decide
    }
    /// What kind of decision it is. Meaningless once the game is over.
    pub fn decision(&self) -> DecisionKind {
        match self.stage {
            Stage::Place(_) => DecisionKind::PlaceStone(self.next_color()),
            Stage::SwapOrKeep => DecisionKind::SwapOrKeep,
            Stage::ChooseN => DecisionKind::ChooseN,
            Stage::PlaceOffer => DecisionKind::PlaceOffer { index: self.n_offers, total: self.offers_total },
            Stage::PickOffer => DecisionKind::PickOffer,
            Stage::SingleOrDouble => DecisionKind::SingleOrDouble,
            Stage::ExchangeOrTake { .. } => DecisionKind::ExchangeOrTake,
            Stage::SwapKeepOrDouble => DecisionKind::SwapKeepOrDouble,
        }
    }
    /// Which player currently holds Black (changes with swaps / exchanges). Under Lianhuan,
    /// before colours are settled, this is the player who placed the latest black stone
    /// (First before any); once settled it is the player who plays Black from stone 7 on.
    pub fn black_player(&self) -> Player {
        self.black_player
    }
    /// The colour a player holds now.
    pub fn color_of(&self, p: Player) -> Color {
        if p == self.black_player() {
            Color::Black
        } else {
            Color::White
        }
    }
    /// The colour of the next stone to go on the board: Black when the stone count is even.
    pub fn next_color(&self) -> Color {
        if self.board.stone_count().is_multiple_of(2) {
            Color::Black
        } else {
            Color::White
        }
    }
    /// All legal actions now (empty when the game is over). Forbidden black points are excluded.
    pub fn legal_actions(&self) -> Vec<Action> {
        let mut v = Vec::new();
        self.legal_actions_into(&mut v);
        v
    }
    /// [`Game::legal_actions`] into a caller's buffer (cleared first), without allocating when
    /// it is large enough. Order: points by increasing index (`y * size + x`), then protocol
    /// actions in the order Keep, Swap / Keep, Swap, Double / Single, Double / ChooseN in
    /// increasing N (1..=MAX_OFFERS for fifth-n, 1..=N for Soosõrv-N, 1 and N for Taraguchi-N).
    pub fn legal_actions_into(&self, out: &mut Vec<Action>) {
        out.clear();
        if self.outcome.is_some() {
            return;
        }
        let size = self.board.size();
        match self.stage {
            Stage::Place(Region::Any) => {
                let mask = self.board.legal_mask(self.next_color());
                out.extend(mask.iter().map(|i| Action::Place(Point::from_index(i, size))));
            }
            Stage::Place(region) => {
                let c = self.next_color();
                for i in 0..size * size {
                    let p = Point::from_index(i, size);
                    if self.in_region(region, p) && self.stone_ok(p, c) {
                        out.push(Action::Place(p));
                    }
                }
            }
            Stage::PlaceOffer => {
                let mask = self.board.legal_mask(Color::Black);
                out.extend(
                    mask.iter()
                        .map(|i| Point::from_index(i, size))
                        .filter(|&p| self.offer_conflict(p).is_none())
                        .map(Action::Place),
                );
            }
            Stage::PickOffer => {
                let mut pts: Vec<Point> = self.pending_offers().to_vec();
                pts.sort_by_key(|p| p.index(size));
                out.extend(pts.into_iter().map(Action::Place));
            }
            Stage::SwapOrKeep | Stage::ExchangeOrTake { .. } => out.extend([Action::Keep, Action::Swap]),
            Stage::SingleOrDouble => out.extend([Action::Single, Action::Double]),
            Stage::ChooseN => out.extend(self.choose_n_options().map(Action::ChooseN)),
            Stage::SwapKeepOrDouble => out.extend([Action::Keep, Action::Swap, Action::Double]),
        }
    }
    /// Whether `a` is legal now (a forbidden black point is not, although [`Game::apply`]
    /// accepts it as a losing move).
    pub fn is_legal(&self, a: Action) -> bool {
        self.check(a).is_ok() && !self.is_forbidden_stone(a)
    }
    /// Apply a decision. A forbidden black stone ends the game as White's win
    /// ([`OutcomeReason::ForbiddenMove`], RULES.md §2); an occupied point or an action of the
    /// wrong kind is an error and changes nothing.
    pub fn apply(&mut self, a: Action) -> Result<(), GameError> {
        self.check(a)?;
        let who = self.to_decide;
        self.history.push((who, a));
        match (self.stage, a) {
            (Stage::Place(_), Action::Place(p)) => {
                self.put_stone(p, who);
                if self.outcome.is_none() && matches!(self.protocol, Protocol::Lianhuan) && !self.settled {
                    self.lianhuan_after_stone(who);
                    return Ok(());
                }
            }
            (Stage::PlaceOffer, Action::Place(p)) => {
                if self.n_offers == 0 {
                    self.offer_syms = self.stabiliser();
                }
                self.offers[self.n_offers as usize] = p;
                self.n_offers += 1;
            }
            (Stage::PickOffer, Action::Place(p)) => {
                self.n_offers = 0;
                let black = self.black_player;
                self.put_stone(p, black);
            }
            (Stage::SwapOrKeep | Stage::SwapKeepOrDouble, _) => {
                self.swaps_decided |= 1 << self.board.stone_count();
                match a {
                    Action::Swap => self.black_player = self.black_player.other(),
                    Action::Double => self.doubled = true,
                    _ => {}
                }
            }
            (Stage::ChooseN, Action::ChooseN(n)) => {
                self.offers_total = n;
            }
            (Stage::SingleOrDouble, _) => {
                if a == Action::Single {
                    self.set_place(who.other());
                } else {
                    self.lian_second = true;
                    self.set_place(who);
                }
                return Ok(());
            }
            (Stage::ExchangeOrTake { doubler }, _) => {
                let placer = if a == Action::Keep { who } else { doubler };
                if self.board.stone_count() >= 6 {
                    // After a 5+6 double: whoever places stone 7 is Black from now on.
                    self.black_player = placer;
                    self.settled = true;
                    self.schedule();
                } else {
                    self.set_place(placer);
                }
                return Ok(());
            }
            _ => unreachable!("check() accepted an action of the wrong kind"),
        }
        if self.outcome.is_none() {
            self.schedule();
        } else {
            // Over: leave a consistent normal-play stage behind.
            self.stage = Stage::Place(Region::Any);
        }
        Ok(())
    }
    /// The outcome, once the game is over.
    pub fn outcome(&self) -> Option<Outcome> {
        self.outcome
    }
    /// Whether the game is over.
    pub fn is_over(&self) -> bool {
        self.outcome.is_some()
    }
    /// Every decision so far, with who made it. (Designated opening stones put on the board by
    /// [`Game::new`] are not decisions and are not listed; see [`Board::stones`].)
    pub fn history(&self) -> &[(Player, Action)] {
        &self.history
    }
    /// Fifth-move offers placed and not yet resolved, in placement order.
    pub fn pending_offers(&self) -> &[Point] {
        &self.offers[..self.n_offers as usize]
    }
    /// The number of fifth-move offers in effect (2 for RIF, N for fifth-n and Soosõrv-N once
    /// declared, 1 or N for Taraguchi-N once Black has chosen; 0 before N is declared or for
    /// protocols without offers; 1 means a plain stone 5).
    pub fn offers_total(&self) -> u8 {
        self.offers_total
    }
    /// The canonical opening formed by the first three stones, once they are on the board
    /// (`None` if they are not one of the 26, e.g. off-centre under `free`).
    pub fn opening(&self) -> Option<Opening> {
        let s = self.board.stones();
        if s.len() < 3 || s[0].1 != Color::Black || s[1].1 != Color::White || s[2].1 != Color::Black {
            return None;
        }
        Opening::recognise(s[0].0, s[1].0, s[2].0, self.board.size()).map(|(o, _)| o)
    }
    /// Whether colours are settled (no swap / exchange / pick can follow any more).
    pub fn colours_settled(&self) -> bool {
        self.settled
    }

    // --------------------------------------------------------------------------------------

    fn set_place(&mut self, who: Player) {
        self.to_decide = who;
        self.stage = Stage::Place(Region::Any);
        self.check_black_can_move();
    }

    /// Lianhuan, after `who` placed a stone before colours are settled.
    fn lianhuan_after_stone(&mut self, who: Player) {
        let k = self.board.stone_count();
        if self.lian_second {
            self.lian_second = false;
            self.to_decide = who.other();
            self.stage = Stage::ExchangeOrTake { doubler: who };
        } else if k <= 5 {
            self.to_decide = who;
            self.stage = Stage::SingleOrDouble;
        } else {
            // Stone 6 as a single (or the stone after a 4+5 double): the opponent plays 7, Black.
            self.black_player = who.other();
            self.settled = true;
            self.schedule();
        }
    }

    /// Set `to_decide` and `stage` for every protocol state that is a function of the stone
    /// count and flags (all but Lianhuan's opening, handled in `apply`).
    fn schedule(&mut self) {
        let k = self.board.stone_count();
        let white = self.black_player.other();
        let rif_like = |regions: [Region; 3]| -> Option<(Player, Stage)> {
            if k < 3 {
                Some(([Player::First, Player::Second, Player::First][k], Stage::Place(regions[k])))
            } else {
                None
            }
        };
        let next: Option<(Player, Stage)> = match self.protocol {
            Protocol::Free { centre } => {
                self.settled = true;
                (k == 0).then_some((Player::First, Stage::Place(if centre { Region::Centre } else { Region::Any })))
            }
            Protocol::Swap1 => {
                self.settled = self.swap_decided(1);
                match k {
                    0 => Some((Player::First, Stage::Place(Region::Any))),
                    1 if !self.swap_decided(1) => Some((white, Stage::SwapOrKeep)),
                    _ => None,
                }
            }
            Protocol::BlackSets => {
                self.settled = self.swap_decided(3);
                match k {
                    0..=2 => Some((Player::First, Stage::Place(Region::Any))),
                    3 if !self.swap_decided(3) => Some((Player::Second, Stage::SwapOrKeep)),
                    _ => None,
                }
            }
            Protocol::Swap2 { .. } => {
                self.settled = self.swap_decided(3) && (!self.doubled || self.swap_decided(5));
                match k {
                    0..=2 => Some((Player::First, Stage::Place(Region::Any))),
                    3 if !self.swap_decided(3) => Some((Player::Second, Stage::SwapKeepOrDouble)),
                    3 | 4 if self.doubled => Some((Player::Second, Stage::Place(Region::Any))),
                    5 if self.doubled && !self.swap_decided(5) => Some((Player::First, Stage::SwapOrKeep)),
                    _ => None,
                }
            }
            Protocol::Soosorv { .. } => {
                let total = self.offers_total;
                self.settled = k >= 5 || (self.swap_decided(4) && total < 2);
                match k {
                    1 => Some((Player::First, Stage::Place(Region::CanonicalWhite))),
                    2 => Some((Player::First, Stage::Place(Region::CanonicalBlack3))),
                    3 if !self.swap_decided(3) => Some((white, Stage::SwapOrKeep)),
                    4 if total == 0 => Some((white, Stage::ChooseN)),
                    4 if !self.swap_decided(4) => Some((self.black_player, Stage::SwapOrKeep)),
                    4 if total >= 2 => self.offer_step(white),
                    _ => None,
                }
            }
            Protocol::Taraguchi { .. } => {
                let total = self.offers_total;
                let holder_of_next = if k.is_multiple_of(2) { self.black_player } else { white };
                self.settled = k >= 6 || (k == 5 && (total >= 2 || self.swap_decided(5)));
                match k {
                    0 => Some((Player::First, Stage::Place(Region::Centre))),
                    1..=3 if !self.swap_decided(k) => Some((holder_of_next, Stage::SwapOrKeep)),
                    1..=3 => Some((holder_of_next, Stage::Place(Region::Square(k as u8)))),
                    4 if total == 0 => Some((self.black_player, Stage::ChooseN)),
                    4 if total == 1 && !self.swap_decided(4) => Some((self.black_player, Stage::SwapOrKeep)),
                    4 if total == 1 => Some((self.black_player, Stage::Place(Region::Square(4)))),
                    4 => self.offer_step(white),
                    5 if total == 1 && !self.swap_decided(5) => Some((white, Stage::SwapOrKeep)),
                    _ => None,
                }
            }
            Protocol::Lianhuan => {
                // Only reached at the start and once colours are settled.
                (k == 0).then_some((Player::First, Stage::Place(Region::Any)))
            }
            Protocol::Rif | Protocol::FifthN { .. } | Protocol::Designated { .. } => {
                let (swap, choose_n) = match self.protocol {
                    Protocol::Designated { swap, .. } => (swap, false),
                    Protocol::FifthN { n } => (true, n.is_none()),
                    _ => (true, false),
                };
                let first3 = match self.protocol {
                    Protocol::Designated { .. } => match k {
                        1 => Some((Player::First, Stage::Place(Region::CanonicalWhite))),
                        2 => Some((Player::First, Stage::Place(Region::CanonicalBlack3))),
                        _ => None,
                    },
                    _ => rif_like([Region::Centre, Region::Square(1), Region::Square(2)]),
                };
                let total_known = self.offers_total > 0;
                self.settled =
                    k >= 5 || (k >= 3 && total_known && self.offers_total < 2 && (!swap || self.swap_decided(3)));
                if k < 3 {
                    first3
                } else if k == 3 && choose_n && !total_known {
                    Some((Player::First, Stage::ChooseN))
                } else if k == 3 && swap && !self.swap_decided(3) {
                    Some((white, Stage::SwapOrKeep))
                } else if k == 4 && self.offers_total >= 2 {
                    self.offer_step(white)
                } else {
                    None
                }
            }
        };
        if self.outcome.is_some() {
            return;
        }
        match next {
            Some((who, stage)) => {
                self.to_decide = who;
                self.stage = stage;
            }
            None => {
                self.to_decide = if self.next_color() == Color::Black { self.black_player } else { white };
                self.stage = Stage::Place(Region::Any);
            }
        }
        self.check_black_can_move();
    }

    /// Whether the swap decision offered after stone `k` has been made.
    fn swap_decided(&self, k: usize) -> bool {
        self.swaps_decided >> k & 1 == 1
    }

    /// The offer phase with 4 stones on the board and `offers_total >= 2`: Black places the next
    /// offer, or White picks once all are placed (or no further point can take one). When Black
    /// cannot place even one offer, Black has no legal fifth stone and the game ends.
    fn offer_step(&mut self, white: Player) -> Option<(Player, Stage)> {
        if self.n_offers < self.offers_total && self.any_offer_point() {
            Some((self.black_player, Stage::PlaceOffer))
        } else if self.n_offers == 0 {
            self.outcome = Some(Outcome {
                winner: Some(white),
                winner_color: Some(Color::White),
                reason: OutcomeReason::NoLegalMove,
            });
            None
        } else {
            Some((white, Stage::PickOffer))
        }
    }

    /// The counts a `ChooseN` decision may declare, in increasing order.
    fn choose_n_options(&self) -> impl Iterator<Item = u8> {
        let (max, only_ends) = match self.protocol {
            Protocol::Soosorv { n, .. } => (n, false),
            Protocol::Taraguchi { n, .. } => (n, true),
            _ => (MAX_OFFERS, false),
        };
        (1..=max).filter(move |&k| !only_ends || k == 1 || k == max)
    }

    /// Under renju with Black to place a stone, end the game if no allowed point is legal.
    fn check_black_can_move(&mut self) {
        let Stage::Place(region) = self.stage else { return };
        if self.outcome.is_some() || self.board.rule() != Rule::Renju || self.next_color() != Color::Black {
            return;
        }
        let size = self.board.size();
        let any = (0..size * size)
            .map(|i| Point::from_index(i, size))
            .any(|p| self.in_region(region, p) && self.stone_ok(p, Color::Black));
        if !any {
            self.outcome = Some(Outcome {
                winner: Some(self.to_decide.other()),
                winner_color: Some(Color::White),
                reason: OutcomeReason::NoLegalMove,
            });
        }
    }

    /// Place the next stone on `p` for `placer` and settle the outcome (five, forbidden, full, cap).
    fn put_stone(&mut self, p: Point, placer: Player) {
        let c = self.next_color();
        let renju_black = self.board.rule() == Rule::Renju && c == Color::Black;
        let verdict = if renju_black { self.board.classify(p, c) } else { Verdict::Legal };
        self.board.place(p, c);
        if c == Color::Black && !self.settled && matches!(self.protocol, Protocol::Lianhuan) {
            self.black_player = placer;
        }
        let won = match verdict {
            Verdict::Five => true,
            Verdict::Forbidden(_) => {
                self.outcome = Some(Outcome {
                    winner: Some(placer.other()),
                    winner_color: Some(Color::White),
                    reason: OutcomeReason::ForbiddenMove,
                });
                return;
            }
            _ => !renju_black && self.board.is_win_at(p),
        };
        if won {
            self.outcome = Some(Outcome { winner: Some(placer), winner_color: Some(c), reason: OutcomeReason::Five });
        } else if self.board.is_full() {
            self.outcome = Some(Outcome { winner: None, winner_color: None, reason: OutcomeReason::BoardFull });
        } else if self.stone_cap.is_some_and(|cap| self.board.stone_count() >= cap) {
            self.outcome = Some(Outcome { winner: None, winner_color: None, reason: OutcomeReason::StoneCap });
        }
    }

    fn in_region(&self, region: Region, p: Point) -> bool {
        let size = self.board.size();
        let c = opening::centre(size);
        match region {
            Region::Any => true,
            Region::Centre => p == c,
            Region::Square(r) => p.x.abs_diff(c.x) <= r && p.y.abs_diff(c.y) <= r,
            Region::CanonicalWhite => Opening::canonical_white_points(size).contains(&p),
            Region::CanonicalBlack3 => match self.board.stones().get(1) {
                Some(&(w, Color::White)) => Opening::from_canonical(w, p, size).is_some(),
                _ => false,
            },
        }
    }

    /// Empty, and not forbidden when `c` is Black under renju.
    fn stone_ok(&self, p: Point, c: Color) -> bool {
        match self.board.get(p) {
            Some(_) => false,
            None => {
                c == Color::White
                    || self.board.rule() != Rule::Renju
                    || !matches!(self.board.classify(p, c), Verdict::Forbidden(_))
            }
        }
    }

    /// Whether `a` would be a black stone on a forbidden point (legal to `apply`, but losing).
    fn is_forbidden_stone(&self, a: Action) -> bool {
        match (self.stage, a) {
            (Stage::Place(_), Action::Place(p)) => {
                self.board.rule() == Rule::Renju
                    && self.next_color() == Color::Black
                    && matches!(self.board.classify(p, Color::Black), Verdict::Forbidden(_))
            }
            _ => false,
        }
    }

    /// Bitmask of the symmetries mapping the current position onto itself (identity included).
    fn stabiliser(&self) -> u8 {
        let size = self.board.size();
        let mut mask = 0u8;
        for s in Symmetry::ALL {
            if self.board.stones().iter().all(|&(p, c)| self.board.get(s.apply(p, size)) == Some(c)) {
                mask |= 1 << s.0;
            }
        }
        mask
    }

    /// The pending offer that `p` equals or is symmetric to (under the position's symmetries).
    fn offer_conflict(&self, p: Point) -> Option<Point> {
        let size = self.board.size();
        let syms = if self.n_offers == 0 { 1 } else { self.offer_syms };
        self.pending_offers()
            .iter()
            .copied()
            .find(|&o| Symmetry::ALL.iter().any(|s| syms >> s.0 & 1 == 1 && s.apply(p, size) == o))
    }

    /// Whether some point could take the next offer.
    fn any_offer_point(&self) -> bool {
        let size = self.board.size();
        (0..size * size)
            .map(|i| Point::from_index(i, size))
            .any(|p| self.offer_conflict(p).is_none() && self.stone_ok(p, Color::Black))
    }

    /// What the current decision expects, for error messages.
    fn expected(&self) -> String {
        let size = self.board.size();
        let c = point_name(opening::centre(size));
        let col = match self.next_color() {
            Color::Black => "black",
            Color::White => "white",
        };
        match self.stage {
            Stage::Place(Region::Any) => format!("a {col} stone on an empty point"),
            Stage::Place(Region::Centre) => format!("a {col} stone on the centre {c}"),
            Stage::Place(Region::Square(r)) => {
                format!("a {col} stone in the central {0}x{0} around {c}", 2 * r + 1)
            }
            Stage::Place(Region::CanonicalWhite) => {
                let [d, i] = Opening::canonical_white_points(size);
                format!("white stone 2 on {} (direct) or {} (indirect)", point_name(d), point_name(i))
            }
            Stage::Place(Region::CanonicalBlack3) => {
                "black stone 3 on a point making one of the 26 openings in canonical form".to_string()
            }
            Stage::PlaceOffer => format!(
                "fifth-move offer {} of {}: an empty, non-forbidden point not symmetric to a pending offer",
                self.n_offers + 1,
                self.offers_total
            ),
            Stage::PickOffer => {
                let names: Vec<String> = self.pending_offers().iter().map(|&p| point_name(p)).collect();
                format!("picking one of the offers {}", names.join(" "))
            }
            Stage::SwapOrKeep => "keep or swap".to_string(),
            Stage::ExchangeOrTake { .. } => "keep (take the next stone) or swap (exchange)".to_string(),
            Stage::SingleOrDouble => "single or double".to_string(),
            Stage::ChooseN => match self.protocol {
                Protocol::Taraguchi { n, .. } => {
                    format!("choose-n:1 (one stone 5 in the central 9x9) or choose-n:{n} ({n} offers)")
                }
                _ => format!("choose-n:1..={}", self.choose_n_options().last().unwrap_or(MAX_OFFERS)),
            },
            Stage::SwapKeepOrDouble => {
                "swap (take Black), keep (stay White) or double (place stones 4 and 5)".to_string()
            }
        }
    }

    /// Validate `a` against the current decision (a forbidden black stone passes: it loses).
    fn check(&self, a: Action) -> Result<(), GameError> {
        if self.outcome.is_some() {
            return Err(GameError::GameOver);
        }
        let illegal = || GameError::Illegal { action: a.to_string(), expected: self.expected() };
        let illegal_why =
            |why: String| GameError::Illegal { action: a.to_string(), expected: format!("{}; {why}", self.expected()) };
        match (self.stage, a) {
            (Stage::Place(_) | Stage::PlaceOffer | Stage::PickOffer, Action::Place(p)) => {
                if !self.board.contains(p) {
                    return Err(GameError::OffBoard(point_name(p)));
                }
                if self.board.get(p).is_some() {
                    return Err(GameError::Occupied(p));
                }
                match self.stage {
                    Stage::Place(region) => {
                        if !self.in_region(region, p) {
                            return Err(illegal());
                        }
                    }
                    Stage::PlaceOffer => {
                        if let Some(o) = self.offer_conflict(p) {
                            return Err(if o == p {
                                illegal_why(format!("{} is already an offer", point_name(p)))
                            } else {
                                illegal_why(format!("{} is symmetric to the offer {}", point_name(p), point_name(o)))
                            });
                        }
                        if !self.stone_ok(p, Color::Black) {
                            return Err(illegal_why(format!("{} is forbidden for Black", point_name(p))));
                        }
                    }
                    _ => {
                        if !self.pending_offers().contains(&p) {
                            return Err(illegal());
                        }
                    }
                }
                Ok(())
            }
            (Stage::SwapOrKeep | Stage::ExchangeOrTake { .. }, Action::Keep | Action::Swap) => Ok(()),
            (Stage::SingleOrDouble, Action::Single | Action::Double) => Ok(()),
            (Stage::ChooseN, Action::ChooseN(n)) if self.choose_n_options().any(|k| k == n) => Ok(()),
            (Stage::SwapKeepOrDouble, Action::Keep | Action::Swap | Action::Double) => Ok(()),
            _ => Err(illegal()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn point_names() {
        assert_eq!(point_name(Point::new(7, 7)), "h8");
        assert_eq!(point_name(Point::new(0, 14)), "a15");
    }

    #[test]
    fn actions_read_back_as_displayed() {
        let all = [
            Action::Place(Point::new(7, 8)),
            Action::Keep,
            Action::Swap,
            Action::Single,
            Action::Double,
            Action::ChooseN(3),
        ];
        let shown: Vec<String> = all.iter().map(|a| a.to_string()).collect();
        assert_eq!(shown, ["h9", "keep", "swap", "single", "double", "choose-n:3"]);
        for (a, s) in all.iter().zip(&shown) {
            assert_eq!(Action::parse(s, 15).unwrap(), *a, "{s}");
        }
        let err = |t: &str| Action::parse(t, 15).unwrap_err().to_string();
        assert_eq!(
            err("choose-n:x"),
            "bad move `choose-n:x`: the number of offers must be a number from 1 up (e.g. `choose-n:3`)"
        );
        assert!(err("p1").contains("off the 15x15 board"), "{}", err("p1"));
        assert!(err("swapp").starts_with("bad move `swapp`"), "{}", err("swapp"));
    }
}
