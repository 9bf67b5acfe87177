//! The analysis engine (`renju-zero analyze`): one JSON request per line in, JSON answers out,
//! in the manner of KataGo's analysis engine. The full format is in `docs/commands.md`; in short:
//!
//! - A query `{"id":..,"rule":"renju","size":15,"protocol":"rif","moves":["h8","h9","keep",[7,9]],
//!   "visits":800,"seconds":2,"top":5,"vcf":100000,"reportEvery":0.5}` is searched on a thread
//!   of its own (queries run concurrently) and answered with the candidates of the player to
//!   decide (a move or a protocol action: visits, search value, the value head's win/draw/loss
//!   after it, prior, principal variation), the root's visits and value, Black's forbidden
//!   points (renju) and each colour's VCF. `reportEvery` adds partial answers
//!   (`"isDuringSearch": true`) while the search runs.
//! - `{"action":"terminate","id":X}` stops every running query with id `X`; each answers its
//!   result so far (`"terminated": true`), then the engine acknowledges the terminate.
//! - A malformed line (bad JSON, an unknown key, an unknown rule or protocol, an illegal move, a
//!   move on an occupied point, a game already over) is answered `{"id":..,"error":".."}` naming
//!   what was wrong, and the engine goes on.
//!
//! `moves` are the decisions of the game in order, as [`Game::history`] holds them: points in
//! notation (`h8`) or as `[x, y]` (0-based column and row from the bottom left, the rules
//! crate's [`Point`]), and under a protocol its actions as [`Action::parse`] reads them (`keep`,
//! `swap`, `single`, `double`, `choose-n:N`; an offer or the pick of an offer is a point). They
//! are replayed by the rules, so a forbidden black move is refused. `initialStones` (no
//! protocol) puts stones on the board as they stand first, alternately Black and White, as a
//! puzzle or an engine manager's board gives them ([`Game::from_position`]).
//!
//! The candidates come with the one the brain would play first ([`MctsAgent::root_choice`]: by
//! the lower confidence bound of its value when the agent's settings name one), then by visits.
//! The search is the brain's ([`MctsAgent::search_tree`], PUCT), run in slices of at most
//! [`SLICE`] so that partial answers and terminate requests are served on time ([`search`] is
//! the one call into it). A finished query keeps its tree; the next query of the same board size
//! takes the most recently kept one and follows it to its own position ([`Mcts::follow`]): a
//! query on a position that follows from the last one by the moves played starts with the
//! visits already spent below it (the `visits` limit counts them, as in the brain).

use std::io::{BufRead, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, ensure, Context, Result};
use renju_rules::notation::format_point;
use renju_rules::query::VcfReply;
use renju_rules::vcf::{vcf, Limits};
use renju_rules::{Action, Color, DecisionKind, Game, Outcome, OutcomeReason, Player, Point, Protocol, Rule, Verdict};
use renju_selfplay::action::action_from_index;
use renju_selfplay::mcts::{lower_confidence_bound, Mcts, NODE_BYTES};
use renju_selfplay::record::wdl_one_hot;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::agent::{sort_chosen_first, MctsAgent, SearchLimit};

/// The longest stretch of search between two looks at the terminate flag and the report clock.
pub const SLICE: Duration = Duration::from_millis(50);

/// A query whose tree has not grown for this long ends (nothing left that a playout can add).
const STALL: Duration = Duration::from_secs(1);

/// Makes a search agent for a board size (errors for sizes it cannot play, e.g. a 15x15 model
/// asked about a 9x9 board; the query then gets an error answer).
pub type AgentFactory = Box<dyn FnMut(usize) -> Result<MctsAgent> + Send>;

/// Defaults of the fields a query leaves out.
#[derive(Clone, Debug, PartialEq)]
pub struct AnalysisOptions {
    /// Visits when a query gives neither `visits` nor `seconds`. Default 800.
    pub visits: u64,
    /// VCF solver nodes per colour, run once before the search (`vcf`; 0 = off). Default
    /// 100,000, as the brain's root solver.
    pub root_vcf_nodes: u64,
    /// Candidates answered (`top`). Default 10.
    pub top: usize,
    /// Longest principal variation (`pvLength`). Default 10.
    pub pv_length: usize,
    /// A query's search stops when its tree holds this many bytes of nodes
    /// ([`NODE_BYTES`] each). Default 1 GiB.
    pub max_tree_bytes: u64,
}

impl Default for AnalysisOptions {
    fn default() -> Self {
        AnalysisOptions { visits: 800, root_vcf_nodes: 100_000, top: 10, pv_length: 10, max_tree_bytes: 1 << 30 }
    }
}

/// Where answers go: one JSON object per line, written and flushed whole under a lock, so the
/// lines of concurrent queries never interleave.
#[derive(Clone)]
pub struct Output(Arc<Mutex<Box<dyn Write + Send>>>);

