//! `generations.jsonl`: one JSON line per published generation, the tally of recorded positions
//! by the generation that played them, and the self-play statistics of the games since the
//! previous generation (games/s, mean length, Black's score, swap rate, offers chosen,
//! resignations, false-resignation rate; also in TensorBoard as `selfplay/*`).

use anyhow::{Context, Result};
use renju_fs::append_line;
use renju_selfplay::gamestats::GameStats;
use renju_selfplay::record::{list_new_shards, list_shards, read_shard_generations, GameMeta};
use renju_trainer::process::process_tag;
use renju_trainer::RunDir;
use serde::Serialize;
use std::collections::{BTreeMap, HashSet};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// Generations listed one by one in a [`GenerationLine`]'s `samples_by_generation`.
pub(crate) const BY_GENERATION_KEPT: usize = 20;

/// Splits a tally by generation into its newest `keep` entries and the sum of the rest.
pub(crate) fn newest_generations(tally: &BTreeMap<i64, u64>, keep: usize) -> (BTreeMap<i64, u64>, u64) {
    let older = tally.len().saturating_sub(keep);
    let rest = tally.values().take(older).sum();
    (tally.iter().skip(older).map(|(&g, &n)| (g, n)).collect(), rest)
}

/// One line of `generations.jsonl`.
#[derive(Serialize)]
pub(crate) struct GenerationLine {
    pub(crate) generation: u64,
    /// The process that published it ([`process_tag`]).
    pub(crate) writer: String,
    pub(crate) step: u64,
    pub(crate) samples_trained: u64,
    pub(crate) total_samples: u64,
    pub(crate) window_samples: u64,
    /// Recorded positions in `selfplay/` by the generation that played them: the newest
    /// [`BY_GENERATION_KEPT`] generations that played any (a run publishing every few seconds
    /// would otherwise write a line that grows with every generation).
    pub(crate) samples_by_generation: BTreeMap<i64, u64>,
    /// Recorded positions of the older generations, together.
    pub(crate) samples_older_generations: u64,
    /// Self-play games in `selfplay/` so far.
    pub(crate) selfplay_games: u64,
    /// Statistics of the games that reached `selfplay/` since the previous line.
    pub(crate) selfplay: SelfplayLine,
    pub(crate) loss: f64,
    pub(crate) policy_loss: f64,
    pub(crate) value_loss: f64,
    /// The opponent-policy cross-entropy, when the net has that head.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) opponent_policy_loss: Option<f64>,
    pub(crate) minutes: f64,
}

/// The self-play part of a [`GenerationLine`]: the games that reached `selfplay/` since the
/// previous line ([`GameStats`]).
#[derive(Serialize)]
pub(crate) struct SelfplayLine {
    pub(crate) games: u64,
    /// New games per second of wall-clock time since the previous line.
    pub(crate) games_per_sec: f64,
    /// Decisions per game.
    pub(crate) mean_length: Option<f64>,
    pub(crate) black_score: Option<f64>,
    pub(crate) swap_rate: Option<f64>,
    /// `ChooseN(n)` decisions by `n`.
    pub(crate) offers_chosen: BTreeMap<u8, u64>,
    pub(crate) resignations: u64,
    pub(crate) false_resignation_rate: Option<f64>,
}

impl SelfplayLine {
    /// The line of `stats`, gathered over `seconds` of wall-clock time.
    pub(crate) fn new(stats: &GameStats, seconds: f64) -> SelfplayLine {
        SelfplayLine {
            games: stats.games,
            games_per_sec: stats.games as f64 / seconds.max(1e-9),
            mean_length: stats.mean_length(),
            black_score: stats.black_score(),
            swap_rate: stats.swap_rate(),
            offers_chosen: stats.offers_chosen.clone(),
            resignations: stats.resignations,
            false_resignation_rate: stats.false_resignation_rate(),
        }
    }
}

/// Positions by generation and game metadata over a run's shards, each shard read once (its
/// metadata and `generation` array only), the totals kept as they grow: an update costs one
/// listing of the shard directory plus the new shards, however long the run's history.
#[derive(Default)]
pub(crate) struct GenerationTally {
    /// File names of the shards read (or found unreadable).
    seen: HashSet<OsString>,
    /// Positions by generation over every shard read.
    total: BTreeMap<i64, u64>,
    /// Games of the shards seen but not yet taken by [`GenerationTally::take_new_games`].
    new_games: Vec<GameMeta>,
    /// Games of every shard seen.
    pub(crate) games: u64,
}

impl GenerationTally {
    /// The games of the shards first seen since the last call.
    pub(crate) fn take_new_games(&mut self) -> Vec<GameMeta> {
        std::mem::take(&mut self.new_games)
    }

    /// Reads the shards of `dir` not seen before; returns the positions by generation over
    /// every shard seen.
    pub(crate) fn update(&mut self, dir: &Path) -> Result<&BTreeMap<i64, u64>> {
        if dir.exists() {
            for p in list_new_shards(dir, &self.seen)? {
                self.seen.insert(p.file_name().expect("a listed shard has a file name").to_owned());
                // A shard that does not read is the replay window's to reject and report.
                let Ok((meta, generation)) = read_shard_generations(&p) else { continue };
                for g in generation.iter() {
                    *self.total.entry(*g).or_insert(0) += 1;
                }
                self.games += meta.games.len() as u64;
                self.new_games.extend(meta.games);
            }
        }
        Ok(&self.total)
    }
}

