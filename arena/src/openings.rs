//! The opening-balance study (`renju-zero openings`): how good is each of the 26 openings for
//! Black, by the value head, by search and by self-play, compared with the published
//! assessments (RULES.md §5, [`Opening::assessment`]).
//!
//! For every opening (the three stones on the board, White to play stone 4):
//! - **value head**: one evaluation; Black's expected score `L + D/2` from White's W/D/L;
//! - **search**: PUCT with `playouts`; Black's score `(1 - v) / 2` from White's root value `v`;
//! - **self-play**: `games` games of the model against itself from that opening under the
//!   study protocol's rules after stone 3 (RIF: swap, then 2 fifth-move offers; `fifth-n:N`:
//!   swap and N offers; `designated:...,swap,offers=K` as given; `soosorv:N`, `taraguchi:N` and
//!   `swap2`: the rule from its decision after stone 3 on, `soosorv:N,D4` / `taraguchi:N,D4` /
//!   `swap2:D4`; every other protocol: plain play from stone 4). Black's W/D/L with a 95% Wilson
//!   interval of the score. Decisions are tallied: swaps (Swap2's keep / swap / double choice
//!   among them), the number of offers declared or chosen, the fifth-move offers placed and the
//!   one kept.
//!
//! For protocols that do not start from one of the 26 (`lianhuan`, `swap1`, `black-sets`,
//! `swap2`, `free`), `protocol_games` whole games are also played under the protocol and the
//! opening decision patterns are tallied (for Lianhuan: `A1 B2 A3+4 B:exchange ...`, A = the
//! first player, numbers = stones, `+` = a double; for Swap2: `A1 A2 A3 B:double B4 B5 A:swap`),
//! with the opening that arose and Black's results.
//!
//! **Published column.** The assessments are mapped to an ordinal scale for Spearman's rank
//! correlation: White wins 0 < slightly White 1 < about equal, slightly White 2 < about equal,
//! slightly Black 3 < slightly Black 4 < Black advantage 5 < Black wins 6. Only the order
//! matters to Spearman's coefficient; ties (many "Black wins") get average ranks.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{bail, Result};
use renju_rules::notation::format_point;
use renju_rules::{Action, DecisionKind, Game, Opening, Player, Protocol, Rule};
use serde::Serialize;

use crate::agent::{MctsAgent, SearchLimit, SearchSettings};
use crate::matches::{game_seed, run_jobs, ArenaConfig, GameRecord, Job};
use crate::output::{csv_string, markdown_table, svg_score_chart, xml_escape};
use crate::records::parse_decision;
use crate::spec::{PlayerKind, PlayerSpec};
use crate::stats::{spearman, spearman_bootstrap, Wdl};
use renju_fs::write_atomic;
use renju_selfplay::eval::{EvaluatorLoader, EvaluatorSpec};
use renju_selfplay::mcts::SearchConfig;

/// Study settings.
#[derive(Clone, Debug, PartialEq)]
pub struct StudyConfig {
    pub size: usize,
    pub rule: Rule,
    pub protocol: Protocol,
    /// Self-play games per opening.
    pub games: usize,
    /// Playouts per decision (search estimate and self-play).
    pub playouts: u64,
    /// Decisions `0..explore` of each self-play game are sampled by visit counts (diversity).
    pub explore: usize,
    /// VCF check at node expansion: solver nodes per call (`SearchConfig::vcf_nodes`), 0 = off.
    pub vcf_nodes: u64,
    /// Whole games under the protocol (for protocols that do not start from the 26).
    pub protocol_games: usize,
    pub seed: u64,
    pub threads: usize,
    pub stone_cap: Option<usize>,
}

impl Default for StudyConfig {
    fn default() -> Self {
        StudyConfig {
            size: 15,
            rule: Rule::Renju,
            protocol: Protocol::Rif,
            games: 10,
            playouts: 200,
            explore: 6,
            vcf_nodes: 0,
            protocol_games: 100,
            seed: 0,
            threads: 1,
            stone_cap: None,
        }
    }
}

/// The published assessment on the ordinal scale of the module docs; `None` for unknown text.
pub fn assessment_ordinal(text: &str) -> Option<u8> {
    Some(match text.trim().to_ascii_lowercase().as_str() {
        "white wins" => 0,
        "slightly white" => 1,
        "about equal, slightly white" => 2,
        "about equal, slightly black" => 3,
        "slightly black" => 4,
        "black advantage" => 5,
        "black wins" => 6,
        _ => return None,
    })
}

