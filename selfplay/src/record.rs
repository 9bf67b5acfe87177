//! Self-play game records: compressed `.npz` shards (DESIGN.md "Self-play shards").
//!
//! | array | dtype | shape | meaning |
//! |---|---|---|---|
//! | `planes` | u8 | [N, C, S, S] | encoder planes |
//! | `globals` | f32 | [N, G] | encoder globals |
//! | `policy` | f32 | [N, A] | root visit distribution (sums to 1), full-search positions only |
//! | `value` | f32 | [N, 3] | game result W/D/L from the deciding player's view (one-hot) |
//! | `root_value` | f32 | [N] | search value (win - loss) at the root, deciding player's view |
//! | `generation` | i64 | [N] | model generation that evaluated the position's search |
//! | `game_index` | i64 | [N] | index into `meta.games` |
//! | `opponent_reply` | i64 | [N] | action index of the opponent's next decision, -1 when there is none (optional: absent in older shards, read as all -1) |
//! | `short_value` | f32 | [N] | short-horizon value (win - loss) in -1..=1, deciding player's view: the TD(λ) return over the following root values and the result (optional: absent in older shards, read as the game result `value[0] - value[2]`) |
//! | `meta` | u8 | [bytes] | UTF-8 JSON [`ShardMeta`] |
//!
//! [`ShardWriter::write`] writes `<dir>/<name>.npz.tmp`, fsyncs it and renames it to `<dir>/<name>.npz`;
//! names ([`ShardName`]) are `sp-<writer id>-<unix ms>-<sequence>.npz`, unique per writer, so
//! several processes (with distinct writer ids) can write into one directory. [`read_shard`] validates every array's
//! dtype and shape against the metadata and names the file in every error.

use crate::action::action_space_size;
use crate::encode::{ENCODER_VERSION, NUM_GLOBALS, NUM_PLANES};
use anyhow::{bail, ensure, Context, Result};
use ndarray::{Array1, Array2, Array4};
use ndarray_npy::{NpzReader, NpzWriter};
use renju_rules::{Action, Opening, OutcomeReason, Player, Protocol, Rule};
use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Why a recorded game ended.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EndReason {
    /// A five (RULES.md §2).
    Five,
    /// Black played a forbidden point (renju): White wins.
    ForbiddenMove,
    /// Black to move with every empty point forbidden: White wins (RULES.md §2).
    NoLegalMove,
    /// Full board: draw.
    BoardFull,
    /// Stone cap reached: draw (RULES.md §2 optional cap).
    StoneCap,
    /// A player resigned (search value below the resignation threshold).
    Resignation,
}

impl From<OutcomeReason> for EndReason {
    fn from(r: OutcomeReason) -> EndReason {
        match r {
            OutcomeReason::Five => EndReason::Five,
            OutcomeReason::ForbiddenMove => EndReason::ForbiddenMove,
            OutcomeReason::NoLegalMove => EndReason::NoLegalMove,
            OutcomeReason::BoardFull => EndReason::BoardFull,
            OutcomeReason::StoneCap => EndReason::StoneCap,
        }
    }
}

/// A game's result as a W/D/L one-hot from `me`'s view (`winner: None` is a draw): the value
/// target's encoding.
pub fn wdl_one_hot(winner: Option<Player>, me: Player) -> [f32; 3] {
    match winner {
        None => [0.0, 1.0, 0.0],
        Some(w) if w == me => [1.0, 0.0, 0.0],
        Some(_) => [0.0, 0.0, 1.0],
    }
}

/// The result of one game. `winner: None` is a draw.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GameResult {
    pub winner: Option<Player>,
    pub reason: EndReason,
    /// Who held Black at the end.
    pub black_player: Player,
}

/// Metadata of one game in a shard.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GameMeta {
    /// The canonical opening formed by the first three stones, when there is one.
    pub opening: Option<Opening>,
    /// Every decision in order: `[player, action]`.
    pub decisions: Vec<(Player, Action)>,
    pub result: GameResult,
    /// Whether resignation was disabled for this game (a calibration game).
    pub resign_disabled: bool,
    /// For calibration games: whether the player who would have resigned went on to not lose.
    pub false_resignation: bool,
    /// For calibration games: whether a player crossed the resignation threshold (and would have
    /// resigned). Absent in older shards (read as false).
    #[serde(default)]
    pub would_resign: bool,
    /// Recorded positions whose value target is a result the VCF solver proved
    /// (`selfplay.proven_value_nodes`), and how many of those differ from the game's result.
    /// Absent in older shards (read as 0).
    #[serde(default)]
    pub proven_positions: u32,
    #[serde(default)]
    pub proven_overruled: u32,
    /// Model generations that played the game (first and last; they differ when a new
    /// generation was published mid-game).
    pub generation_first: i64,
    pub generation_last: i64,
}

