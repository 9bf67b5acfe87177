//! Self-play workers: many games per thread, interleaved so that every evaluation request holds
//! leaves of all of them; KataGo playout-cap randomisation, temperature schedule, resignation
//! with calibration games; finished games go to a [`GameSink`] (e.g. [`ShardSink`]).

use crate::action::action_from_index;
use crate::encode::{encode, NUM_GLOBALS, NUM_PLANES};
use crate::mcts::{pick_by_visits, Mcts, SearchAlgorithm, SearchConfig, TreeMemory};
use crate::record::{wdl_one_hot, EndReason, GameMeta, GameResult, PositionRecord, ShardWriter};
use crate::server::ServerHandle;
use anyhow::{anyhow, Context, Result};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use renju_rules::{Action, Game, Player, Protocol, Rule};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

/// Self-play parameters. Every field has a default (serde `default`); unknown fields are errors.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SelfplayConfig {
    /// Board side. Default 15 (RULES.md §1).
    pub size: usize,
    /// Rule variant. Default renju.
    pub rule: Rule,
    /// Opening protocol (RULES.md §5). Default RIF.
    pub protocol: Protocol,
    /// Draw when this many stones are on the board (RULES.md §2 optional cap). Default none.
    pub stone_cap: Option<usize>,
    /// Root visits of a full search (its position becomes a policy target). Default 200.
    pub playouts: u32,
    /// Root visits of a fast search (not recorded). Default 50.
    pub fast_playouts: u32,
    /// Fraction of decisions given the full search (KataGo playout-cap randomisation: 0.25).
    /// Set 1.0 to search every decision fully. Default 0.25.
    pub full_search_fraction: f64,
    /// Also record the fast-search positions, with an all-zero policy target: they train the
    /// value head only (the trainer gives a zero-sum policy target weight 0). Default false.
    pub record_fast_positions: bool,
    /// Worker threads. Default 1.
    pub threads: usize,
    /// Games played at once per thread (interleaved to fill batches). Default 16.
    pub games_per_thread: usize,
    /// Leaves gathered per game per evaluation request (virtual loss keeps them apart). Default 4.
    pub leaves_per_game: usize,
    /// Move temperature at the first decision (KataGo: 0.8). Default 0.8.
    pub temperature_start: f32,
    /// Temperature reached late in the game (KataGo: 0.2); 0 plays the most visited move. Default 0.2.
    pub temperature_end: f32,
    /// Decisions over which the excess temperature halves (KataGo: the board side). Default 15.
    pub temperature_half_life: f32,
    /// Resign when the root value (win - loss) of the deciding player stays below this; `None`
    /// disables resignation. Default -0.9.
    pub resign_threshold: Option<f32>,
    /// Consecutive own decisions below the threshold before resigning. Default 3.
    pub resign_consecutive: u32,
    /// Fraction of games with resignation disabled, to count false resignations. Default 0.1.
    pub resign_disabled_fraction: f64,
    /// Exact value targets: a recorded stone decision whose decider has a VCF (or loses to
    /// the opponent's VCF whatever it plays) gets that proven result as its value target instead
    /// of the game's result; the solver's node budget per question, 0 = off. Default 0.
    pub proven_value_nodes: u64,
    /// Horizon `h` in decisions of each recorded position's short-horizon value
    /// (`PositionRecord::short_value`): the TD(λ) return over the root values of the decisions
    /// that follow, `λ = 1 - 1/h`, ending in the game's result. The trainer blends it into the
    /// value target with `training.short_value_weight`. Default 6.
    pub short_value_horizon: f32,
    /// Search parameters.
    pub search: SearchConfig,
    /// Seed of the workers' random generators (each thread derives its own). Default 0.
    pub seed: u64,
}

