//! The run directory (`runs/NAME/`): the one owner of its layout. Every part of the project that
//! reads or writes a run (the trainer, the self-play half, the pipeline, the CLI) takes its paths
//! from [`RunDir`] instead of joining names itself.
//!
//! Layout:
//! - `config.toml`: the config the run was started with;
//! - `selfplay/*.npz`: replay shards (`selfplay/rejected/` holds shards the window refused);
//! - `models/gen-NNNNNN/`, `models/LATEST`: published generations ([`crate::generations`], each a
//!   model directory of [`crate::model`]);
//! - `checkpoints/step-NNNNNNNNN/`, `checkpoints/LATEST`: training state ([`crate::training`]);
//! - `candidates/step-NNNNNNNNN/`: a gated candidate while its arena match runs;
//! - `tensorboard/`: TensorBoard event files ([`crate::metrics`]);
//! - `train.log`: notices and one summary line per generation; `generations.jsonl`: one JSON line
//!   per generation; both name the writing process on every line ([`process_tag`]);
//! - `trainer.lock`: held by the run's one local `train` / `trainer` process ([`crate::runlock`]).
//!
//! Storage: a run is either a local directory (written through `renju-fs`, temp file + rename)
//! or a URL on object storage (`s3://bucket/prefix`, `gs://`, `az://`, `file://`; see
//! [`crate::store`]). A remote run is worked on in a local cache directory (`root`) with the same
//! layout; the `sync_*`/`*_lease` methods exchange its shards, generations, checkpoints, logs
//! and the trainer lease with the store and do nothing for a local run.

use crate::generations::{generation_dir_name, newest_generation, LATEST_FILE};
use crate::process::{host_tag, is_running, lease_owner, process_tag};
use crate::runlock::RunLock;
use crate::store::{default_cache_dir, is_remote, ObjectRun};
use anyhow::{Context, Result};
use renju_fs::append_line;
use renju_selfplay::record::ShardName;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The directory name of the checkpoint at `step`: `step-NNNNNNNNN`.
pub fn checkpoint_dir_name(step: u64) -> String {
    format!("step-{step:09}")
}

/// The step of a checkpoint directory name ([`checkpoint_dir_name`]), if it is one.
pub fn parse_checkpoint_dir_name(name: &str) -> Option<u64> {
    let digits = name.strip_prefix("step-")?;
    if digits.len() >= 9 && digits.bytes().all(|b| b.is_ascii_digit()) {
        digits.parse().ok()
    } else {
        None
    }
}

/// `train.log`, under the run's root.
pub const LOG_FILE: &str = "train.log";
/// `generations.jsonl`, under the run's root.
pub const GENERATIONS_LOG_FILE: &str = "generations.jsonl";
/// `tensorboard/`, under the run's root.
pub const TENSORBOARD_DIR: &str = "tensorboard";

/// The paths of one run directory, and the object store behind it for a remote run.
#[derive(Clone, Debug)]
pub struct RunDir {
    /// The run directory itself (for a remote run: its local cache).
    pub root: PathBuf,
    /// The run's objects, for a run given as a URL.
    pub remote: Option<Arc<ObjectRun>>,
}

impl RunDir {
    /// The run rooted at `root` (nothing is created).
    pub fn new(root: &Path) -> RunDir {
        RunDir { root: root.to_path_buf(), remote: None }
    }

    /// The run named by `--run`: a local directory, or a URL (`s3://bucket/prefix`, ...) whose
    /// store is checked to answer (errors name the URL; nothing is written), worked on in the
    /// cache directory [`default_cache_dir`].
    pub fn open(run: &str) -> Result<RunDir> {
        if !is_remote(run) {
            return Ok(RunDir::new(Path::new(run)));
        }
        let remote = ObjectRun::open(run)?;
        Ok(RunDir { root: default_cache_dir(run), remote: Some(Arc::new(remote)) })
    }

    /// The run's name for messages: its URL, or its directory.
    pub fn name(&self) -> String {
        self.remote.as_ref().map_or_else(|| self.root.display().to_string(), |r| r.url().to_string())
    }

    /// Remote run: makes the store's `config.toml` the local copy, if the store has one. Returns
    /// whether it did.
    pub fn sync_config_in(&self) -> Result<bool> {
        let Some(r) = &self.remote else { return Ok(false) };
        match r.get("config.toml")? {
            Some(bytes) => renju_fs::write_atomic(&self.config(), &bytes).map(|_| true),
            None => Ok(false),
        }
    }