/// Shard-level metadata (`meta` array, JSON).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ShardMeta {
    pub encoder_version: u32,
    pub size: usize,
    pub rule: Rule,
    pub protocol: Protocol,
    /// Id of the writer (process / worker) that wrote the shard.
    pub writer_id: String,
    pub games: Vec<GameMeta>,
}

/// One recorded position (a full-search decision).
#[derive(Clone, Debug, PartialEq)]
pub struct PositionRecord {
    /// Binary planes `[C, S, S]`.
    pub planes: Vec<u8>,
    /// `[G]`.
    pub globals: Vec<f32>,
    /// Root visit distribution `[A]`, sums to 1.
    pub policy: Vec<f32>,
    /// W/D/L one-hot of the game result from the deciding player's view.
    pub value: [f32; 3],
    /// Root search value (win - loss) for the deciding player.
    pub root_value: f32,
    /// Model generation that evaluated the search.
    pub generation: i64,
    /// Index of the game within the shard.
    pub game_index: i64,
    /// Action index of the decision that followed this one, when the opponent made it; -1 when
    /// the game ended here or the decider decided again (an opening protocol's consecutive
    /// decisions). The auxiliary opponent-policy target (KataGo).
    pub opponent_reply: i64,
    /// Short-horizon value (win - loss) in -1..=1 for the deciding player: the TD(λ) return over
    /// the root values of the decisions from this one on, ending in the game's result
    /// (`selfplay.short_value_horizon`).
    pub short_value: f32,
}

/// A whole shard in memory (as read back by [`read_shard`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Shard {
    pub meta: ShardMeta,
    pub planes: Array4<u8>,
    pub globals: Array2<f32>,
    pub policy: Array2<f32>,
    pub value: Array2<f32>,
    pub root_value: Array1<f32>,
    pub generation: Array1<i64>,
    pub game_index: Array1<i64>,
    /// `-1` or an action index `< A` (see [`PositionRecord::opponent_reply`]).
    pub opponent_reply: Array1<i64>,
    /// In -1..=1 (see [`PositionRecord::short_value`]).
    pub short_value: Array1<f32>,
}

impl Shard {
    /// Number of positions `N`.
    pub fn len(&self) -> usize {
        self.root_value.len()
    }
    /// Whether the shard holds no positions.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Accumulates games and their positions, then writes one shard.
pub struct ShardWriter {
    meta: ShardMeta,
    positions: Vec<PositionRecord>,
}

static SHARD_SEQ: AtomicU64 = AtomicU64::new(0);

/// A writer id unique to this process: `p<pid>`, or `<tag>-p<pid>` with the caller's tag
/// (which must not contain `-p`; the run pipeline uses the host name, so that writers on several
/// machines stay distinct). [`ShardName::writer_process`] reads it back.
pub fn default_writer_id(tag: &str) -> String {
    if tag.is_empty() {
        format!("p{}", std::process::id())
    } else {
        format!("{tag}-p{}", std::process::id())
    }
}

/// The file name of a shard: `sp-<writer id>-<unix ms>-<sequence>.npz` (the sequence zero-padded
/// to 6 digits). Formatted by [`std::fmt::Display`], read back by [`ShardName::parse`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShardName {
    /// The writer's id, unique among the processes writing into one directory (it may contain
    /// `-`, see [`default_writer_id`]).
    pub writer_id: String,
    /// When the shard was written: milliseconds since the Unix epoch.
    pub unix_ms: u64,
    /// The writing process's shard counter.
    pub seq: u64,
}

impl ShardName {
    /// The name of the next shard `writer_id` writes: the current time and this process's next
    /// sequence number.
    pub fn next(writer_id: &str) -> ShardName {
        let unix_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
        ShardName { writer_id: writer_id.to_string(), unix_ms, seq: SHARD_SEQ.fetch_add(1, Ordering::Relaxed) }
    }

