//! The Gomocup brain: the Piskvork protocol on a line stream (P. Laštovička, M. Petříček,
//! "Gomoku AI protocol", <https://plastovicka.github.io/protocl2en.htm>; SWAP2BOARD from the
//! Gomocup 2020 tournament rules; YXBOARD / YXSHOWFORBID from Yixin's extensions).
//!
//! [`Brain`] is a state machine over commands; it thinks through any [`Agent`] (the CLI gives it
//! the search agent [`crate::agent::MctsAgent`]) and never sends a forbidden black move: the
//! agent's answer is checked against the rules crate's legal actions. The wire format
//! (coordinates, the rule bitmask) is [`crate::wire`]'s.
//!
//! Commands (case-insensitive) and answers:
//! - `START n` → `OK`, or `ERROR` for sizes outside `renju_rules::board::SIZES` (7..=20) or the
//!   agent's sizes.
//!   `RECTSTART w,h` → as `START w` when `w == h`, else `ERROR`.
//! - `RESTART` → `OK` (empty board). `BEGIN` → our move on the empty board.
//! - `TURN x,y` → records the opponent's stone, answers our move.
//! - `BOARD` / lines `x,y,f` / `DONE` → our move. `f` = 1 our stone, 2 the opponent's. Stones are
//!   taken in the order given per side and interleaved Black, White, Black, … (the side to move,
//!   field 1, is Black when both have as many stones); under renju managers send move order,
//!   which this reproduces. `YXBOARD` … `DONE`: the same without an answer.
//! - `INFO key value`: `timeout_turn`, `timeout_match`, `time_left` (ms), `max_memory` (bytes),
//!   `rule` (bitmask: 4 renju, else 1 exactly five (standard), else freestyle). No answer.
//! - `TAKEBACK x,y` → `OK` when `x,y` is the last stone (removed), else `ERROR`.
//! - `SWAP2BOARD` / stones / `DONE`: 0 stones → three stones `x,y x,y x,y` (black, white, black);
//!   3 or 5 stones → `SWAP` (we take Black) or our White stone `x,y` (we keep White).
//! - `YXSHOWFORBID` → `FORBID ` + `xxyy` (two digits each) per forbidden point + `.`.
//! - `ABOUT` → `name="renju-zero", ...`. `END` → stop.
//! - Unknown commands → `UNKNOWN ...`; malformed ones → `ERROR <what was wrong>`; the brain keeps
//!   going either way.
//!
//! Coordinates are 0-based `x` (column) and `y` (row from the **top**): protocol `y` is
//! `size - 1 - Point::y`.
//!
//! Time per move: `timeout_turn` (0 = as fast as possible), and with a match limit at most
//! `time_left / max(10, empty points / 4)`; 85% of that minus 30 ms is the search budget. With no
//! time information, [`BrainOptions::default_turn`]. `max_memory` caps the playouts so the tree
//! stays under half of it (40 bytes per child node: the search's `NODE_BYTES` = 32 plus a quarter
//! for the node arena's spare capacity).
//!
//! Tactics before the search (RULES.md §2–4 through `renju_rules::vcf`, budget
//! [`BrainOptions::vcf_nodes`] and at most a quarter of the move's time): a VCF of the side to
//! move is played at once, announced as `MESSAGE VCF x,y x,y ...` (the whole line, protocol
//! coordinates); when the opponent has a VCF and its refutations are proved, the move is one of
//! them (the agent's if it picked one, else the refutation the agent values most), announced
//! as `MESSAGE VCF threat x,y ...: defending at x,y`.

use std::io::{BufRead, Write};
use std::time::Duration;

use anyhow::{bail, ensure, Context, Result};
use renju_rules::board::{MAX_SIZE, MIN_SIZE, SIZES};
use renju_rules::vcf::{refutations, vcf, Defence, Limits, Vcf};
use renju_rules::{Action, Color, DecisionKind, Game, Opening, Point, Protocol, Rule};

use crate::agent::{Agent, Choice, SearchLimit};
use crate::wire::{format_point, from_wire, parse_xy, rule_from_bits, to_wire, RULE_BIT_CARO};

/// Makes the brain's agent for a board size (errors for sizes it cannot play, e.g. a 15x15
/// model).
pub type AgentFactory = Box<dyn FnMut(usize) -> Result<Box<dyn Agent>>>;