/// One row per opening.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct OpeningRow {
    pub code: String,
    pub name: String,
    pub chinese: String,
    pub published: String,
    pub published_ordinal: Option<u8>,
    /// Black's expected score by the value head / by search.
    pub value_head: f64,
    pub search: f64,
    pub games: u64,
    pub black_wins: u64,
    pub draws: u64,
    pub black_losses: u64,
    /// Black's self-play score and its 95% Wilson interval.
    pub black_score: f64,
    pub black_low95: f64,
    pub black_high95: f64,
    /// Fraction of games where White swapped (protocols with a swap), else empty.
    pub swap_rate: Option<f64>,
}

/// A tallied decision: `(opening or pattern, decision, choice) -> count`.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct DecisionRow {
    pub opening: String,
    pub decision: String,
    pub choice: String,
    pub count: u64,
}

/// An opening-decision pattern of whole protocol games.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct PatternRow {
    pub pattern: String,
    /// The canonical opening the first three stones formed, if any.
    pub opening: String,
    pub games: u64,
    pub black_wins: u64,
    pub draws: u64,
    pub black_losses: u64,
}

/// The study's results.
#[derive(Clone, Debug)]
pub struct StudyResult {
    pub config_text: String,
    pub rows: Vec<OpeningRow>,
    pub decisions: Vec<DecisionRow>,
    pub patterns: Vec<PatternRow>,
    /// Spearman correlation of the published ordinal with the self-play Black score, the search
    /// estimate and the value-head estimate (`None` when undefined, e.g. all scores equal).
    pub spearman_selfplay: Option<f64>,
    pub spearman_search: Option<f64>,
    pub spearman_value: Option<f64>,
    /// 95% bootstrap interval of `spearman_selfplay`, resampling each opening's games
    /// ([`spearman_bootstrap`], 2,000 replicates).
    pub spearman_selfplay_ci: Option<(f64, f64)>,
}

/// The protocol played from a fixed opening, and whether the study also plays whole games.
fn per_opening_protocol(p: &Protocol, o: Opening) -> Result<(Protocol, bool)> {
    Ok(match p {
        Protocol::Rif => (Protocol::Designated { opening: Some(o), swap: true, offers: 2 }, false),
        Protocol::FifthN { n: Some(n) } => (Protocol::Designated { opening: Some(o), swap: true, offers: *n }, false),
        Protocol::FifthN { n: None } => bail!("protocol fifth-n: give the number of offers (fifth-n:N) for the study"),
        Protocol::Designated { swap, offers, .. } => {
            (Protocol::Designated { opening: Some(o), swap: *swap, offers: *offers }, false)
        }
        Protocol::Soosorv { n, .. } => (Protocol::Soosorv { n: *n, opening: Some(o) }, false),
        Protocol::Taraguchi { n, .. } => (Protocol::Taraguchi { n: *n, opening: Some(o) }, false),
        Protocol::Swap2 { .. } => (Protocol::Swap2 { opening: Some(o) }, true),
        Protocol::Free { .. } | Protocol::Swap1 | Protocol::BlackSets | Protocol::Lianhuan => {
            (Protocol::Designated { opening: Some(o), swap: false, offers: 0 }, true)
        }
    })
}

/// Replays a record's decisions: `(decision kind, player, action, game before)` for each.
fn replay(rec: &GameRecord, cfg: &StudyConfig) -> Result<Vec<(DecisionKind, Player, Action, Game)>> {
    let protocol: Protocol = rec.protocol.parse()?;
    let mut g = Game::new(cfg.size, cfg.rule, protocol, cfg.stone_cap)?;
    let mut out = Vec::new();
    for d in &rec.decisions {
        let (player, action) = parse_decision(d, cfg.size)?;
        out.push((g.decision(), player, action, g.clone()));
        g.apply(action)?;
    }
    Ok(out)
}

fn black_wdl(records: &[&GameRecord]) -> Wdl {
    let mut w = Wdl::default();
    for r in records {
        match r.result.as_str() {
            "black" => w.wins += 1,
            "white" => w.losses += 1,
            _ => w.draws += 1,
        }
    }
    w
}