    /// Remote run: uploads the local `config.toml` (created if the store has none; replaced
    /// when `replace`, as after `--force`).
    pub fn sync_config_out(&self, replace: bool) -> Result<()> {
        let Some(r) = &self.remote else { return Ok(()) };
        let bytes = std::fs::read(self.config()).with_context(|| format!("reading {}", self.config().display()))?;
        if replace {
            r.put("config.toml", &bytes)
        } else {
            r.create("config.toml", &bytes).map(|_| ())
        }
    }

    /// Remote run (self-play): uploads the shards of `selfplay/` not uploaded yet. Returns how
    /// many it uploaded.
    pub fn sync_shards_out(&self) -> Result<usize> {
        self.remote.as_ref().map_or(Ok(0), |r| r.push_shards(&self.selfplay()))
    }

    /// Remote run (trainer): downloads the store's shards that `selfplay/` lacks. Returns how
    /// many it downloaded.
    pub fn sync_shards_in(&self) -> Result<usize> {
        self.remote.as_ref().map_or(Ok(0), |r| r.pull_shards(&self.selfplay()))
    }

    /// Remote run (trainer): uploads the local generations the store lacks, `LATEST` last.
    pub fn sync_generations_out(&self) -> Result<()> {
        self.remote.as_ref().map_or(Ok(()), |r| r.push_generations(&self.root))
    }

    /// Remote run (trainer): uploads the checkpoint directory `dir` unless the store has it, keeps
    /// the store's newest `keep` checkpoints ([`ObjectRun::push_checkpoint`]), then uploads the
    /// trainer's logs ([`RunDir::sync_logs_out`]).
    pub fn sync_checkpoint_out(&self, dir: &Path, keep: usize) -> Result<()> {
        let Some(r) = &self.remote else { return Ok(()) };
        r.push_checkpoint(dir, keep)?;
        self.sync_logs_out()
    }

    /// Remote run (trainer): when the store's newest checkpoint is newer than the cache's
    /// `checkpoints/LATEST` (or the cache has none: a fresh machine), downloads it and points
    /// `checkpoints/LATEST` at it, so that the trainer resumes where the store's state is.
    /// Returns the step downloaded, if any.
    pub fn sync_checkpoint_in(&self) -> Result<Option<u64>> {
        let Some(r) = &self.remote else { return Ok(None) };
        let Some(&newest) = r.checkpoint_steps()?.last() else { return Ok(None) };
        let latest = self.checkpoints().join(LATEST_FILE);
        let local = std::fs::read_to_string(&latest).ok().and_then(|n| parse_checkpoint_dir_name(n.trim()));
        if local.is_some_and(|s| s >= newest) {
            return Ok(None);
        }
        r.pull_checkpoint(newest, &self.root)?;
        renju_fs::write_atomic(&latest, format!("{}\n", checkpoint_dir_name(newest)).as_bytes())?;
        Ok(Some(newest))
    }

    /// Remote run (trainer): uploads `train.log` and `generations.jsonl`, each rewritten whole,
    /// and the TensorBoard event files that grew ([`ObjectRun::push_event_files`]).
    pub fn sync_logs_out(&self) -> Result<()> {
        let Some(r) = &self.remote else { return Ok(()) };
        for (rel, path) in [(LOG_FILE, self.log()), (GENERATIONS_LOG_FILE, self.generations_log())] {
            if let Ok(bytes) = std::fs::read(&path) {
                r.put(rel, &bytes)?;
            }
        }
        r.push_event_files(&self.tensorboard()).map(|_| ())
    }

    /// Remote run (trainer): makes the cache's `train.log` and `generations.jsonl` continue the
    /// store's copies: a cache copy that extends the store's is kept (this machine wrote them);
    /// one the store's extends is replaced by it; otherwise (a fresh cache holding only this
    /// process's first lines) the store's copy comes first, the cache's lines after it. The
    /// store's TensorBoard event files that the cache lacks are downloaded
    /// ([`ObjectRun::pull_event_files`]).
    pub fn sync_logs_in(&self) -> Result<()> {
        let Some(r) = &self.remote else { return Ok(()) };
        r.pull_event_files(&self.tensorboard())?;
        for (rel, path) in [(LOG_FILE, self.log()), (GENERATIONS_LOG_FILE, self.generations_log())] {
            let Some(stored) = r.get(rel)? else { continue };
            let local = std::fs::read(&path).unwrap_or_default();
            if local.starts_with(&stored) {
                continue;
            }
            let merged = if stored.starts_with(&local) { stored } else { [stored, local].concat() };
            renju_fs::write_atomic(&path, &merged)?;
        }
        Ok(())
    }