/// Brain settings.
#[derive(Clone, Debug, PartialEq)]
pub struct BrainOptions {
    /// Per-move time when the manager sent no time information. Default 5 s.
    pub default_turn: Duration,
    /// Playouts at most per move (`None`: only time and memory limit the search).
    pub max_playouts: Option<u64>,
    /// Node budget of the VCF check before each move (module docs); 0 turns it off.
    /// Default 100,000.
    pub vcf_nodes: u64,
    /// The `ABOUT` answer.
    pub about: String,
}

impl Default for BrainOptions {
    fn default() -> Self {
        BrainOptions {
            default_turn: Duration::from_secs(5),
            max_playouts: None,
            vcf_nodes: 100_000,
            about: format!(
                "name=\"renju-zero\", version=\"{}\", author=\"renju-zero project\", country=\"-\"",
                env!("CARGO_PKG_VERSION")
            ),
        }
    }
}

/// The protocol state machine (module docs).
pub struct Brain {
    factory: AgentFactory,
    agent: Option<(usize, Box<dyn Agent>)>,
    opts: BrainOptions,
    size: Option<usize>,
    rule: Rule,
    /// Stones in move order (Black first, alternating).
    moves: Vec<Point>,
    timeout_turn: Option<u64>,
    timeout_match: Option<u64>,
    time_left: Option<u64>,
    max_memory: Option<u64>,
    ended: bool,
    /// Time reserved per move for what the search budget does not cover (building the position,
    /// answering, a last slow batch): the largest recent overshoot of a move's answer past its
    /// search budget, decaying by a quarter per move.
    reserve: Duration,
}

/// Error answer: `ERROR <message>` on one line.
fn error(msg: impl std::fmt::Display) -> Vec<String> {
    vec![format!("ERROR {}", msg.to_string().replace(['\n', '\r'], " "))]
}

impl Brain {
    /// A brain making agents with `factory`. The rule is freestyle until `INFO rule` says
    /// otherwise (the protocol's default).
    pub fn new(factory: AgentFactory, opts: BrainOptions) -> Brain {
        Brain {
            factory,
            agent: None,
            opts,
            size: None,
            rule: Rule::Freestyle,
            moves: Vec::new(),
            timeout_turn: None,
            timeout_match: None,
            time_left: None,
            max_memory: None,
            ended: false,
            reserve: Duration::ZERO,
        }
    }

    /// The rule in effect.
    pub fn rule(&self) -> Rule {
        self.rule
    }

    /// Whether `END` was received.
    pub fn ended(&self) -> bool {
        self.ended
    }

    /// The board side after `START` (`None` before).
    pub fn size(&self) -> Option<usize> {
        self.size
    }

    /// The stones of the current position in move order (Black first, alternating).
    pub fn moves(&self) -> &[Point] {
        &self.moves
    }

    /// Handles one command line; multi-line commands (BOARD, YXBOARD, SWAP2BOARD) read their
    /// lines from `more` up to `DONE`. Returns the answer lines (possibly none).
    pub fn handle(&mut self, line: &str, more: &mut dyn Iterator<Item = String>) -> Vec<String> {
        let line = line.trim();
        if line.is_empty() {
            return Vec::new();
        }
        let (cmd, arg) = match line.split_once(char::is_whitespace) {
            Some((c, a)) => (c.to_ascii_uppercase(), a.trim()),
            None => (line.to_ascii_uppercase(), ""),
        };
        match cmd.as_str() {
            "START" => match arg.parse::<usize>() {
                Ok(n) => self.start(n),
                Err(_) => error(format!("START needs a board size, got '{arg}'")),
            },
            "RECTSTART" => {
                let parsed = arg
                    .split_once(',')
                    .and_then(|(w, h)| Some((w.trim().parse::<usize>().ok()?, h.trim().parse::<usize>().ok()?)));
                match parsed {
                    Some((w, h)) if w == h => self.start(w),
                    Some((w, h)) => {
                        error(format!("rectangular boards are not supported ({w}x{h}); use a square board"))
                    }
                    None => error(format!("RECTSTART needs width,height, got '{arg}'")),
                }
            }
            "RESTART" => {
                if self.size.is_none() {
                    return error("RESTART before START");
                }
                self.moves.clear();
                vec!["OK".into()]
            }
            "BEGIN" => {
                if let Err(e) = self.need_board() {
                    return error(e);
                }
                if !self.moves.is_empty() {
                    return error("BEGIN on a board that already has stones (send RESTART first)");
                }
                self.think()
            }
            "TURN" => match self.turn(arg) {
                Ok(()) => self.think(),
                Err(e) => error(format!("{e:#}")),
            },
            "BOARD" | "YXBOARD" => {
                let lines = read_until_done(more);
                match self.board(&lines) {
                    Ok(()) if cmd == "BOARD" => self.think(),
                    Ok(()) => Vec::new(),
                    Err(e) => error(format!("{cmd}: {e:#}")),
                }
            }
            "INFO" => match self.info(arg) {
                Ok(msg) => msg,
                Err(e) => error(format!("{e:#}")),
            },
            "TAKEBACK" => match self.takeback(arg) {
                Ok(()) => vec!["OK".into()],
                Err(e) => error(format!("{e:#}")),
            },
            "SWAP2BOARD" => {
                let lines = read_until_done(more);
                match self.swap2(&lines) {
                    Ok(v) => v,
                    Err(e) => error(format!("SWAP2BOARD: {e:#}")),
                }
            }
            "YXSHOWFORBID" => match self.show_forbid() {
                Ok(s) => vec![s],
                Err(e) => error(format!("{e:#}")),
            },
            "ABOUT" => vec![self.opts.about.clone()],
            "END" => {
                self.ended = true;
                Vec::new()
            }
            _ => vec![format!("UNKNOWN command '{cmd}'")],
        }
    }

