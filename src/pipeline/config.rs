//! The run configuration (`configs/*.toml`) and opening a run directory with it.
//!
//! A config has five sections; every key is optional and an unknown or invalid key is an error
//! that names it. A missing key takes its default: the `Default` impl of its section's struct,
//! all listed with a comment in `configs/defaults.toml` (generated and checked by
//! [`super::defaults`]). The presets in `configs/` therefore list only the keys they change; a
//! config includes no other file, so a run directory's copy of it is complete on its own.
//! Sections:
//! - `[game]`: board `size`, `rule`, opening `protocol`, optional `stone_cap` — set once here and
//!   handed to both self-play and the trainer (so the two cannot disagree);
//! - `[selfplay]`: [`SelfplayConfig`] without the `[game]` keys;
//! - `[server]`: the batching inference server ([`ServerConfig`]);
//! - `[training]`: [`TrainerConfig`] without `board_size` / `rule`;
//! - `[pipeline]`: the loop itself ([`PipelineConfig`]).
//!
//! The run directory's layout belongs to [`RunDir`] (in `renju-trainer`).

use anyhow::{bail, Context, Result};
use renju_arena::gatekeeper::GateConfig;
use renju_fs::write_atomic;
use renju_rules::{Protocol, Rule};
use renju_selfplay::server::ServerConfig;
use renju_selfplay::worker::SelfplayConfig;
use renju_trainer::config::TrainerConfig;
use renju_trainer::RunDir;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// `[game]`: what is being played (RULES.md §1, §2, §5).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GameConfig {
    /// Board side, 7..=20. Default 15 (the renju board, RULES.md §1).
    pub size: usize,
    /// `renju`, `standard` or `freestyle` (RULES.md §2). Default `renju`.
    pub rule: Rule,
    /// Opening protocol (RULES.md §5): `free`, `free-centre`, `swap1`, `rif`, `fifth-n[:N]`,
    /// `designated:D4[,swap][,offers=K]`, `black-sets`, `lianhuan`, `soosorv[:N]`, `taraguchi[:N]`,
    /// `swap2`. Default `rif`.
    pub protocol: Protocol,
    /// Draw once this many stones are on the board (RULES.md §2 optional cap). Default none.
    pub stone_cap: Option<usize>,
}

impl Default for GameConfig {
    fn default() -> Self {
        GameConfig { size: 15, rule: Rule::Renju, protocol: Protocol::Rif, stone_cap: None }
    }
}

/// `[pipeline]`: how self-play and training are interleaved.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PipelineConfig {
    /// A new generation is published every this many training steps: generation `g >= 1` is the
    /// network after `g * steps_per_generation` steps. Default 500.
    pub steps_per_generation: u64,
    /// Training steps taken between looks at the replay window (new shards, the
    /// samples-per-new-sample budget). Default 20.
    pub steps_per_round: u64,
    /// Shards hold this many games each. Default 8.
    pub games_per_shard: usize,
    /// How often self-play looks for a newly published generation, in milliseconds. Default 500.
    pub model_poll_ms: u64,
    /// Gate publication on an arena match (AlphaGo Zero's evaluator, Silver et al. 2017): the
    /// network due for publication plays the newest generation over the 26 RIF openings with
    /// both colours and is published only when it passes (SPRT elo0=0, elo1=35, or a score of
    /// at least `gate_min_score`); otherwise training goes on and the next candidate is tried
    /// `steps_per_generation` steps later. Default false (every candidate is published).
    pub gate: bool,
    /// Games of the gate match at most. Default 52.
    pub gate_games: usize,
    /// Root visits per move in gate games. Default 64.
    pub gate_playouts: u32,
    /// Score needed when the SPRT is undecided (or off). Default 0.55.
    pub gate_min_score: f64,
    /// Stop the gate match early with Wald's SPRT (elo0 = 0, elo1 = 35, alpha = beta = 0.05).
    /// Default true.
    pub gate_sprt: bool,
    /// Local retention of published generations: once
    /// [`KEEP_NEWEST_GENERATIONS`](renju_trainer::generations::KEEP_NEWEST_GENERATIONS) newer ones
    /// exist, a generation is deleted unless its number is a multiple of this (generation 0
    /// always stays; the object store of a remote run keeps everything). Default 1: every
    /// generation is kept. A line-pattern generation holds its 17 MB table (F = 32), and a CPU
    /// run that publishes every few seconds would otherwise write gigabytes an hour. The curve
    /// then needs `--every-generations` a multiple of this.
    pub keep_generations_every: u64,
    /// `renju-zero train` only (both halves in one process): self-play pauses while the trainer
    /// is more than `steps_per_round` steps behind its `training.samples_per_new_sample`
    /// budget, so a run whose trainer shares the CPU with self-play trains the configured
    /// samples per new sample instead of whatever CPU share it gets. Separate `selfplay` and
    /// `trainer` processes are not paced. Default false.
    pub selfplay_waits_for_trainer: bool,
}

