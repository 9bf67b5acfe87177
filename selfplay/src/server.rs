//! The batching inference server: one thread owns a `Box<dyn Evaluator>`; workers send requests
//! over a crossbeam channel; the server concatenates them into batches of up to `max_batch`
//! positions, waiting at most `max_wait_us` microseconds after the first request of a batch.
//!
//! [`ServerHandle::publish`] replaces the evaluator while workers run (a training loop publishing
//! generation `g`); requests already queued before the message are evaluated by the old one.
//! Every reply carries the generation of the evaluator that produced it.
//!
//! A handle can instead be *per-thread* ([`ServerHandle::per_thread`]): there is no server
//! thread; each clone of the handle builds its own evaluator from a shared
//! [`EvaluatorFactory`] and evaluates on the calling thread (cheap CPU evaluators such as the
//! line-pattern table evaluator, which gain nothing from batching across threads).
//! [`ServerHandle::publish_factory`] switches every clone to a new generation before its next
//! evaluation.

use crate::encode::{NUM_GLOBALS, NUM_PLANES};
use crate::eval::{EvalOutput, Evaluator};
use anyhow::{anyhow, Context, Result};
use crossbeam::channel::{unbounded, Receiver, RecvTimeoutError, Sender};
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Builds one evaluator (for one thread) of the current generation.
pub type EvaluatorFactory = Arc<dyn Fn() -> Result<Box<dyn Evaluator>> + Send + Sync>;

/// Batching parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ServerConfig {
    /// Largest batch in positions. Default 256.
    pub max_batch: usize,
    /// Longest wait for a batch to fill, in microseconds after its first request. Default 1000.
    pub max_wait_us: u64,
    /// Threads the evaluator may use inside one batch (libtorch's intra-op threads of a model
    /// evaluator, set on the inference thread); 0 leaves the library's default (all cores,
    /// which oversubscribes a CPU shared with the trainer and the workers). Default 0.
    pub intra_op_threads: usize,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig { max_batch: 256, max_wait_us: 1000, intra_op_threads: 0 }
    }
}

/// An evaluated request: the outputs for its `n` positions and the generation that made them.
#[derive(Clone, Debug)]
pub struct EvalReply {
    pub output: EvalOutput,
    pub generation: i64,
}

/// Why the server could not answer a request (sent to every request of the failed batch).
#[derive(Clone, Debug, thiserror::Error, PartialEq)]
pub enum EvalError {
    /// The evaluator returned outputs of the wrong length for the batch.
    #[error("evaluator returned {logits} logits and {wdl} wdl values for {positions} positions (expected {} and {})", positions * actions, positions * 3)]
    WrongShape { logits: usize, wdl: usize, positions: usize, actions: usize },
    /// The evaluator failed; its error chain, formatted (errors are not `Clone`).
    #[error("{0}")]
    Failed(String),
}

enum Msg {
    Eval { planes: Vec<f32>, globals: Vec<f32>, n: usize, reply: Sender<Result<EvalReply, EvalError>> },
    Publish { evaluator: Box<dyn Evaluator>, generation: i64 },
}

/// A cloneable handle to the server; the server thread stops when every handle is dropped.
/// Per-thread handles (module docs) evaluate on the caller's thread instead.
pub struct ServerHandle {
    route: Route,
    size: usize,
}

enum Route {
    Server(Sender<Msg>),
    PerThread { shared: Arc<Shared>, local: Mutex<Option<Local>> },
}

/// The current generation of a per-thread handle family: (version, generation, factory).
struct Shared {
    version: AtomicU64,
    current: Mutex<(u64, i64, EvaluatorFactory)>,
}

struct Local {
    version: u64,
    generation: i64,
    evaluator: Box<dyn Evaluator>,
}

impl Clone for ServerHandle {
    fn clone(&self) -> Self {
        let route = match &self.route {
            Route::Server(tx) => Route::Server(tx.clone()),
            Route::PerThread { shared, .. } => Route::PerThread { shared: shared.clone(), local: Mutex::new(None) },
        };
        ServerHandle { route, size: self.size }
    }
}

/// Counters of the server thread, returned by [`InferenceServer::join`].
#[derive(Clone, Copy, Debug, Default)]
pub struct ServerStats {
    pub batches: u64,
    pub positions: u64,
    /// Seconds spent inside `Evaluator::evaluate`.
    pub eval_seconds: f64,
}

/// The running server: its handle and thread.
pub struct InferenceServer {
    handle: ServerHandle,
    thread: std::thread::JoinHandle<ServerStats>,
}