impl Output {
    /// Answers written to `w`.
    pub fn new(w: impl Write + Send + 'static) -> Output {
        Output(Arc::new(Mutex::new(Box::new(w))))
    }

    fn send(&self, answer: &Value) {
        let mut w = self.0.lock().unwrap_or_else(|e| e.into_inner());
        // A reader that went away ends the engine through its input; nothing to do here.
        let _ = writeln!(w, "{answer}");
        let _ = w.flush();
    }

    fn error(&self, id: &Value, msg: impl std::fmt::Display) {
        self.send(&json!({"id": id, "error": msg.to_string().replace(['\n', '\r'], " ")}));
    }
}

/// A query line (keys in camelCase; any other key is refused by name).
#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Query {
    id: Value,
    rule: Option<String>,
    size: Option<usize>,
    protocol: Option<String>,
    #[serde(default)]
    initial_stones: Vec<Value>,
    #[serde(default)]
    moves: Vec<Value>,
    visits: Option<u64>,
    seconds: Option<f64>,
    top: Option<usize>,
    vcf: Option<u64>,
    report_every: Option<f64>,
    pv_length: Option<usize>,
}

/// A control line: `{"action":"terminate","id":X}`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Control {
    id: Value,
    action: String,
}

/// A checked query, ready to search.
struct Job {
    id: Value,
    game: Game,
    limit: SearchLimit,
    top: usize,
    vcf_nodes: u64,
    report_every: Option<Duration>,
    pv_length: usize,
    max_tree_bytes: u64,
}

/// An agent and the tree its last query left (for tree reuse).
struct Searcher {
    size: usize,
    agent: MctsAgent,
    kept: Option<(Game, Mcts)>,
}

/// A query being searched.
struct Running {
    id: Value,
    cancel: Arc<AtomicBool>,
    handle: JoinHandle<()>,
}