impl Default for PipelineConfig {
    fn default() -> Self {
        PipelineConfig {
            steps_per_generation: 500,
            steps_per_round: 20,
            games_per_shard: 8,
            model_poll_ms: 500,
            gate: false,
            gate_games: GateConfig::default().games,
            gate_playouts: 64,
            gate_min_score: GateConfig::default().min_score,
            gate_sprt: GateConfig::default().sprt.is_some(),
            keep_generations_every: 1,
            selfplay_waits_for_trainer: false,
        }
    }
}

/// A whole run configuration: one TOML file.
#[derive(Clone, Debug, PartialEq)]
pub struct RunConfig {
    pub game: GameConfig,
    /// Self-play settings; its game fields are copied from `[game]`.
    pub selfplay: SelfplayConfig,
    pub server: ServerConfig,
    /// Trainer settings; `board_size` and `rule` are copied from `[game]`.
    pub training: TrainerConfig,
    pub pipeline: PipelineConfig,
}

/// Keys that belong to `[game]` and may not be set in the other sections.
const GAME_KEYS_IN_SELFPLAY: [&str; 4] = ["size", "rule", "protocol", "stone_cap"];
const GAME_KEYS_IN_TRAINING: [&str; 2] = ["board_size", "rule"];

impl Default for RunConfig {
    /// The configuration of an empty config file: every section's defaults
    /// (`configs/defaults.toml` lists them).
    fn default() -> Self {
        RunConfig::assemble(
            GameConfig::default(),
            SelfplayConfig::default(),
            ServerConfig::default(),
            TrainerConfig::default(),
            PipelineConfig::default(),
        )
    }
}

impl RunConfig {
    /// The sections as one config, with the `[game]` keys copied into self-play and training.
    fn assemble(
        game: GameConfig,
        mut selfplay: SelfplayConfig,
        server: ServerConfig,
        mut training: TrainerConfig,
        pipeline: PipelineConfig,
    ) -> RunConfig {
        selfplay.size = game.size;
        selfplay.rule = game.rule;
        selfplay.protocol = game.protocol.clone();
        selfplay.stone_cap = game.stone_cap;
        training.board_size = game.size;
        training.rule = game.rule;
        RunConfig { game, selfplay, server, training, pipeline }
    }

    /// Parses TOML text; `origin` names the file in errors.
    pub fn parse(text: &str, origin: &str) -> Result<RunConfig> {
        let value: toml::Table = toml::from_str(text).with_context(|| format!("parsing {origin}"))?;
        for key in value.keys() {
            if !["game", "selfplay", "server", "training", "pipeline"].contains(&key.as_str()) {
                bail!("{origin}: unknown section or key `{key}` (expected [game], [selfplay], [server], [training], [pipeline])");
            }
        }
        let section = |name: &str| -> toml::Value {
            value.get(name).cloned().unwrap_or_else(|| toml::Value::Table(Default::default()))
        };
        let forbid = |name: &str, keys: &[&str]| -> Result<()> {
            if let Some(t) = value.get(name).and_then(|v| v.as_table()) {
                for k in keys {
                    if t.contains_key(*k) {
                        bail!(
                            "{origin}: `{name}.{k}` is set in [game] (as `game.{}`), not in [{name}]",
                            if *k == "board_size" { "size" } else { k }
                        );
                    }
                }
            }
            Ok(())
        };
        forbid("selfplay", &GAME_KEYS_IN_SELFPLAY)?;
        forbid("training", &GAME_KEYS_IN_TRAINING)?;
        let game: GameConfig = section("game").try_into().with_context(|| format!("{origin}: in [game]"))?;
        let selfplay: SelfplayConfig =
            section("selfplay").try_into().with_context(|| format!("{origin}: in [selfplay]"))?;
        let server: ServerConfig = section("server").try_into().with_context(|| format!("{origin}: in [server]"))?;
        let training: TrainerConfig =
            section("training").try_into().with_context(|| format!("{origin}: in [training]"))?;
        let pipeline: PipelineConfig =
            section("pipeline").try_into().with_context(|| format!("{origin}: in [pipeline]"))?;
        let RunConfig { game, selfplay, server, training, pipeline } =
            RunConfig::assemble(game, selfplay, server, training, pipeline);
        selfplay.validate().with_context(|| format!("{origin}: invalid [selfplay] / [game]"))?;
        training.validate().with_context(|| format!("{origin}: invalid [training]"))?;
        anyhow::ensure!(server.max_batch >= 1, "{origin}: server.max_batch must be at least 1");
        anyhow::ensure!(
            pipeline.steps_per_generation >= 1,
            "{origin}: pipeline.steps_per_generation must be at least 1"
        );
        anyhow::ensure!(
            pipeline.keep_generations_every >= 1,
            "{origin}: pipeline.keep_generations_every must be at least 1 (1 keeps every generation)"
        );
        anyhow::ensure!(pipeline.steps_per_round >= 1, "{origin}: pipeline.steps_per_round must be at least 1");
        anyhow::ensure!(pipeline.games_per_shard >= 1, "{origin}: pipeline.games_per_shard must be at least 1");
        Ok(RunConfig { game, selfplay, server, training, pipeline })
    }