    fn start(&mut self, n: usize) -> Vec<String> {
        if !SIZES.contains(&n) {
            return error(format!("unsupported size {n} (this brain plays {MIN_SIZE}..={MAX_SIZE})"));
        }
        if self.agent.as_ref().map(|c| c.0) != Some(n) {
            match (self.factory)(n).and_then(|a| warm(a, n, self.rule)) {
                Ok(c) => self.agent = Some((n, c)),
                Err(e) => return error(format!("unsupported size {n}: {e:#}")),
            }
        }
        self.size = Some(n);
        self.moves.clear();
        vec!["OK".into()]
    }

    fn need_board(&self) -> Result<usize> {
        self.size.context("no board yet: send START first")
    }

    /// The position of `moves` as it stands (free opening, the brain's rule): stones are not
    /// replayed through the forbidden-move rules ([`Game::from_position`]), so puzzle and
    /// analysis positions with a black stone on a now-forbidden point are accepted.
    fn game_of(&self, moves: &[Point]) -> Result<Game> {
        let size = self.need_board()?;
        Ok(Game::from_position(size, self.rule, moves)?)
    }

    fn parse_point(&self, text: &str) -> Result<Point> {
        let size = self.need_board()?;
        let (x, y) = parse_xy(text)?;
        from_wire(x, y, size).with_context(|| format!("{x},{y} is off the {size}x{size} board"))
    }

    fn turn(&mut self, arg: &str) -> Result<()> {
        let p = self.parse_point(arg).context("TURN")?;
        let size = self.need_board()?;
        ensure!(!self.moves.contains(&p), "TURN {}: the point is occupied", format_point(p, size));
        // A stone played now is judged now: a forbidden black point loses (RULES.md §2).
        let now = self.game_of(&self.moves)?;
        if let renju_rules::Verdict::Forbidden(k) = now.board().classify(p, now.next_color()) {
            bail!("TURN {}: a forbidden point for Black ({k:?}): Black loses", format_point(p, size));
        }
        let mut moves = self.moves.clone();
        moves.push(p);
        let g = self.game_of(&moves)?;
        self.moves = moves;
        if let Some(o) = g.outcome() {
            bail!("TURN {}: the game is over ({:?}, winner {:?})", format_point(p, size), o.reason, o.winner_color);
        }
        Ok(())
    }