/// The engine: reads request lines ([`Engine::handle`]), searches each query on its own thread,
/// answers through its [`Output`].
pub struct Engine {
    factory: AgentFactory,
    opts: AnalysisOptions,
    out: Output,
    idle: Arc<Mutex<Vec<Searcher>>>,
    running: Vec<Running>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Engine {
    /// An engine making its agents with `factory` and answering to `out`.
    pub fn new(factory: AgentFactory, opts: AnalysisOptions, out: Output) -> Engine {
        Engine { factory, opts, out, idle: Arc::new(Mutex::new(Vec::new())), running: Vec::new() }
    }

    /// Handles one request line: starts a query's search, or terminates, or answers an error.
    pub fn handle(&mut self, line: &str) {
        let line = line.trim();
        if line.is_empty() {
            return;
        }
        self.running.retain(|r| !r.handle.is_finished());
        let v: Value = match serde_json::from_str(line) {
            Ok(v) => v,
            Err(e) => return self.out.error(&Value::Null, format!("bad JSON: {e}")),
        };
        let id = v.get("id").cloned().unwrap_or(Value::Null);
        if !v.is_object() {
            return self.out.error(&id, "a request must be a JSON object");
        }
        let result = if v.get("action").is_some() { self.control(v) } else { self.query(v) };
        if let Err(e) = result {
            self.out.error(&id, format!("{e:#}"));
        }
    }

    /// Waits for every running query to answer (the end of the input).
    pub fn finish(&mut self) {
        for r in self.running.drain(..) {
            let _ = r.handle.join();
        }
    }

    fn control(&mut self, v: Value) -> Result<()> {
        let c: Control = serde_json::from_value(v).map_err(|e| anyhow!("{e}"))?;
        ensure!(c.action == "terminate", "unknown action '{}' (expected terminate)", c.action);
        let (stop, keep): (Vec<Running>, Vec<Running>) = self.running.drain(..).partition(|r| r.id == c.id);
        self.running = keep;
        for r in &stop {
            r.cancel.store(true, Ordering::Relaxed);
        }
        let n = stop.len();
        for r in stop {
            let _ = r.handle.join();
        }
        self.out.send(&json!({"id": c.id, "action": "terminate", "terminated": n}));
        Ok(())
    }

    fn query(&mut self, v: Value) -> Result<()> {
        let q: Query = serde_json::from_value(v).map_err(|e| anyhow!("{e}"))?;
        let job = job_of(q, &self.opts)?;
        let size = job.game.board().size();
        let taken = {
            let mut idle = lock(&self.idle);
            idle.iter().rposition(|s| s.size == size).map(|k| idle.remove(k))
        };
        let mut searcher = match taken {
            Some(s) => s,
            None => Searcher { size, agent: (self.factory)(size)?, kept: None },
        };
        let cancel = Arc::new(AtomicBool::new(false));
        let (out, idle, stop) = (self.out.clone(), self.idle.clone(), cancel.clone());
        let id = job.id.clone();
        let handle = std::thread::spawn(move || {
            let answer = run(&job, &mut searcher, &stop, &out);
            if answer.is_err() {
                searcher.kept = None;
            }
            // Back in the pool before the answer goes out: a query sent after reading the answer
            // finds this tree.
            lock(&idle).push(searcher);
            match answer {
                Ok(a) => out.send(&a),
                Err(e) => out.error(&job.id, format!("{e:#}")),
            }
        });
        self.running.push(Running { id, cancel, handle });
        Ok(())
    }
}

/// Runs `engine` on `input` until its end, then waits for the queries still running.
pub fn serve(engine: &mut Engine, input: impl BufRead) -> Result<()> {
    for line in input.lines() {
        engine.handle(&line.context("reading a request line")?);
    }
    engine.finish();
    Ok(())
}

/// The position and limits of a query, checked.
fn job_of(q: Query, opts: &AnalysisOptions) -> Result<Job> {
    ensure!(q.id.is_string() || q.id.is_number(), "`id` must be a string or a number, got {}", q.id);
    let game = game_of(q.rule.as_deref(), q.size, q.protocol.as_deref(), &q.initial_stones, &q.moves, false)?;
    if let Some(o) = game.outcome() {
        bail!("the game is already over ({})", outcome_text(&o));
    }
    ensure!(q.visits != Some(0), "visits must be at least 1");
    if let Some(s) = q.seconds {
        ensure!(s.is_finite() && s > 0.0, "seconds must be a positive number, got {s}");
    }
    let playouts = match (q.visits, q.seconds) {
        (Some(v), _) => Some(v),
        (None, Some(_)) => None,
        (None, None) => Some(opts.visits),
    };
    let limit = SearchLimit { playouts, time: q.seconds.map(Duration::from_secs_f64) };
    let report_every = match q.report_every {
        Some(r) => {
            ensure!(r.is_finite() && r > 0.0, "reportEvery must be a positive number of seconds, got {r}");
            Some(Duration::from_secs_f64(r))
        }
        None => None,
    };
    let top = q.top.unwrap_or(opts.top);
    ensure!(top >= 1, "top must be at least 1");
    let pv_length = q.pv_length.unwrap_or(opts.pv_length);
    ensure!(pv_length >= 1, "pvLength must be at least 1");
    Ok(Job {
        id: q.id,
        game,
        limit,
        top,
        vcf_nodes: q.vcf.unwrap_or(opts.root_vcf_nodes),
        report_every,
        pv_length,
        max_tree_bytes: opts.max_tree_bytes,
    })
}

/// The game of a request's `rule` (default renju), `size` (default 15), `protocol` (none: the
/// free opening), `initialStones` and `moves`, replayed by the rules; errors name the field and
/// the move that is wrong. The game may be over after the last move (not before it). A black
/// move on a forbidden point (renju) is an error, or with `forbidden_loses` the move that loses
/// the game, as in play.
pub fn game_of(
    rule: Option<&str>,
    size: Option<usize>,
    protocol: Option<&str>,
    initial_stones: &[Value],
    moves: &[Value],
    forbidden_loses: bool,
) -> Result<Game> {
    let rule: Rule = rule.unwrap_or("renju").parse().context("rule")?;
    let size = size.unwrap_or(15);
    let protocol: Option<Protocol> = protocol.map(str::parse).transpose().context("protocol")?;
    let mut game = match protocol {
        Some(p) => {
            ensure!(initial_stones.is_empty(), "initialStones need the free opening: give no protocol");
            Game::new(size, rule, p, None)?
        }
        None => {
            let mut stones = Vec::with_capacity(initial_stones.len());
            for (k, t) in initial_stones.iter().enumerate() {
                match action_of(t, size).with_context(|| format!("initialStones[{k}]"))? {
                    Action::Place(p) => stones.push(p),
                    a => bail!("initialStones[{k}]: `{a}` is not a point"),
                }
            }
            Game::from_position(size, rule, &stones).context("initialStones")?
        }
    };
    if let Some(o) = game.outcome() {
        bail!("initialStones: the game is already over ({})", outcome_text(&o));
    }
    for (k, t) in moves.iter().enumerate() {
        let a = action_of(t, size).with_context(|| format!("moves[{k}]"))?;
        if let Some(o) = game.outcome() {
            bail!("moves[{k}] {a}: the game is already over ({})", outcome_text(&o));
        }
        if let (Action::Place(p), DecisionKind::PlaceStone(c), false) = (a, game.decision(), forbidden_loses) {
            if game.board().contains(p) && game.board().get(p).is_none() {
                if let Verdict::Forbidden(kind) = game.board().classify(p, c) {
                    bail!("moves[{k}] {a}: a forbidden point for Black ({kind})");
                }
            }
        }
        game.apply(a).map_err(|e| anyhow!("moves[{k}] {a}: {e}"))?;
    }
    Ok(game)
}

/// A position request of the board page (`serve`): the fields of a query that say where the
/// game stands, nothing about a search.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct PositionRequest {
    rule: Option<String>,
    size: Option<usize>,
    protocol: Option<String>,
    #[serde(default)]
    initial_stones: Vec<Value>,
    #[serde(default)]
    moves: Vec<Value>,
}