/// Appends `line` to the run's `generations.jsonl`.
pub(crate) fn append_generation_line(run: &RunDir, line: &GenerationLine) -> Result<()> {
    append_line(&run.generations_log(), &serde_json::to_string(line)?)
}

/// A kill between publishing generation `g` and appending its line to `generations.jsonl` leaves
/// the line missing; add a `"recovered": true` line for each such generation, so the file names
/// every published generation once, in order.
pub(crate) fn recover_generation_lines(run: &RunDir, newest: u64) -> Result<()> {
    let path = run.generations_log();
    let mut text = if path.exists() {
        std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?
    } else {
        String::new()
    };
    repair_torn_last_line(run, &path, &mut text)?;
    let mut have = std::collections::BTreeSet::new();
    for (i, l) in text.lines().enumerate() {
        let v: serde_json::Value =
            serde_json::from_str(l).with_context(|| format!("{} line {}: not JSON", path.display(), i + 1))?;
        if let Some(g) = v["generation"].as_u64() {
            have.insert(g);
        }
    }
    let last = have.iter().next_back().copied().unwrap_or(0);
    for g in (last + 1)..=newest {
        append_line(
            &path,
            &serde_json::json!({"generation": g, "writer": process_tag(), "recovered": true}).to_string(),
        )?;
        run.note(&format!("generation {g} was published by an interrupted session; its summary line is recovered"))?;
    }
    Ok(())
}

/// A kill or a full disk inside the last append can leave `generations.jsonl` ending in a line
/// without its newline. If that line is not JSON it is a torn append: cut the file back to the
/// last complete line (the earlier lines stay as they are) and say so in `train.log`; if it is
/// JSON, only the newline is missing: add it, so the next line does not run on. Bad lines before
/// the last are still an error (nothing an append can do makes them).
fn repair_torn_last_line(run: &RunDir, path: &Path, text: &mut String) -> Result<()> {
    if text.is_empty() || text.ends_with('\n') {
        return Ok(());
    }
    let cut = text.rfind('\n').map_or(0, |i| i + 1);
    if serde_json::from_str::<serde_json::Value>(&text[cut..]).is_ok() {
        append_line(path, "")?; // just the newline, synced
        text.push('\n');
        return Ok(());
    }
    let torn = text.len() - cut;
    let f =
        std::fs::OpenOptions::new().write(true).open(path).with_context(|| format!("opening {}", path.display()))?;
    f.set_len(cut as u64).and_then(|_| f.sync_data()).with_context(|| format!("truncating {}", path.display()))?;
    text.truncate(cut);
    run.note(&format!(
        "{}: dropped a torn last line ({torn} bytes, no newline, not JSON) left by an interrupted append",
        path.display()
    ))
}

/// The shards in `dir`, or none when `dir` does not exist yet.
pub(crate) fn list_shards_or_empty(dir: &Path) -> Result<Vec<PathBuf>> {
    if dir.exists() {
        list_shards(dir)
    } else {
        Ok(Vec::new())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tally_keeps_the_newest_generations_and_sums_the_rest() {
        let tally: BTreeMap<i64, u64> = (0..30).map(|g| (g, 10 + g as u64)).collect();
        let (newest, older) = newest_generations(&tally, 20);
        assert_eq!(newest.keys().copied().collect::<Vec<_>>(), (10..30).collect::<Vec<_>>());
        assert_eq!(newest[&29], 39);
        assert_eq!(older, (0..10).map(|g| 10 + g).sum::<u64>()); // 145
        let (all, none) = newest_generations(&tally, 50);
        assert_eq!((all.len(), none), (30, 0));
    }

    #[test]
    fn a_torn_last_line_is_cut_and_the_missing_generations_recovered() {
        let d = tempfile::tempdir().unwrap();
        let run = RunDir::new(d.path());
        let path = run.generations_log();
        std::fs::write(&path, "{\"generation\":0}\n{\"generation\":1}\n{\"generation\":2,\"wri").unwrap();
        recover_generation_lines(&run, 2).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3, "{text}");
        assert_eq!(lines[..2], ["{\"generation\":0}", "{\"generation\":1}"]);
        assert!(lines[2].contains("\"generation\":2") && lines[2].contains("\"recovered\":true"), "{text}");
        assert!(text.ends_with('\n'));
        let log = std::fs::read_to_string(run.log()).unwrap();
        assert!(log.contains("torn last line (20 bytes"), "{log}");
    }

    #[test]
    fn a_complete_last_line_without_newline_gets_one_and_a_bad_middle_line_is_an_error() {
        let d = tempfile::tempdir().unwrap();
        let run = RunDir::new(d.path());
        let path = run.generations_log();
        std::fs::write(&path, "{\"generation\":0}\n{\"generation\":1}").unwrap();
        recover_generation_lines(&run, 1).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{\"generation\":0}\n{\"generation\":1}\n");
        std::fs::write(&path, "{\"generation\":0}\nnot json\n{\"generation\":1}\n").unwrap();
        let e = recover_generation_lines(&run, 1).unwrap_err();
        assert!(format!("{e:#}").contains("line 2: not JSON"), "{e:#}");
    }
}
