//! The learning curve (`renju-zero curve`): published generations of a run against fixed
//! opponents, in the training distribution and against outside engines.
//!
//! Every point is one arena match ([`crate::matches::run_arena`], so the same game loop, records
//! and Wilson intervals as `renju-zero arena`) between a generation and an opponent. Against a
//! search opponent ([`OpponentKind::Search`]: `heuristic`, `uniform`, `gen:N`, `model:DIR`):
//! - the run's own rule, opening protocol and stone cap, whole protocol games
//!   ([`OpeningMode::Protocol`]: swap and offer decisions are the players' own);
//! - identical search settings for both sides (the same [`SearchSettings`]: playouts or time per
//!   move, leaf batch, sampled opening decisions, PUCT or Gumbel parameters; no root noise);
//! - the players alternating as [`renju_rules::Player::First`] (tentative Black) game by game.
//!
//! Against an outside Gomocup engine ([`OpponentKind::Engine`], `engine:"CMD",nodes=N`: the
//! ladder of fixed-budget anchors) an engine makes no swap or offer decisions, so the games start
//! after the opening: [`OpeningMode::Rif26`], game `g` from RIF opening `g / 2 mod 26` with the
//! colours alternating ([`CurveConfig::engine_games`], 52 = every opening with both colours), on
//! the run's board and rule, without a stone cap. The generation searches with the curve's
//! settings, the engine with its own budget.
//!
//! `curve.csv` states both budgets (`budget`, `opponent_budget`) and how the games started
//! (`start`: `whole-game:PROTOCOL` or `after-opening:rif26`).
//!
//! Output: `curve.csv` (one [`CurveRow`] per generation and opponent), `curve.svg` (score against
//! minutes since the run started, one line per opponent, 95% intervals as bars) and, per match,
//! the arena's files in `matches/gen-NNNNNN-vs-NAME/`. `curve-settings.json` records the match
//! settings; a later call with the same settings only plays the points that are missing, so the
//! curve can be extended while a run trains.

use std::path::{Path, PathBuf};

use anyhow::{bail, ensure, Context, Result};
use serde::{Deserialize, Serialize};

use crate::agent::SearchSettings;
use crate::engine::EngineSpec;
use crate::matches::{run_arena, ArenaConfig, OpeningMode};
use crate::output::{csv_string, svg_score_chart, xml_escape};
use crate::spec::{PlayerKind, PlayerSpec};
use renju_fs::write_atomic;
use renju_selfplay::eval::{EvaluatorLoader, EvaluatorSpec};

/// A published generation to put on the curve.
#[derive(Clone, Debug, PartialEq)]
pub struct CurveGeneration {
    pub generation: u64,
    /// Training steps behind it.
    pub step: u64,
    /// Minutes since the run started (generation 0 was published) when it was published.
    pub minutes: f64,
    /// Self-play games finished before it was published.
    pub selfplay_games: u64,
    /// Its evaluator (`model:DIR`).
    pub eval: EvaluatorSpec,
}

/// What a fixed opponent is.
#[derive(Clone, Debug, PartialEq)]
pub enum OpponentKind {
    /// A search over this evaluator with the curve's settings, in whole protocol games.
    Search(EvaluatorSpec),
    /// An outside Gomocup engine with its own budget, on the 26 RIF openings (module docs).
    Engine(EngineSpec),
}

/// A fixed opponent: `heuristic`, `uniform`, `gen:N`, `model:DIR` or `engine:"CMD"[,nodes=N]
/// [,depth=D][,time=S]` (the engine grammar of [`PlayerSpec`]).
#[derive(Clone, Debug, PartialEq)]
pub struct CurveOpponent {
    /// Name in the CSV, the plot and the match directories (`heuristic`, `gen0`,
    /// `pbrain-rapfi-nodes16000`, ...).
    pub name: String,
    pub kind: OpponentKind,
}