/// Where a game stands, for a board that shows it and asks a person for the next decision: the
/// request is a query's `rule`, `size`, `protocol`, `initialStones` and `moves` (replayed as
/// [`game_of`] does; the game may be over, also by a black move on a forbidden point), the answer its decisions in canonical spelling, the
/// stones in placement order, who decides what now (`decision` as in analysis answers), the
/// legal protocol actions, whether a point can be chosen, the pending fifth-move offers,
/// Black's forbidden points and the outcome. The format is in `docs/commands.md` (`serve`).
pub fn describe_position(request: &Value) -> Result<Value> {
    let r: PositionRequest = serde_json::from_value(request.clone()).map_err(|e| anyhow!("{e}"))?;
    let game = game_of(r.rule.as_deref(), r.size, r.protocol.as_deref(), &r.initial_stones, &r.moves, true)?;
    let board = game.board();
    let stones: Vec<Value> = board
        .stones()
        .iter()
        .enumerate()
        .map(|(k, &(p, c))| json!({"point": format_point(p), "color": c, "number": k + 1}))
        .collect();
    let moves: Vec<String> = game.history().iter().map(|(_, a)| a.to_string()).collect();
    let last_move = board.stones().last().map(|&(p, _)| format_point(p));
    let offers: Vec<String> = game.pending_offers().iter().map(|&p| format_point(p)).collect();
    let first_color = game.color_of(Player::First);
    let Some(o) = game.outcome() else {
        let me = game.to_decide();
        let color = game.color_of(me);
        let legal = game.legal_actions();
        let placeable = legal.iter().any(|a| matches!(a, Action::Place(_)));
        let actions: Vec<String> =
            legal.iter().filter(|a| !matches!(a, Action::Place(_))).map(|a| a.to_string()).collect();
        let decision = game.decision();
        let forbidden: Vec<Value> = if board.rule() == Rule::Renju && decision == DecisionKind::PlaceStone(Color::Black)
        {
            board
                .forbidden_points()
                .iter()
                .map(|&(p, k)| json!({"point": format_point(p), "kind": k.to_string()}))
                .collect()
        } else {
            Vec::new()
        };
        return Ok(json!({
            "moves": moves,
            "stones": stones,
            "toDecide": me.to_string(),
            "color": color,
            "firstColor": first_color,
            "decision": decision_name(decision),
            "prompt": prompt(&game),
            "actions": actions,
            "placeable": placeable,
            "offers": offers,
            "forbidden": forbidden,
            "outcome": null,
            "lastMove": last_move,
        }));
    };
    let reason = match o.reason {
        OutcomeReason::Five => "five",
        OutcomeReason::ForbiddenMove => "forbidden-move",
        OutcomeReason::NoLegalMove => "no-legal-move",
        OutcomeReason::BoardFull => "board-full",
        OutcomeReason::StoneCap => "stone-cap",
    };
    let mut text = outcome_text(&o);
    if let (OutcomeReason::Five, Some(&(p, c))) = (o.reason, board.stones().last()) {
        let winner = if c == Color::Black { "Black" } else { "White" };
        let what = if longest_line(board, p) > 5 { "an overline" } else { "a five" };
        text = format!("{winner} wins with {what} at {}", format_point(p));
    }
    if let (OutcomeReason::ForbiddenMove, Some((_, Action::Place(p)))) = (o.reason, game.history().last()) {
        // The kind of the forbidden point, judged on the board before the move.
        let before = game_of(
            r.rule.as_deref(),
            r.size,
            r.protocol.as_deref(),
            &r.initial_stones,
            &r.moves[..r.moves.len() - 1],
            true,
        )?;
        if let Verdict::Forbidden(kind) = before.board().classify(*p, Color::Black) {
            text = format!("Black played {}, a forbidden point ({kind}): White wins", format_point(*p));
        }
    }
    Ok(json!({
        "moves": moves,
        "stones": stones,
        "toDecide": null,
        "color": null,
        "firstColor": first_color,
        "decision": null,
        "prompt": text,
        "actions": [],
        "placeable": false,
        "offers": offers,
        "forbidden": [],
        "outcome": {
            "winner": o.winner.map(|p| p.to_string()),
            "winnerColor": o.winner_color,
            "reason": reason,
            "text": text,
        },
        "lastMove": last_move,
    }))
}