    /// Reads and parses a config file; errors name the file.
    pub fn load(path: &Path) -> Result<RunConfig> {
        let text = std::fs::read_to_string(path).with_context(|| format!("reading config {}", path.display()))?;
        RunConfig::parse(&text, &path.display().to_string())
    }

    /// One line of what is played and trained, e.g. `15x15 renju, rif opening, stone cap 120;
    /// resnet 2 x 32, encoder version 3; cpu` (every preset's `# Summary:` line is its own).
    pub fn summary(&self) -> String {
        let g = &self.game;
        let cap = g.stone_cap.map_or("no stone cap".to_string(), |c| format!("stone cap {c}"));
        let t = &self.training;
        let net = match t.net.kind {
            renju_trainer::NetKind::Resnet => {
                format!("resnet {} x {}, encoder version {}", t.net.blocks, t.net.channels, t.encoder_version)
            }
            renju_trainer::NetKind::Linepattern => {
                let pw = match t.net.policy_pointwise {
                    0 => String::new(),
                    k => format!(", dynamic pointwise policy K {k}"),
                };
                format!("linepattern net F {}, {} line channels{pw}", t.net.line_features, t.net.line_channels)
            }
        };
        let device = toml::Value::try_from(t.device).map_or_else(|_| format!("{:?}", t.device), |v| v.to_string());
        format!("{0}x{0} {1}, {2} opening, {cap}; {net}; {3}", g.size, g.rule, g.protocol, device.trim_matches('"'))
    }

    /// Every effective setting (defaults filled in) as flat `section.key = value` pairs, for
    /// comparing two configs key by key.
    pub fn flatten(&self) -> BTreeMap<String, String> {
        let mut out = BTreeMap::new();
        let mut sp = toml::Value::try_from(&self.selfplay).expect("serialisable");
        let mut tr = toml::Value::try_from(&self.training).expect("serialisable");
        // The [game] copies are reported under [game] only.
        if let Some(t) = sp.as_table_mut() {
            for k in GAME_KEYS_IN_SELFPLAY {
                t.remove(k);
            }
        }
        if let Some(t) = tr.as_table_mut() {
            for k in GAME_KEYS_IN_TRAINING {
                t.remove(k);
            }
        }
        let sections = [
            ("game", toml::Value::try_from(&self.game).expect("serialisable")),
            ("selfplay", sp),
            ("server", toml::Value::try_from(&self.server).expect("serialisable")),
            ("training", tr),
            ("pipeline", toml::Value::try_from(&self.pipeline).expect("serialisable")),
        ];
        for (name, v) in sections {
            flatten_into(name, &v, &mut out);
        }
        out
    }

    /// The keys whose effective values differ between `self` and `other`, sorted.
    pub fn differing_keys(&self, other: &RunConfig) -> Vec<String> {
        let (a, b) = (self.flatten(), other.flatten());
        let mut keys: Vec<String> = a.keys().chain(b.keys()).cloned().collect();
        keys.sort();
        keys.dedup();
        keys.into_iter().filter(|k| a.get(k) != b.get(k)).collect()
    }
}

fn flatten_into(prefix: &str, v: &toml::Value, out: &mut BTreeMap<String, String>) {
    match v {
        toml::Value::Table(t) => {
            for (k, v) in t {
                flatten_into(&format!("{prefix}.{k}"), v, out);
            }
        }
        other => {
            out.insert(prefix.to_string(), other.to_string());
        }
    }
}