    fn board(&mut self, lines: &[String]) -> Result<()> {
        let size = self.need_board()?;
        let (mut own, mut opp) = (Vec::new(), Vec::new());
        for l in lines {
            let parts: Vec<&str> = l.split(',').map(str::trim).collect();
            ensure!(parts.len() == 3, "line '{l}' is not x,y,field");
            let p = self.parse_point(&format!("{},{}", parts[0], parts[1]))?;
            ensure!(!own.contains(&p) && !opp.contains(&p), "point {} is given twice", format_point(p, size));
            match parts[2] {
                "1" => own.push(p),
                "2" => opp.push(p),
                f => bail!("line '{l}': field '{f}' must be 1 (own stone) or 2 (opponent's)"),
            }
        }
        let (black, white) = if own.len() == opp.len() {
            (own, opp)
        } else if opp.len() == own.len() + 1 {
            (opp, own)
        } else {
            bail!(
                "{} own and {} opponent stones: we must be to move (equal counts, or one fewer own stone)",
                own.len(),
                opp.len()
            );
        };
        let mut moves = Vec::with_capacity(black.len() + white.len());
        for (k, &b) in black.iter().enumerate() {
            moves.push(b);
            if let Some(&w) = white.get(k) {
                moves.push(w);
            }
        }
        let g = self.game_of(&moves)?;
        ensure!(g.outcome().is_none(), "the position is already decided ({:?})", g.outcome().map(|o| o.reason));
        self.moves = moves;
        Ok(())
    }

    fn info(&mut self, arg: &str) -> Result<Vec<String>> {
        let (key, value) = arg.split_once(char::is_whitespace).map(|(k, v)| (k, v.trim())).unwrap_or((arg, ""));
        let key = key.to_ascii_lowercase();
        let num = || -> Result<u64> {
            value
                .parse::<i64>()
                .map(|v| v.max(0) as u64)
                .map_err(|_| anyhow::anyhow!("INFO {key}: '{value}' is not a number"))
        };
        match key.as_str() {
            "timeout_turn" => self.timeout_turn = Some(num()?),
            "timeout_match" => self.timeout_match = Some(num()?),
            "time_left" => self.time_left = Some(num()?),
            "max_memory" => self.max_memory = Some(num()?),
            "rule" => {
                let bits = num()?;
                self.rule = rule_from_bits(bits);
                if bits & RULE_BIT_CARO != 0 {
                    return Ok(vec![format!("MESSAGE rule bit 8 (caro) is not supported; playing {:?}", self.rule)]);
                }
            }
            "" => bail!("INFO needs a key and a value"),
            _ => {} // game_type, folder, evaluate, ...: not needed.
        }
        Ok(Vec::new())
    }

    fn takeback(&mut self, arg: &str) -> Result<()> {
        let p = self.parse_point(arg).context("TAKEBACK")?;
        let size = self.need_board()?;
        ensure!(self.moves.last() == Some(&p), "TAKEBACK {}: not the last stone", format_point(p, size));
        self.moves.pop();
        Ok(())
    }

    fn show_forbid(&self) -> Result<String> {
        let size = self.need_board()?;
        let g = self.game_of(&self.moves)?;
        let mut s = String::from("FORBID ");
        if self.rule == Rule::Renju && g.next_color() == Color::Black {
            for (p, _) in g.board().forbidden_points() {
                let (x, y) = to_wire(p, size);
                s += &format!("{x:02}{y:02}");
            }
        }
        s.push('.');
        Ok(s)
    }

    /// The search limit for the next move (module docs).
    fn limit(&self, empty: usize) -> SearchLimit {
        let mut budget: Option<u64> = self.timeout_turn;
        if self.timeout_match.is_some_and(|m| m > 0) {
            if let Some(left) = self.time_left {
                let share = left / (empty as u64 / 4).max(10);
                budget = Some(budget.map_or(share, |b| if b == 0 { share } else { b.min(share) }));
            }
        }
        let time = match budget {
            Some(ms) => {
                Duration::from_millis(ms).mul_f64(0.85).saturating_sub(Duration::from_millis(30) + self.reserve)
            }
            None => self.opts.default_turn,
        };
        let mut playouts = self.opts.max_playouts;
        if let Some(mem) = self.max_memory.filter(|&m| m > 0) {
            let node_bytes = (renju_selfplay::mcts::NODE_BYTES * 5 / 4) as u64;
            let cap = (mem / 2 / (node_bytes * empty.max(1) as u64)).max(1);
            playouts = Some(playouts.map_or(cap, |p| p.min(cap)));
        }
        SearchLimit { playouts, time: Some(time) }
    }