impl Default for SelfplayConfig {
    fn default() -> Self {
        SelfplayConfig {
            size: 15,
            rule: Rule::Renju,
            protocol: Protocol::Rif,
            stone_cap: None,
            playouts: 200,
            fast_playouts: 50,
            full_search_fraction: 0.25,
            record_fast_positions: false,
            threads: 1,
            games_per_thread: 16,
            leaves_per_game: 4,
            temperature_start: 0.8,
            temperature_end: 0.2,
            temperature_half_life: 15.0,
            resign_threshold: Some(-0.9),
            resign_consecutive: 3,
            resign_disabled_fraction: 0.1,
            proven_value_nodes: 0,
            short_value_horizon: 6.0,
            search: SearchConfig::default(),
            seed: 0,
        }
    }
}

impl SelfplayConfig {
    /// Check the parameters; the error names the bad field.
    pub fn validate(&self) -> Result<()> {
        renju_rules::board::check_size(self.size)?;
        anyhow::ensure!(self.playouts >= 1, "playouts must be at least 1");
        anyhow::ensure!(self.fast_playouts >= 1, "fast_playouts must be at least 1");
        anyhow::ensure!(
            (0.0..=1.0).contains(&self.full_search_fraction),
            "full_search_fraction {} is outside 0..=1",
            self.full_search_fraction
        );
        anyhow::ensure!(self.threads >= 1, "threads must be at least 1");
        anyhow::ensure!(self.games_per_thread >= 1, "games_per_thread must be at least 1");
        anyhow::ensure!(self.leaves_per_game >= 1, "leaves_per_game must be at least 1");
        anyhow::ensure!(
            (0.0..=1.0).contains(&self.resign_disabled_fraction),
            "resign_disabled_fraction is outside 0..=1"
        );
        anyhow::ensure!(
            self.short_value_horizon >= 1.0 && self.short_value_horizon.is_finite(),
            "short_value_horizon {} must be a number of decisions, at least 1",
            self.short_value_horizon
        );
        let t = self.search.policy_temperature;
        anyhow::ensure!(
            crate::mcts::SearchConfig::is_policy_temperature(t as f64),
            "search.policy_temperature {t} must be a positive number"
        );
        Game::new(self.size, self.rule, self.protocol.clone(), self.stone_cap)
            .map_err(|e| anyhow!("invalid game settings: {e}"))?;
        Ok(())
    }
}

/// A finished game: metadata and its recorded (full-search) positions.
#[derive(Clone, Debug)]
pub struct FinishedGame {
    pub meta: GameMeta,
    pub positions: Vec<PositionRecord>,
}

/// Receives finished games (called on the thread that runs [`run_selfplay`]).
pub trait GameSink {
    /// Take one game.
    fn accept(&mut self, game: FinishedGame) -> Result<()>;
    /// Flush what is buffered (called once at the end).
    fn finish(&mut self) -> Result<()>;
}

/// Writes games into shards of `games_per_shard` games in a directory.
pub struct ShardSink {
    dir: PathBuf,
    writer: ShardWriter,
    games_per_shard: usize,
    /// Paths written so far.
    pub written: Vec<PathBuf>,
}

impl ShardSink {
    /// Shards go to `dir`; `writer_id` must be unique among concurrent writers of `dir`.
    pub fn new(dir: &Path, cfg: &SelfplayConfig, writer_id: &str, games_per_shard: usize) -> ShardSink {
        ShardSink {
            dir: dir.to_path_buf(),
            writer: ShardWriter::new(cfg.size, cfg.rule, cfg.protocol.clone(), writer_id),
            games_per_shard: games_per_shard.max(1),
            written: Vec::new(),
        }
    }
}

impl GameSink for ShardSink {
    fn accept(&mut self, game: FinishedGame) -> Result<()> {
        self.writer.push_game(game.meta, game.positions)?;
        if self.writer.games() >= self.games_per_shard {
            let p = self.writer.write(&self.dir)?;
            self.written.push(p);
        }
        Ok(())
    }
    fn finish(&mut self) -> Result<()> {
        if self.writer.games() > 0 {
            let p = self.writer.write(&self.dir)?;
            self.written.push(p);
        }
        Ok(())
    }
}