/// Starts or re-opens the run in `run` with the config text `text` (from `origin`). A new run
/// directory gets a copy of the config. An existing one must have been made with the same
/// effective config, unless `force` (then the copy is replaced); otherwise the error names every
/// differing key. Returns the parsed config.
pub fn open_with_text(run: &RunDir, text: &str, origin: &str, force: bool) -> Result<RunConfig> {
    let wanted = RunConfig::parse(text, origin)?;
    std::fs::create_dir_all(&run.root).with_context(|| format!("creating run directory {}", run.root.display()))?;
    let copy = run.config();
    if copy.exists() {
        let old = RunConfig::load(&copy)?;
        let diff = old.differing_keys(&wanted);
        if !diff.is_empty() {
            if !force {
                bail!(
                    "run directory {} was made with another config; differing keys: {}. \
                     Pass --force to continue it with {origin}",
                    run.root.display(),
                    diff.join(", ")
                );
            }
            run.note(&format!("--force: config replaced by {origin}; changed keys: {}", diff.join(", ")))?;
            write_atomic(&copy, text.as_bytes())?;
        }
    } else {
        write_atomic(&copy, text.as_bytes())?;
    }
    Ok(wanted)
}

/// Opens the run `run` (a directory, or a URL on object storage: [`RunDir::open`]) with the
/// config file `config` (or, without one, with the run's own `config.toml`) changed by the `sets`
/// overrides ([`apply_overrides`]); see [`open_with_text`]. A remote run compares with, and then
/// holds, the store's `config.toml`. Errors name the file, the URL or the bad override.
pub fn open_run(run: &str, config: Option<&Path>, sets: &[String], force: bool) -> Result<(RunDir, RunConfig)> {
    let dir = RunDir::open(run)?;
    let in_store = dir.sync_config_in()?;
    let path = match config {
        Some(p) => p.to_path_buf(),
        None if dir.remote.is_some() && !in_store => {
            bail!("{}: the run has no config.toml yet (start its trainer with --config first)", dir.name())
        }
        None => dir.config(),
    };
    let (text, origin) = read_config_text(&path, sets)?;
    let cfg = open_with_text(&dir, &text, &origin, force)?;
    dir.sync_config_out(force)?;
    Ok((dir, cfg))
}

/// The text of config file `path` with the `sets` overrides applied, and its origin for error
/// messages (`PATH with --set K=V ...`). Errors name the file or the bad override.
pub fn read_config_text(path: &Path, sets: &[String]) -> Result<(String, String)> {
    let text = std::fs::read_to_string(path).with_context(|| format!("reading config {}", path.display()))?;
    Ok(if sets.is_empty() {
        (text, path.display().to_string())
    } else {
        (apply_overrides(&text, sets)?, format!("{} with --set {}", path.display(), sets.join(" --set ")))
    })
}

/// Parses and validates config file `path` with the `sets` overrides without touching any run
/// directory: `train` calls it before it creates (and locks) the run, so a bad config leaves
/// nothing behind.
pub fn check_config(path: &Path, sets: &[String]) -> Result<RunConfig> {
    let (text, origin) = read_config_text(path, sets)?;
    RunConfig::parse(&text, &origin)
}

