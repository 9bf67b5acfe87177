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
use renju_rules::{Action, Color, DecisionKind, Game, Outcome, OutcomeReason, Point, Protocol, Rule, Verdict};
use renju_selfplay::action::action_from_index;
use renju_selfplay::mcts::{Mcts, NODE_BYTES};
use serde::Deserialize;
use serde_json::{json, Value};

use crate::agent::{MctsAgent, SearchLimit};

/// The longest stretch of search between two looks at the terminate flag and the report clock.
pub const SLICE: Duration = Duration::from_millis(50);

/// Makes a search agent for a board size (errors for sizes it cannot play, e.g. a 15x15 model
/// asked about a 9x9 board; the query then gets an error answer).
pub type AgentFactory = Box<dyn FnMut(usize) -> Result<MctsAgent>>;

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
    let rule: Rule = q.rule.as_deref().unwrap_or("renju").parse().context("rule")?;
    let size = q.size.unwrap_or(15);
    let protocol: Option<Protocol> = q.protocol.as_deref().map(str::parse).transpose().context("protocol")?;
    let mut game = match protocol {
        Some(p) => {
            ensure!(q.initial_stones.is_empty(), "initialStones need the free opening: give no protocol");
            Game::new(size, rule, p, None)?
        }
        None => {
            let mut stones = Vec::with_capacity(q.initial_stones.len());
            for (k, t) in q.initial_stones.iter().enumerate() {
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
    for (k, t) in q.moves.iter().enumerate() {
        let a = action_of(t, size).with_context(|| format!("moves[{k}]"))?;
        if let Some(o) = game.outcome() {
            bail!("moves[{k}] {a}: the game is already over ({})", outcome_text(&o));
        }
        if let (Action::Place(p), DecisionKind::PlaceStone(c)) = (a, game.decision()) {
            if game.board().contains(p) && game.board().get(p).is_none() {
                if let Verdict::Forbidden(kind) = game.board().classify(p, c) {
                    bail!("moves[{k}] {a}: a forbidden point for Black ({kind})");
                }
            }
        }
        game.apply(a).map_err(|e| anyhow!("moves[{k}] {a}: {e}"))?;
    }
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
        if tree.root_visits() == before {
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
    kids.sort_by(|x, y| y.1.cmp(&x.1).then(y.3.partial_cmp(&x.3).unwrap_or(std::cmp::Ordering::Equal)));
    let mut candidates = Vec::new();
    for &(a, n, q, prior) in kids.iter().take(job.top) {
        let action = action_from_index(a, size).context("a root child outside the action space")?;
        let mut after = game.clone();
        after.apply(action).with_context(|| format!("candidate {action}"))?;
        // W/D/L for the player to decide: exact when the action ends the game, else the value
        // head's at the position after it (seen from whoever decides there).
        let wdl = match after.outcome() {
            Some(o) if o.winner.is_none() => [0.0, 1.0, 0.0],
            Some(o) if o.winner == Some(me) => [1.0, 0.0, 0.0],
            Some(_) => [0.0, 0.0, 1.0],
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
        candidates.push(json!({
            "action": action.to_string(),
            "visits": n,
            "value": (n > 0).then(|| r4(q)),
            "wdl": wdl.map(r4),
            "prior": r4(prior),
            "pv": pv,
        }));
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