    /// Search in `game` and return a legal action (never a forbidden black point), with the
    /// `MESSAGE` lines to send first. A VCF of the side to move, or a proved defence against the
    /// opponent's, overrides the search (module docs).
    fn decide(&mut self, game: &Game) -> Result<(Action, Choice, Vec<String>)> {
        let size = game.board().size();
        let empty = size.pow(2) - game.board().stone_count();
        let limit = self.limit(empty);
        let vcf_limits = Limits { nodes: self.opts.vcf_nodes, time: limit.time.map(|t| t / 4) };
        let line_text = |line: &[Point]| line.iter().map(|&p| format_point(p, size)).collect::<Vec<_>>().join(" ");
        let mover = match game.decision() {
            DecisionKind::PlaceStone(c) if self.opts.vcf_nodes > 0 => Some(c),
            _ => None,
        };
        let mut defence = None;
        if let Some(c) = mover {
            if let Vcf::Win { line } = vcf(game.board(), c, &vcf_limits) {
                let choice = Choice { action: Action::Place(line[0]), value: Some(1.0), playouts: 0 };
                return Ok((choice.action, choice, vec![format!("MESSAGE VCF {}", line_text(&line))]));
            }
            if let Defence::Threat { threat, refutations } = refutations(game.board(), c, &vcf_limits) {
                defence = Some((threat, refutations)).filter(|(_, r)| !r.is_empty());
            }
        }
        let (_, agent) = self.agent.as_mut().context("no board yet: send START first")?;
        let c = agent.choose_within(game, &limit)?;
        let mut action = if game.is_legal(c.action) && matches!(c.action, Action::Place(_)) {
            c.action
        } else {
            game.legal_actions().into_iter().find(|a| matches!(a, Action::Place(_))).context("no legal move")?
        };
        let mut messages = Vec::new();
        if let Some((threat, refs)) = defence {
            if !matches!(action, Action::Place(p) if refs.contains(&p)) {
                // The refutation after which the opponent (deciding there) is worst off.
                let mut best = (f32::INFINITY, refs[0]);
                for &r in &refs {
                    let mut g = game.clone();
                    let at = format_point(r, size);
                    g.apply(Action::Place(r)).map_err(|e| anyhow::anyhow!("refutation {at}: {e}"))?;
                    let v = if g.is_over() { -1.0 } else { agent.value(&g)?.unwrap_or(0.0) };
                    if v < best.0 {
                        best = (v, r);
                    }
                }
                action = Action::Place(best.1);
            }
            let Action::Place(p) = action else { unreachable!("a stone was chosen") };
            messages.push(format!("MESSAGE VCF threat {}: defending at {}", line_text(&threat), format_point(p, size)));
        }
        Ok((action, c, messages))
    }

    fn think(&mut self) -> Vec<String> {
        let t0 = std::time::Instant::now();
        let empty_board = self.moves.is_empty();
        let mut run = || -> Result<Vec<String>> {
            let size = self.need_board()?;
            if self.moves.is_empty() {
                // The first stone on the centre, as every renju opening rule has it (RULES.md §5).
                let p = renju_rules::opening::centre(size);
                self.moves.push(p);
                return Ok(vec![format_point(p, size)]);
            }
            let game = self.game_of(&self.moves)?;
            ensure!(!game.is_over(), "the game is over");
            let (action, c, mut out) = self.decide(&game)?;
            let Action::Place(p) = action else { bail!("the agent did not place a stone") };
            self.moves.push(p);
            if let Some(v) = c.value {
                out.push(format!("MESSAGE playouts {} value {v:+.3}", c.playouts));
            }
            out.push(format_point(p, size));
            Ok(out)
        };
        let answer = run().unwrap_or_else(|e| error(format!("{e:#}")));
        if !empty_board {
            let empty = self.size.map_or(0, |n| n * n - self.moves.len().min(n * n));
            // The search had `budget`; whatever the answer took beyond it is overhead to reserve.
            let budget = self.limit(empty.max(1)).time.unwrap_or(Duration::ZERO);
            let over = t0.elapsed().saturating_sub(budget);
            self.reserve = (self.reserve * 3 / 4).max(over);
        }
        answer
    }

