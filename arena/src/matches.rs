//! Matches between players (`renju-zero arena`).
//!
//! Every pair of players plays `games` games. With [`OpeningMode::Rif26`] game `g` of a pair
//! starts from opening `Opening::all()[(g / 2) % 26]` (the three stones on the board, play from
//! stone 4, protocol `designated:<code>`) and colours alternate, so each opening is played once
//! with each colour per 52 games. With [`OpeningMode::Protocol`] every game is a whole game under
//! that protocol and the players alternate as [`Player::First`] (tentative Black).
//!
//! Games run on `threads` worker threads; each worker builds its own agents (a model is loaded
//! once per worker). Every game has its own seed (from the arena seed and the game index), and a
//! search agent's decisions depend only on the position and that seed, so a run with playout
//! limits is reproducible whatever the thread scheduling. Records are returned sorted by index.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::channel;

use anyhow::{bail, ensure, Context, Result};
use renju_rules::notation::format_point;
use renju_rules::{Color, Game, Opening, Player, Protocol, Rule};
use serde::{Deserialize, Serialize};

use crate::agent::Agent;
use crate::output::{csv_string, markdown_table};
use crate::ratings::{fit, FitOptions, Rating, ResultMatrix};
use crate::spec::PlayerSpec;
use crate::sprt::{SprtConfig, SprtStatus};
use crate::stats::Wdl;
use renju_fs::write_atomic;
use renju_selfplay::eval::EvaluatorLoader;

/// How games start.
#[derive(Clone, Debug, PartialEq)]
pub enum OpeningMode {
    /// The 26 canonical openings, each with both colours (`--openings rif26`).
    Rif26,
    /// Whole games under this protocol (`--openings protocol --protocol P`).
    Protocol(Protocol),
}

/// Arena settings.
#[derive(Clone, Debug, PartialEq)]
pub struct ArenaConfig {
    /// Board side (default 15).
    pub size: usize,
    pub rule: Rule,
    pub openings: OpeningMode,
    /// Games per pair of players.
    pub games: usize,
    pub seed: u64,
    /// Worker threads (at least 1).
    pub threads: usize,
    /// Optional draw at this many stones (RULES.md §2).
    pub stone_cap: Option<usize>,
    /// Stop early when this test decides (exactly two players; the first is the candidate).
    pub sprt: Option<SprtConfig>,
}

impl Default for ArenaConfig {
    fn default() -> Self {
        ArenaConfig {
            size: 15,
            rule: Rule::Renju,
            openings: OpeningMode::Rif26,
            games: 52,
            seed: 0,
            threads: 1,
            stone_cap: None,
            sprt: None,
        }
    }
}

/// One scheduled game: player indices for [`Player::First`] and [`Player::Second`].
#[derive(Clone, Debug, PartialEq)]
pub struct Job {
    pub index: usize,
    pub first: usize,
    pub second: usize,
    pub protocol: Protocol,
    pub seed: u64,
}

/// A finished game.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GameRecord {
    pub index: usize,
    /// Player names: who made the first decision, the other, and who held Black / White at the end.
    pub first: String,
    pub second: String,
    pub black: String,
    pub white: String,
    pub protocol: String,
    /// The canonical opening formed by the first three stones, if any (`D4`).
    pub opening: Option<String>,
    /// Every decision as `first:h8` / `second:swap` (designated opening stones are not decisions).
    pub decisions: Vec<String>,
    /// The stones in the order they were placed (`h8 h9 j10 ...`).
    pub moves: String,
    /// `black`, `white` or `draw`.
    pub result: String,
    /// The winner's name, `None` for a draw.
    pub winner: Option<String>,
    /// `five`, `forbidden-move`, `no-legal-move`, `board-full`, `stone-cap`, `move-limit`, or
    /// `forfeit: <why>` when an agent failed or made an impossible move.
    pub reason: String,
    pub seed: u64,
}