/// `s` with every character but letters, digits, `-`, `_` and `.` replaced by `_` (a name that
/// is safe in a file name).
fn file_safe(s: &str) -> String {
    s.chars().map(|c| if c.is_alphanumeric() || "-_.".contains(c) { c } else { '_' }).collect()
}

impl CurveOpponent {
    /// Parses an `--opponent` value; `gen:N` becomes `model:<generation_dir(N)>` named `genN`; an
    /// engine is named after its program and budget (`pbrain-rapfi-nodes16000`,
    /// `pbrain-x-depth8`, `pbrain-x-time0.5`). Errors name the value.
    pub fn parse(s: &str, generation_dir: impl Fn(u64) -> PathBuf) -> Result<CurveOpponent> {
        let t = s.trim();
        if let Some(n) = t.strip_prefix("gen:") {
            let g: u64 = n.parse().map_err(|_| anyhow::anyhow!("--opponent '{s}': gen:N needs a generation number"))?;
            let kind = OpponentKind::Search(EvaluatorSpec::Model(generation_dir(g)));
            return Ok(CurveOpponent { name: format!("gen{g}"), kind });
        }
        if t.starts_with("engine:") {
            let e = match PlayerSpec::parse("engine", t).with_context(|| format!("--opponent '{s}'"))?.kind {
                PlayerKind::Engine(e) => e,
                other => bail!("--opponent '{s}': not an engine ({other:?})"),
            };
            let program = Path::new(&e.command[0]).file_name().map(|n| n.to_string_lossy().into_owned());
            let mut name = file_safe(&program.unwrap_or_else(|| "engine".into()));
            match (e.nodes, e.depth) {
                (None, None) => name += &format!("-time{}", e.time.as_secs_f64()),
                (nodes, depth) => {
                    if let Some(n) = nodes {
                        name += &format!("-nodes{n}");
                    }
                    if let Some(d) = depth {
                        name += &format!("-depth{d}");
                    }
                }
            }
            return Ok(CurveOpponent { name, kind: OpponentKind::Engine(e) });
        }
        let eval = match t {
            "heuristic" | "uniform" | "shipped" => EvaluatorSpec::parse(t)?,
            m if m.starts_with("model:") && m.len() > "model:".len() => EvaluatorSpec::parse(t)?,
            _ => bail!(
                "--opponent '{s}': expected heuristic, uniform, shipped, gen:N, model:DIR or engine:\"CMD\"[,nodes=N]"
            ),
        };
        let name = match &eval {
            EvaluatorSpec::Model(dir) => {
                file_safe(&dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "model".into()))
            }
            _ => t.to_string(),
        };
        Ok(CurveOpponent { name, kind: OpponentKind::Search(eval) })
    }

    /// How the points against this opponent are played, in words (the command's output).
    pub fn how_played(&self, cfg: &CurveConfig) -> String {
        match &self.kind {
            OpponentKind::Search(_) => format!(
                "{}: {} whole games a point under the run's protocol ({}), both sides at {}",
                self.name,
                cfg.arena.games,
                cfg.start_of(&self.kind),
                cfg.settings.limit
            ),
            OpponentKind::Engine(e) => format!(
                "{}: an engine ({}) makes no swap or offer decisions, so its {} games a point start after the \
                 opening ({}: the 26 RIF openings in turn, each with both colours), no stone cap; the \
                 generation at {}",
                self.name,
                e.budget(),
                cfg.engine_games,
                cfg.start_of(&self.kind),
                cfg.settings.limit
            ),
        }
    }
}

/// How every match of the curve is played.
#[derive(Clone, Debug, PartialEq)]
pub struct CurveConfig {
    /// Board, rule, stone cap, games per match, seed and threads; `openings` must be
    /// [`OpeningMode::Protocol`] with the run's protocol.
    pub arena: ArenaConfig,
    /// The search of the generation, and of a search opponent.
    pub settings: SearchSettings,
    /// Games per point against an engine opponent (game `g` from RIF opening `g / 2 mod 26`,
    /// colours alternating: 52 plays each opening with both colours).
    pub engine_games: usize,
}