    fn swap2(&mut self, lines: &[String]) -> Result<Vec<String>> {
        let size = self.need_board()?;
        let stones: Vec<Point> = lines.iter().map(|l| self.parse_point(l)).collect::<Result<_>>()?;
        match stones.len() {
            0 => {
                // The opening whose position is most balanced by the value of the side to move.
                let mut best: Option<(f32, [Point; 3])> = None;
                for o in Opening::all() {
                    let st = o.stones(size);
                    let g = self.game_of(&st)?;
                    let (_, ch) = self.agent.as_mut().context("no agent")?;
                    let v = ch.value(&g)?.unwrap_or(0.0).abs();
                    if best.is_none_or(|b| v < b.0) {
                        best = Some((v, st));
                    }
                }
                let (_, st) = best.context("no opening")?;
                self.moves = st.to_vec();
                Ok(vec![st.iter().map(|&p| format_point(p, size)).collect::<Vec<_>>().join(" ")])
            }
            3 | 5 => {
                let g = self.game_of(&stones)?;
                ensure!(!g.is_over(), "the position is already decided");
                let (action, c, _) = self.decide(&g)?;
                let v = match c.value {
                    Some(v) => v,
                    None => self.agent.as_mut().map_or(Ok(None), |(_, ch)| ch.value(&g))?.unwrap_or(0.0),
                };
                self.moves = stones;
                if v < 0.0 {
                    Ok(vec![format!("MESSAGE White's value {v:+.3}: taking Black"), "SWAP".into()])
                } else {
                    let Action::Place(p) = action else { bail!("no stone chosen") };
                    self.moves.push(p);
                    Ok(vec![format!("MESSAGE White's value {v:+.3}: keeping White"), format_point(p, size)])
                }
            }
            n => bail!("expected 0, 3 or 5 stones, got {n}"),
        }
    }
}

/// Warms `agent` (just made, its model loaded) before `START` answers: a 16-playout search on
/// the empty `size` board, so the first timed move pays no lazy initialisation of the network.
fn warm(mut agent: Box<dyn Agent>, size: usize, rule: Rule) -> Result<Box<dyn Agent>> {
    let g = Game::new(size, rule, Protocol::Free { centre: false }, None)?;
    agent.choose_within(&g, &SearchLimit { playouts: Some(16), time: None })?;
    Ok(agent)
}

/// Lines up to (not including) `DONE`; blank lines skipped.
fn read_until_done(more: &mut dyn Iterator<Item = String>) -> Vec<String> {
    let mut v = Vec::new();
    for l in more {
        let t = l.trim();
        if t.eq_ignore_ascii_case("DONE") {
            break;
        }
        if !t.is_empty() {
            v.push(t.to_string());
        }
    }
    v
}