impl GameRecord {
    /// The score of player `name` in this game (1, 0.5, 0), `None` if it did not play.
    pub fn score_of(&self, name: &str) -> Option<f64> {
        if self.first != name && self.second != name {
            return None;
        }
        Some(match &self.winner {
            None => 0.5,
            Some(w) if w == name => 1.0,
            Some(_) => 0.0,
        })
    }
}

/// Seed of game `index` of an arena with seed `seed` (SplitMix64 finaliser of the pair, so nearby
/// indices get unrelated seeds).
pub fn game_seed(seed: u64, index: usize) -> u64 {
    let mut z = seed ^ (index as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The games of a round robin among `players` players (module docs), interleaved across pairs
/// so that a run stopped early has a balanced sample.
pub fn schedule(players: usize, cfg: &ArenaConfig) -> Vec<Job> {
    let pairs: Vec<(usize, usize)> = (0..players).flat_map(|a| (a + 1..players).map(move |b| (a, b))).collect();
    let mut jobs = Vec::with_capacity(pairs.len() * cfg.games);
    for g in 0..cfg.games {
        for &(a, b) in &pairs {
            let (first, second) = if g % 2 == 0 { (a, b) } else { (b, a) };
            let protocol = match &cfg.openings {
                OpeningMode::Rif26 => {
                    Protocol::Designated { opening: Some(Opening::all()[(g / 2) % 26]), swap: false, offers: 0 }
                }
                OpeningMode::Protocol(p) => p.clone(),
            };
            let index = jobs.len();
            jobs.push(Job { index, first, second, protocol, seed: game_seed(cfg.seed, index) });
        }
    }
    jobs
}

/// Plays one game of `job` with `agents[i]` the agent of player index `i`.
pub fn play_game(
    job: &Job,
    names: &[String],
    agents: &mut [Option<Box<dyn Agent>>],
    cfg: &ArenaConfig,
) -> Result<GameRecord> {
    let mut game = Game::new(cfg.size, cfg.rule, job.protocol.clone(), cfg.stone_cap)
        .with_context(|| format!("game {}: bad setup", job.index))?;
    for &i in &[job.first, job.second] {
        agents[i].as_mut().context("agent not built")?.new_game(job.seed ^ i as u64)?;
        if job.first == job.second {
            break;
        }
    }
    let mut forfeit: Option<(Player, String)> = None;
    let limit = 2 * cfg.size * cfg.size + 64;
    let mut steps = 0;
    while !game.is_over() && steps < limit {
        steps += 1;
        let who = game.to_decide();
        let idx = if who == Player::First { job.first } else { job.second };
        let agent = agents[idx].as_mut().context("agent not built")?;
        match agent.choose(&game) {
            Ok(c) => {
                if let Err(e) = game.apply(c.action) {
                    forfeit = Some((who, format!("{} played {}: {e}", names[idx], c.action)));
                    break;
                }
            }
            Err(e) => {
                forfeit = Some((who, format!("{} failed: {e:#}", names[idx])));
                // A failed agent may be stuck (an engine that stopped answering would not answer
                // the next game's START either): dropping it ends it, and the next game builds
                // a fresh one.
                agents[idx] = None;
                break;
            }
        }
    }
    let name_of = |p: Player| names[if p == Player::First { job.first } else { job.second }].clone();
    let black = game.black_player();
    let (result, winner, reason) = if let Some((loser, why)) = forfeit {
        let w = loser.other();
        let colour = if game.color_of(w) == Color::Black { "black" } else { "white" };
        (colour.to_string(), Some(name_of(w)), format!("forfeit: {why}"))
    } else if let Some(o) = game.outcome() {
        let result = match o.winner_color {
            Some(Color::Black) => "black",
            Some(Color::White) => "white",
            None => "draw",
        };
        let reason = serde_json::to_value(o.reason)?.as_str().unwrap_or("?").to_string();
        (result.to_string(), o.winner.map(name_of), kebab(&reason))
    } else {
        ("draw".to_string(), None, "move-limit".to_string())
    };
    Ok(GameRecord {
        index: job.index,
        first: names[job.first].clone(),
        second: names[job.second].clone(),
        black: name_of(black),
        white: name_of(black.other()),
        protocol: job.protocol.to_string(),
        opening: game.opening().map(|o| o.code().to_string()),
        decisions: game.history().iter().map(|(p, a)| format!("{p}:{a}")).collect(),
        moves: game.board().stones().iter().map(|(p, _)| format_point(*p)).collect::<Vec<_>>().join(" "),
        result,
        winner,
        reason,
        seed: job.seed,
    })
}

/// `ForbiddenMove` -> `forbidden-move`.
fn kebab(s: &str) -> String {
    let mut out = String::new();
    for (i, ch) in s.chars().enumerate() {
        if ch.is_ascii_uppercase() {
            if i > 0 {
                out.push('-');
            }
            out.push(ch.to_ascii_lowercase());
        } else {
            out.push(ch);
        }
    }
    out
}

/// Runs `jobs` on `threads` workers. `on_record` sees each record as it finishes (in finishing
/// order) and returns `false` to stop scheduling new games (games already running finish).
/// Returns the finished records sorted by index. Errors: an agent could not be built (e.g. a
/// model failed to load), which stops the run.
pub fn run_jobs(
    jobs: &[Job],
    players: &[PlayerSpec],
    cfg: &ArenaConfig,
    loader: &EvaluatorLoader,
    mut on_record: impl FnMut(&GameRecord) -> bool,
) -> Result<Vec<GameRecord>> {
    let names: Vec<String> = players.iter().map(|p| p.name.clone()).collect();
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let threads = cfg.threads.max(1).min(jobs.len().max(1));
    let (tx, rx) = channel::<Result<GameRecord>>();
    let mut records = Vec::with_capacity(jobs.len());
    let mut failure = None;
    std::thread::scope(|s| {
        for _ in 0..threads {
            let tx = tx.clone();
            let (next, stop, names) = (&next, &stop, &names);
            s.spawn(move || {
                let mut agents: Vec<Option<Box<dyn Agent>>> = (0..players.len()).map(|_| None).collect();
                while !stop.load(Ordering::SeqCst) {
                    let k = next.fetch_add(1, Ordering::SeqCst);
                    let Some(job) = jobs.get(k) else { break };
                    let res = (|| {
                        for i in [job.first, job.second] {
                            if agents[i].is_none() {
                                agents[i] = Some(players[i].build(cfg.size, cfg.rule, loader)?);
                            }
                        }
                        play_game(job, names, &mut agents, cfg)
                    })();
                    let failed = res.is_err();
                    if tx.send(res).is_err() || failed {
                        break;
                    }
                }
            });
        }
        drop(tx);
        for r in rx {
            match r {
                Ok(rec) => {
                    if !on_record(&rec) {
                        stop.store(true, Ordering::SeqCst);
                    }
                    records.push(rec);
                }
                Err(e) => {
                    stop.store(true, Ordering::SeqCst);
                    failure.get_or_insert(e);
                }
            }
        }
    });
    if let Some(e) = failure {
        return Err(e);
    }
    records.sort_by_key(|r| r.index);
    Ok(records)
}

/// Results of a finished (or stopped) arena.
#[derive(Clone, Debug)]
pub struct ArenaSummary {
    pub names: Vec<String>,
    pub matrix: ResultMatrix,
    /// The ratings fit, or why it failed (e.g. a player won every game with no prior).
    pub ratings: std::result::Result<Vec<Rating>, String>,
    /// Black's results over all games.
    pub black: Wdl,
    /// The SPRT status of the first player against the second, when configured.
    pub sprt: Option<SprtStatus>,
    pub records: Vec<GameRecord>,
}

/// Tallies `records` among `names` and fits the ratings (default [`FitOptions`]).
pub fn summarize(names: &[String], records: Vec<GameRecord>, sprt: Option<&SprtConfig>) -> ArenaSummary {
    let idx: BTreeMap<&str, usize> = names.iter().enumerate().map(|(i, n)| (n.as_str(), i)).collect();
    let mut matrix = ResultMatrix::new(names.to_vec());
    let mut black = Wdl::default();
    for r in &records {
        let (Some(&i), Some(&j)) = (idx.get(r.first.as_str()), idx.get(r.second.as_str())) else { continue };
        if i != j {
            matrix.add(i, j, r.score_of(&r.first).unwrap_or(0.5));
        }
        match r.result.as_str() {
            "black" => black.wins += 1,
            "white" => black.losses += 1,
            _ => black.draws += 1,
        }
    }
    let ratings = fit(&matrix, &FitOptions::default()).map_err(|e| e.to_string());
    let sprt = sprt.filter(|_| names.len() == 2).map(|c| c.status(&matrix.results[0][1]));
    ArenaSummary { names: names.to_vec(), matrix, ratings, black, sprt, records }
}

/// One CSV row of `pairs.csv`.
#[derive(Default, Serialize)]
struct PairRow<'a> {
    player: &'a str,
    opponent: &'a str,
    games: u64,
    wins: u64,
    draws: u64,
    losses: u64,
    score: f64,
    score_low95: f64,
    score_high95: f64,
}

/// One CSV row of `results.csv`.
#[derive(Default, Serialize)]
struct ResultRow<'a> {
    index: usize,
    first: &'a str,
    second: &'a str,
    black: &'a str,
    white: &'a str,
    protocol: &'a str,
    opening: &'a str,
    result: &'a str,
    winner: &'a str,
    reason: &'a str,
    moves: &'a str,
}