    /// Reads a shard file name (`sp-<writer id>-<unix ms>-<sequence>.npz`; the writer id is
    /// everything between the prefix and the last two `-`). Errors name the file name and what
    /// it lacks.
    pub fn parse(file_name: &str) -> Result<ShardName> {
        let fields = file_name
            .strip_prefix("sp-")
            .and_then(|r| r.strip_suffix(".npz"))
            .with_context(|| format!("{file_name:?} is not a shard name (sp-<writer id>-<unix ms>-<sequence>.npz)"))?;
        let mut parts = fields.rsplitn(3, '-');
        let (seq, ms, writer) = (parts.next(), parts.next(), parts.next());
        let number = |field: Option<&str>, what: &str| -> Result<u64> {
            field
                .filter(|f| !f.is_empty() && f.bytes().all(|b| b.is_ascii_digit()))
                .and_then(|f| f.parse().ok())
                .with_context(|| format!("shard name {file_name:?}: the {what} is not a number"))
        };
        let seq = number(seq, "sequence")?;
        let unix_ms = number(ms, "time (unix ms)")?;
        let writer_id =
            writer.filter(|w| !w.is_empty()).with_context(|| format!("shard name {file_name:?}: no writer id"))?;
        Ok(ShardName { writer_id: writer_id.to_string(), unix_ms, seq })
    }

    /// The process that wrote the shard, when its writer id has the form [`default_writer_id`]
    /// gives: `(tag, pid)` (the tag empty for `p<pid>`).
    pub fn writer_process(&self) -> Option<(&str, u32)> {
        let (tag, pid) = match self.writer_id.rsplit_once("-p") {
            Some((tag, pid)) => (tag, pid),
            None => ("", self.writer_id.strip_prefix('p')?),
        };
        Some((tag, pid.parse().ok()?))
    }
}

impl std::fmt::Display for ShardName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "sp-{}-{}-{:06}.npz", self.writer_id, self.unix_ms, self.seq)
    }
}

impl ShardWriter {
    /// An empty shard for games of side `size` under `rule` / `protocol`.
    pub fn new(size: usize, rule: Rule, protocol: Protocol, writer_id: impl Into<String>) -> ShardWriter {
        ShardWriter {
            meta: ShardMeta {
                encoder_version: ENCODER_VERSION,
                size,
                rule,
                protocol,
                writer_id: writer_id.into(),
                games: Vec::new(),
            },
            positions: Vec::new(),
        }
    }
    /// Add a finished game and its recorded positions (their `game_index` is overwritten).
    ///
    /// Errors, leaving the writer unchanged, when a position's arrays have the wrong lengths for
    /// the shard's board size or a target is out of range.
    pub fn push_game(&mut self, game: GameMeta, positions: Vec<PositionRecord>) -> Result<()> {
        let s = self.meta.size;
        let gi = self.meta.games.len() as i64;
        for (k, p) in positions.iter().enumerate() {
            ensure!(
                p.planes.len() == NUM_PLANES * s * s,
                "position {k}: planes has {} bytes, expected {}",
                p.planes.len(),
                NUM_PLANES * s * s
            );
            ensure!(
                p.globals.len() == NUM_GLOBALS,
                "position {k}: globals has {} floats, expected {NUM_GLOBALS}",
                p.globals.len()
            );
            ensure!(
                p.policy.len() == action_space_size(s),
                "position {k}: policy has {} floats, expected {}",
                p.policy.len(),
                action_space_size(s)
            );
            ensure!(
                (-1..action_space_size(s) as i64).contains(&p.opponent_reply),
                "position {k}: opponent_reply {} is neither -1 nor an action index below {}",
                p.opponent_reply,
                action_space_size(s)
            );
            ensure!(
                (-1.0..=1.0).contains(&p.short_value),
                "position {k}: short_value {} is outside -1..=1",
                p.short_value
            );
        }
        // Only a game whose every position is valid goes in: a refused game leaves the writer as it was.
        for mut p in positions {
            p.game_index = gi;
            self.positions.push(p);
        }
        self.meta.games.push(game);
        Ok(())
    }
    /// Number of positions so far.
    pub fn positions(&self) -> usize {
        self.positions.len()
    }
    /// Number of games so far.
    pub fn games(&self) -> usize {
        self.meta.games.len()
    }
    /// Write the shard into `dir` (created if missing) as [`ShardName::next`] through
    /// the crash-safe layer (`renju_fs::write_atomic_with`: a `.tmp` file, fsync, rename); returns
    /// the final path. The writer is emptied.
    pub fn write(&mut self, dir: &Path) -> Result<PathBuf> {
        let path = dir.join(ShardName::next(&self.meta.writer_id).to_string());
        renju_fs::write_atomic_with(&path, |tmp| self.write_to(tmp))
            .with_context(|| format!("writing shard {}", path.display()))?;
        self.positions.clear();
        self.meta.games.clear();
        Ok(path)
    }