    /// Remote run: takes the one-trainer lease ([`crate::store::LEASE_SECONDS`]); an error names
    /// the trainer that holds it.
    pub fn take_trainer_lease(&self) -> Result<()> {
        self.remote.as_ref().map_or(Ok(()), |r| r.acquire_lease(&lease_owner()))
    }

    /// Remote run: renews the trainer lease when due; an error when another trainer took it.
    pub fn renew_trainer_lease(&self) -> Result<()> {
        self.remote.as_ref().map_or(Ok(()), |r| r.renew_lease(&lease_owner()))
    }

    /// Runs `work` while the trainer lease of a remote run is renewed when due
    /// ([`ObjectRun::with_lease_renewed`]): a gate match or an upload may outlast the lease.
    /// Returns `work`'s result, or an error when another trainer took the lease meanwhile. A
    /// local run just runs `work`.
    pub fn with_trainer_lease_renewed<T>(&self, work: impl FnOnce() -> T) -> Result<T> {
        match &self.remote {
            Some(r) => r.with_lease_renewed(&lease_owner(), work),
            None => Ok(work()),
        }
    }

    /// Remote run: gives the trainer lease up.
    pub fn release_trainer_lease(&self) -> Result<()> {
        self.remote.as_ref().map_or(Ok(()), |r| r.release_lease())
    }
    /// Checks that the directory is a run directory, as `renju-zero train` makes it: it exists and
    /// holds `config.toml`. For the commands that read a run without starting one. Errors say
    /// which is missing.
    pub fn ensure_is_run(&self) -> Result<()> {
        let dir = self.root.display();
        anyhow::ensure!(self.root.is_dir(), "{dir} is not a run directory: it does not exist");
        anyhow::ensure!(
            self.config().is_file(),
            "{dir} is not a run directory: it has no config.toml (runs are made by `renju-zero train`)"
        );
        Ok(())
    }

    /// `config.toml`: the config the run uses.
    pub fn config(&self) -> PathBuf {
        self.root.join("config.toml")
    }
    /// `selfplay/`: replay shards.
    pub fn selfplay(&self) -> PathBuf {
        self.root.join("selfplay")
    }
    /// `models/`: published generations.
    pub fn models(&self) -> PathBuf {
        self.root.join("models")
    }
    /// `checkpoints/`: training state for resuming.
    pub fn checkpoints(&self) -> PathBuf {
        self.root.join("checkpoints")
    }
    /// `candidates/`: models written for a gate match.
    pub fn candidates(&self) -> PathBuf {
        self.root.join("candidates")
    }
    /// `tensorboard/`: event files.
    pub fn tensorboard(&self) -> PathBuf {
        self.root.join(TENSORBOARD_DIR)
    }
    /// `train.log`: one summary line per generation and the run's notices.
    pub fn log(&self) -> PathBuf {
        self.root.join(LOG_FILE)
    }
    /// `generations.jsonl`: one JSON line per published generation.
    pub fn generations_log(&self) -> PathBuf {
        self.root.join(GENERATIONS_LOG_FILE)
    }

    /// `trainer.lock`: held by the one `train` / `trainer` process of the run.
    pub fn lock_file(&self) -> PathBuf {
        self.root.join("trainer.lock")
    }

    /// Takes the run's trainer lock (creating the run directory if needed) for as long as the
    /// returned guard lives. Errors: another trainer holds it (the message names it), or the
    /// directory or lock file cannot be created (named). See [`crate::runlock`].
    pub fn lock_trainer(&self) -> Result<RunLock> {
        std::fs::create_dir_all(&self.root)
            .with_context(|| format!("creating run directory {}", self.root.display()))?;
        RunLock::acquire(&self.lock_file())
    }

    /// The newest published generation and its directory under `models/`, if any. A remote
    /// run first downloads the generation the store's `LATEST` names, if the cache lacks it.
    pub fn latest_generation(&self) -> Result<Option<(u64, PathBuf)>> {
        if let Some(r) = &self.remote {
            if let Some(g) = r.latest_generation()? {
                r.pull_generation(g, &self.root)?;
            }
        }
        Ok(newest_generation(&self.models())?.map(|g| (g, self.generation(g))))
    }

    /// The directory of generation `g` under `models/` (present or not).
    pub fn generation(&self, g: u64) -> PathBuf {
        self.models().join(generation_dir_name(g))
    }