impl ArenaSummary {
    fn pair_rows(&self) -> Vec<PairRow<'_>> {
        let k = self.names.len();
        let mut rows = Vec::new();
        for i in 0..k {
            for j in i + 1..k {
                let r = self.matrix.results[i][j];
                let (lo, hi) = r.score_interval();
                rows.push(PairRow {
                    player: &self.names[i],
                    opponent: &self.names[j],
                    games: r.games(),
                    wins: r.wins,
                    draws: r.draws,
                    losses: r.losses,
                    score: r.score(),
                    score_low95: lo,
                    score_high95: hi,
                });
            }
        }
        rows
    }

    /// The report as markdown: W/D/L per pair, the ratings table, Black's results, the SPRT.
    pub fn markdown(&self) -> String {
        let mut out = format!("# Arena: {} games\n\n## Results per pair\n\n", self.records.len());
        let rows: Vec<Vec<String>> = self
            .pair_rows()
            .iter()
            .map(|r| {
                vec![
                    r.player.to_string(),
                    r.opponent.to_string(),
                    r.games.to_string(),
                    format!("{}/{}/{}", r.wins, r.draws, r.losses),
                    format!("{:.3}", r.score),
                    format!("[{:.3}, {:.3}]", r.score_low95, r.score_high95),
                ]
            })
            .collect();
        out += &markdown_table(&["player", "opponent", "games", "W/D/L", "score", "95% CI (Wilson)"], &rows);
        out += "\n## Ratings (Bradley–Terry, Elo scale, mean 0, draws = half wins, prior 2 virtual draws per pair)\n\n";
        match &self.ratings {
            Ok(rs) => {
                let mut sorted: Vec<&Rating> = rs.iter().collect();
                sorted.sort_by(|a, b| b.elo.partial_cmp(&a.elo).unwrap_or(std::cmp::Ordering::Equal));
                let rows: Vec<Vec<String>> = sorted
                    .iter()
                    .enumerate()
                    .map(|(i, r)| {
                        vec![
                            (i + 1).to_string(),
                            r.name.clone(),
                            format!("{:+.1}", r.elo),
                            format!("[{:+.1}, {:+.1}]", r.low, r.high),
                            r.games.to_string(),
                            format!("{:.3}", r.score),
                        ]
                    })
                    .collect();
                out += &markdown_table(&["rank", "player", "Elo", "95% interval", "games", "score"], &rows);
            }
            Err(e) => out += &format!("No ratings: {e}\n"),
        }
        let b = self.black;
        let (lo, hi) = b.score_interval();
        out += &format!(
            "\nBlack: {}/{}/{} (W/D/L), score {:.3} [{:.3}, {:.3}]\n",
            b.wins,
            b.draws,
            b.losses,
            b.score(),
            lo,
            hi
        );
        if let Some(s) = &self.sprt {
            out += &format!(
                "\nSPRT ({} vs {}): LLR {:.3} in [{:.3}, {:.3}]: {}\n",
                self.names[0],
                self.names[1],
                s.llr,
                s.lower,
                s.upper,
                match s.decision {
                    crate::sprt::SprtDecision::H1 => "H1 accepted (pass)",
                    crate::sprt::SprtDecision::H0 => "H0 accepted (fail)",
                    crate::sprt::SprtDecision::Continue => "undecided",
                }
            );
        }
        out
    }

    /// Writes `games.jsonl` (one record per line), `results.csv`, `pairs.csv`, `ratings.csv`
    /// and `report.md` into `dir` (each through a temporary file and a rename).
    pub fn write(&self, dir: &Path) -> Result<()> {
        let mut jsonl = String::new();
        for r in &self.records {
            jsonl += &serde_json::to_string(r)?;
            jsonl.push('\n');
        }
        write_atomic(&dir.join("games.jsonl"), jsonl.as_bytes())?;
        let rows: Vec<ResultRow> = self
            .records
            .iter()
            .map(|r| ResultRow {
                index: r.index,
                first: &r.first,
                second: &r.second,
                black: &r.black,
                white: &r.white,
                protocol: &r.protocol,
                opening: r.opening.as_deref().unwrap_or(""),
                result: &r.result,
                winner: r.winner.as_deref().unwrap_or(""),
                reason: &r.reason,
                moves: &r.moves,
            })
            .collect();
        write_atomic(&dir.join("results.csv"), csv_string(&rows)?.as_bytes())?;
        write_atomic(&dir.join("pairs.csv"), csv_string(&self.pair_rows())?.as_bytes())?;
        if let Ok(rs) = &self.ratings {
            write_atomic(&dir.join("ratings.csv"), csv_string(rs)?.as_bytes())?;
        }
        write_atomic(&dir.join("report.md"), self.markdown().as_bytes())
    }
}