/// The longest line of one colour through the stone on `p`.
fn longest_line(board: &renju_rules::Board, p: Point) -> usize {
    let Some(c) = board.get(p) else { return 0 };
    let run = |dx: i32, dy: i32| {
        let mut n = 0;
        let (mut x, mut y) = (p.x as i32 + dx, p.y as i32 + dy);
        while x >= 0
            && y >= 0
            && board.contains(Point::new(x as u8, y as u8))
            && board.get(Point::new(x as u8, y as u8)) == Some(c)
        {
            n += 1;
            x += dx;
            y += dy;
        }
        n
    };
    [(1, 0), (0, 1), (1, 1), (1, -1)].iter().map(|&(dx, dy)| 1 + run(dx, dy) + run(-dx, -dy)).max().unwrap_or(1)
}

/// What the player to decide is asked, in words.
fn prompt(game: &Game) -> String {
    let me = game.to_decide();
    let who = match game.color_of(me) {
        Color::Black => "Black",
        Color::White => "White",
    };
    let what = match game.decision() {
        DecisionKind::PlaceStone(_) => "place a stone".to_string(),
        DecisionKind::SwapOrKeep => "keep the colours or swap them".to_string(),
        DecisionKind::ChooseN => "declare the number of fifth-move offers".to_string(),
        DecisionKind::PlaceOffer { index, total } => format!("place fifth-move offer {} of {total}", index + 1),
        DecisionKind::PickOffer => "pick the fifth move that stays (click an offer)".to_string(),
        DecisionKind::SingleOrDouble => "stop here (single) or place the next stone too (double)".to_string(),
        DecisionKind::ExchangeOrTake => "take the next stone (keep) or exchange (swap)".to_string(),
        DecisionKind::SwapKeepOrDouble => {
            "take Black (swap), stay White (keep) or place two more stones (double)".to_string()
        }
    };
    format!("{who} ({me} player): {what}")
}

/// A decision as a query writes it: a point in notation or `[x, y]`, or a protocol action.
fn action_of(t: &Value, size: usize) -> Result<Action> {
    match t {
        Value::String(s) => {
            let token = s.trim().to_ascii_lowercase();
            if !token.is_empty()
                && token.chars().all(|c| c.is_ascii_alphabetic())
                && Action::parse(&token, size).is_err()
            {
                bail!(
                    "`{s}` is neither a point (\"h8\") nor a protocol action (keep, swap, single, double, choose-n:N)"
                );
            }
            Action::parse(&token, size).map_err(|e| anyhow!("{e}"))
        }
        Value::Array(xy) if xy.len() == 2 => {
            let coord = |v: &Value| v.as_u64().filter(|&c| c < size as u64);
            match (coord(&xy[0]), coord(&xy[1])) {
                (Some(x), Some(y)) => Ok(Action::Place(Point::new(x as u8, y as u8))),
                _ => bail!("{t} is not a point of the {size}x{size} board ([x, y], each 0..{size})"),
            }
        }
        _ => bail!(
            "{t} is neither a point (\"h8\" or [x, y]) nor a protocol action (keep, swap, single, double, \
             choose-n:N)"
        ),
    }
}

/// How a game ended, in words.
fn outcome_text(o: &Outcome) -> String {
    let winner = match o.winner_color {
        Some(Color::Black) => "Black wins",
        Some(Color::White) => "White wins",
        None => "a draw",
    };
    let why = match o.reason {
        OutcomeReason::Five => "a five",
        OutcomeReason::ForbiddenMove => "a forbidden move",
        OutcomeReason::NoLegalMove => "Black has no legal move",
        OutcomeReason::BoardFull => "the board is full",
        OutcomeReason::StoneCap => "the stone cap",
    };
    format!("{why}: {winner}")
}

/// The one call into the search: searches `tree` (rooted at `game`) up to `visits` root visits
/// or for `time`, whichever comes first.
fn search(agent: &mut MctsAgent, tree: &mut Mcts, game: &Game, visits: Option<u64>, time: Duration) -> Result<()> {
    agent.search_tree(tree, game, &SearchLimit { playouts: visits, time: Some(time) }, Instant::now())
}