/// The opening-decision pattern of a whole protocol game (module docs).
fn pattern(steps: &[(DecisionKind, Player, Action, Game)]) -> String {
    let mut tokens: Vec<String> = Vec::new();
    let mut doubling: Option<Player> = None;
    for (kind, player, action, before) in steps {
        if before.colours_settled() && !matches!(kind, DecisionKind::SwapOrKeep | DecisionKind::ExchangeOrTake) {
            break;
        }
        let letter = if *player == Player::First { "A" } else { "B" };
        match (kind, action) {
            (DecisionKind::PlaceStone(_), Action::Place(_)) => {
                let k = before.board().stone_count() + 1;
                if k > 7 {
                    break;
                }
                match (doubling.take(), tokens.last_mut()) {
                    (Some(d), Some(t)) if d == *player => *t += &format!("+{k}"),
                    _ => tokens.push(format!("{letter}{k}")),
                }
            }
            (DecisionKind::SwapKeepOrDouble, Action::Double) => tokens.push(format!("{letter}:double")),
            (_, Action::Double) => doubling = Some(*player),
            (_, Action::Single) => {}
            (DecisionKind::ExchangeOrTake, Action::Swap) => tokens.push(format!("{letter}:exchange")),
            (DecisionKind::ExchangeOrTake, Action::Keep) => {}
            (_, Action::Swap) => tokens.push(format!("{letter}:swap")),
            (_, Action::Keep) => tokens.push(format!("{letter}:keep")),
            (_, a) => tokens.push(format!("{letter}:{a}")),
        }
        if before.colours_settled() {
            break;
        }
    }
    tokens.join(" ")
}

/// Runs the study in named phases: `study_jobs` (the games to play), `estimate_openings`
/// (value-head and search estimates), playing the games in parallel (`progress` sees every
/// finished one), `opening_rows` (per-opening results and decisions), `pattern_rows` (whole
/// protocol games), then the rank correlations. Errors: bad settings, a model that does not
/// load.
pub fn run_study(
    eval: &EvaluatorSpec,
    cfg: &StudyConfig,
    loader: &EvaluatorLoader,
    mut progress: impl FnMut(&GameRecord),
) -> Result<StudyResult> {
    anyhow::ensure!(cfg.playouts >= 1, "--playouts must be at least 1");
    let settings = SearchSettings {
        limit: SearchLimit { playouts: Some(cfg.playouts), time: None },
        explore: cfg.explore,
        config: SearchConfig { vcf_nodes: cfg.vcf_nodes, solver: true, ..SearchConfig::default() },
        ..Default::default()
    };
    let spec = PlayerSpec {
        name: "model".into(),
        kind: PlayerKind::Search { eval: eval.clone(), settings: settings.clone() },
        text: format!("{eval:?}"),
    };
    let jobs = study_jobs(cfg)?;
    // Value head and search estimates on the main thread.
    let mut agent = MctsAgent::new(eval.build(cfg.size, loader)?, SearchSettings { explore: 0, ..settings });
    let estimates = estimate_openings(&mut agent, cfg)?;
    let acfg = ArenaConfig {
        size: cfg.size,
        rule: cfg.rule,
        games: 0,
        seed: cfg.seed,
        threads: cfg.threads,
        stone_cap: cfg.stone_cap,
        ..Default::default()
    };
    let records = run_jobs(&jobs, &[spec], &acfg, loader, |r| {
        progress(r);
        true
    })?;
    let per_opening = 26 * cfg.games;
    let mut tally: BTreeMap<(String, String, String), u64> = BTreeMap::new();
    let rows = opening_rows(&records[..per_opening], &estimates, cfg, &mut tally)?;
    let patterns = pattern_rows(&records[per_opening..], cfg)?;
    let decisions = tally
        .into_iter()
        .map(|((opening, decision, choice), count)| DecisionRow { opening, decision, choice, count })
        .collect();
    let with_ord: Vec<&OpeningRow> = rows.iter().filter(|r| r.published_ordinal.is_some()).collect();
    let ord: Vec<f64> = with_ord.iter().map(|r| r.published_ordinal.unwrap() as f64).collect();
    let corr = |f: &dyn Fn(&OpeningRow) -> f64| spearman(&with_ord.iter().map(|r| f(r)).collect::<Vec<_>>(), &ord);
    Ok(StudyResult {
        config_text: format!(
            "protocol {}, rule {:?}, {}x{}, {} games per opening, {} playouts, explore {}, seed {}",
            cfg.protocol, cfg.rule, cfg.size, cfg.size, cfg.games, cfg.playouts, cfg.explore, cfg.seed
        ),
        spearman_selfplay: corr(&|r| r.black_score),
        spearman_search: corr(&|r| r.search),
        spearman_value: corr(&|r| r.value_head),
        spearman_selfplay_ci: spearman_bootstrap(
            &with_ord.iter().map(|r| (r.black_wins, r.draws, r.black_losses)).collect::<Vec<_>>(),
            &ord,
            2000,
            cfg.seed,
        ),
        rows,
        decisions,
        patterns,
    })
}