/// Applies `section.key=value` overrides (`--set`, e.g. `training.net.blocks=2`,
/// `selfplay.search.algorithm=gumbel`, `training.schedule.milestones=[[600,0.5]]`) to config
/// text: `value` is read as a TOML value (a bare word that is not one is taken as a string);
/// missing tables are created. Returns the new text (a run directory keeps it as its copy; the
/// comments of the original are not kept). Errors: an override without `=` or a key path through
/// a non-table value, or text that is not TOML.
pub fn apply_overrides(text: &str, sets: &[String]) -> Result<String> {
    let mut root: toml::Table = toml::from_str(text).context("parsing the config to override")?;
    for set in sets {
        let (key, value) = set.split_once('=').with_context(|| format!("--set '{set}': expected KEY=VALUE"))?;
        let path: Vec<&str> = key.trim().split('.').map(str::trim).collect();
        anyhow::ensure!(path.iter().all(|p| !p.is_empty()), "--set '{set}': empty part in key '{key}'");
        let value = match toml::from_str::<toml::Table>(&format!("v = {}", value.trim())) {
            Ok(mut t) => t.remove("v").expect("parsed key"),
            Err(_) => toml::Value::String(value.trim().to_string()),
        };
        let (last, tables) = path.split_last().expect("non-empty key");
        let mut t = &mut root;
        for part in tables {
            let entry = t.entry(part.to_string()).or_insert_with(|| toml::Value::Table(Default::default()));
            t = entry.as_table_mut().with_context(|| format!("--set '{set}': `{part}` is not a table"))?;
        }
        t.insert(last.to_string(), value);
    }
    let header = format!("# overridden with --set {}\n", sets.join(" --set "));
    Ok(header + &toml::to_string(&root).context("writing the overridden config")?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_fill_every_section_and_game_keys_propagate() {
        let c = RunConfig::parse("[game]\nsize = 9\nrule = \"freestyle\"\nprotocol = \"swap1\"\n", "t").unwrap();
        assert_eq!(c.selfplay.size, 9);
        assert_eq!(c.training.board_size, 9);
        assert_eq!(c.training.rule, Rule::Freestyle);
        assert_eq!(c.selfplay.protocol, Protocol::Swap1);
        assert_eq!(c.pipeline, PipelineConfig::default());
    }

    #[test]
    fn overrides_change_one_key_each_and_bad_ones_are_named() {
        let base = "[game]\nsize = 9\n[training.net]\nblocks = 6\n";
        let sets: Vec<String> =
            ["training.net.blocks=2", "selfplay.search.algorithm=gumbel", "training.schedule.milestones=[[600, 0.5]]"]
                .map(String::from)
                .to_vec();
        let text = apply_overrides(base, &sets).unwrap();
        let c = RunConfig::parse(&text, "t").unwrap();
        assert_eq!(c.training.net.blocks, 2);
        assert_eq!(c.selfplay.search.algorithm, renju_selfplay::mcts::SearchAlgorithm::Gumbel);
        assert_eq!(c.training.schedule.milestones, vec![(600, 0.5)]);
        assert_eq!(c.game.size, 9);
        let d = RunConfig::parse(base, "b").unwrap().differing_keys(&c);
        assert_eq!(d, ["selfplay.search.algorithm", "training.net.blocks", "training.schedule.milestones"]);
        assert!(apply_overrides(base, &["x".into()]).unwrap_err().to_string().contains("KEY=VALUE"));
        assert!(apply_overrides(base, &["game.size.x=1".into()])
            .unwrap_err()
            .to_string()
            .contains("`size` is not a table"));
        let e = RunConfig::parse(&apply_overrides(base, &["selfplay.playoutz=3".into()]).unwrap(), "t").unwrap_err();
        assert!(format!("{e:#}").contains("playoutz"), "{e:#}");
    }

    #[test]
    fn unknown_keys_are_named() {
        let e = RunConfig::parse("[selfplay]\nplayoutz = 3\n", "x.toml").unwrap_err();
        assert!(format!("{e:#}").contains("playoutz"), "{e:#}");
        let e = RunConfig::parse("[pipelin]\n", "x.toml").unwrap_err();
        assert!(format!("{e:#}").contains("pipelin"), "{e:#}");
        let e = RunConfig::parse("[training]\nboard_size = 9\n", "x.toml").unwrap_err();
        assert!(format!("{e:#}").contains("training.board_size"), "{e:#}");
    }

    #[test]
    fn differing_keys_are_listed() {
        let a = RunConfig::parse("[selfplay]\nplayouts = 10\n", "a").unwrap();
        let b = RunConfig::parse("[selfplay]\nplayouts = 20\n[pipeline]\nsteps_per_generation = 7\n", "b").unwrap();
        assert_eq!(a.differing_keys(&b), vec!["pipeline.steps_per_generation", "selfplay.playouts"]);
        assert!(a.differing_keys(&a.clone()).is_empty());
    }

    #[test]
    fn reopening_with_another_config_needs_force() {
        let dir = tempfile::tempdir().unwrap();
        let run = RunDir::new(&dir.path().join("r"));
        open_with_text(&run, "[selfplay]\nplayouts = 10\n", "a.toml", false).unwrap();
        open_with_text(&run, "[selfplay]\nplayouts = 10\n", "a.toml", false).unwrap();
        let e = open_with_text(&run, "[selfplay]\nplayouts = 11\n", "b.toml", false).unwrap_err();
        assert!(format!("{e:#}").contains("selfplay.playouts"), "{e:#}");
        let c = open_with_text(&run, "[selfplay]\nplayouts = 11\n", "b.toml", true).unwrap();
        assert_eq!(c.selfplay.playouts, 11);
        assert_eq!(RunConfig::load(&run.config()).unwrap().selfplay.playouts, 11);
    }
}