impl CurveConfig {
    /// The settings as JSON text (`curve-settings.json`): what must match for points of two
    /// calls to share one curve.
    pub fn describe(&self) -> String {
        let protocol = match &self.arena.openings {
            OpeningMode::Protocol(p) => p.to_string(),
            OpeningMode::Rif26 => "rif26".into(),
        };
        let s = &self.settings;
        let v = serde_json::json!({
            "size": self.arena.size,
            "rule": self.arena.rule,
            "protocol": protocol,
            "stone_cap": self.arena.stone_cap,
            "games": self.arena.games,
            "seed": self.arena.seed,
            "playouts": s.limit.playouts,
            "time_seconds": s.limit.time.map(|t| t.as_secs_f64()),
            "batch": s.batch,
            "explore": s.explore,
            "search": s.config,
            "engine_games": self.engine_games,
        });
        serde_json::to_string_pretty(&v).expect("serialisable") + "\n"
    }

    /// The arena settings of a point against `kind`.
    pub fn arena_for(&self, kind: &OpponentKind) -> ArenaConfig {
        match kind {
            OpponentKind::Search(_) => self.arena.clone(),
            OpponentKind::Engine(_) => ArenaConfig {
                openings: OpeningMode::Rif26,
                games: self.engine_games,
                stone_cap: None,
                sprt: None,
                ..self.arena.clone()
            },
        }
    }

    /// The `start` column of a point against `kind`: `whole-game:PROTOCOL` or
    /// `after-opening:rif26`.
    pub fn start_of(&self, kind: &OpponentKind) -> String {
        match &self.arena_for(kind).openings {
            OpeningMode::Protocol(p) => format!("whole-game:{p}"),
            OpeningMode::Rif26 => "after-opening:rif26".into(),
        }
    }
}

/// One row of `curve.csv`: a generation against an opponent.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CurveRow {
    pub generation: u64,
    pub step: u64,
    /// Minutes since the run started.
    pub minutes: f64,
    /// Self-play games finished before the generation was published.
    pub selfplay_games: u64,
    pub opponent: String,
    pub games: u64,
    /// From the generation's side.
    pub wins: u64,
    pub draws: u64,
    pub losses: u64,
    /// `(wins + draws / 2) / games`.
    pub score: f64,
    /// 95% Wilson interval of the score ([`crate::stats::Wdl::score_interval`]).
    pub score_low95: f64,
    pub score_high95: f64,
    /// The generation's search budget per move ([`crate::agent::SearchLimit`]'s words:
    /// `playouts=32`, `time=0.2`).
    #[serde(default)]
    pub budget: String,
    /// The opponent's budget per move: as `budget` for a search opponent, the engine's
    /// ([`EngineSpec::budget`]: `nodes=16000 time=60`) for an engine.
    #[serde(default)]
    pub opponent_budget: String,
    /// How the games started ([`CurveConfig::start_of`]).
    #[serde(default)]
    pub start: String,
}

/// Name of the generation's player in its matches.
const CANDIDATE: &str = "generation";

