//! The brain's state: the agent, the position, the rule and the limits the manager sent, and
//! the commands that change them or answer a move (the protocol is parsed in [`super`]).

use std::time::Duration;

use anyhow::{bail, ensure, Context, Result};
use renju_rules::board::{MAX_SIZE, MIN_SIZE, SIZES};
use renju_rules::vcf::Limits;
use renju_rules::{Action, Color, DecisionKind, Game, Opening, Point, Protocol, Rule};

use super::error;
use super::tactics::{before_search, defence, defend, Defence, Tactic};
use super::time::TimeBudget;
use crate::agent::{sort_chosen_first, Agent, Choice, Interrupt, SearchLimit};
use crate::clock::Stretch;
use crate::wire::{format_point, from_wire, parse_xy, rule_from_bits, to_wire, RULE_BIT_CARO};

/// Makes the brain's agent for a board size (errors for sizes it cannot play, e.g. a 15x15
/// model).
pub type AgentFactory = Box<dyn FnMut(usize) -> Result<Box<dyn Agent>>>;

/// What the brain says on its first move when the manager has not sent `INFO rule`.
pub const FREESTYLE_UNTIL_TOLD: &str =
    "rule: freestyle (five or more wins) until the manager sends INFO rule (4 = renju, 1 = standard)";

/// Brain settings.
#[derive(Clone, Debug, PartialEq)]
pub struct BrainOptions {
    /// Per-move time when the manager sent no time information. Default 5 s.
    pub default_turn: Duration,
    /// Playouts at most per move (`None`: only time and memory limit the search).
    pub max_playouts: Option<u64>,
    /// Node budget of the VCF solver run once at the root before each move (the tactics of
    /// [`super::tactics`]); 0 turns it off. Default 100,000. The search's own VCF check at node
    /// expansion is the agent's `SearchConfig::vcf_nodes`.
    pub root_vcf_nodes: u64,
    /// Node budget of the VCT solver and of its defence question, run at the root when the VCF
    /// settles nothing ([`super::tactics`]); 0 turns them off. Default 20,000.
    pub root_vct_nodes: u64,
    /// The `ABOUT` answer.
    pub about: String,
    /// Search threads the brain was started with (the most `INFO thread_num` can ask for),
    /// reported by `YXSHOWINFO`. Default 1.
    pub max_threads: usize,
    /// Under a match clock, plan each move's time ([`crate::clock`]); off, every move searches
    /// its share of the clock exactly (for comparisons). Default on.
    pub plan_time: bool,
}

impl Default for BrainOptions {
    fn default() -> Self {
        BrainOptions {
            default_turn: Duration::from_secs(5),
            max_playouts: None,
            root_vcf_nodes: 100_000,
            root_vct_nodes: 20_000,
            about: format!(
                "name=\"renju-zero\", version=\"{}\", author=\"renju-zero project\", country=\"-\"",
                env!("CARGO_PKG_VERSION")
            ),
            max_threads: 1,
            plan_time: true,
        }
    }
}

/// The protocol state machine (module docs of [`super`]).
pub struct Brain {
    factory: AgentFactory,
    agent: Option<(usize, Box<dyn Agent>)>,
    opts: BrainOptions,
    size: Option<usize>,
    rule: Rule,
    /// Whether `INFO rule` was received.
    rule_told: bool,
    /// Whether this game's first move already said the rule is freestyle by default.
    rule_warned: bool,
    /// Stones in move order (Black first, alternating).
    moves: Vec<Point>,
    time: TimeBudget,
    /// The most the last move's search could take: the time plan's most under a match clock,
    /// else its limit ([`super::time`]); what the answer took beyond it is overhead to reserve.
    planned: Option<Duration>,
    /// Search threads the manager asked for (`INFO thread_num`); the agent uses at most as many
    /// as it was built for.
    threads: Option<usize>,
    /// Handed to every agent: stops a search under way (`YXSTOP`, [`super::serve_interruptible`]).
    interrupt: Option<Interrupt>,
    ended: bool,
}