    /// Appends a line to `train.log`, stamped with the UTC time (RFC 3339) and the writing
    /// process ([`process_tag`]) on each of its lines, so a history written by several processes
    /// shows who wrote what.
    pub fn note(&self, line: &str) -> Result<()> {
        let now = humantime::format_rfc3339_seconds(std::time::SystemTime::now());
        let tag = process_tag();
        // A multi-line notice gets the stamp on every line.
        let stamped: Vec<String> = line.lines().map(|l| format!("[{now} {tag}] {l}")).collect();
        append_line(&self.log(), &stamped.join("\n"))
    }

    /// Finds what a kill can leave half-written: `*.tmp` shards in `selfplay/` and temporary
    /// generation or checkpoint directories. They are never read; this removes them and returns
    /// what it removed, so the caller can report it.
    ///
    /// `models/` and `checkpoints/` are written only by the trainer, which holds `trainer.lock`,
    /// so every partial file there is a dead writer's. `selfplay/` is shared with self-play
    /// processes that may be writing right now: a `*.tmp` shard there is removed only when its
    /// writer is known to be gone ([`partial_shard_is_stale`]).
    pub fn sweep_partial_files(&self) -> Result<Vec<PathBuf>> {
        let mut removed = Vec::new();
        let selfplay = self.selfplay();
        for dir in [selfplay.clone(), self.models(), self.checkpoints()] {
            let Ok(entries) = std::fs::read_dir(&dir) else { continue };
            for e in entries.flatten() {
                let p = e.path();
                let name = e.file_name().to_string_lossy().to_string();
                let partial = name.ends_with(".tmp") || name.starts_with(".tmp") || name.contains(".tmp-");
                if !partial || (dir == selfplay && !partial_shard_is_stale(&p, &host_tag(), PARTIAL_SHARD_GRACE)) {
                    continue;
                }
                if p.is_dir() {
                    std::fs::remove_dir_all(&p).with_context(|| format!("removing {}", p.display()))?;
                } else {
                    std::fs::remove_file(&p).with_context(|| format!("removing {}", p.display()))?;
                }
                removed.push(p);
            }
        }
        removed.sort();
        Ok(removed)
    }
}

/// How long a `*.tmp` shard of another machine (or of an unknown writer) must have been left
/// untouched before a sweep removes it. A shard is written in well under a second, so a file
/// this old has no live writer.
pub const PARTIAL_SHARD_GRACE: std::time::Duration = std::time::Duration::from_secs(600);