/// Searches one query, sending the partial answers when asked for; returns the final answer
/// and leaves the tree in `s`.
fn run(job: &Job, s: &mut Searcher, cancel: &AtomicBool, out: &Output) -> Result<Value> {
    let start = Instant::now();
    let game = &job.game;
    let mut tree = match s.kept.take() {
        Some((from, mut m)) => {
            m.follow(&from, game);
            m
        }
        None => Mcts::new(game, s.agent.settings().config.clone()),
    };
    let facts = facts(game, job.vcf_nodes);
    let deadline = job.limit.time.map(|t| start + t);
    let cap = job.limit.playouts.unwrap_or(u64::MAX);
    let mut next_report = job.report_every.map(|r| start + r);
    let mut terminated = false;
    // A slice may end without a playout (its threads start no batch that would not end in
    // time, and a slice cut short by a report can be too short for any): only a tree that has
    // not grown for a whole [`STALL`] cannot grow.
    let mut grew = start;
    loop {
        if cancel.load(Ordering::Relaxed) {
            terminated = true;
            break;
        }
        let now = Instant::now();
        let full = (tree.tree_size() * NODE_BYTES) as u64 >= job.max_tree_bytes;
        if full
            || tree.root_visits() as u64 >= cap
            || tree.root_forced().is_some()
            || tree.root_proven().is_some()
            || deadline.is_some_and(|d| now >= d)
        {
            break;
        }
        let until = [deadline, next_report].into_iter().flatten().fold(now + SLICE, Instant::min);
        let before = tree.root_visits();
        search(&mut s.agent, &mut tree, game, job.limit.playouts, until.saturating_duration_since(now))?;
        if let (Some(at), Some(every)) = (next_report, job.report_every) {
            let now = Instant::now();
            if now >= at {
                out.send(&answer(job, &mut s.agent, &tree, &facts, true, false)?);
                next_report = Some(now + every);
            }
        }
        let now = Instant::now();
        if tree.root_visits() != before {
            grew = now;
        } else if now - grew >= STALL {
            break;
        }
    }
    let last = answer(job, &mut s.agent, &tree, &facts, false, terminated)?;
    s.kept = Some((game.clone(), tree));
    Ok(last)
}

/// What the rules say of the position, computed once per query: Black's forbidden points
/// (renju) and each colour's VCF (when the budget is not 0).
struct Facts {
    forbidden: Value,
    vcf: Option<Value>,
}

fn facts(game: &Game, vcf_nodes: u64) -> Facts {
    let b = game.board();
    let forbidden = if b.rule() == Rule::Renju {
        b.forbidden_points().iter().map(|&(p, k)| json!({"point": format_point(p), "kind": k.to_string()})).collect()
    } else {
        Vec::new()
    };
    let vcf = (vcf_nodes > 0).then(|| {
        let of = |c: Color| json!(VcfReply::from(&vcf(b, c, &Limits::nodes(vcf_nodes))));
        json!({"black": of(Color::Black), "white": of(Color::White)})
    });
    Facts { forbidden: Value::Array(forbidden), vcf }
}

/// A probability or value rounded to 4 decimals for the answer.
fn r4(x: f32) -> f64 {
    (x as f64 * 1e4).round() / 1e4
}

/// The name of a decision in answers.
fn decision_name(d: DecisionKind) -> &'static str {
    match d {
        DecisionKind::PlaceStone(_) => "stone",
        DecisionKind::SwapOrKeep => "swap-or-keep",
        DecisionKind::ChooseN => "choose-n",
        DecisionKind::PlaceOffer { .. } => "offer",
        DecisionKind::PickOffer => "pick-offer",
        DecisionKind::SingleOrDouble => "single-or-double",
        DecisionKind::SwapKeepOrDouble => "swap-keep-or-double",
        DecisionKind::ExchangeOrTake => "exchange-or-take",
    }
}