/// Phase 1 of [`run_study`]: the self-play games, `cfg.games` per opening (in opening order)
/// under the per-opening protocol, then `cfg.protocol_games` whole games when the protocol does
/// not start from the 26 openings. Game `k` is seeded from `cfg.seed` and `k`.
fn study_jobs(cfg: &StudyConfig) -> Result<Vec<Job>> {
    let mut jobs = Vec::new();
    let mut whole = false;
    for o in Opening::all() {
        let (protocol, w) = per_opening_protocol(&cfg.protocol, o)?;
        whole = w;
        for _ in 0..cfg.games {
            let index = jobs.len();
            jobs.push(Job { index, first: 0, second: 0, protocol: protocol.clone(), seed: game_seed(cfg.seed, index) });
        }
    }
    if whole {
        for _ in 0..cfg.protocol_games {
            let index = jobs.len();
            jobs.push(Job {
                index,
                first: 0,
                second: 0,
                protocol: cfg.protocol.clone(),
                seed: game_seed(cfg.seed, index),
            });
        }
    }
    Ok(jobs)
}

/// Phase 2 of [`run_study`]: per opening (in [`Opening::all`] order), Black's expected score
/// from the value head and from a search of `cfg.playouts` playouts: `(value, search)`.
fn estimate_openings(agent: &mut MctsAgent, cfg: &StudyConfig) -> Result<Vec<(f64, f64)>> {
    let mut estimates = Vec::new();
    for o in Opening::all() {
        let plain = Game::new(
            cfg.size,
            cfg.rule,
            Protocol::Designated { opening: Some(o), swap: false, offers: 0 },
            cfg.stone_cap,
        )?;
        let w = agent.value_head(&plain)?;
        let value_black = (w[2] + 0.5 * w[1]) as f64;
        let m = agent.search(&plain, &SearchLimit { playouts: Some(cfg.playouts), time: None })?;
        let search_black = (1.0 - m.root_value() as f64) / 2.0;
        estimates.push((value_black, search_black));
    }
    Ok(estimates)
}

/// Phase 4 of [`run_study`] (after playing): one row per opening from its `cfg.games` records
/// (`records` holds them in opening order) and its estimates; the swap and offer decisions are
/// counted into `tally` by (opening, decision, choice).
fn opening_rows(
    records: &[GameRecord],
    estimates: &[(f64, f64)],
    cfg: &StudyConfig,
    tally: &mut BTreeMap<(String, String, String), u64>,
) -> Result<Vec<OpeningRow>> {
    let mut rows = Vec::new();
    for (k, o) in Opening::all().into_iter().enumerate() {
        let recs: Vec<&GameRecord> = records[k * cfg.games..(k + 1) * cfg.games].iter().collect();
        let w = black_wdl(&recs);
        let (lo, hi) = w.score_interval();
        let (mut swaps, mut swap_decisions) = (0u64, 0u64);
        for r in &recs {
            let steps = replay(r, cfg)?;
            let mut offers = Vec::new();
            for (kind, _, action, _) in &steps {
                let key = |d: &str, c: String| (o.code().to_string(), d.to_string(), c);
                match (kind, action) {
                    (DecisionKind::SwapOrKeep | DecisionKind::SwapKeepOrDouble, a) => {
                        swap_decisions += 1;
                        swaps += (*a == Action::Swap) as u64;
                        *tally.entry(key("swap", a.to_string())).or_default() += 1;
                    }
                    (DecisionKind::ChooseN, Action::ChooseN(n)) => {
                        *tally.entry(key("offers declared", n.to_string())).or_default() += 1;
                    }
                    (DecisionKind::PlaceOffer { .. }, Action::Place(p)) => offers.push(format_point(*p)),
                    (DecisionKind::PickOffer, Action::Place(p)) => {
                        let mut set = offers.clone();
                        set.sort();
                        *tally.entry(key("offers", set.join(" "))).or_default() += 1;
                        *tally.entry(key("kept offer", format_point(*p))).or_default() += 1;
                        offers.clear();
                    }
                    _ => {}
                }
            }
        }
        let (value_head, search) = estimates[k];
        rows.push(OpeningRow {
            code: o.code().into(),
            name: o.name().into(),
            chinese: o.chinese_name().into(),
            published: o.assessment().into(),
            published_ordinal: assessment_ordinal(o.assessment()),
            value_head,
            search,
            games: w.games(),
            black_wins: w.wins,
            draws: w.draws,
            black_losses: w.losses,
            black_score: w.score(),
            black_low95: lo,
            black_high95: hi,
            swap_rate: (swap_decisions > 0).then(|| swaps as f64 / swap_decisions as f64),
        });
    }
    Ok(rows)
}