impl Brain {
    /// A brain making agents with `factory`. The rule is freestyle until `INFO rule` says
    /// otherwise (the protocol's default); the first move after `START` without an `INFO rule`
    /// says so in a `MESSAGE`.
    pub fn new(factory: AgentFactory, opts: BrainOptions) -> Brain {
        Brain {
            factory,
            agent: None,
            opts,
            size: None,
            rule: Rule::Freestyle,
            moves: Vec::new(),
            rule_told: false,
            rule_warned: false,
            time: TimeBudget::default(),
            planned: None,
            threads: None,
            interrupt: None,
            ended: false,
        }
    }

    /// A check the searches consult between batches: true stops the search under way, and the
    /// move is made from what was searched.
    pub fn set_interrupt(&mut self, interrupt: Interrupt) {
        if let Some((_, a)) = self.agent.as_mut() {
            a.set_interrupt(Some(interrupt.clone()));
        }
        self.interrupt = Some(interrupt);
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

    /// The `ABOUT` answer.
    pub(super) fn about(&self) -> String {
        self.opts.about.clone()
    }

    /// `END`: stop after this command.
    pub(super) fn end(&mut self) {
        self.ended = true;
    }

    /// `RESTART`: the empty board of the same size.
    pub(super) fn restart(&mut self) -> Result<()> {
        ensure!(self.size.is_some(), "RESTART before START");
        self.moves.clear();
        self.forget();
        Ok(())
    }

    /// Drops what the agent kept from earlier moves (its search tree), for a position that does
    /// not follow from the last searched one by the moves played (`START`, `RESTART`,
    /// `TAKEBACK`, `YXHASHCLEAR`). A `BOARD` or a rule change needs no call: the agent follows
    /// its tree only down the moves played under the same rule.
    pub(super) fn forget(&mut self) {
        if let Some((_, agent)) = self.agent.as_mut() {
            agent.forget();
        }
    }

    pub(super) fn start(&mut self, n: usize) -> Vec<String> {
        if !SIZES.contains(&n) {
            return error(format!("unsupported size {n} (this brain plays {MIN_SIZE}..={MAX_SIZE})"));
        }
        if self.agent.as_ref().map(|c| c.0) != Some(n) {
            match (self.factory)(n).and_then(|a| warm(a, n, self.rule)) {
                Ok(mut c) => {
                    if let Some(t) = self.threads {
                        c.set_threads(t);
                    }
                    c.set_interrupt(self.interrupt.clone());
                    self.agent = Some((n, c));
                }
                Err(e) => return error(format!("unsupported size {n}: {e:#}")),
            }
        }
        self.size = Some(n);
        self.moves.clear();
        self.forget();
        self.rule_warned = false;
        vec!["OK".into()]
    }

    pub(super) fn need_board(&self) -> Result<usize> {
        self.size.context("no board yet: send START first")
    }

    /// The position of `moves` as it stands (free opening, the brain's rule): stones are not
    /// replayed through the forbidden-move rules ([`Game::from_position`]), so puzzle and
    /// analysis positions with a black stone on a now-forbidden point are accepted.
    pub(super) fn game_of(&self, moves: &[Point]) -> Result<Game> {
        let size = self.need_board()?;
        Ok(Game::from_position(size, self.rule, moves)?)
    }

    fn parse_point(&self, text: &str) -> Result<Point> {
        let size = self.need_board()?;
        let (x, y) = parse_xy(text)?;
        from_wire(x, y, size).with_context(|| format!("{x},{y} is off the {size}x{size} board"))
    }

    pub(super) fn turn(&mut self, arg: &str) -> Result<()> {
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

    pub(super) fn board(&mut self, lines: &[String]) -> Result<()> {
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

    pub(super) fn info(&mut self, arg: &str) -> Result<Vec<String>> {
        let (key, value) = arg.split_once(char::is_whitespace).map(|(k, v)| (k, v.trim())).unwrap_or((arg, ""));
        let key = key.to_ascii_lowercase();
        let num = || -> Result<u64> {
            value
                .parse::<i64>()
                .map(|v| v.max(0) as u64)
                .map_err(|_| anyhow::anyhow!("INFO {key}: '{value}' is not a number"))
        };
        match key.as_str() {
            "timeout_turn" => self.time.timeout_turn = Some(num()?),
            "timeout_match" => self.time.timeout_match = Some(num()?),
            "time_left" => self.time.time_left = Some(num()?),
            "max_memory" => self.time.max_memory = Some(num()?),
            "max_node" => self.time.max_node = Some(num()?),
            "thread_num" => {
                let t = num()?.max(1) as usize;
                self.threads = Some(t);
                if let Some((_, agent)) = self.agent.as_mut() {
                    agent.set_threads(t);
                }
            }
            "rule" => {
                let bits = num()?;
                self.rule = rule_from_bits(bits);
                self.rule_told = true;
                if bits & RULE_BIT_CARO != 0 {
                    return Ok(vec![format!("MESSAGE rule bit 8 (caro) is not supported; playing {:?}", self.rule)]);
                }
            }
            "" => bail!("INFO needs a key and a value"),
            _ => {} // game_type, folder, evaluate, ...: not needed.
        }
        Ok(Vec::new())
    }

    pub(super) fn takeback(&mut self, arg: &str) -> Result<()> {
        let p = self.parse_point(arg).context("TAKEBACK")?;
        let size = self.need_board()?;
        ensure!(self.moves.last() == Some(&p), "TAKEBACK {}: not the last stone", format_point(p, size));
        self.moves.pop();
        self.forget();
        Ok(())
    }

    pub(super) fn show_forbid(&self) -> Result<String> {
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

    /// The search limit for the next move ([`super::time`]).
    pub(super) fn limit(&self, empty: usize) -> SearchLimit {
        self.time.limit(empty, self.opts.default_turn, self.opts.max_playouts)
    }

    /// Search in `game` and return a legal action (never a forbidden black point), with the
    /// `MESSAGE` lines to send first. A VCF of the side to move, or a proved defence against the
    /// opponent's, overrides the search ([`super::tactics`]).
    fn decide(&mut self, game: &Game) -> Result<(Action, Choice, Vec<String>)> {
        let empty = game.board().size().pow(2) - game.board().stone_count();
        let (limit, stretch) = self.time.plan(empty, self.opts.default_turn, self.opts.max_playouts);
        let stretch = stretch.filter(|_| self.opts.plan_time);
        self.planned = stretch.map(|s| s.most).or(limit.time);
        self.decide_stretched(game, limit, stretch)
    }

    /// [`Brain::decide`] within `limit`.
    fn decide_within(&mut self, game: &Game, limit: SearchLimit) -> Result<(Action, Choice, Vec<String>)> {
        self.decide_stretched(game, limit, None)
    }

    /// [`Brain::decide_within`] with a time plan for the search ([`crate::clock`]).
    fn decide_stretched(
        &mut self,
        game: &Game,
        limit: SearchLimit,
        stretch: Option<Stretch>,
    ) -> Result<(Action, Choice, Vec<String>)> {
        let size = game.board().size();
        let t0 = std::time::Instant::now();
        let vcf_limits = Limits { nodes: self.opts.root_vcf_nodes, time: limit.time.map(|t| t / 4) };
        let vct_limits = Limits { nodes: self.opts.root_vct_nodes, time: limit.time.map(|t| t / 8) };
        let line_text = |line: &[Point]| line.iter().map(|&p| format_point(p, size)).collect::<Vec<_>>().join(" ");
        let tactic = match game.decision() {
            DecisionKind::PlaceStone(c) => before_search(game, c, &vcf_limits, &vct_limits),
            _ => Tactic::None,
        };
        if let Tactic::Win { line, by } = &tactic {
            let choice = Choice { action: Action::Place(line[0]), value: Some(1.0), playouts: 0, reused: 0 };
            return Ok((choice.action, choice, vec![format!("MESSAGE {by} {}", line_text(line))]));
        }
        // The tactics' time comes out of the search's.
        let spent = t0.elapsed();
        let limit = SearchLimit { time: limit.time.map(|t| t.saturating_sub(spent)), ..limit };
        let stretch =
            stretch.map(|s| Stretch { target: s.target.saturating_sub(spent), most: s.most.saturating_sub(spent) });
        let (_, agent) = self.agent.as_mut().context("no board yet: send START first")?;
        let c = agent.choose_stretched(game, &limit, stretch)?;
        let mut action = if game.is_legal(c.action) && matches!(c.action, Action::Place(_)) {
            c.action
        } else {
            game.legal_actions().into_iter().find(|a| matches!(a, Action::Place(_))).context("no legal move")?
        };
        let mut messages = Vec::new();
        if let Tactic::Defend { threat, refutations, by } = &tactic {
            let p = defend(game, action, refutations, agent.as_mut())?;
            action = Action::Place(p);
            messages.push(format!("MESSAGE {by} threat {}: defending at {}", line_text(threat), format_point(p, size)));
        }
        Ok((action, c, messages))
    }

    /// Our move (`BEGIN`, `TURN`, `BOARD`), recorded on the board.
    pub(super) fn think(&mut self) -> Vec<String> {
        self.think_nbest(0)
    }

    /// `YXNBEST n` (`n` > 0; 0 is [`Brain::think`]): our move as [`Brain::think`] answers it, with
    /// a `MESSAGE NBEST k x,y visits=V winrate=W pv=x,y ...` line first for each of `n` root
    /// candidates of the search: the move played, then the most visited (`k` from 1; `W` =
    /// (value + 1) / 2 for us). A move played without a search (the first stone, a VCF) has no
    /// such lines.
    pub(super) fn think_nbest(&mut self, nbest: usize) -> Vec<String> {
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
            if nbest > 0 && c.playouts + c.reused > 0 {
                let (_, agent) = self.agent.as_ref().context("no agent")?;
                let mut cands = agent.candidates(&game, NBEST_PV_LENGTH);
                // The move played first (the agent's choice, e.g. by a lower confidence bound),
                // then the others by visits.
                sort_chosen_first(&mut cands, Some(action), |c| (c.action, c.visits, c.value));
                for (k, cand) in cands.iter().take(nbest).enumerate() {
                    out.push(format!(
                        "MESSAGE NBEST {} {} visits={} winrate={:.3} pv={}",
                        k + 1,
                        format_action(cand.action, size),
                        cand.visits,
                        (cand.value + 1.0) / 2.0,
                        cand.pv.iter().map(|&a| format_action(a, size)).collect::<Vec<_>>().join(" ")
                    ));
                }
            }
            self.moves.push(p);
            if let Some(v) = c.value {
                out.push(format!("MESSAGE playouts {} reused {} value {v:+.3}", c.playouts, c.reused));
            }
            out.push(format_point(p, size));
            Ok(out)
        };
        let mut answer = run().unwrap_or_else(|e| error(format!("{e:#}")));
        if !empty_board {
            let empty = self.size.map_or(0, |n| n * n - self.moves.len().min(n * n));
            // The search could take `budget`; whatever the answer took beyond it is overhead to
            // reserve.
            let budget = self.planned.take().or_else(|| self.limit(empty.max(1)).time).unwrap_or(Duration::ZERO);
            self.time.record_answer(t0.elapsed(), budget);
        }
        if !self.rule_told && !self.rule_warned {
            self.rule_warned = true;
            answer.insert(0, format!("MESSAGE {FREESTYLE_UNTIL_TOLD}"));
        }
        answer
    }

    /// `YXBALANCEONE bias` / `YXBALANCETWO bias` (`two`): searches the position and answers the
    /// move (with `two`, our move and the opponent's reply, `x,y x,y`) after which our value is
    /// closest to `bias` (in `[-1, 1]`, 0 = even). Candidates are the legal moves (never a
    /// forbidden black point) with at least [`balance_floor`] of the most visited sibling's
    /// visits; ties go to the more visited. The one move is recorded on the board, as a `TURN`
    /// answer is; the two moves are not (the manager places them).
    pub(super) fn balance(&mut self, bias: f32, two: bool) -> Result<Vec<String>> {
        let size = self.need_board()?;
        let game = self.game_of(&self.moves)?;
        ensure!(!game.is_over(), "the game is over");
        let limit = self.limit(size * size - game.board().stone_count());
        let (_, agent) = self.agent.as_mut().context("no board yet: send START first")?;
        agent.choose_within(&game, &limit)?;
        let cands = agent.candidates(&game, 1);
        ensure!(!cands.is_empty(), "the agent has no searched candidates to balance with");
        let floor = balance_floor(cands.iter().map(|c| c.visits));
        let mut best: Option<(f32, u64, Vec<Point>, f32)> = None;
        let mut consider = |value: f32, visits: u64, line: Vec<Point>| {
            let d = (value - bias).abs();
            if best.as_ref().is_none_or(|b| d < b.0 || (d == b.0 && visits > b.1)) {
                best = Some((d, visits, line, value));
            }
        };
        for c in cands.iter().filter(|c| c.visits >= floor && game.is_legal(c.action)) {
            let Action::Place(p) = c.action else { continue };
            if !two {
                consider(c.value, c.visits, vec![p]);
                continue;
            }
            let mut after = game.clone();
            after.apply(c.action)?;
            if after.is_over() {
                continue;
            }
            let reply_floor = balance_floor(c.replies.iter().map(|r| r.1));
            for &(r, n, v) in c.replies.iter().filter(|r| r.1 >= reply_floor && after.is_legal(r.0)) {
                if let Action::Place(q) = r {
                    consider(v, n, vec![p, q]);
                }
            }
        }
        let (_, visits, line, value) = best.context("no searched candidate to balance with (search longer)")?;
        let mut out = vec![format!("MESSAGE balance value {value:+.3} visits {visits} bias {bias:+.3}")];
        if !two {
            self.moves.push(line[0]);
        }
        out.push(line.iter().map(|&p| format_point(p, size)).collect::<Vec<_>>().join(" "));
        Ok(out)
    }

    /// `YXSEARCHDEFEND`: the moves that stop the opponent's threat, as one `MESSAGE DEFEND ...`
    /// line (module docs of [`super`]; a second one names the VCF refutations that lose to a
    /// VCT), then our move as [`Brain::think`] answers it. The questions are the tactics'
    /// ([`super::tactics`]): the opponent's VCF, then, without one, its VCT, each within the root
    /// budgets and the move's time.
    pub(super) fn search_defend(&mut self) -> Vec<String> {
        let report = (|| -> Result<Vec<String>> {
            let size = self.need_board()?;
            let game = self.game_of(&self.moves)?;
            ensure!(!game.is_over(), "the game is over");
            let DecisionKind::PlaceStone(me) = game.decision() else { bail!("no stone to place") };
            let empty = size * size - game.board().stone_count();
            let time = self.limit(empty).time;
            let text = |ps: &[Point]| ps.iter().map(|&p| format_point(p, size)).collect::<Vec<_>>().join(" ");
            let vcf_limits = Limits { nodes: self.opts.root_vcf_nodes, time };
            let vct_limits = Limits { nodes: self.opts.root_vct_nodes, time };
            Ok(match defence(game.board(), me, &vcf_limits, &vct_limits) {
                Defence::Refuted { threat, refutations, by, lose_to_vct } => {
                    let mut out = vec![format!("MESSAGE DEFEND {by} threat {}: {}", text(&threat), text(&refutations))];
                    if !lose_to_vct.is_empty() {
                        out.push(format!("MESSAGE DEFEND lose to a VCT: {}", text(&lose_to_vct)));
                    }
                    out
                }
                Defence::Lost { threat, by } => {
                    vec![format!("MESSAGE DEFEND {by} threat {}: no move refutes it", text(&threat))]
                }
                Defence::NoThreat => vec!["MESSAGE DEFEND no threat: the opponent has no VCF or VCT".into()],
                Defence::Unknown => vec!["MESSAGE DEFEND unknown: the budget ran out".into()],
            })
        })();
        match report {
            Ok(lines) => {
                let mut out = lines;
                out.extend(self.think());
                out
            }
            Err(e) => error(format!("{e:#}")),
        }
    }

    /// `YXSHOWINFO`: `MESSAGE` lines describing the engine.
    pub(super) fn show_info(&self) -> Vec<String> {
        let threads = self.threads.unwrap_or(self.opts.max_threads).min(self.opts.max_threads).max(1);
        vec![
            format!("MESSAGE name renju-zero version {}", env!("CARGO_PKG_VERSION")),
            format!("MESSAGE threads {threads} (at most {})", self.opts.max_threads),
            format!("MESSAGE rule {:?}", self.rule),
        ]
    }

    /// `SWAP2BOARD` (module docs of [`super`]): the opening stones are replayed in a Swap2 game
    /// (RULES.md §5.11) and the agent searches its decisions: with 3 stones ours is tentative
    /// White's choice (take Black, stay White and place stone 4, or place stones 4 and 5); with
    /// 5 stones tentative Black's colour choice (stay Black, or take White and place stone 6).
    /// The move's time is shared by the searches of the answer. An agent that does not answer
    /// the choice decides by the value of White to move in the position: below 0, Black.
    pub(super) fn swap2(&mut self, lines: &[String]) -> Result<Vec<String>> {
        let size = self.need_board()?;
        let stones: Vec<Point> = lines.iter().map(|l| self.parse_point(l)).collect::<Result<_>>()?;
        if stones.is_empty() {
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
            return Ok(vec![st.iter().map(|&p| format_point(p, size)).collect::<Vec<_>>().join(" ")]);
        }
        ensure!(matches!(stones.len(), 3 | 5), "expected 0, 3 or 5 stones, got {}", stones.len());
        let mut g = Game::new(size, self.rule, Protocol::Swap2 { opening: None }, None)?;
        for (k, &p) in stones.iter().enumerate() {
            if k == 3 {
                g.apply(Action::Double)?;
            }
            g.apply(Action::Place(p)).with_context(|| format!("stone {}", k + 1))?;
        }
        ensure!(!g.is_over(), "the position is already decided");
        // The choice and at most two placements share the move's time.
        let empty = size.pow(2) - stones.len();
        let mut limit = self.limit(empty);
        limit.time = limit.time.map(|t| t / 3);
        // The search keeps no tree across this command: its players are the Swap2 game's.
        self.forget();
        let (_, agent) = self.agent.as_mut().context("no board yet: send START first")?;
        let c = agent.choose_within(&g, &limit)?;
        let (choice, value) = if g.is_legal(c.action) && !matches!(c.action, Action::Place(_)) {
            (c.action, c.value)
        } else {
            let white_to_move = self.game_of(&stones)?;
            let (_, agent) = self.agent.as_mut().context("no agent")?;
            let v = agent.value(&white_to_move)?.unwrap_or(0.0);
            // v is White's: below 0 we want Black. Tentative White takes Black with Swap;
            // tentative Black stays Black with Keep.
            let want_black = v < 0.0;
            let a = if (stones.len() == 3) == want_black { Action::Swap } else { Action::Keep };
            (a, Some(if stones.len() == 3 { v } else { -v }))
        };
        let mut out =
            vec![format!("MESSAGE swap2 choice {choice} (value {:+.3} for the decider)", value.unwrap_or(0.0))];
        g.apply(choice)?;
        self.moves = stones;
        // Whether we hold Black now: as tentative White (3 stones) after Swap, as tentative
        // Black (5 stones) after Keep. Holding Black, the opponent places the next stone.
        let we_black = (self.moves.len() == 3) == (choice == Action::Swap);
        if we_black {
            self.forget();
            out.push("SWAP".into());
            return Ok(out);
        }
        let placements = if choice == Action::Double { 2 } else { 1 };
        let mut placed = Vec::new();
        for _ in 0..placements {
            let (action, _, msgs) = self.decide_within(&g, limit)?;
            out.extend(msgs);
            let Action::Place(p) = action else { bail!("no stone chosen") };
            g.apply(action)?;
            self.moves.push(p);
            placed.push(format_point(p, size));
        }
        self.forget();
        out.push(placed.join(" "));
        Ok(out)
    }
}

/// Warms `agent` (just made, its model loaded) before `START` answers: a 16-playout search on
/// the empty `size` board, so the first timed move pays no lazy initialisation of the network.
fn warm(mut agent: Box<dyn Agent>, size: usize, rule: Rule) -> Result<Box<dyn Agent>> {
    let g = Game::new(size, rule, Protocol::Free { centre: false }, None)?;
    agent.choose_within(&g, &SearchLimit { playouts: Some(16), time: None })?;
    Ok(agent)
}

/// Actions of a principal variation in a `YXNBEST` line.
const NBEST_PV_LENGTH: usize = 10;

/// The fewest visits a balance candidate needs: 5% of the most visited of `visits`, at least 1.
fn balance_floor(visits: impl Iterator<Item = u64>) -> u64 {
    (visits.max().unwrap_or(0) / 20).max(1)
}

/// A stone placement as a protocol point, any other action by its notation.
fn format_action(a: Action, size: usize) -> String {
    match a {
        Action::Place(p) => format_point(p, size),
        other => other.to_string(),
    }
}