    fn write_to(&self, path: &Path) -> Result<()> {
        let s = self.meta.size;
        let n = self.positions.len();
        let a = action_space_size(s);
        let mut planes = Vec::with_capacity(n * NUM_PLANES * s * s);
        let mut globals = Vec::with_capacity(n * NUM_GLOBALS);
        let mut policy = Vec::with_capacity(n * a);
        let mut value = Vec::with_capacity(n * 3);
        for p in &self.positions {
            planes.extend_from_slice(&p.planes);
            globals.extend_from_slice(&p.globals);
            policy.extend_from_slice(&p.policy);
            value.extend_from_slice(&p.value);
        }
        let planes = Array4::from_shape_vec((n, NUM_PLANES, s, s), planes)?;
        let globals = Array2::from_shape_vec((n, NUM_GLOBALS), globals)?;
        let policy = Array2::from_shape_vec((n, a), policy)?;
        let value = Array2::from_shape_vec((n, 3), value)?;
        let root_value: Array1<f32> = self.positions.iter().map(|p| p.root_value).collect();
        let generation: Array1<i64> = self.positions.iter().map(|p| p.generation).collect();
        let game_index: Array1<i64> = self.positions.iter().map(|p| p.game_index).collect();
        let opponent_reply: Array1<i64> = self.positions.iter().map(|p| p.opponent_reply).collect();
        let short_value: Array1<f32> = self.positions.iter().map(|p| p.short_value).collect();
        let meta: Array1<u8> = Array1::from_vec(serde_json::to_vec(&self.meta)?);
        let file = std::fs::File::create(path)?;
        let mut npz = NpzWriter::new_compressed(std::io::BufWriter::new(file));
        npz.add_array("planes", &planes)?;
        npz.add_array("globals", &globals)?;
        npz.add_array("policy", &policy)?;
        npz.add_array("value", &value)?;
        npz.add_array("root_value", &root_value)?;
        npz.add_array("generation", &generation)?;
        npz.add_array("game_index", &game_index)?;
        npz.add_array("opponent_reply", &opponent_reply)?;
        npz.add_array("short_value", &short_value)?;
        npz.add_array("meta", &meta)?;
        let w = npz.finish()?;
        w.into_inner().map_err(|e| e.into_error())?;
        Ok(())
    }
}

/// Read and validate a shard: every array present with its DESIGN.md dtype, shapes consistent
/// with `N` and the metadata's board size, encoder version known, `game_index` within
/// `meta.games`. Every error names the file.
pub fn read_shard(path: &Path) -> Result<Shard> {
    naming_the_shard(path, read_shard_inner)
}

/// A shard's `.npz` archive, open to read its arrays by name.
type ShardArchive = NpzReader<std::io::BufReader<std::fs::File>>;

/// `read(path)`, its errors naming the file as an invalid shard.
fn naming_the_shard<T>(path: &Path, read: impl FnOnce(&mut ShardArchive) -> Result<T>) -> Result<T> {
    (|| -> Result<T> {
        let file = std::fs::File::open(path).context("cannot open")?;
        let mut npz = NpzReader::new(std::io::BufReader::new(file)).context("not a readable npz archive")?;
        read(&mut npz)
    })()
    .with_context(|| format!("invalid self-play shard {}", path.display()))
}

/// The shard's `meta` array, parsed.
fn shard_meta(npz: &mut ShardArchive) -> Result<ShardMeta> {
    let meta: Array1<u8> = npz.by_name("meta").context("array `meta` (u8 [bytes]) missing or malformed")?;
    serde_json::from_slice(meta.as_slice().unwrap_or(&meta.to_vec())).context("array `meta` is not valid shard JSON")
}

