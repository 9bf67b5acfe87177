//! `renju-zero serve`: a board in the browser. One page (plain HTML, JavaScript and SVG in
//! `src/serve/page/`, compiled into the binary) on a small HTTP server (axum on tokio), bound to
//! 127.0.0.1 unless told otherwise. The page plays against the AI under every rule and opening
//! protocol (swap decisions and fifth-move offers included), analyses positions with the
//! analysis engine's search streamed as it deepens, and replays the games of run directories.
//!
//! The HTTP API (JSON; every error is a 4xx or 5xx answer `{"error": "..."}` naming what was
//! wrong, and the server goes on):
//! - `GET /api/info`: the model, the rules and protocols, the run directories given.
//! - `POST /api/position`: where a game stands ([`describe_position`]).
//! - `POST /api/analyze`: an analysis query (the `analyze` format; the server runs it under an
//!   id of its own and answers with the query's `id`, or its own when the query has none),
//!   answered with its final answer.
//! - `GET /api/analyze/stream?q=QUERY`: the same query as server-sent events, one answer per
//!   event (partial answers with `reportEvery`), the final one last; the search stops when the
//!   page closes the stream.
//! - `GET /api/games?run=N&limit=M`: the newest games of run directory N (arena and curve
//!   `games.jsonl`, self-play shards).
//! - `GET /api/run?run=N`: its generations and learning curve (`curve.csv`).