/// Running totals reported to the progress callback and returned at the end.
#[derive(Clone, Debug, Default)]
pub struct Progress {
    pub games: u64,
    /// Recorded (full-search) positions.
    pub positions: u64,
    /// Decisions played.
    pub decisions: u64,
    /// Playouts completed.
    pub playouts: u64,
    pub wins_first: u64,
    pub wins_second: u64,
    pub draws: u64,
    pub resignations: u64,
    /// Games with resignation disabled in which a player crossed the threshold and then did
    /// not lose: false resignations (KataGo / AlphaZero resignation calibration).
    pub false_resignations: u64,
    pub seconds: f64,
}

struct Slot {
    game: Game,
    mcts: Mcts,
    full: bool,
    target: u32,
    /// Recorded positions: the decider, the proven result if any (`Some(true)`: the decider
    /// wins), the index of the decision in the game's history, the record.
    positions: Vec<(Player, Option<bool>, usize, PositionRecord)>,
    /// Every decision's decider and root value (win - loss, the decider's view), in order; a
    /// resigning decision's included.
    root_values: Vec<(Player, f32)>,
    resign_disabled: bool,
    below: [u32; 2],
    would_resign: Option<Player>,
    gen_first: Option<i64>,
    gen_last: i64,
    leaves: usize,
}

enum WorkerMsg {
    Game(Box<FinishedGame>, u64, u64),
    Error(anyhow::Error),
}

/// Play self-play games until `games` games have finished (when given) or `stop` is set, with
/// `cfg.threads` threads each interleaving `cfg.games_per_thread` games, evaluating through
/// `server`. Finished games go to `sink`; `progress` is called after each game.
/// When stopped by the flag, games in progress are abandoned.
pub fn run_selfplay(
    cfg: &SelfplayConfig,
    server: &ServerHandle,
    games: Option<u64>,
    stop: &AtomicBool,
    sink: &mut dyn GameSink,
    progress: &mut dyn FnMut(&Progress),
) -> Result<Progress> {
    run_selfplay_paced(cfg, server, games, stop, &AtomicBool::new(false), sink, progress)
}

/// [`run_selfplay`] with a pause: while `pause` is set, every worker thread waits before its
/// next evaluation request (its games stay in progress) and uses no CPU, so a trainer sharing
/// the machine can catch up. `stop` ends a paused run as it ends a running one.
pub fn run_selfplay_paced(
    cfg: &SelfplayConfig,
    server: &ServerHandle,
    games: Option<u64>,
    stop: &AtomicBool,
    pause: &AtomicBool,
    sink: &mut dyn GameSink,
    progress: &mut dyn FnMut(&Progress),
) -> Result<Progress> {
    cfg.validate()?;
    anyhow::ensure!(
        server.board_size() == cfg.size,
        "the server evaluates side {} but self-play is configured for side {}",
        server.board_size(),
        cfg.size
    );
    let started = AtomicU64::new(0);
    let local_stop = AtomicBool::new(false);
    let t0 = Instant::now();
    let mut prog = Progress::default();
    let (tx, rx) = crossbeam::channel::unbounded::<WorkerMsg>();
    let result: Result<()> = std::thread::scope(|scope| {
        for t in 0..cfg.threads {
            let tx = tx.clone();
            let server = server.clone();
            let (started, local_stop) = (&started, &local_stop);
            scope.spawn(move || {
                let r = worker(cfg, t, &server, games, started, [stop, local_stop, pause], &tx);
                if let Err(e) = r {
                    let _ = tx.send(WorkerMsg::Error(e));
                }
            });
        }
        drop(tx);
        let mut first_err = None;
        for msg in rx.iter() {
            match msg {
                WorkerMsg::Game(g, playouts, decisions) => {
                    prog.games += 1;
                    prog.positions += g.positions.len() as u64;
                    prog.playouts += playouts;
                    prog.decisions += decisions;
                    match g.meta.result.winner {
                        Some(Player::First) => prog.wins_first += 1,
                        Some(Player::Second) => prog.wins_second += 1,
                        None => prog.draws += 1,
                    }
                    if g.meta.result.reason == EndReason::Resignation {
                        prog.resignations += 1;
                    }
                    if g.meta.resign_disabled && g.meta.false_resignation {
                        prog.false_resignations += 1;
                    }
                    if let Err(e) = sink.accept(*g) {
                        local_stop.store(true, Ordering::Relaxed);
                        first_err.get_or_insert(e);
                    }
                    prog.seconds = t0.elapsed().as_secs_f64();
                    progress(&prog);
                }
                WorkerMsg::Error(e) => {
                    local_stop.store(true, Ordering::Relaxed);
                    first_err.get_or_insert(e);
                }
            }
        }
        first_err.map_or(Ok(()), Err)
    });
    result?;
    sink.finish()?;
    prog.seconds = t0.elapsed().as_secs_f64();
    Ok(prog)
}