fn read_shard_inner(npz: &mut ShardArchive) -> Result<Shard> {
    let meta = shard_meta(npz)?;
    if meta.encoder_version != ENCODER_VERSION {
        bail!(
            "encoder version {} is not this build's version {ENCODER_VERSION} (shards of different encoder versions are \
             never mixed in one replay window: they belong to a run of their own version)",
            meta.encoder_version
        );
    }
    let s = meta.size;
    let planes: Array4<u8> = npz.by_name("planes").context("array `planes` (u8 [N, C, S, S]) missing or malformed")?;
    let n = planes.shape()[0];
    ensure!(
        planes.shape() == [n, NUM_PLANES, s, s],
        "array `planes` has shape {:?}, expected [N, {NUM_PLANES}, {s}, {s}]",
        planes.shape()
    );
    let globals: Array2<f32> = npz.by_name("globals").context("array `globals` (f32 [N, G]) missing or malformed")?;
    ensure!(
        globals.shape() == [n, NUM_GLOBALS],
        "array `globals` has shape {:?}, expected [{n}, {NUM_GLOBALS}]",
        globals.shape()
    );
    let a = action_space_size(s);
    let policy: Array2<f32> = npz.by_name("policy").context("array `policy` (f32 [N, A]) missing or malformed")?;
    ensure!(policy.shape() == [n, a], "array `policy` has shape {:?}, expected [{n}, {a}]", policy.shape());
    let value: Array2<f32> = npz.by_name("value").context("array `value` (f32 [N, 3]) missing or malformed")?;
    ensure!(value.shape() == [n, 3], "array `value` has shape {:?}, expected [{n}, 3]", value.shape());
    let root_value: Array1<f32> =
        npz.by_name("root_value").context("array `root_value` (f32 [N]) missing or malformed")?;
    ensure!(root_value.len() == n, "array `root_value` has {} entries, expected {n}", root_value.len());
    let generation: Array1<i64> =
        npz.by_name("generation").context("array `generation` (i64 [N]) missing or malformed")?;
    ensure!(generation.len() == n, "array `generation` has {} entries, expected {n}", generation.len());
    let game_index: Array1<i64> =
        npz.by_name("game_index").context("array `game_index` (i64 [N]) missing or malformed")?;
    ensure!(game_index.len() == n, "array `game_index` has {} entries, expected {n}", game_index.len());
    if let Some(bad) = game_index.iter().find(|&&g| g < 0 || g as usize >= meta.games.len()) {
        bail!("array `game_index` holds {bad}, outside 0..{} games", meta.games.len());
    }
    let names = npz.names().context("listing the archive's arrays")?;
    let has = |array: &str| names.iter().any(|name| name == array);
    let opponent_reply: Array1<i64> = if has("opponent_reply") {
        let r: Array1<i64> = npz.by_name("opponent_reply").context("array `opponent_reply` (i64 [N]) is malformed")?;
        ensure!(r.len() == n, "array `opponent_reply` has {} entries, expected {n}", r.len());
        if let Some(bad) = r.iter().find(|&&x| x < -1 || x >= a as i64) {
            bail!("array `opponent_reply` holds {bad}, neither -1 nor an action index below {a}");
        }
        r
    } else {
        Array1::from_elem(n, -1)
    };
    let short_value: Array1<f32> = if has("short_value") {
        let v: Array1<f32> = npz.by_name("short_value").context("array `short_value` (f32 [N]) is malformed")?;
        ensure!(v.len() == n, "array `short_value` has {} entries, expected {n}", v.len());
        if let Some(bad) = v.iter().find(|x| !(-1.0..=1.0).contains(*x)) {
            bail!("array `short_value` holds {bad}, outside -1..=1");
        }
        v
    } else {
        value.rows().into_iter().map(|r| r[0] - r[2]).collect()
    };
    Ok(Shard { meta, planes, globals, policy, value, root_value, generation, game_index, opponent_reply, short_value })
}

/// Only the metadata of a shard (the `meta` array; the position arrays are not read or checked),
/// for tools that tally games. Errors name the file.
pub fn read_shard_meta(path: &Path) -> Result<ShardMeta> {
    naming_the_shard(path, shard_meta)
}