/// Phase 5 of [`run_study`]: the whole protocol games tallied by opening pattern (most played
/// first).
fn pattern_rows(records: &[GameRecord], cfg: &StudyConfig) -> Result<Vec<PatternRow>> {
    let mut pats: BTreeMap<(String, String), Wdl> = BTreeMap::new();
    for r in records {
        let steps = replay(r, cfg)?;
        let key = (pattern(&steps), r.opening.clone().unwrap_or_else(|| "-".into()));
        let e = pats.entry(key).or_default();
        let w = black_wdl(&[r]);
        e.wins += w.wins;
        e.draws += w.draws;
        e.losses += w.losses;
    }
    let mut patterns: Vec<PatternRow> = pats
        .into_iter()
        .map(|((pattern, opening), w)| PatternRow {
            pattern,
            opening,
            games: w.games(),
            black_wins: w.wins,
            draws: w.draws,
            black_losses: w.losses,
        })
        .collect();
    patterns.sort_by(|a, b| b.games.cmp(&a.games).then(a.pattern.cmp(&b.pattern)));
    Ok(patterns)
}

fn fmt_corr(c: Option<f64>) -> String {
    c.map_or("undefined".into(), |v| format!("{v:+.3}"))
}

impl StudyResult {
    /// The report as markdown: the per-opening table (with the published column), the Spearman
    /// correlations, decision tallies and patterns.
    pub fn markdown(&self) -> String {
        let mut out = format!("# Opening balance study\n\n{}\n\n", self.config_text);
        let rows: Vec<Vec<String>> = self
            .rows
            .iter()
            .map(|r| {
                vec![
                    r.code.clone(),
                    format!("{} {}", r.chinese, r.name),
                    r.published.clone(),
                    format!("{:.3}", r.value_head),
                    format!("{:.3}", r.search),
                    format!("{}/{}/{}", r.black_wins, r.draws, r.black_losses),
                    format!("{:.3} [{:.3}, {:.3}]", r.black_score, r.black_low95, r.black_high95),
                    r.swap_rate.map_or("-".into(), |s| format!("{s:.2}")),
                ]
            })
            .collect();
        out += &markdown_table(
            &[
                "opening",
                "name",
                "published",
                "value head (Black)",
                "search (Black)",
                "Black W/D/L",
                "Black score [95% Wilson]",
                "swap rate",
            ],
            &rows,
        );
        out += &format!(
            "\nSpearman rank correlation with the published assessment (ordinal: White wins 0 .. Black wins 6): \
             self-play {}{}, search {}, value head {}\n",
            fmt_corr(self.spearman_selfplay),
            self.spearman_selfplay_ci
                .map_or(String::new(), |(lo, hi)| format!(" (95% bootstrap over games: [{lo:+.3}, {hi:+.3}])")),
            fmt_corr(self.spearman_search),
            fmt_corr(self.spearman_value)
        );
        if !self.decisions.is_empty() {
            out += "\n## Decisions\n\n";
            let rows: Vec<Vec<String>> = self
                .decisions
                .iter()
                .map(|d| vec![d.opening.clone(), d.decision.clone(), d.choice.clone(), d.count.to_string()])
                .collect();
            out += &markdown_table(&["opening", "decision", "choice", "count"], &rows);
        }
        if !self.patterns.is_empty() {
            out += "\n## Whole-protocol games: opening patterns\n\n";
            let rows: Vec<Vec<String>> = self
                .patterns
                .iter()
                .map(|p| {
                    vec![
                        p.pattern.clone(),
                        p.opening.clone(),
                        p.games.to_string(),
                        format!("{}/{}/{}", p.black_wins, p.draws, p.black_losses),
                    ]
                })
                .collect();
            out += &markdown_table(&["pattern", "opening", "games", "Black W/D/L"], &rows);
        }
        out
    }