/// Plays `gen` against `opp` (one arena match); when `matches_dir` is given the arena's files go
/// to `matches_dir/gen-NNNNNN-vs-NAME/`. Errors: a player cannot be built (e.g. a model does not
/// load), or the arena settings are invalid.
pub fn play_point(
    gen: &CurveGeneration,
    opp: &CurveOpponent,
    cfg: &CurveConfig,
    loader: &EvaluatorLoader,
    matches_dir: Option<&Path>,
) -> Result<CurveRow> {
    ensure!(
        matches!(cfg.arena.openings, OpeningMode::Protocol(_)),
        "the learning curve plays whole protocol games against search opponents"
    );
    let spec = |name: &str, eval: &EvaluatorSpec| PlayerSpec {
        name: name.to_string(),
        kind: PlayerKind::Search { eval: eval.clone(), settings: cfg.settings.clone() },
        text: format!("{eval:?}"),
    };
    let opp_name = if opp.name == CANDIDATE { format!("{}-opponent", opp.name) } else { opp.name.clone() };
    let (opponent, opponent_budget) = match &opp.kind {
        OpponentKind::Search(eval) => (spec(&opp_name, eval), cfg.settings.limit.to_string()),
        OpponentKind::Engine(e) => {
            (PlayerSpec { name: opp_name, kind: PlayerKind::Engine(e.clone()), text: format!("{e:?}") }, e.budget())
        }
    };
    let players = [spec(CANDIDATE, &gen.eval), opponent];
    let summary = run_arena(&players, &cfg.arena_for(&opp.kind), loader, |_| {})
        .with_context(|| format!("generation {} against {}", gen.generation, opp.name))?;
    if let Some(dir) = matches_dir {
        summary.write(&dir.join(format!("gen-{:06}-vs-{}", gen.generation, opp.name)))?;
    }
    let r = summary.matrix.results[0][1];
    let (lo, hi) = r.score_interval();
    Ok(CurveRow {
        generation: gen.generation,
        step: gen.step,
        minutes: gen.minutes,
        selfplay_games: gen.selfplay_games,
        opponent: opp.name.clone(),
        games: r.games(),
        wins: r.wins,
        draws: r.draws,
        losses: r.losses,
        score: r.score(),
        score_low95: lo,
        score_high95: hi,
        budget: cfg.settings.limit.to_string(),
        opponent_budget,
        start: cfg.start_of(&opp.kind),
    })
}

/// The generations of `available` that belong on the curve: every `every`-th (generation
/// number divisible by `every`), plus the newest when `with_newest`. Sorted.
pub fn due_generations(available: &[u64], every: u64, with_newest: bool) -> Vec<u64> {
    let every = every.max(1);
    let mut v: Vec<u64> = available.iter().copied().filter(|g| g % every == 0).collect();
    if let (true, Some(&last)) = (with_newest, available.iter().max()) {
        v.push(last);
    }
    v.sort_unstable();
    v.dedup();
    v
}

/// The curve's output directory: settings check, rows read back and rewritten.
pub struct CurveDir {
    pub dir: PathBuf,
    pub rows: Vec<CurveRow>,
}

impl CurveDir {
    /// Opens `dir` for a curve with `cfg`: creates it, or reads back its rows when it holds a
    /// curve made with the same settings. Errors: the settings differ (the message says to
    /// choose another `--out`), or `curve.csv` does not parse.
    pub fn open(dir: &Path, cfg: &CurveConfig) -> Result<CurveDir> {
        let settings = dir.join("curve-settings.json");
        let want = cfg.describe();
        let mut rows = Vec::new();
        if settings.exists() {
            let have = std::fs::read_to_string(&settings).with_context(|| format!("reading {}", settings.display()))?;
            ensure!(
                have == want,
                "{} holds a curve made with other match settings:\n{have}\nnow:\n{want}choose another --out (or remove it)",
                dir.display()
            );
            let csv_path = dir.join("curve.csv");
            if csv_path.exists() {
                let mut rd =
                    csv::Reader::from_path(&csv_path).with_context(|| format!("reading {}", csv_path.display()))?;
                for (i, r) in rd.deserialize().enumerate() {
                    rows.push(r.with_context(|| format!("{} row {}: not a curve row", csv_path.display(), i + 2))?);
                }
            }
        } else {
            write_atomic(&settings, want.as_bytes())?;
        }
        Ok(CurveDir { dir: dir.to_path_buf(), rows })
    }

    /// Whether the point of `generation` against `opponent` is there already.
    pub fn has(&self, generation: u64, opponent: &str) -> bool {
        self.rows.iter().any(|r| r.generation == generation && r.opponent == opponent)
    }