impl Slot {
    /// A new game, its tree built in `memory` (a finished game's, or none).
    fn new(cfg: &SelfplayConfig, rng: &mut ChaCha8Rng, memory: TreeMemory) -> Slot {
        let game = Game::new(cfg.size, cfg.rule, cfg.protocol.clone(), cfg.stone_cap).expect("validated settings");
        let mcts = Mcts::new_in(&game, cfg.search.clone(), memory);
        let mut s = Slot {
            game,
            mcts,
            full: false,
            target: 0,
            positions: Vec::new(),
            root_values: Vec::new(),
            resign_disabled: rng.gen_bool(cfg.resign_disabled_fraction),
            below: [0, 0],
            would_resign: None,
            gen_first: None,
            gen_last: 0,
            leaves: 0,
        };
        s.start_move(cfg, rng);
        s
    }

    fn start_move(&mut self, cfg: &SelfplayConfig, rng: &mut ChaCha8Rng) {
        self.full = rng.gen_bool(cfg.full_search_fraction);
        self.target = if self.full { cfg.playouts } else { cfg.fast_playouts.min(cfg.playouts) };
        match cfg.search.algorithm {
            // Gumbel noise explores at every decision, full or fast (Danihelka et al. 2022).
            SearchAlgorithm::Gumbel => self.mcts.start_gumbel(self.target, true, rng),
            SearchAlgorithm::Puct => {
                if self.full {
                    self.mcts.add_root_noise(rng);
                }
            }
        }
    }

    fn search_done(&self) -> bool {
        let v = self.mcts.root_visits();
        self.mcts.search_remaining(self.target) == 0 || (v >= 1 && self.mcts.root_forced().is_some())
    }
}

fn temperature(cfg: &SelfplayConfig, decision: usize) -> f32 {
    let excess = (cfg.temperature_start - cfg.temperature_end).max(0.0);
    cfg.temperature_end + excess * 0.5f32.powf(decision as f32 / cfg.temperature_half_life.max(1e-3))
}