    /// An SVG bar chart: Black's self-play score per opening with its 95% interval, the search
    /// estimate as a dot, a line at 0.5, bars shaded by the published assessment.
    pub fn svg(&self) -> String {
        let (w, h, left, top, bar) = (900.0, 360.0, 50.0, 30.0, 30.0);
        let plot_h = 260.0;
        let y = |v: f64| top + plot_h * (1.0 - v.clamp(0.0, 1.0));
        let title = "Black's score per opening (self-play, 95% Wilson interval; dot = search estimate)";
        let mut s = svg_score_chart(w, h, left, left + bar * 26.0, 18.0, title, y);
        for (i, r) in self.rows.iter().enumerate() {
            let x = left + bar * i as f64;
            let shade = match r.published_ordinal {
                Some(o) => format!("hsl(220, 40%, {}%)", 80 - 8 * o as i32),
                None => "#999".into(),
            };
            s += &format!(
                "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"{shade}\"><title>{}</title></rect>\n",
                x + 4.0,
                y(r.black_score),
                bar - 8.0,
                y(0.0) - y(r.black_score),
                xml_escape(&format!("{} {}: {:.3} [{:.3}, {:.3}], published: {}", r.code, r.name, r.black_score, r.black_low95, r.black_high95, r.published))
            );
            let cx = x + bar / 2.0;
            s += &format!(
                "<line x1=\"{cx:.1}\" x2=\"{cx:.1}\" y1=\"{:.1}\" y2=\"{:.1}\" stroke=\"black\"/>\n<circle cx=\"{cx:.1}\" cy=\"{:.1}\" r=\"2.5\" fill=\"#c00\"/>\n",
                y(r.black_low95),
                y(r.black_high95),
                y(r.search)
            );
            s += &format!(
                "<text x=\"{cx:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>\n",
                y(0.0) + 14.0,
                xml_escape(&r.code)
            );
        }
        s += &format!(
            "<text x=\"{left}\" y=\"{:.1}\">Spearman vs published: self-play {}, search {}, value head {}</text>\n</svg>\n",
            h - 20.0,
            fmt_corr(self.spearman_selfplay),
            fmt_corr(self.spearman_search),
            fmt_corr(self.spearman_value)
        );
        s
    }