/// Runs a whole arena: schedule, play (stopping early when the SPRT decides), summarize.
/// `progress` sees every finished record. Errors: fewer than 2 players, duplicate names, SPRT
/// with other than 2 players, an engine player with a protocol that has non-stone decisions,
/// or an agent that cannot be built.
pub fn run_arena(
    players: &[PlayerSpec],
    cfg: &ArenaConfig,
    loader: &EvaluatorLoader,
    mut progress: impl FnMut(&GameRecord),
) -> Result<ArenaSummary> {
    ensure!(players.len() >= 2, "an arena needs at least 2 players (got {})", players.len());
    ensure!(cfg.games >= 1, "--games must be at least 1");
    let names: Vec<String> = players.iter().map(|p| p.name.clone()).collect();
    for (i, n) in names.iter().enumerate() {
        ensure!(!names[..i].contains(n), "player name '{n}' is used twice");
    }
    if cfg.sprt.is_some() && players.len() != 2 {
        bail!("--sprt needs exactly 2 players (candidate first), got {}", players.len());
    }
    if let OpeningMode::Protocol(p) = &cfg.openings {
        let plain = matches!(p, Protocol::Free { .. })
            || matches!(p, Protocol::Designated { swap: false, offers: 0 | 1, opening: Some(_) });
        if !plain {
            if let Some(e) = players.iter().find(|p| matches!(p.kind, crate::spec::PlayerKind::Engine(_))) {
                bail!("player {} is an engine, which can only place stones; protocol {p} has other decisions (use --openings rif26)", e.name);
            }
        }
    }
    let jobs = schedule(players.len(), cfg);
    let mut tally = Wdl::default();
    let records = run_jobs(&jobs, players, cfg, loader, |r| {
        progress(r);
        match &cfg.sprt {
            Some(s) => {
                match r.score_of(&names[0]) {
                    Some(1.0) => tally.wins += 1,
                    Some(0.5) => tally.draws += 1,
                    Some(_) => tally.losses += 1,
                    None => {}
                }
                s.status(&tally).decision == crate::sprt::SprtDecision::Continue
            }
            None => true,
        }
    })?;
    Ok(summarize(&names, records, cfg.sprt.as_ref()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use renju_selfplay::eval::no_models;

    #[test]
    fn schedule_plays_each_opening_with_both_colours() {
        let cfg = ArenaConfig { games: 52, ..Default::default() };
        let jobs = schedule(2, &cfg);
        assert_eq!(jobs.len(), 52);
        for o in Opening::all() {
            let with: Vec<&Job> = jobs
                .iter()
                .filter(|j| matches!(j.protocol, Protocol::Designated { opening: Some(x), .. } if x == o))
                .collect();
            assert_eq!(with.len(), 2, "{o:?}");
            assert_ne!(with[0].first, with[1].first, "{o:?} must be played with both colours");
        }
        assert_eq!(schedule(3, &ArenaConfig { games: 4, ..Default::default() }).len(), 12);
    }

    #[test]
    fn kebab_case_reasons() {
        assert_eq!(kebab("ForbiddenMove"), "forbidden-move");
        assert_eq!(kebab("Five"), "five");
    }

    #[test]
    fn an_engine_that_stops_answering_loses_its_game_and_is_restarted() {
        // Answers START, then never again: each game's engine times out on its first move.
        let hang = r#"e=engine:"sh -c 'read -r l; echo OK; exec sleep 60'",time=0.05"#;
        let players =
            vec![PlayerSpec::parse_named(hang).unwrap(), PlayerSpec::parse_named("h=heuristic,playouts=8").unwrap()];
        let cfg = ArenaConfig { games: 2, threads: 1, openings: OpeningMode::Rif26, ..Default::default() };
        let a = run_arena(&players, &cfg, &no_models, |_| {}).unwrap();
        assert_eq!(a.records.len(), 2, "the second game is played with a fresh engine");
        for r in &a.records {
            assert!(r.reason.starts_with("forfeit: e failed") && r.reason.contains("did not answer"), "{r:?}");
            assert_eq!(r.score_of("h"), Some(1.0), "{r:?}");
        }
    }

    #[test]
    fn small_arena_is_reproducible_and_tallied() {
        let players = vec![
            PlayerSpec::parse_named("h=heuristic,playouts=8").unwrap(),
            PlayerSpec::parse_named("u=uniform,playouts=8").unwrap(),
        ];
        let cfg = ArenaConfig { size: 9, games: 4, seed: 5, threads: 2, ..Default::default() };
        let a = run_arena(&players, &cfg, &no_models, |_| {}).unwrap();
        let b = run_arena(&players, &ArenaConfig { threads: 1, ..cfg.clone() }, &no_models, |_| {}).unwrap();
        assert_eq!(a.records, b.records);
        assert_eq!(a.records.len(), 4);
        let w = a.matrix.results[0][1];
        assert_eq!(w.games(), 4);
        let h_score: f64 = a.records.iter().map(|r| r.score_of("h").unwrap()).sum();
        assert!((w.score() * 4.0 - h_score).abs() < 1e-12);
        for r in &a.records {
            assert!(["black", "white", "draw"].contains(&r.result.as_str()));
            assert!(!r.reason.starts_with("forfeit"), "{r:?}");
        }
    }
}