/// One worker thread: plays until `stop` or `local_stop` (another thread's error) is set,
/// waiting while `pause` is set.
fn worker(
    cfg: &SelfplayConfig,
    thread: usize,
    server: &ServerHandle,
    games: Option<u64>,
    started: &AtomicU64,
    [stop, local_stop, pause]: [&AtomicBool; 3],
    tx: &crossbeam::channel::Sender<WorkerMsg>,
) -> Result<()> {
    let mut rng = ChaCha8Rng::seed_from_u64(cfg.seed ^ (0x9E37_79B9_7F4A_7C15u64.wrapping_mul(thread as u64 + 1)));
    let claim = || -> bool {
        match games {
            None => true,
            Some(g) => started.fetch_add(1, Ordering::Relaxed) < g,
        }
    };
    let mut slots: Vec<Slot> = Vec::new();
    for _ in 0..cfg.games_per_thread {
        if !claim() {
            break;
        }
        slots.push(Slot::new(cfg, &mut rng, TreeMemory::default()));
    }
    let size = cfg.size;
    let pl = NUM_PLANES * size * size;
    let mut planes = Vec::new();
    let mut globals = Vec::new();
    let mut stalls = 0u32;
    let stopped = || stop.load(Ordering::Relaxed) || local_stop.load(Ordering::Relaxed);
    while !slots.is_empty() {
        while pause.load(Ordering::Relaxed) && !stopped() {
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        if stopped() {
            return Ok(());
        }
        planes.clear();
        globals.clear();
        let mut total = 0;
        for s in slots.iter_mut() {
            s.leaves = 0;
            if !s.search_done() {
                let want = s.mcts.search_remaining(s.target) as usize;
                s.leaves = s.mcts.gather(
                    cfg.leaves_per_game.min(want.max(1)),
                    want.max(1) + cfg.leaves_per_game,
                    &mut planes,
                    &mut globals,
                );
                total += s.leaves;
            }
        }
        if total > 0 {
            let reply = server.evaluate(std::mem::take(&mut planes), std::mem::take(&mut globals), total)?;
            let a = crate::action::action_space_size(size);
            let mut off = 0;
            for s in slots.iter_mut().filter(|s| s.leaves > 0) {
                let k = s.leaves;
                s.mcts.deliver(
                    &reply.output.policy_logits[off * a..(off + k) * a],
                    &reply.output.wdl[off * 3..(off + k) * 3],
                    &mut rng,
                );
                off += k;
                s.gen_first.get_or_insert(reply.generation);
                s.gen_last = reply.generation;
            }
            stalls = 0;
        } else {
            stalls += 1;
            anyhow::ensure!(stalls < 10_000, "self-play made no progress (thread {thread})");
        }
        // Play the moves whose search is done.
        let mut i = 0;
        while i < slots.len() {
            if !slots[i].search_done() {
                i += 1;
                continue;
            }
            let finished = play_move(cfg, &mut slots[i], &mut rng, pl)?;
            if let Some(fg) = finished {
                let st = slots[i].mcts.take_stats();
                let decisions = fg.meta.decisions.len() as u64;
                if tx.send(WorkerMsg::Game(Box::new(fg), st.playouts, decisions)).is_err() {
                    return Ok(());
                }
                if claim() {
                    let memory = slots[i].mcts.take_memory();
                    slots[i] = Slot::new(cfg, &mut rng, memory);
                    i += 1;
                } else {
                    slots.swap_remove(i);
                }
            } else {
                i += 1;
            }
        }
    }
    Ok(())
}

/// Record (if full), choose and apply the move of a slot whose search is done; returns the
/// finished game when it ended.
fn play_move(cfg: &SelfplayConfig, s: &mut Slot, rng: &mut ChaCha8Rng, pl: usize) -> Result<Option<FinishedGame>> {
    let decider = s.game.to_decide();
    // The visits the move is chosen by (forced playouts pruned, as in the policy target).
    let children = s.mcts.target_visits();
    anyhow::ensure!(!children.is_empty(), "search root has no children at decision {}", s.game.history().len());
    let root_value = s.mcts.root_value();
    s.root_values.push((decider, root_value));
    if s.full || cfg.record_fast_positions {
        let mut planes = vec![0.0f32; pl];
        let mut globals = vec![0.0f32; NUM_GLOBALS];
        encode(&s.game, &mut planes, &mut globals);
        let proven = proven_result(&s.game, cfg.proven_value_nodes);
        s.positions.push((
            decider,
            proven,
            s.game.history().len(),
            PositionRecord {
                planes: planes.iter().map(|&v| v as u8).collect(),
                globals,
                // A fast search's position is a value-only sample: an all-zero policy target
                // gets policy weight 0 in training.
                policy: if s.full {
                    s.mcts.gumbel_policy().unwrap_or_else(|| s.mcts.policy_target())
                } else {
                    vec![0.0; crate::action::action_space_size(cfg.size)]
                },
                value: [0.0; 3],
                root_value,
                generation: s.gen_last,
                game_index: 0,
                opponent_reply: -1,
                short_value: 0.0,
            },
        ));
    }
    // Resignation (by the deciding player), counted on own decisions.
    let mut resigned = false;
    if let Some(th) = cfg.resign_threshold {
        let b = &mut s.below[decider.index()];
        if root_value < th {
            *b += 1;
        } else {
            *b = 0;
        }
        if *b >= cfg.resign_consecutive.max(1) {
            if s.resign_disabled {
                s.would_resign.get_or_insert(decider);
            } else {
                resigned = true;
            }
        }
    }
    let temp = temperature(cfg, s.game.history().len());
    // Gumbel: the move is the search's own choice (its noise samples); PUCT: visit counts^(1/T).
    let action_idx = match s.mcts.gumbel_action() {
        Some(a) => a,
        None => pick_by_visits(&children, temp, rng).expect("root has children"),
    };
    let result = if resigned {
        Some(GameResult {
            winner: Some(decider.other()),
            reason: EndReason::Resignation,
            black_player: s.game.black_player(),
        })
    } else {
        let action = action_from_index(action_idx, cfg.size).expect("root child action in range");
        s.game.apply(action).with_context(|| format!("search chose an illegal action {action:?}"))?;
        s.game.outcome().map(|o| GameResult {
            winner: o.winner,
            reason: o.reason.into(),
            black_player: s.game.black_player(),
        })
    };
    let Some(result) = result else {
        s.mcts.advance(action_idx, &s.game);
        s.start_move(cfg, rng);
        return Ok(None);
    };
    let (mut proven_positions, mut proven_overruled) = (0u32, 0u32);
    let history = s.game.history();
    let short = short_values(&std::mem::take(&mut s.root_values), result.winner, cfg.short_value_horizon);
    let positions = std::mem::take(&mut s.positions)
        .into_iter()
        .map(|(p, proven, decision, mut r)| {
            r.value = value_target(result.winner, p, proven);
            r.opponent_reply = opponent_reply(history, decision, cfg.size);
            r.short_value = short[decision];
            if proven.is_some() {
                proven_positions += 1;
                proven_overruled += u32::from(r.value != value_target(result.winner, p, None));
            }
            r
        })
        .collect();
    let false_resignation = s.would_resign.is_some_and(|p| result.winner != Some(p.other()));
    Ok(Some(FinishedGame {
        meta: GameMeta {
            opening: s.game.opening(),
            decisions: s.game.history().to_vec(),
            result,
            resign_disabled: s.resign_disabled,
            false_resignation,
            would_resign: s.would_resign.is_some(),
            proven_positions,
            proven_overruled,
            generation_first: s.gen_first.unwrap_or(s.gen_last),
            generation_last: s.gen_last,
        },
        positions,
    }))
}

/// The W/D/L value target of `decider`'s position: the proven result when there is one
/// (`Some(true)`: the decider wins), else the game's (`winner`, `None` a draw).
fn value_target(winner: Option<Player>, decider: Player, proven: Option<bool>) -> [f32; 3] {
    let winner = match proven {
        Some(true) => Some(decider),
        Some(false) => Some(decider.other()),
        None => winner,
    };
    wdl_one_hot(winner, decider)
}

/// The auxiliary opponent-policy target of the position before decision `decision` of
/// `history`: the action index of the next decision when the other player made it, else -1
/// (the game ended at `decision`, or its decider decided again).
fn opponent_reply(history: &[(Player, Action)], decision: usize, size: usize) -> i64 {
    match (history.get(decision), history.get(decision + 1)) {
        (Some(&(me, _)), Some(&(them, reply))) if them != me => crate::action::action_index(reply, size) as i64,
        _ => -1,
    }
}

/// The short-horizon value of the position before each decision `d` of a game, from its
/// decider's view: the TD(λ) return `G_d = (1 - λ) v_d + λ G_{d+1}` over the decisions' root
/// values `v` (each turned to `d`'s decider's view), `G_n` the game's result (`winner`; a draw
/// 0), `λ = 1 - 1/horizon`. Horizon 1 gives the root value itself; a large horizon tends to the
/// result.
fn short_values(root_values: &[(Player, f32)], winner: Option<Player>, horizon: f32) -> Vec<f32> {
    let lambda = 1.0 - 1.0 / horizon;
    // Backwards from the result, in the first player's view.
    let view = |p: Player| if p == Player::First { 1.0 } else { -1.0 };
    let mut g = winner.map_or(0.0, view);
    let mut out = vec![0.0; root_values.len()];
    for (d, &(p, v)) in root_values.iter().enumerate().rev() {
        g = (1.0 - lambda) * view(p) * v.clamp(-1.0, 1.0) + lambda * g;
        out[d] = view(p) * g;
    }
    out
}

/// The result of a stone decision the VCF solver proves within `nodes` nodes per question:
/// `Some(true)` when the decider has a VCF, `Some(false)` when the opponent has one that no move
/// refutes; `None` when neither is proved, for a protocol decision, or with `nodes` 0.
fn proven_result(game: &Game, nodes: u64) -> Option<bool> {
    use renju_rules::vcf::{refutations, vcf, Defence, Limits, Vcf};
    if nodes == 0 || game.is_over() {
        return None;
    }
    let renju_rules::DecisionKind::PlaceStone(c) = game.decision() else {
        return None;
    };
    let limits = Limits::nodes(nodes);
    if let Vcf::Win { .. } = vcf(game.board(), c, &limits) {
        return Some(true);
    }
    match refutations(game.board(), c, &limits) {
        Defence::Threat { refutations, .. } if refutations.is_empty() => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use renju_rules::notation::parse_moves;

    fn position(moves: &str) -> Game {
        Game::from_position(15, Rule::Renju, &parse_moves(moves, 15).unwrap()).unwrap()
    }

    #[test]
    fn proven_result_is_the_solvers() {
        // Black (to move) has an open three h8 i8 j8: k8 or g8 makes a straight four.
        let black_vcf = position("h8 a1 i8 a3 j8 a5");
        assert_eq!(proven_result(&black_vcf, 1000), Some(true));
        assert_eq!(proven_result(&black_vcf, 0), None, "0 nodes is off");
        // White has a straight four h10..k10: whatever Black (to move) plays, White makes five.
        let white_four = position("a1 h10 o1 i10 a15 j10 o15 k10");
        assert_eq!(proven_result(&white_four, 1000), Some(false));
        // An open three of White can still be blocked: nothing is proved.
        let white_three = position("a1 h10 o1 i10 a15 j10");
        assert_eq!(proven_result(&white_three, 1000), None);
        // A finished game, and a protocol decision, have no proven stone decision.
        let over = position("h8 a1 i8 a3 j8 a5 k8 a7 l8");
        assert!(over.is_over());
        assert_eq!(proven_result(&over, 1000), None);
        let mut swap = Game::new(15, Rule::Renju, Protocol::Swap1, None).unwrap();
        swap.apply(renju_rules::Action::parse("h8", 15).unwrap()).unwrap();
        assert!(!matches!(swap.decision(), renju_rules::DecisionKind::PlaceStone(_)), "{:?}", swap.decision());
        assert_eq!(proven_result(&swap, 1000), None);
    }

    #[test]
    fn the_opponent_reply_is_the_next_decision_of_the_other_player() {
        use Player::{First, Second};
        let a = |m: &str| Action::parse(m, 15).unwrap();
        // An opening's consecutive placements by one player, a swap, then a stone.
        let history = [(First, a("h8")), (First, a("h9")), (First, a("i8")), (Second, Action::Swap), (First, a("j9"))];
        assert_eq!(opponent_reply(&history, 0, 15), -1, "the decider placed again");
        assert_eq!(opponent_reply(&history, 2, 15), crate::action::action_index(Action::Swap, 15) as i64);
        assert_eq!(
            opponent_reply(&history, 3, 15),
            renju_rules::notation::parse_point("j9", 15).unwrap().index(15) as i64
        );
        assert_eq!(opponent_reply(&history, 4, 15), -1, "the game ended at the last decision");
        assert_eq!(opponent_reply(&history, 5, 15), -1, "a resigned decision is not in the history");
    }

    #[test]
    fn short_values_are_the_td_lambda_return() {
        use Player::{First, Second};
        let values = [(First, 0.5), (Second, -0.2), (First, 1.0)];
        // λ = 1/2, worked by hand backwards from the result (First wins) in First's view:
        // G2 = (1 + 1) / 2 = 1, G1 = (0.2 + 1) / 2 = 0.6, G0 = (0.5 + 0.6) / 2 = 0.55.
        let g = short_values(&values, Some(First), 2.0);
        let want = [0.55, -0.6, 1.0];
        assert!(g.iter().zip(want).all(|(a, b)| (a - b).abs() < 1e-6), "{g:?}");
        assert_eq!(short_values(&values, Some(First), 1.0), vec![0.5, -0.2, 1.0], "horizon 1: the root values");
        assert_eq!(short_values(&values, Some(Second), 1e9), vec![-1.0, 1.0, -1.0], "a long horizon: the result");
        assert_eq!(short_values(&values, None, 1e9), vec![0.0; 3], "a draw");
        assert_eq!(short_values(&[], Some(First), 6.0), Vec::<f32>::new());
    }

    /// The definition: `G_d = (1 - λ) Σ_k λ^k v'_{d+k} + λ^(n-d) z`, each value and the result
    /// in `d`'s decider's view.
    #[test]
    fn short_values_match_the_sum_of_their_definition() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        for _ in 0..200 {
            let n = rng.gen_range(0..40);
            let values: Vec<(Player, f32)> = (0..n)
                .map(|_| (if rng.gen_bool(0.5) { Player::First } else { Player::Second }, rng.gen_range(-1.0..=1.0)))
                .collect();
            let winner = [None, Some(Player::First), Some(Player::Second)][rng.gen_range(0..3)];
            let horizon = rng.gen_range(1.0..20.0f32);
            let lambda = 1.0 - 1.0 / horizon as f64;
            let got = short_values(&values, winner, horizon);
            for (d, &(me, _)) in values.iter().enumerate() {
                let view = |p: Player| if p == me { 1.0 } else { -1.0 };
                let sum: f64 =
                    (d..n).map(|j| lambda.powi((j - d) as i32) * view(values[j].0) * values[j].1 as f64).sum();
                let z = winner.map_or(0.0, view);
                let want = (1.0 - lambda) * sum + lambda.powi((n - d) as i32) * z;
                assert!((got[d] as f64 - want).abs() < 1e-4, "decision {d} of {n}: {} against {want}", got[d]);
                assert!((-1.0..=1.0).contains(&got[d]));
            }
        }
    }

    #[test]
    fn a_proven_result_overrules_the_game_result() {
        use Player::{First, Second};
        assert_eq!(value_target(Some(First), First, None), [1.0, 0.0, 0.0]);
        assert_eq!(value_target(Some(First), Second, None), [0.0, 0.0, 1.0]);
        assert_eq!(value_target(None, Second, None), [0.0, 1.0, 0.0]);
        // The decider had a VCF but lost the game, or lost to a VCF in a drawn game.
        assert_eq!(value_target(Some(First), Second, Some(true)), [1.0, 0.0, 0.0]);
        assert_eq!(value_target(None, First, Some(false)), [0.0, 0.0, 1.0]);
        assert_eq!(value_target(Some(Second), Second, Some(true)), [1.0, 0.0, 0.0]);
    }
}