    /// Writes `openings.csv`, `decisions.csv`, `patterns.csv`, `report.md` and `openings.svg`.
    pub fn write(&self, dir: &Path) -> Result<()> {
        write_atomic(&dir.join("openings.csv"), csv_string(&self.rows)?.as_bytes())?;
        write_atomic(&dir.join("decisions.csv"), csv_string(&self.decisions)?.as_bytes())?;
        write_atomic(&dir.join("patterns.csv"), csv_string(&self.patterns)?.as_bytes())?;
        write_atomic(&dir.join("report.md"), self.markdown().as_bytes())?;
        write_atomic(&dir.join("openings.svg"), self.svg().as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use renju_selfplay::eval::no_models;

    #[test]
    fn every_published_assessment_has_an_ordinal() {
        for o in Opening::all() {
            assert!(assessment_ordinal(o.assessment()).is_some(), "{o:?}: {}", o.assessment());
        }
        assert_eq!(assessment_ordinal("Black wins"), Some(6));
        assert_eq!(assessment_ordinal("White wins"), Some(0));
        assert_eq!(assessment_ordinal("nonsense"), None);
    }

    #[test]
    fn lianhuan_patterns_are_written_like_seed_001() {
        // A1, A double 2 (A places 1 and 2), B exchanges, A places 3 as a single, B 4 single,
        // A 5 single, B 6 (colours settle).
        let mut g = Game::new(9, Rule::Renju, Protocol::Lianhuan, None).unwrap();
        let mut steps = Vec::new();
        let pts = [(4, 4), (4, 5), (5, 5), (3, 3), (6, 6), (2, 2)];
        let mut k = 0;
        while !g.colours_settled() {
            let a = match g.decision() {
                DecisionKind::PlaceStone(_) => {
                    k += 1;
                    Action::Place(renju_rules::Point::new(pts[k - 1].0, pts[k - 1].1))
                }
                DecisionKind::SingleOrDouble => {
                    if k == 1 {
                        Action::Double
                    } else {
                        Action::Single
                    }
                }
                DecisionKind::ExchangeOrTake => Action::Swap,
                d => panic!("{d:?}"),
            };
            steps.push((g.decision(), g.to_decide(), a, g.clone()));
            g.apply(a).unwrap();
        }
        assert_eq!(pattern(&steps), "A1+2 B:exchange A3 B4 A5 B6");
    }

    #[test]
    fn swap2_patterns_name_the_double() {
        let mut g = Game::new(9, Rule::Renju, Protocol::Swap2 { opening: None }, None).unwrap();
        let mut steps = Vec::new();
        let p = |x, y| Action::Place(renju_rules::Point::new(x, y));
        for a in [p(4, 4), p(4, 5), p(5, 5), Action::Double, p(3, 3), p(6, 6), Action::Swap, p(2, 2)] {
            steps.push((g.decision(), g.to_decide(), a, g.clone()));
            g.apply(a).unwrap();
        }
        assert_eq!(pattern(&steps), "A1 A2 A3 B:double B4 B5 A:swap");
    }

    #[test]
    fn per_opening_games_keep_the_rule_after_stone_3() {
        let o = Opening::Direct(4);
        let soosorv = Protocol::Soosorv { n: 8, opening: None };
        assert_eq!(per_opening_protocol(&soosorv, o).unwrap(), (Protocol::Soosorv { n: 8, opening: Some(o) }, false));
        let taraguchi = Protocol::Taraguchi { n: 10, opening: None };
        assert_eq!(
            per_opening_protocol(&taraguchi, o).unwrap(),
            (Protocol::Taraguchi { n: 10, opening: Some(o) }, false)
        );
        let swap2 = Protocol::Swap2 { opening: None };
        assert_eq!(per_opening_protocol(&swap2, o).unwrap(), (Protocol::Swap2 { opening: Some(o) }, true));
    }

    #[test]
    fn tiny_soosorv_study_tallies_the_declared_offers() {
        let cfg = StudyConfig {
            size: 9,
            protocol: Protocol::Soosorv { n: 3, opening: None },
            games: 1,
            playouts: 4,
            explore: 2,
            threads: 2,
            stone_cap: Some(30),
            ..Default::default()
        };
        let r = run_study(&EvaluatorSpec::Heuristic, &cfg, &no_models, |_| {}).unwrap();
        assert_eq!(r.rows.len(), 26);
        assert!(r.patterns.is_empty());
        // One game per opening, one declaration per game.
        let declared: u64 = r.decisions.iter().filter(|d| d.decision == "offers declared").map(|d| d.count).sum();
        assert_eq!(declared, 26);
        // Two swap decisions per game (after stone 3 and after the declaration).
        let swap_decisions: u64 = r.decisions.iter().filter(|d| d.decision == "swap").map(|d| d.count).sum();
        assert_eq!(swap_decisions, 52);
    }

    #[test]
    fn tiny_study_has_26_rows_and_patterns() {
        let cfg = StudyConfig {
            size: 9,
            protocol: Protocol::Swap1,
            games: 1,
            playouts: 4,
            explore: 2,
            protocol_games: 3,
            threads: 2,
            stone_cap: Some(30),
            ..Default::default()
        };
        let r = run_study(&EvaluatorSpec::Heuristic, &cfg, &no_models, |_| {}).unwrap();
        assert_eq!(r.rows.len(), 26);
        assert!(r.rows.iter().all(|x| x.games == 1 && (0.0..=1.0).contains(&x.value_head)));
        assert_eq!(r.patterns.iter().map(|p| p.games).sum::<u64>(), 3);
        assert!(r.patterns.iter().all(|p| p.pattern.starts_with("A1 B:")), "{:?}", r.patterns);
        let svg = r.svg();
        assert_eq!(svg.matches("<rect").count(), 26);
    }
}