/// The metadata and the `generation` array of a shard (the other arrays are not read or
/// checked: [`read_shard`] does that), for tallying games and positions by generation. Errors
/// name the file.
pub fn read_shard_generations(path: &Path) -> Result<(ShardMeta, Array1<i64>)> {
    naming_the_shard(path, |npz| {
        let meta = shard_meta(npz)?;
        let generation: Array1<i64> =
            npz.by_name("generation").context("array `generation` (i64 [N]) missing or malformed")?;
        Ok((meta, generation))
    })
}

/// The number of positions `N` of a shard, from its smallest per-position array (`root_value`,
/// `f32 [N]`) alone: the other arrays are not read or checked ([`read_shard`] does that). For
/// the replay window, which must know every shard's length but holds only the newest shards'
/// arrays. Errors name the file.
pub fn read_shard_positions(path: &Path) -> Result<usize> {
    naming_the_shard(path, |npz| {
        let root: Array1<f32> =
            npz.by_name("root_value").context("array `root_value` (f32 [N]) missing or malformed")?;
        Ok(root.len())
    })
}

/// The `.npz` shards in `dir` (not `.tmp` files), sorted by name.
pub fn list_shards(dir: &Path) -> Result<Vec<PathBuf>> {
    list_new_shards(dir, &HashSet::new())
}

/// The `.npz` shards in `dir` whose file names are not in `seen`, sorted by name: for readers
/// that poll a directory growing through a long run, so that a poll costs one listing and no
/// path comparisons for the shards seen before (names are compared as bytes: a directory's
/// entries sort the same by name as by path).
pub fn list_new_shards(dir: &Path, seen: &HashSet<OsString>) -> Result<Vec<PathBuf>> {
    let context = || format!("reading shard directory {}", dir.display());
    let mut v: Vec<(OsString, PathBuf)> = Vec::new();
    for e in std::fs::read_dir(dir).with_context(context)? {
        let e = e.with_context(context)?;
        let name = e.file_name();
        if Path::new(&name).extension().is_some_and(|x| x == "npz") && !seen.contains(&name) {
            v.push((name, e.path()));
        }
    }
    v.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    Ok(v.into_iter().map(|(_, path)| path).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shard_name_reads_back_as_written() {
        let name = ShardName { writer_id: "node1-p4242".into(), unix_ms: 1_700_000_000_123, seq: 7 };
        assert_eq!(name.to_string(), "sp-node1-p4242-1700000000123-000007.npz");
        assert_eq!(ShardName::parse(&name.to_string()).unwrap(), name);
        assert_eq!(name.writer_process(), Some(("node1", 4242)));
        let next = ShardName::next(&default_writer_id("cli"));
        assert_eq!(ShardName::parse(&next.to_string()).unwrap(), next);
        assert_eq!(next.writer_process(), Some(("cli", std::process::id())));
        let bare = ShardName::next(&default_writer_id(""));
        assert_eq!(bare.writer_process(), Some(("", std::process::id())));
        // A writer id of another form reads back, without a process.
        let other = ShardName::parse("sp-bad-1-000002.npz").unwrap();
        assert_eq!((other.writer_id.as_str(), other.unix_ms, other.seq), ("bad", 1, 2));
        assert_eq!(other.writer_process(), None);
    }

    #[test]
    fn a_malformed_shard_name_is_refused_naming_what_is_wrong() {
        let err = |name: &str| format!("{:#}", ShardName::parse(name).unwrap_err());
        assert!(err("odd.npz").contains("\"odd.npz\" is not a shard name"), "{}", err("odd.npz"));
        assert!(err("sp-a-1-2.npz.tmp").contains("is not a shard name"));
        assert!(err("sp-a-1-x2.npz").contains("the sequence is not a number"), "{}", err("sp-a-1-x2.npz"));
        assert!(err("sp-a--2.npz").contains("the time (unix ms) is not a number"), "{}", err("sp-a--2.npz"));
        assert!(err("sp-1-2.npz").contains("no writer id"), "{}", err("sp-1-2.npz"));
        assert!(err("sp--1-2.npz").contains("no writer id"), "{}", err("sp--1-2.npz"));
    }
}