/// Whether the partial shard `path` (`<shard name>.tmp`, see [`ShardName`]) can no longer be
/// finished: written by process `pid` of this host (`host`, the writer id's tag) that no longer
/// runs, or, for any other writer, not modified for `grace`. A file that cannot be read is left
/// alone.
pub fn partial_shard_is_stale(path: &Path, host: &str, grace: std::time::Duration) -> bool {
    let name = path.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
    let shard = name.strip_suffix(".tmp").and_then(|n| ShardName::parse(n).ok());
    if let Some((h, pid)) = shard.as_ref().and_then(|s| s.writer_process()) {
        if h == host {
            if let Some(running) = is_running(pid) {
                return !running;
            }
        }
    }
    std::fs::metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.elapsed().ok())
        .is_some_and(|age| age >= grace)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, SystemTime};

    #[test]
    fn a_fresh_cache_continues_the_store_s_logs_and_resumes_its_newest_checkpoint() {
        use object_store::memory::InMemory;
        let d = tempfile::tempdir().unwrap();
        let store = Arc::new(ObjectRun::with_store("memory:///r", Arc::new(InMemory::new()), "r".into()).unwrap());
        let run = |cache: &str| RunDir { root: d.path().join(cache), remote: Some(store.clone()) };
        let (lost, fresh) = (run("lost"), run("fresh"));
        std::fs::create_dir_all(&lost.root).unwrap();
        std::fs::write(lost.log(), "lost 1\nlost 2\n").unwrap();
        std::fs::write(lost.generations_log(), "{\"generation\":1}\n").unwrap();
        let ckpt = lost.checkpoints().join("step-000000012");
        std::fs::create_dir_all(&ckpt).unwrap();
        std::fs::write(ckpt.join("state.json"), "{}").unwrap();
        lost.sync_checkpoint_out(&ckpt, 2).unwrap();
        // The fresh cache already holds its own first line; the store's come first.
        std::fs::create_dir_all(&fresh.root).unwrap();
        std::fs::write(fresh.log(), "fresh 1\n").unwrap();
        fresh.sync_logs_in().unwrap();
        assert_eq!(std::fs::read_to_string(fresh.log()).unwrap(), "lost 1\nlost 2\nfresh 1\n");
        assert_eq!(std::fs::read_to_string(fresh.generations_log()).unwrap(), "{\"generation\":1}\n");
        // Once the cache extends the store's copy it is kept as it is.
        fresh.sync_logs_in().unwrap();
        assert_eq!(std::fs::read_to_string(fresh.log()).unwrap(), "lost 1\nlost 2\nfresh 1\n");
        assert_eq!(fresh.sync_checkpoint_in().unwrap(), Some(12));
        assert_eq!(std::fs::read_to_string(fresh.checkpoints().join("LATEST")).unwrap(), "step-000000012\n");
        assert_eq!(fresh.sync_checkpoint_in().unwrap(), None, "the cache is as new as the store");
        // A local run exchanges nothing.
        assert_eq!(RunDir::new(&d.path().join("local")).sync_checkpoint_in().unwrap(), None);
    }

    #[test]
    fn tensorboard_files_go_up_when_they_grow_and_come_down_to_a_fresh_cache() {
        use object_store::memory::InMemory;
        let d = tempfile::tempdir().unwrap();
        let mem: Arc<dyn object_store::ObjectStore> = Arc::new(InMemory::new());
        let store = Arc::new(ObjectRun::with_store("memory:///r", mem.clone(), "r".into()).unwrap());
        let lost = RunDir { root: d.path().join("lost"), remote: Some(store.clone()) };
        std::fs::create_dir_all(lost.tensorboard()).unwrap();
        let events = lost.tensorboard().join("events.out.tfevents.1.host.7.0");
        std::fs::write(&events, b"step 1").unwrap();
        assert_eq!(store.push_event_files(&lost.tensorboard()).unwrap(), 1);
        assert_eq!(store.push_event_files(&lost.tensorboard()).unwrap(), 0, "unchanged: not uploaded again");
        std::fs::write(&events, b"step 1 step 2").unwrap();
        lost.sync_logs_out().unwrap();
        assert_eq!(store.get("tensorboard/events.out.tfevents.1.host.7.0").unwrap().unwrap(), b"step 1 step 2");
        // A trainer on a fresh cache (its own store handle) gets the earlier trainer's files
        // beside its own, which stays as it is.
        let store2 = Arc::new(ObjectRun::with_store("memory:///r", mem, "r".into()).unwrap());
        let fresh = RunDir { root: d.path().join("fresh"), remote: Some(store2.clone()) };
        std::fs::create_dir_all(fresh.tensorboard()).unwrap();
        std::fs::write(fresh.tensorboard().join("events.out.tfevents.2.host.8.0"), b"mine").unwrap();
        fresh.sync_logs_in().unwrap();
        assert_eq!(
            std::fs::read(fresh.tensorboard().join("events.out.tfevents.1.host.7.0")).unwrap(),
            b"step 1 step 2"
        );
        assert_eq!(std::fs::read(fresh.tensorboard().join("events.out.tfevents.2.host.8.0")).unwrap(), b"mine");
        assert_eq!(store2.push_event_files(&fresh.tensorboard()).unwrap(), 1, "only its own file goes up");
    }

    #[test]
    fn partial_shards_are_stale_only_when_their_writer_is_gone() {
        let dir = tempfile::tempdir().unwrap();
        let file = |name: &str, age_s: u64| {
            let p = dir.path().join(name);
            let f = std::fs::File::create(&p).unwrap();
            f.set_modified(SystemTime::now() - Duration::from_secs(age_s)).unwrap();
            p
        };
        let grace = Duration::from_secs(600);
        let me = std::process::id();
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        // This host: decided by whether the pid runs, whatever the age.
        assert!(!partial_shard_is_stale(&file(&format!("sp-h1-p{me}-5-000001.npz.tmp"), 7200), "h1", grace));
        assert!(partial_shard_is_stale(&file(&format!("sp-h1-p{dead}-5-000001.npz.tmp"), 0), "h1", grace));
        // Another host, or a name without a writer: by age.
        assert!(!partial_shard_is_stale(&file(&format!("sp-h2-p{dead}-5-000002.npz.tmp"), 60), "h1", grace));
        assert!(partial_shard_is_stale(&file(&format!("sp-h2-p{me}-5-000003.npz.tmp"), 601), "h1", grace));
        assert!(!partial_shard_is_stale(&file("odd.npz.tmp", 10), "h1", grace));
        assert!(partial_shard_is_stale(&file("odd2.npz.tmp", 3600), "h1", grace));
        // A file that is not there is never stale (nothing to remove).
        assert!(!partial_shard_is_stale(&dir.path().join("sp-h2-p1-1-1.npz.tmp"), "h1", grace));
    }
}