impl InferenceServer {
    /// Start the server thread with `evaluator` as generation `generation`.
    pub fn spawn(evaluator: Box<dyn Evaluator>, generation: i64, cfg: ServerConfig) -> InferenceServer {
        let size = evaluator.board_size();
        let (tx, rx) = unbounded();
        let thread = std::thread::Builder::new()
            .name("inference-server".into())
            .spawn(move || serve(evaluator, generation, cfg, rx))
            .expect("spawning the inference server thread");
        InferenceServer { handle: ServerHandle { route: Route::Server(tx), size }, thread }
    }
    /// A handle for workers.
    pub fn handle(&self) -> ServerHandle {
        self.handle.clone()
    }
    /// Drop this handle and wait for the thread (it ends once every other handle is dropped).
    pub fn join(self) -> ServerStats {
        drop(self.handle);
        self.thread.join().unwrap_or_default()
    }
}

impl ServerHandle {
    /// A per-thread handle (module docs) for boards of side `size`, starting with generation
    /// `generation` built by `factory`.
    pub fn per_thread(factory: EvaluatorFactory, generation: i64, size: usize) -> ServerHandle {
        let shared = Arc::new(Shared { version: AtomicU64::new(0), current: Mutex::new((0, generation, factory)) });
        ServerHandle { route: Route::PerThread { shared, local: Mutex::new(None) }, size }
    }

    /// Per-thread handles: every clone uses evaluators from `factory` (generation `generation`)
    /// from its next evaluation on. Errors on a server handle (use [`Self::publish`]).
    pub fn publish_factory(&self, factory: EvaluatorFactory, generation: i64) -> Result<()> {
        let Route::PerThread { shared, .. } = &self.route else {
            anyhow::bail!("publish_factory: this handle talks to an inference server; publish an evaluator instead");
        };
        let mut cur = shared.current.lock().map_err(|_| anyhow!("per-thread evaluator lock poisoned"))?;
        let v = cur.0 + 1;
        *cur = (v, generation, factory);
        shared.version.store(v, Ordering::Release);
        Ok(())
    }

    /// Per-thread evaluation on the calling thread (rebuilding this clone's evaluator when a new
    /// generation was published).
    fn evaluate_here(
        &self,
        shared: &Shared,
        local: &Mutex<Option<Local>>,
        planes: &[f32],
        globals: &[f32],
        n: usize,
    ) -> Result<EvalReply> {
        let mut slot = local.lock().map_err(|_| anyhow!("per-thread evaluator lock poisoned"))?;
        let want = shared.version.load(Ordering::Acquire);
        if slot.as_ref().is_none_or(|l| l.version != want) {
            let (version, generation, factory) = {
                let cur = shared.current.lock().map_err(|_| anyhow!("per-thread evaluator lock poisoned"))?;
                (cur.0, cur.1, cur.2.clone())
            };
            let evaluator = factory().context("building a per-thread evaluator")?;
            anyhow::ensure!(
                evaluator.board_size() == self.size,
                "per-thread evaluator for side {} but the handle serves side {}",
                evaluator.board_size(),
                self.size
            );
            *slot = Some(Local { version, generation, evaluator });
        }
        let l = slot.as_mut().expect("just built");
        let output = l.evaluator.evaluate(planes, globals, n)?;
        let a = crate::action::action_space_size(self.size);
        anyhow::ensure!(
            output.policy_logits.len() == n * a && output.wdl.len() == n * 3,
            "evaluator returned {} logits and {} wdl values for {n} positions",
            output.policy_logits.len(),
            output.wdl.len()
        );
        Ok(EvalReply { output, generation: l.generation })
    }