/// The answer for the tree as it stands.
fn answer(
    job: &Job,
    agent: &mut MctsAgent,
    tree: &Mcts,
    facts: &Facts,
    during: bool,
    terminated: bool,
) -> Result<Value> {
    let game = &job.game;
    let size = game.board().size();
    let me = game.to_decide();
    let values = tree.root_child_values();
    let mut kids: Vec<(usize, u32, f32, f32)> =
        tree.root_children().iter().zip(&values).map(|(&(a, n, prior), &(_, _, q))| (a, n, q, prior)).collect();
    // The action the engine plays first (the brain's choice: `MctsAgent::root_choice`), then
    // the others by visits and prior.
    let best = if tree.root_visits() > 0 { agent.root_choice(tree, false) } else { None };
    sort_chosen_first(&mut kids, best, |k| (k.0, k.1 as u64, k.3));
    let z = agent.settings().lcb;
    let mut candidates = Vec::new();
    for &(a, n, q, prior) in kids.iter().take(job.top) {
        let action = action_from_index(a, size).context("a root child outside the action space")?;
        let mut after = game.clone();
        after.apply(action).with_context(|| format!("candidate {action}"))?;
        // W/D/L for the player to decide: exact when the action ends the game, else the value
        // head's at the position after it (seen from whoever decides there).
        let wdl = match after.outcome() {
            Some(o) => wdl_one_hot(o.winner, me),
            None => {
                let w = agent.value_head(&after)?;
                if after.to_decide() == me {
                    w
                } else {
                    [w[2], w[1], w[0]]
                }
            }
        };
        let pv: Vec<String> = tree
            .principal_variation(a, job.pv_length)
            .into_iter()
            .filter_map(|i| action_from_index(i, size))
            .map(|x| x.to_string())
            .collect();
        let mut c = json!({
            "action": action.to_string(),
            "visits": n,
            "value": (n > 0).then(|| r4(q)),
            "wdl": wdl.map(r4),
            "prior": r4(prior),
            "pv": pv,
        });
        if let Some(z) = z.filter(|_| n > 0) {
            c["lcb"] = json!(r4(lower_confidence_bound(q, n, z) as f32));
        }
        candidates.push(c);
    }
    let root_wdl = agent.value_head(game)?;
    let mut a = json!({
        "id": job.id,
        "isDuringSearch": during,
        "decision": decision_name(game.decision()),
        "player": me.to_string(),
        "color": game.color_of(me),
        "visits": tree.root_visits(),
        "root": {"value": r4(tree.root_value()), "wdl": root_wdl.map(r4)},
        "candidates": candidates,
        "forbidden": facts.forbidden,
    });
    if let Some(v) = &facts.vcf {
        a["vcf"] = v.clone();
    }
    if terminated {
        a["terminated"] = json!(true);
    }
    Ok(a)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn position(line: &str) -> Result<Value> {
        describe_position(&serde_json::from_str(line)?)
    }

    #[test]
    fn a_rif_position_says_who_decides_what() {
        let p = position(r#"{"protocol":"rif","moves":["h8","h9","i9"]}"#).unwrap();
        assert_eq!(p["decision"], "swap-or-keep");
        assert_eq!(p["toDecide"], "second");
        assert_eq!(p["color"], "white");
        assert_eq!(p["actions"], json!(["keep", "swap"]));
        assert_eq!(p["placeable"], false);
        assert_eq!(p["stones"][1], json!({"point": "h9", "color": "white", "number": 2}));
        // After the swap the second player holds Black; White (now the first player) places
        // stone 4, then Black places two offers, then White picks one.
        let p = position(r#"{"protocol":"rif","moves":["h8","h9","i9","swap","j10","g10"]}"#).unwrap();
        assert_eq!(p["firstColor"], "white");
        assert_eq!((p["decision"].as_str(), p["toDecide"].as_str()), (Some("offer"), Some("second")));
        assert_eq!(p["offers"], json!(["g10"]));
        let p = position(r#"{"protocol":"rif","moves":["h8","h9","i9","swap","j10","g10","i7"]}"#).unwrap();
        assert_eq!((p["decision"].as_str(), p["toDecide"].as_str()), (Some("pick-offer"), Some("first")));
        let p = position(r#"{"protocol":"rif","moves":["h8","h9","i9","swap","j10","g10","i7","i7"]}"#).unwrap();
        assert_eq!(p["offers"], json!([]));
        assert_eq!(p["lastMove"], "i7");
        assert_eq!(p["stones"].as_array().unwrap().len(), 5);
        assert_eq!((p["decision"].as_str(), p["color"].as_str()), (Some("stone"), Some("white")));
    }

    #[test]
    fn forbidden_points_are_listed_and_playing_one_loses() {
        // RULES.md §4.5: f8 g8 h6 h7 make h8 a double-three.
        let moves = r#""f8","a1","g8","a3","h6","o1","h7","o3""#;
        let p = position(&format!(r#"{{"moves":[{moves}]}}"#)).unwrap();
        assert_eq!(p["forbidden"], json!([{"point": "h8", "kind": "double-three"}]));
        let p = position(&format!(r#"{{"moves":[{moves},"h8"]}}"#)).unwrap();
        assert_eq!(p["outcome"]["reason"], "forbidden-move");
        assert_eq!(p["outcome"]["winnerColor"], "white");
        assert_eq!(p["outcome"]["text"], "Black played h8, a forbidden point (double-three): White wins");
        assert_eq!(p["toDecide"], Value::Null);
        // White is never restricted: no forbidden points on White's turn.
        let p = position(r#"{"moves":["f8","a1","g8","a3","h6","o1","h7"]}"#).unwrap();
        assert_eq!(p["forbidden"], json!([]));
    }

    #[test]
    fn a_five_and_an_overline_are_announced() {
        let p = position(r#"{"moves":["a1","b1","a2","b2","a3","b3","a4","b4","a5"]}"#).unwrap();
        assert_eq!(p["outcome"]["text"], "Black wins with a five at a5");
        // White's overline wins under renju: b1-b4 and b6, then b5 makes six.
        let p = position(r#"{"moves":["a1","b1","a2","b2","a3","b3","n4","b4","n8","b6","n12","b5"]}"#).unwrap();
        assert_eq!(p["outcome"]["text"], "White wins with an overline at b5");
        assert_eq!(p["outcome"]["winner"], "second");
    }

    #[test]
    fn bad_position_requests_are_errors_naming_the_fault() {
        let e = |line: &str| format!("{:#}", position(line).unwrap_err());
        assert!(e(r#"{"moves":["h8","h8"]}"#).contains("moves[1] h8"), "{}", e(r#"{"moves":["h8","h8"]}"#));
        assert!(e(r#"{"moves":["h8"],"visits":3}"#).contains("unknown field `visits`"));
        assert!(e(r#"{"protocol":"rif","moves":["a1"]}"#).contains("moves[0] a1"));
        assert!(e(r#"{"protocol":"nope"}"#).contains("protocol"));
        assert!(e(r#"{"moves":["a1","b1","a2","b2","a3","b3","a4","b4","a5","c1"]}"#).contains("already over"));
    }

    fn job(line: &str) -> Result<Job> {
        job_of(serde_json::from_str(line)?, &AnalysisOptions::default())
    }

    fn err(line: &str) -> String {
        match job(line) {
            Ok(_) => panic!("{line} was accepted"),
            Err(e) => format!("{e:#}"),
        }
    }

    #[test]
    fn positions_under_protocols_and_as_they_stand() {
        // RIF: three stones, keep, the fourth stone, two offers, White picks j7 (a point).
        let j = job(r#"{"id":"a","protocol":"rif","moves":["h8","h9","j10","keep","g7","i9","j7","j7"]}"#).unwrap();
        assert_eq!(j.game.board().stone_count(), 5);
        assert_eq!(j.game.decision(), DecisionKind::PlaceStone(Color::White));
        // [x, y] is the rules crate's point: [7, 7] = h8.
        let j = job(r#"{"id":1,"rule":"freestyle","size":9,"moves":[[4,4],"e6"]}"#).unwrap();
        assert_eq!(j.game.board().get(Point::new(4, 4)), Some(Color::Black));
        assert_eq!(j.limit, SearchLimit { playouts: Some(800), time: None });
        // Stones as they stand may sit on a point now forbidden to Black (h8 in a double-three).
        let j = job(r#"{"id":"p","initialStones":["f8","a1","g8","a3","h6","a5","h7","a7","h8","o15"]}"#).unwrap();
        assert_eq!(j.game.board().stone_count(), 10);
        let j = job(r#"{"id":"t","seconds":1.5}"#).unwrap();
        assert_eq!(j.limit, SearchLimit { playouts: None, time: Some(Duration::from_millis(1500)) });
    }

    #[test]
    fn malformed_queries_name_what_is_wrong() {
        assert!(err(r#"{"id":"a","colour":"black"}"#).contains("unknown field `colour`"));
        assert!(err(r#"{"id":"a","rule":"gomoku"}"#).contains("unknown rule 'gomoku'"));
        assert!(err(r#"{"id":"a","protocol":"swap9"}"#).contains("unknown protocol 'swap9'"));
        let e = err(r#"{"id":"a","moves":["h8","h8"]}"#);
        assert!(e.contains("moves[1]") && e.contains("occupied"), "{e}");
        let e = err(r#"{"id":"a","moves":["h8","a1","z9"]}"#);
        assert!(e.contains("moves[2]") && e.contains("z9"), "{e}");
        let e = err(r#"{"id":"a","protocol":"rif","moves":["h8","h9","j10","dance"]}"#);
        assert!(e.contains("moves[3]: `dance` is neither a point"), "{e}");
        let e = err(r#"{"id":"a","moves":[[15,0]]}"#);
        assert!(e.contains("moves[0]") && e.contains("[15,0]"), "{e}");
        // Black h8 makes a double-three (RULES.md §4.5, first row).
        let e = err(r#"{"id":"a","moves":["f8","a1","g8","a3","h6","a5","h7","a7","h8"]}"#);
        assert!(e.contains("moves[8] h8: a forbidden point for Black (double-three)"), "{e}");
        let e = err(r#"{"id":"a","moves":["a1","b1","a2","b2","a3","b3","a4","b4","a5","b5"]}"#);
        assert!(e.contains("moves[9] b5: the game is already over (a five: Black wins)"), "{e}");
        let e = err(r#"{"id":"a","moves":["a1","b1","a2","b2","a3","b3","a4","b4","a5"]}"#);
        assert!(e.contains("the game is already over (a five: Black wins)"), "{e}");
        // RIF: stone 2 must be in the central 3x3.
        let e = err(r#"{"id":"a","protocol":"rif","moves":["h8","a1"]}"#);
        assert!(e.contains("moves[1] a1") && e.contains("not legal"), "{e}");
        assert!(err(r#"{"id":"a","visits":0}"#).contains("visits must be at least 1"));
        assert!(err(r#"{"id":"a","seconds":-1}"#).contains("seconds must be a positive"));
        assert!(err(r#"{"id":"a","reportEvery":0}"#).contains("reportEvery"));
        assert!(err(r#"{"id":null}"#).contains("`id` must be"));
        assert!(err(r#"{"id":"a","protocol":"rif","initialStones":["h8"]}"#).contains("initialStones"));
    }
}