use std::collections::HashMap;
use std::io::Write;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use anyhow::{Context, Result};
use axum::extract::{Query, State};
use axum::http::{header, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use renju_arena::analysis::{describe_position, Engine, Output};
use renju_arena::records::{game_sources, GameSource, PortableGame};
use renju_rules::Rule;
use serde::Deserialize;
use serde_json::{json, Value};
use tokio::sync::mpsc;

const INDEX_HTML: &str = include_str!("page/index.html");
const APP_JS: &str = include_str!("page/app.js");
const STYLE_CSS: &str = include_str!("page/style.css");

/// Searches running at once; a query beyond them is refused (503) until one ends.
pub const MAX_SEARCHES: usize = 4;

/// What the server serves.
pub struct ServeConfig {
    /// Address to bind (`127.0.0.1` by default in the CLI).
    pub host: String,
    /// Port (0: any free port; the address is printed on stderr).
    pub port: u16,
    /// The model, in words, for the page.
    pub model: String,
    /// Run directories whose games and curves the page may show (only these are read).
    pub runs: Vec<PathBuf>,
}

/// Answers of the analysis engine, routed to the request waiting for each id.
type Routes = Arc<Mutex<HashMap<String, mpsc::UnboundedSender<Value>>>>;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The engine's output: complete answer lines are parsed and sent to the request of their id; a
/// final answer (or an error) ends that request's route.
struct RouteWriter {
    buf: Vec<u8>,
    routes: Routes,
}

impl Write for RouteWriter {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.buf.extend_from_slice(b);
        while let Some(i) = self.buf.iter().position(|&c| c == b'\n') {
            let line: Vec<u8> = self.buf.drain(..=i).collect();
            let Ok(v) = serde_json::from_slice::<Value>(&line) else { continue };
            // The acknowledgement of a terminate carries `action`; nobody waits for it.
            if v.get("action").is_some() {
                continue;
            }
            let Some(id) = v.get("id").and_then(Value::as_str) else { continue };
            let last = v.get("isDuringSearch") != Some(&Value::Bool(true));
            let mut routes = lock(&self.routes);
            let tx = if last { routes.remove(id) } else { routes.get(id).cloned() };
            if let Some(tx) = tx {
                let _ = tx.send(v);
            }
        }
        Ok(b.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The server's state.
struct App {
    engine: Mutex<Engine>,
    routes: Routes,
    next_id: AtomicU64,
    info: Value,
    runs: Vec<PathBuf>,
}

/// An error answer: a status and a message.
struct ApiError(StatusCode, String);

impl ApiError {
    fn bad(msg: impl std::fmt::Display) -> ApiError {
        ApiError(StatusCode::BAD_REQUEST, msg.to_string())
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.0, Json(json!({"error": self.1}))).into_response()
    }
}

type ApiResult<T> = std::result::Result<T, ApiError>;

/// A query handed to the engine: its route stays until the final answer, and a query whose
/// requester goes away (the page closed the stream, the HTTP request was dropped) is terminated.
struct Pending {
    app: Arc<App>,
    id: String,
    /// The query's own `id`, if it had one: its answers carry it instead of the server's.
    asked_id: Option<Value>,
    done: bool,
}

impl Pending {
    /// `answer` as the requester sees it: with the `id` of its query.
    fn relabel(&self, mut answer: Value) -> Value {
        if let (Some(id), Some(obj)) = (&self.asked_id, answer.as_object_mut()) {
            obj.insert("id".into(), id.clone());
        }
        answer
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        lock(&self.app.routes).remove(&self.id);
        let (app, id) = (self.app.clone(), self.id.clone());
        // Terminating waits for the search thread's next look at its flag: not on the runtime.
        std::thread::spawn(move || lock(&app.engine).handle(&json!({"action": "terminate", "id": id}).to_string()));
    }
}

impl App {
    /// Starts `query` (a JSON object), under an id of the server's, so that queries of
    /// different requesters never share one, and returns the channel of its answers (with the
    /// server's id: [`Pending::relabel`] gives them the query's).
    async fn start(self: &Arc<Self>, mut query: Value) -> ApiResult<(Pending, mpsc::UnboundedReceiver<Value>)> {
        let Some(obj) = query.as_object_mut() else {
            return Err(ApiError::bad("a query must be a JSON object"));
        };
        if lock(&self.routes).len() >= MAX_SEARCHES {
            return Err(ApiError(
                StatusCode::SERVICE_UNAVAILABLE,
                format!("{MAX_SEARCHES} searches are running already; stop one and try again"),
            ));
        }
        let id = format!("q{}", self.next_id.fetch_add(1, Ordering::Relaxed));
        let asked_id = obj.insert("id".into(), Value::String(id.clone()));
        let (tx, rx) = mpsc::unbounded_channel();
        lock(&self.routes).insert(id.clone(), tx);
        let pending = Pending { app: self.clone(), id, asked_id, done: false };
        let app = self.clone();
        let line = query.to_string();
        // Starting a query may load a model (the first one of a board size).
        tokio::task::spawn_blocking(move || lock(&app.engine).handle(&line))
            .await
            .map_err(|e| ApiError(StatusCode::INTERNAL_SERVER_ERROR, format!("starting the search: {e}")))?;
        Ok((pending, rx))
    }
}

/// Parses a request body as JSON.
fn body_json(body: &str) -> ApiResult<Value> {
    serde_json::from_str(body).map_err(|e| ApiError::bad(format!("the request body is not JSON: {e}")))
}

async fn info(State(app): State<Arc<App>>) -> Json<Value> {
    Json(app.info.clone())
}

async fn position(body: String) -> ApiResult<Json<Value>> {
    let v = body_json(&body)?;
    describe_position(&v).map(Json).map_err(|e| ApiError::bad(format!("{e:#}")))
}

async fn analyze(State(app): State<Arc<App>>, body: String) -> ApiResult<Json<Value>> {
    let query = body_json(&body)?;
    let (mut pending, mut rx) = app.start(query).await?;
    while let Some(v) = rx.recv().await {
        if v.get("isDuringSearch") == Some(&Value::Bool(true)) {
            continue;
        }
        pending.done = true;
        return match v.get("error").and_then(Value::as_str) {
            Some(e) => Err(ApiError::bad(e)),
            None => Ok(Json(pending.relabel(v))),
        };
    }
    pending.done = true;
    Err(ApiError(StatusCode::INTERNAL_SERVER_ERROR, "the search ended without an answer".into()))
}

#[derive(Deserialize)]
struct StreamParams {
    q: String,
}

async fn analyze_stream(
    State(app): State<Arc<App>>,
    Query(p): Query<StreamParams>,
) -> ApiResult<Sse<impl futures_util::Stream<Item = std::result::Result<Event, std::convert::Infallible>>>> {
    let query = body_json(&p.q)?;
    let (pending, rx) = app.start(query).await?;
    let stream = futures_util::stream::unfold(Some((pending, rx)), |state| async move {
        let (mut pending, mut rx) = state?;
        let v = rx.recv().await?;
        let last = v.get("isDuringSearch") != Some(&Value::Bool(true));
        let event = Event::default().data(pending.relabel(v).to_string());
        if last {
            pending.done = true;
            return Some((Ok(event), None));
        }
        Some((Ok(event), Some((pending, rx))))
    });
    Ok(Sse::new(stream).keep_alive(KeepAlive::default()))
}

#[derive(Deserialize)]
struct RunParams {
    run: usize,
    limit: Option<usize>,
}

impl App {
    fn run_dir(&self, k: usize) -> ApiResult<&Path> {
        self.runs.get(k).map(PathBuf::as_path).ok_or_else(|| {
            ApiError(
                StatusCode::NOT_FOUND,
                format!("no run {k}: the server was given {} run directories", self.runs.len()),
            )
        })
    }
}

/// The board size and rule of a run directory's games: its `config.toml`'s `[game]`, else 15x15
/// renju.
fn run_game_setup(dir: &Path) -> (usize, Rule) {
    let cfg: Option<toml::Value> =
        std::fs::read_to_string(dir.join("config.toml")).ok().and_then(|t| toml::from_str(&t).ok());
    let game = cfg.as_ref().and_then(|c| c.get("game"));
    let size = game.and_then(|g| g.get("size")).and_then(toml::Value::as_integer).unwrap_or(15) as usize;
    let rule = game.and_then(|g| g.get("rule")).and_then(toml::Value::as_str).and_then(|r| r.parse().ok());
    (size, rule.unwrap_or(Rule::Renju))
}

/// A game for the page: its decisions in the spelling of analysis queries.
fn game_json(source: &GameSource, index: usize, g: &PortableGame) -> Value {
    json!({
        "id": format!("{}#{index}", source.label()),
        "source": source.label(),
        "first": g.first,
        "second": g.second,
        "black": g.black,
        "white": g.white,
        "rule": g.rule.to_string(),
        "size": g.size,
        "protocol": g.protocol.to_string(),
        "moves": g.decisions.iter().map(|(_, a)| a.to_string()).collect::<Vec<_>>(),
        "winner": g.winner,
        "reason": g.reason,
    })
}

/// The newest `limit` games of a run directory: its sources newest first (by modification
/// time), each source's games last first.
fn newest_games(dir: &Path, limit: usize) -> Result<Vec<Value>> {
    let (size, rule) = run_game_setup(dir);
    let mut sources: Vec<(std::time::SystemTime, GameSource)> = game_sources(dir)?
        .into_iter()
        .map(|s| (std::fs::metadata(s.path()).and_then(|m| m.modified()).unwrap_or(std::time::UNIX_EPOCH), s))
        .collect();
    sources.sort_by_key(|s| std::cmp::Reverse(s.0));
    let mut out = Vec::new();
    for (_, s) in sources {
        // A shard being written or a source that cannot be read is skipped, not fatal.
        let Ok(games) = s.games(size, rule) else { continue };
        for (index, g) in games.iter().rev() {
            out.push(game_json(&s, *index, g));
            if out.len() >= limit {
                return Ok(out);
            }
        }
    }
    Ok(out)
}

async fn games(State(app): State<Arc<App>>, Query(p): Query<RunParams>) -> ApiResult<Json<Value>> {
    let dir = app.run_dir(p.run)?.to_path_buf();
    let limit = p.limit.unwrap_or(200).clamp(1, 5000);
    let games = tokio::task::spawn_blocking(move || newest_games(&dir, limit))
        .await
        .map_err(|e| ApiError(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?
        .map_err(|e| ApiError(StatusCode::INTERNAL_SERVER_ERROR, format!("{e:#}")))?;
    Ok(Json(json!({"games": games})))
}

/// `curve.csv` as columns and rows (numbers where a cell is one, else the text; empty cells
/// null).
fn read_curve(path: &Path) -> Option<Value> {
    let text = std::fs::read_to_string(path).ok()?;
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let columns: Vec<&str> = lines.next()?.split(',').map(str::trim).collect();
    let rows: Vec<Vec<Value>> = lines
        .map(|l| {
            l.split(',')
                .map(|c| {
                    let c = c.trim();
                    if c.is_empty() {
                        Value::Null
                    } else {
                        c.parse::<f64>()
                            .ok()
                            .and_then(|x| serde_json::Number::from_f64(x).map(Value::Number))
                            .unwrap_or_else(|| Value::String(c.into()))
                    }
                })
                .collect()
        })
        .collect();
    Some(json!({"columns": columns, "rows": rows}))
}

/// The training's own curve from `generations.jsonl` (losses and self-play statistics per
/// generation; at most 500 rows, evenly spaced), for a run that has no `curve.csv` yet.
fn training_curve(path: &Path) -> Option<Value> {
    const COLUMNS: [&str; 9] = [
        "generation",
        "minutes",
        "total_samples",
        "selfplay_games",
        "policy_loss",
        "value_loss",
        "black_score",
        "mean_length",
        "loss",
    ];
    let text = std::fs::read_to_string(path).ok()?;
    let lines: Vec<Value> = text.lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
    if lines.is_empty() {
        return None;
    }
    let every = lines.len().div_ceil(500);
    let rows: Vec<Vec<Value>> = lines
        .iter()
        .enumerate()
        .filter(|(k, _)| k % every == 0 || *k + 1 == lines.len())
        .map(|(_, g)| {
            COLUMNS
                .iter()
                .map(|c| {
                    g.get(*c).or_else(|| g.get("selfplay").and_then(|s| s.get(*c))).cloned().unwrap_or(Value::Null)
                })
                .collect()
        })
        .collect();
    Some(json!({"columns": COLUMNS, "rows": rows, "source": "generations.jsonl"}))
}

/// A run directory's generations (`models/gen-*`, oldest first), the latest, and its curve
/// (`curve.csv` in the directory or in `curve/`, else the training's from `generations.jsonl`).
fn run_summary(dir: &Path) -> Value {
    let mut generations: Vec<String> = std::fs::read_dir(dir.join("models"))
        .map(|it| {
            it.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with("gen-"))
                .collect()
        })
        .unwrap_or_default();
    generations.sort();
    let latest = std::fs::read_to_string(dir.join("models/LATEST")).ok().map(|s| s.trim().to_string());
    let curve = [dir.join("curve.csv"), dir.join("curve/curve.csv")]
        .iter()
        .find_map(|p| read_curve(p))
        .or_else(|| training_curve(&dir.join("generations.jsonl")));
    json!({
        "name": dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
        "path": dir.display().to_string(),
        "generations": generations,
        "latest": latest,
        "curve": curve,
    })
}

async fn run_info(State(app): State<Arc<App>>, Query(p): Query<RunParams>) -> ApiResult<Json<Value>> {
    let dir = app.run_dir(p.run)?.to_path_buf();
    Ok(Json(run_summary(&dir)))
}

fn asset(kind: &'static str, body: &'static str) -> Response {
    ([(header::CONTENT_TYPE, kind), (header::CACHE_CONTROL, "no-cache")], body).into_response()
}

/// The router of the page and its API (also what the tests drive).
fn router(app: Arc<App>) -> Router {
    Router::new()
        .route("/", get(|| async { asset("text/html; charset=utf-8", INDEX_HTML) }))
        .route("/app.js", get(|| async { asset("text/javascript; charset=utf-8", APP_JS) }))
        .route("/style.css", get(|| async { asset("text/css; charset=utf-8", STYLE_CSS) }))
        .route("/api/info", get(info))
        .route("/api/position", post(position))
        .route("/api/analyze", post(analyze))
        .route("/api/analyze/stream", get(analyze_stream))
        .route("/api/games", get(games))
        .route("/api/run", get(run_info))
        .fallback(|uri: axum::http::Uri| async move {
            ApiError(StatusCode::NOT_FOUND, format!("no such page or API: {}", uri.path()))
        })
        .with_state(app)
}

/// The page's `/api/info`.
fn info_json(cfg: &ServeConfig) -> Value {
    let runs: Vec<Value> = cfg
        .runs
        .iter()
        .enumerate()
        .map(|(k, d)| {
            let name = d
                .canonicalize()
                .ok()
                .and_then(|c| c.file_name().map(|n| n.to_string_lossy().into_owned()))
                .unwrap_or_else(|| d.display().to_string());
            json!({"index": k, "name": name, "path": d.display().to_string()})
        })
        .collect();
    json!({
        "model": cfg.model,
        "rules": ["renju", "standard", "freestyle"],
        "protocols": [
            "rif", "free", "free-centre", "swap1", "swap2", "soosorv:8", "soosorv", "taraguchi:10", "taraguchi",
            "fifth-n", "designated", "designated:any,swap", "lianhuan", "black-sets"
        ],
        "defaultRule": "renju",
        "defaultProtocol": "rif",
        "size": 15,
        "runs": runs,
    })
}

/// Serves the page until the process is stopped: binds `host:port`, says the address on
/// stderr (`renju-zero serve: http://HOST:PORT/`), answers requests with the analysis engine
/// made from `engine`'s factory (its output is replaced by the server's routing).
pub fn run(cfg: ServeConfig, make_engine: impl FnOnce(Output) -> Result<Engine>) -> Result<()> {
    for d in &cfg.runs {
        anyhow::ensure!(d.is_dir(), "--run {}: not a directory", d.display());
    }
    let routes: Routes = Arc::default();
    let engine = make_engine(Output::new(RouteWriter { buf: Vec::new(), routes: routes.clone() }))?;
    let app = Arc::new(App {
        engine: Mutex::new(engine),
        routes,
        next_id: AtomicU64::new(0),
        info: info_json(&cfg),
        runs: cfg.runs.clone(),
    });
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("starting the HTTP server's runtime")?;
    rt.block_on(async move {
        let listener = tokio::net::TcpListener::bind((cfg.host.as_str(), cfg.port))
            .await
            .with_context(|| format!("binding {}:{}", cfg.host, cfg.port))?;
        let addr: SocketAddr = listener.local_addr()?;
        eprintln!("renju-zero serve: http://{addr}/ (model: {})", cfg.model);
        axum::serve(listener, router(app)).await.context("serving HTTP")
    })
}