    /// Adds a row and rewrites `curve.csv` and `curve.svg` (rows sorted by opponent, then
    /// generation).
    pub fn push(&mut self, row: CurveRow) -> Result<()> {
        self.rows.retain(|r| !(r.generation == row.generation && r.opponent == row.opponent));
        self.rows.push(row);
        self.rows.sort_by(|a, b| a.opponent.cmp(&b.opponent).then(a.generation.cmp(&b.generation)));
        write_atomic(&self.dir.join("curve.csv"), csv_string(&self.rows)?.as_bytes())?;
        write_atomic(&self.dir.join("curve.svg"), svg(&self.rows).as_bytes())
    }
}

/// An SVG line chart of `rows`: score (0..1) against minutes since the run started, one line
/// per opponent with the 95% intervals as vertical bars, a dashed line at 0.5.
pub fn svg(rows: &[CurveRow]) -> String {
    const COLOURS: [&str; 6] = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"];
    let (w, h, left, top, plot_w, plot_h) = (720.0, 400.0, 56.0, 36.0, 600.0, 300.0);
    let max_min = rows.iter().map(|r| r.minutes).fold(0.0f64, f64::max).max(1e-9);
    let x = |m: f64| left + plot_w * (m / max_min).clamp(0.0, 1.0);
    let y = |v: f64| top + plot_h * (1.0 - v.clamp(0.0, 1.0));
    let title = "Learning curve: score against each opponent (95% Wilson interval)";
    let mut s = svg_score_chart(w, h, left, left + plot_w, 20.0, title, y);
    for k in 0..=4 {
        let m = max_min * k as f64 / 4.0;
        s += &format!("<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{m:.1}</text>\n", x(m), y(0.0) + 14.0);
    }
    s += &format!(
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">minutes since the run started</text>\n",
        left + plot_w / 2.0,
        y(0.0) + 30.0
    );
    let mut opponents: Vec<&str> = rows.iter().map(|r| r.opponent.as_str()).collect();
    opponents.sort_unstable();
    opponents.dedup();
    for (i, opp) in opponents.iter().enumerate() {
        let colour = COLOURS[i % COLOURS.len()];
        let mut pts: Vec<&CurveRow> = rows.iter().filter(|r| r.opponent == *opp).collect();
        pts.sort_by(|a, b| a.minutes.partial_cmp(&b.minutes).unwrap_or(std::cmp::Ordering::Equal));
        let line: Vec<String> = pts.iter().map(|r| format!("{:.1},{:.1}", x(r.minutes), y(r.score))).collect();
        s += &format!(
            "<polyline fill=\"none\" stroke=\"{colour}\" stroke-width=\"1.5\" points=\"{}\"/>\n",
            line.join(" ")
        );
        for r in &pts {
            let cx = x(r.minutes);
            s += &format!(
                "<line x1=\"{cx:.1}\" x2=\"{cx:.1}\" y1=\"{:.1}\" y2=\"{:.1}\" stroke=\"{colour}\" stroke-opacity=\"0.5\"/>\n\
                 <circle cx=\"{cx:.1}\" cy=\"{:.1}\" r=\"2.5\" fill=\"{colour}\"><title>{}</title></circle>\n",
                y(r.score_low95),
                y(r.score_high95),
                y(r.score),
                xml_escape(&format!(
                    "generation {} (step {}, {:.1} min, {} games) vs {}: {}/{}/{}, {:.3} [{:.3}, {:.3}]",
                    r.generation, r.step, r.minutes, r.selfplay_games, r.opponent, r.wins, r.draws, r.losses, r.score,
                    r.score_low95, r.score_high95
                ))
            );
        }
        s += &format!(
            "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"10\" height=\"3\" fill=\"{colour}\"/><text x=\"{:.1}\" y=\"{:.1}\">{}</text>\n",
            left + plot_w - 110.0,
            top + 8.0 + 14.0 * i as f64,
            left + plot_w - 96.0,
            top + 12.0 + 14.0 * i as f64,
            xml_escape(opp)
        );
    }
    s + "</svg>\n"
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::SearchLimit;
    use renju_rules::{Protocol, Rule};
    use renju_selfplay::eval::no_models;

    fn cfg() -> CurveConfig {
        CurveConfig {
            arena: ArenaConfig {
                size: 9,
                rule: Rule::Renju,
                openings: OpeningMode::Protocol(Protocol::Swap1),
                games: 4,
                seed: 3,
                threads: 1,
                stone_cap: Some(30),
                sprt: None,
            },
            settings: SearchSettings {
                limit: SearchLimit { playouts: Some(8), time: None },
                explore: 2,
                ..Default::default()
            },
            engine_games: 4,
        }
    }

    #[test]
    fn opponents_parse_and_bad_ones_are_named() {
        let dir = |g: u64| PathBuf::from(format!("run/models/gen-{g:06}"));
        let o = CurveOpponent::parse("gen:0", dir).unwrap();
        assert_eq!(o, CurveOpponent { name: "gen0".into(), kind: OpponentKind::Search(EvaluatorSpec::Model(dir(0))) });
        assert_eq!(
            CurveOpponent::parse("heuristic", dir).unwrap().kind,
            OpponentKind::Search(EvaluatorSpec::Heuristic)
        );
        assert_eq!(CurveOpponent::parse("model:x/gen-000007", dir).unwrap().name, "gen-000007");
        assert!(CurveOpponent::parse("gen:x", dir).unwrap_err().to_string().contains("gen:N"));
        assert!(CurveOpponent::parse("magic", dir).unwrap_err().to_string().contains("'magic'"));
        let e = CurveOpponent::parse(r#"engine:"engines/rapfi/pbrain-rapfi --x",nodes=16000"#, dir).unwrap();
        assert_eq!(e.name, "pbrain-rapfi-nodes16000");
        let OpponentKind::Engine(spec) = &e.kind else { panic!("{e:?}") };
        assert_eq!(spec.command, ["engines/rapfi/pbrain-rapfi", "--x"]);
        assert_eq!((spec.nodes, spec.depth, spec.budget().as_str()), (Some(16000), None, "nodes=16000 time=60"));
        assert_eq!(CurveOpponent::parse("engine:pbrain-x,depth=8", dir).unwrap().name, "pbrain-x-depth8");
        assert_eq!(CurveOpponent::parse("engine:./pbrain-x,time=0.5", dir).unwrap().name, "pbrain-x-time0.5");
        let bad = format!("{:#}", CurveOpponent::parse("engine:pbrain-x,nodes=0", dir).unwrap_err());
        assert!(
            bad.contains("--opponent 'engine:pbrain-x,nodes=0'") && bad.contains("nodes=0 must be at least 1"),
            "{bad}"
        );
    }

    #[test]
    fn a_curve_csv_without_the_budget_columns_reads_back() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("curve-settings.json"), cfg().describe()).unwrap();
        std::fs::write(
            d.path().join("curve.csv"),
            "generation,step,minutes,selfplay_games,opponent,games,wins,draws,losses,score,score_low95,score_high95\n\
             3,90,2.5,60,heuristic,4,3,0,1,0.75,0.3,0.95\n",
        )
        .unwrap();
        let c = CurveDir::open(d.path(), &cfg()).unwrap();
        assert_eq!(c.rows.len(), 1);
        assert_eq!((c.rows[0].generation, c.rows[0].wins, c.rows[0].budget.as_str()), (3, 3, ""));
    }

    #[test]
    fn engine_points_start_after_the_opening_without_a_stone_cap() {
        let e = CurveOpponent::parse("engine:pbrain-x,nodes=100", |_| PathBuf::new()).unwrap();
        let a = cfg().arena_for(&e.kind);
        assert_eq!((a.openings, a.games, a.stone_cap, a.size), (OpeningMode::Rif26, 4, None, 9));
        assert_eq!(cfg().start_of(&e.kind), "after-opening:rif26");
        let h = OpponentKind::Search(EvaluatorSpec::Heuristic);
        assert_eq!(cfg().arena_for(&h), cfg().arena);
        assert_eq!(cfg().start_of(&h), "whole-game:swap1");
        let said = e.how_played(&cfg());
        assert!(said.contains("start after the opening") && said.contains("nodes=100 time=60"), "{said}");
        assert!(said.contains("generation at playouts=8"), "{said}");
        let t = SearchLimit { playouts: None, time: Some(std::time::Duration::from_millis(200)) };
        assert_eq!(t.to_string(), "time=0.2");
    }

    #[test]
    fn due_generations_every_k_and_the_newest() {
        assert_eq!(due_generations(&[0, 1, 2, 3, 4, 5], 2, false), vec![0, 2, 4]);
        assert_eq!(due_generations(&[0, 1, 2, 3, 4, 5], 2, true), vec![0, 2, 4, 5]);
        assert_eq!(due_generations(&[0, 1, 2], 0, false), vec![0, 1, 2]);
        assert!(due_generations(&[], 3, true).is_empty());
    }

    #[test]
    fn a_point_is_one_whole_protocol_match_and_the_directory_resumes() {
        let gen = CurveGeneration {
            generation: 2,
            step: 80,
            minutes: 1.5,
            selfplay_games: 40,
            eval: EvaluatorSpec::Heuristic,
        };
        let opp = CurveOpponent { name: "uniform".into(), kind: OpponentKind::Search(EvaluatorSpec::Uniform) };
        let d = tempfile::tempdir().unwrap();
        let row = play_point(&gen, &opp, &cfg(), &no_models, Some(d.path())).unwrap();
        assert_eq!((row.generation, row.step, row.selfplay_games, row.games), (2, 80, 40, 4));
        assert_eq!(row.wins + row.draws + row.losses, 4);
        assert!(row.score_low95 <= row.score && row.score <= row.score_high95);
        assert_eq!(
            (row.budget.as_str(), row.opponent_budget.as_str(), row.start.as_str()),
            ("playouts=8", "playouts=8", "whole-game:swap1")
        );
        // Whole swap1 games: every record starts with the first stone and a swap decision.
        let games = std::fs::read_to_string(d.path().join("gen-000002-vs-uniform/games.jsonl")).unwrap();
        assert_eq!(games.lines().count(), 4);
        for l in games.lines() {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            assert_eq!(v["protocol"], "swap1");
            let d = v["decisions"].as_array().unwrap();
            assert!(d[1].as_str().unwrap().ends_with(":swap") || d[1].as_str().unwrap().ends_with(":keep"), "{d:?}");
        }
        let out = d.path().join("curve");
        let mut c = CurveDir::open(&out, &cfg()).unwrap();
        c.push(row.clone()).unwrap();
        c.push(CurveRow { generation: 4, minutes: 3.0, score: 0.75, ..row.clone() }).unwrap();
        let again = CurveDir::open(&out, &cfg()).unwrap();
        assert!(again.has(2, "uniform") && again.has(4, "uniform") && !again.has(3, "uniform"));
        assert_eq!(again.rows.len(), 2);
        let header = std::fs::read_to_string(out.join("curve.csv")).unwrap();
        assert_eq!(
            header.lines().next().unwrap(),
            "generation,step,minutes,selfplay_games,opponent,games,wins,draws,losses,score,score_low95,score_high95,\
             budget,opponent_budget,start"
        );
        assert_eq!(std::fs::read_to_string(out.join("curve.svg")).unwrap().matches("<circle").count(), 2);
        let other = CurveConfig { settings: SearchSettings { batch: 3, ..cfg().settings }, ..cfg() };
        let e = CurveDir::open(&out, &other).err().unwrap().to_string();
        assert!(e.contains("other match settings"), "{e}");
    }
}