/// Runs `brain` on `input` until `END` or the end of input, writing and flushing every answer.
pub fn serve(brain: &mut Brain, input: impl BufRead, mut output: impl Write) -> Result<()> {
    let mut lines = input.lines().map_while(|l| l.ok());
    while let Some(line) = lines.next() {
        for answer in brain.handle(&line, &mut lines) {
            writeln!(output, "{answer}")?;
        }
        output.flush()?;
        if brain.ended() {
            break;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Returns the first forbidden black point if there is one (to prove the brain refuses it),
    /// else the empty point nearest the centre.
    struct Naughty;
    impl Agent for Naughty {
        fn new_game(&mut self, _seed: u64) -> Result<()> {
            Ok(())
        }
        fn choose(&mut self, game: &Game) -> Result<Choice> {
            let b = game.board();
            let n = b.size();
            let action =
                if let Some((p, _)) = b.forbidden_points().first().filter(|_| game.next_color() == Color::Black) {
                    Action::Place(*p)
                } else {
                    let c = (n / 2) as i32;
                    let mut pts: Vec<Point> =
                        (0..n * n).map(|i| Point::from_index(i, n)).filter(|&p| b.get(p).is_none()).collect();
                    pts.sort_by_key(|p| ((p.x as i32 - c).abs().max((p.y as i32 - c).abs()), p.index(n)));
                    Action::Place(pts[0])
                };
            Ok(Choice { action, value: Some(0.5), playouts: 1 })
        }
        fn value(&mut self, game: &Game) -> Result<Option<f32>> {
            Ok(Some(if game.board().stones()[2].0.y > game.board().stones()[0].0.y { 0.1 } else { 0.5 }))
        }
    }

    fn brain() -> Brain {
        Brain::new(Box::new(|_| Ok(Box::new(Naughty) as Box<dyn Agent>)), BrainOptions::default())
    }

    fn run(b: &mut Brain, script: &str) -> Vec<String> {
        let mut out = Vec::new();
        serve(b, script.as_bytes(), &mut out).unwrap();
        String::from_utf8(out).unwrap().lines().filter(|l| !l.starts_with("MESSAGE")).map(String::from).collect()
    }

    #[test]
    fn start_begin_turn_and_errors() {
        let mut b = brain();
        let out = run(
            &mut b,
            "BEGIN\nSTART 40\nSTART 15\nRECTSTART 15,20\nBEGIN\nTURN 0,0\nTURN 0,0\nTURN 7\nTURN a,b\nFOO\nABOUT\nEND\nTURN 1,1\n",
        );
        assert!(out[0].starts_with("ERROR") && out[0].contains("START first"), "{out:?}");
        assert!(out[1].starts_with("ERROR unsupported size 40"));
        assert_eq!(out[2], "OK");
        assert!(out[3].starts_with("ERROR rectangular"));
        assert_eq!(out[4], "7,7", "BEGIN: centre");
        assert_eq!(out[5], "6,8", "nearest the centre, lowest rules index: g7 = protocol 6,8");
        assert!(out[6].contains("occupied"), "{}", out[6]);
        assert!(out[7].starts_with("ERROR") && out[7].contains("x,y"));
        assert!(out[8].starts_with("ERROR") && out[8].contains("'a'"));
        assert!(out[9].starts_with("UNKNOWN"));
        assert!(out[10].starts_with("name=\"renju-zero\""));
        assert_eq!(out.len(), 11, "END stops the brain: {out:?}");
    }

    #[test]
    fn never_plays_a_forbidden_black_point_and_shows_them() {
        let mut b = brain();
        // Renju. Black (us, to move: 4 own + 4 opponent stones) has stones making h8 (7,7 in
        // protocol terms) a double-three: f8 g8 (row), h6 h7 (column); white stones far away.
        // Protocol coordinates: column x, row from the top: h8 = 7,7; f8 = 5,7; g8 = 6,7;
        // h7 = 7,8; h6 = 7,9.
        let script = "START 15\nINFO rule 4\nYXBOARD\n5,7,1\n0,0,2\n6,7,1\n14,0,2\n7,9,1\n0,14,2\n7,8,1\n14,14,2\nDONE\nYXSHOWFORBID\nBOARD\n5,7,1\n0,0,2\n6,7,1\n14,0,2\n7,9,1\n0,14,2\n7,8,1\n14,14,2\nDONE\n";
        let out = run(&mut b, script);
        assert_eq!(out[0], "OK");
        assert_eq!(out[1], "FORBID 0707.");
        assert_ne!(out[2], "7,7", "the agent proposed the forbidden h8; the brain must refuse it");
        assert!(!out[2].starts_with("ERROR"), "{out:?}");
        assert_eq!(b.rule(), Rule::Renju);
        // Under freestyle the same point is fine and nothing is forbidden.
        let mut b = brain();
        let out = run(&mut b, &script.replace("INFO rule 4", "INFO rule 0"));
        assert_eq!(out[1], "FORBID .");
    }

    #[test]
    fn board_errors_and_takeback() {
        let mut b = brain();
        let out = run(&mut b, "START 15\nBOARD\n1,1,1\n2,2,1\nDONE\nBOARD\n1,1,3\nDONE\nBOARD\n1,1,1\n2,2,2\nDONE\nTAKEBACK 3,3\nTAKEBACK 7,7\nINFO timeout_turn abc\n");
        assert!(out[1].contains("2 own and 0 opponent"), "{out:?}");
        assert!(out[2].contains("field '3'"), "{out:?}");
        assert_eq!(out[3], "7,7");
        assert!(out[4].starts_with("ERROR") && out[4].contains("not the last stone"));
        assert_eq!(out[5], "OK");
        assert!(out[6].starts_with("ERROR") && out[6].contains("'abc'"));
    }

    #[test]
    fn swap2_steps() {
        let mut b = brain();
        let out = run(&mut b, "START 15\nSWAP2BOARD\nDONE\nSWAP2BOARD\n7,7\n7,6\n8,6\nDONE\nSWAP2BOARD\n7,7\nDONE\n");
        // Three stones: black, white, black, of an opening whose value is smallest (the fake
        // agent gives 0.1 when stone 3 is above stone 1 in rules rows, i.e. lower protocol y).
        let st: Vec<&str> = out[1].split(' ').collect();
        assert_eq!(st.len(), 3);
        assert_eq!(st[0], "7,7");
        let y3: i64 = st[2].split(',').nth(1).unwrap().parse().unwrap();
        assert!(y3 < 7, "{out:?}");
        // Value 0.5 for White (from the agent's choice): keep White and play a stone.
        assert!(out[2].contains(','), "{out:?}");
        assert!(out[3].starts_with("ERROR") && out[3].contains("0, 3 or 5"));
    }

    /// All lines, MESSAGE included.
    fn run_all(b: &mut Brain, script: &str) -> Vec<String> {
        let mut out = Vec::new();
        serve(b, script.as_bytes(), &mut out).unwrap();
        String::from_utf8(out).unwrap().lines().map(String::from).collect()
    }

    /// A BOARD command with our stones (field 1) and the opponent's (field 2), rules notation.
    fn board_cmd(own: &str, opp: &str) -> String {
        let mut s = String::from("BOARD\n");
        for (list, f) in [(own, 1), (opp, 2)] {
            for t in list.split_whitespace() {
                s += &format!("{},{f}\n", format_point(renju_rules::notation::parse_point(t, 15).unwrap(), 15));
            }
        }
        s + "DONE\n"
    }

    #[test]
    fn plays_a_vcf_at_once_and_says_so() {
        // Black (us) has the four-four VCF of rules/tests/vcf_positions.rs; White has 9 stones
        // (3 caps, 6 quiet ones far away) so Black is to move. The naughty agent would play
        // elsewhere.
        let own = "k12 k13 k14 l10 l9 l8 n12 n13 n14";
        let opp = "k10 l7 n10 a1 d1 g1 a4 d4 g4";
        let mut b = brain();
        let out = run_all(&mut b, &format!("START 15\nINFO rule 4\n{}", board_cmd(own, opp)));
        let msg = out.iter().find(|l| l.starts_with("MESSAGE VCF ")).unwrap_or_else(|| panic!("{out:?}"));
        let line: Vec<&str> = msg["MESSAGE VCF ".len()..].split(' ').collect();
        assert_eq!(line.len(), 7, "{msg}");
        assert_eq!(out.last().unwrap(), line[0], "the move is the line's first: {out:?}");
        // Off: the agent's move.
        let mut b = Brain::new(
            Box::new(|_| Ok(Box::new(Naughty) as Box<dyn Agent>)),
            BrainOptions { vcf_nodes: 0, ..BrainOptions::default() },
        );
        let out = run_all(&mut b, &format!("START 15\nINFO rule 4\n{}", board_cmd(own, opp)));
        assert!(!out.iter().any(|l| l.starts_with("MESSAGE VCF")), "{out:?}");
    }

    #[test]
    fn defends_against_an_opponent_vcf() {
        // White (us, to move: one stone fewer) faces Black's four-three threat f10
        // (rules/tests/vcf_positions.rs); the naughty agent plays near the centre, which does not
        // defend.
        let own = "b10 a1 d1 g1 a4";
        let opp = "c10 d10 e10 f11 f12 g14";
        let mut b = brain();
        let out = run_all(&mut b, &format!("START 15\nINFO rule 4\n{}", board_cmd(own, opp)));
        let msg = out.iter().find(|l| l.starts_with("MESSAGE VCF threat")).unwrap_or_else(|| panic!("{out:?}"));
        let mv = out.last().unwrap();
        assert!(msg.ends_with(&format!("defending at {mv}")), "{out:?}");
        let (x, y) = parse_xy(mv).unwrap();
        let p = from_wire(x, y, 15).unwrap();
        let game = b.game_of(&b.moves[..b.moves.len() - 1]).unwrap();
        assert_eq!(game.next_color(), Color::White);
        let mut board = game.board().clone();
        board.place(p, Color::White);
        assert_eq!(vcf(&board, Color::Black, &Limits::nodes(1_000_000)), Vcf::NoWin, "{mv} must refute");
    }

    #[test]
    fn time_budget() {
        let mut b = brain();
        run(&mut b, "START 15\nINFO timeout_turn 1000\nINFO timeout_match 100000\nINFO time_left 20000\nINFO max_memory 8000000\n");
        let l = b.limit(200);
        // min(1000, 20000 / max(10, 50)) = 400 ms -> 0.85 * 400 - 30 = 310 ms.
        assert_eq!(l.time, Some(Duration::from_millis(310)));
        // 8e6 / 2 / (40 * 200) = 500 playouts.
        assert_eq!(l.playouts, Some(500));
    }
}