    /// The board side of the served evaluator.
    pub fn board_size(&self) -> usize {
        self.size
    }
    /// Queue `n` positions (`planes: [n, C, S, S]`, `globals: [n, G]`); the receiver yields the reply.
    pub fn submit(
        &self,
        planes: Vec<f32>,
        globals: Vec<f32>,
        n: usize,
    ) -> Result<Receiver<Result<EvalReply, EvalError>>> {
        let s = self.size;
        anyhow::ensure!(
            planes.len() == n * NUM_PLANES * s * s,
            "submit: planes has {} floats for {n} positions of side {s}",
            planes.len()
        );
        anyhow::ensure!(
            globals.len() == n * NUM_GLOBALS,
            "submit: globals has {} floats for {n} positions",
            globals.len()
        );
        let (reply, rx) = crossbeam::channel::bounded(1);
        match &self.route {
            Route::Server(tx) => tx
                .send(Msg::Eval { planes, globals, n, reply })
                .map_err(|_| anyhow!("the inference server has stopped"))?,
            Route::PerThread { shared, local } => {
                let r = self
                    .evaluate_here(shared, local, &planes, &globals, n)
                    .map_err(|e| EvalError::Failed(format!("{e:#}")));
                let _ = reply.send(r);
            }
        }
        Ok(rx)
    }
    /// Submit and wait.
    pub fn evaluate(&self, planes: Vec<f32>, globals: Vec<f32>, n: usize) -> Result<EvalReply> {
        if let Route::PerThread { shared, local } = &self.route {
            return self.evaluate_here(shared, local, &planes, &globals, n);
        }
        let rx = self.submit(planes, globals, n)?;
        rx.recv().context("the inference server stopped before replying")?.map_err(|e| anyhow!("evaluator failed: {e}"))
    }
    /// Replace the evaluator by generation `generation` (later requests use it). Errors on a
    /// per-thread handle (use [`Self::publish_factory`]).
    pub fn publish(&self, evaluator: Box<dyn Evaluator>, generation: i64) -> Result<()> {
        let Route::Server(tx) = &self.route else {
            anyhow::bail!("publish: a per-thread handle takes an evaluator factory (publish_factory)");
        };
        anyhow::ensure!(
            evaluator.board_size() == self.size,
            "publish: evaluator for side {} but the server serves side {}",
            evaluator.board_size(),
            self.size
        );
        tx.send(Msg::Publish { evaluator, generation }).map_err(|_| anyhow!("the inference server has stopped"))
    }
}

struct Req {
    planes: Vec<f32>,
    globals: Vec<f32>,
    n: usize,
    reply: Sender<Result<EvalReply, EvalError>>,
}

fn serve(mut ev: Box<dyn Evaluator>, mut generation: i64, cfg: ServerConfig, rx: Receiver<Msg>) -> ServerStats {
    let mut stats = ServerStats::default();
    let a = crate::action::action_space_size(ev.board_size());
    let mut batch: Vec<Req> = Vec::new();
    let mut planes = Vec::new();
    let mut globals = Vec::new();
    let mut next: Option<Box<dyn Evaluator>> = None;
    let mut next_gen = generation;
    loop {
        // Block for the first message.
        let Ok(first) = rx.recv() else { break };
        let mut total = 0;
        match first {
            Msg::Publish { evaluator, generation: g } => {
                ev = evaluator;
                generation = g;
                continue;
            }
            Msg::Eval { planes, globals, n, reply } => {
                total += n;
                batch.push(Req { planes, globals, n, reply });
            }
        }
        let deadline = Instant::now() + Duration::from_micros(cfg.max_wait_us);
        while total < cfg.max_batch {
            let now = Instant::now();
            let msg = if now >= deadline {
                rx.try_recv().map_err(|_| RecvTimeoutError::Timeout)
            } else {
                rx.recv_timeout(deadline - now)
            };
            match msg {
                Ok(Msg::Eval { planes, globals, n, reply }) => {
                    total += n;
                    batch.push(Req { planes, globals, n, reply });
                }
                Ok(Msg::Publish { evaluator, generation: g }) => {
                    // Evaluate what was queued before the publication with the old model.
                    next = Some(evaluator);
                    next_gen = g;
                    break;
                }
                Err(_) => break,
            }
        }
        planes.clear();
        globals.clear();
        for r in &batch {
            planes.extend_from_slice(&r.planes);
            globals.extend_from_slice(&r.globals);
        }
        let t = Instant::now();
        let out = ev.evaluate(&planes, &globals, total);
        stats.eval_seconds += t.elapsed().as_secs_f64();
        stats.batches += 1;
        stats.positions += total as u64;
        match out {
            Ok(out) if out.policy_logits.len() == total * a && out.wdl.len() == total * 3 => {
                let mut off = 0;
                for r in batch.drain(..) {
                    let o = EvalOutput {
                        policy_logits: out.policy_logits[off * a..(off + r.n) * a].to_vec(),
                        wdl: out.wdl[off * 3..(off + r.n) * 3].to_vec(),
                    };
                    off += r.n;
                    let _ = r.reply.send(Ok(EvalReply { output: o, generation }));
                }
            }
            Ok(out) => {
                let msg = EvalError::WrongShape {
                    logits: out.policy_logits.len(),
                    wdl: out.wdl.len(),
                    positions: total,
                    actions: a,
                };
                for r in batch.drain(..) {
                    let _ = r.reply.send(Err(msg.clone()));
                }
            }
            Err(e) => {
                let msg = EvalError::Failed(format!("{e:#}"));
                for r in batch.drain(..) {
                    let _ = r.reply.send(Err(msg.clone()));
                }
            }
        }
        if let Some(e) = next.take() {
            ev = e;
            generation = next_gen;
        }
    }
    stats
}
