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

use crate::board::{Board, Color, Point, Rule};
use crate::opening::Opening;
use serde::{Deserialize, Serialize};

/// A player, independent of colour. `First` places stone 1 (or makes the first decision).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Player {
    First,
    Second,
}

impl Player {
    /// The other player.
    pub fn other(self) -> Player {
        match self {
            Player::First => Player::Second,
            Player::Second => Player::First,
        }
    }
}

/// Largest N accepted for the "fifth move N offers" protocol (RULES.md §5 item 4).
pub const MAX_OFFERS: u8 = 10;

/// Opening protocols of RULES.md §5 items 1–7.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Protocol {
    /// §5.1: stone 1 on the centre when `centre`, else anywhere; then alternation.
    Free { centre: bool },
    /// §5.2: after Black's first stone (anywhere), the player with White may swap colours.
    Swap1,
    /// §5.3: RIF: centre / 3x3 / 5x5, swap after stone 3, two non-symmetric fifth-move offers.
    Rif,
    /// §5.4: as RIF with N offers; `n: None` means tentative Black chooses N (1..=MAX_OFFERS)
    /// after stone 3, before the swap decision.
    FifthN { n: Option<u8> },
    /// §5.5: the first three stones are `opening` (None: any of the 26, chosen by the first
    /// decision of the First player as a stone-3 placement restricted to canonical openings);
    /// then optionally the swap and `offers` fifth-move offers (0 = plain stone 5).
    Designated { opening: Option<Opening>, swap: bool, offers: u8 },
    /// §5.6: First places three stones (black, white, black); Second then chooses a colour.
    BlackSets,
    /// §5.7: Lianhuan consecutive-swap rule (seed 001).
    Lianhuan,
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
    /// Lianhuan: place the next stone (of the other colour) as well.
    Double,
    /// Fifth-move N offers: declare N (1..=MAX_OFFERS).
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
}

/// Why a game ended.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
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

/// Illegal input to [`Game::apply`].
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum GameError {
    #[error("the game is over")]
    GameOver,
    #[error("point {0} is occupied")]
    Occupied(String),
    #[error("point {0} is off the board")]
    OffBoard(String),
    #[error("action {action} is not legal here (expected {expected})")]
    Illegal { action: String, expected: String },
}

/// A game in progress: board + protocol state + history + outcome. (STUB: replaced by the
/// protocol work; the method signatures are the contract.)
#[derive(Clone, Debug)]
pub struct Game {
    board: Board,
}

impl Game {
    /// A new game. `stone_cap`: optional draw when this many stones are on the board (RULES.md §2).
    pub fn new(_size: usize, _rule: Rule, _protocol: Protocol, _stone_cap: Option<usize>) -> Result<Game, GameError> { todo!() }
    /// The board (stones placed so far; pending offers are not on it).
    pub fn board(&self) -> &Board { &self.board }
    /// The protocol being played.
    pub fn protocol(&self) -> &Protocol { todo!() }
    /// Who decides now.
    pub fn to_decide(&self) -> Player { todo!() }
    /// What kind of decision it is.
    pub fn decision(&self) -> DecisionKind { todo!() }
    /// Which player currently holds Black (changes with swaps / exchanges).
    pub fn black_player(&self) -> Player { todo!() }
    /// The colour a player holds now.
    pub fn color_of(&self, p: Player) -> Color { if p == self.black_player() { Color::Black } else { Color::White } }
    /// All legal actions now (empty when the game is over). Forbidden black points are excluded.
    pub fn legal_actions(&self) -> Vec<Action> { todo!() }
    /// Whether `a` is legal now.
    pub fn is_legal(&self, _a: Action) -> bool { todo!() }
    /// Apply a decision. A forbidden black stone ends the game as White's win
    /// ([`OutcomeReason::ForbiddenMove`], RULES.md §2); an occupied point or an action of the
    /// wrong kind is an error and changes nothing.
    pub fn apply(&mut self, _a: Action) -> Result<(), GameError> { todo!() }
    /// The outcome, once the game is over.
    pub fn outcome(&self) -> Option<Outcome> { todo!() }
    /// Every decision so far, with who made it.
    pub fn history(&self) -> &[(Player, Action)] { todo!() }
    /// Fifth-move offers placed and not yet resolved.
    pub fn pending_offers(&self) -> &[Point] { todo!() }
    /// The canonical opening formed by the first three stones, once they are on the board.
    pub fn opening(&self) -> Option<Opening> { todo!() }
    /// Whether colours are settled (no swap / exchange / pick can follow any more).
    pub fn colours_settled(&self) -> bool { todo!() }
}
