//! Run directories on object storage (`--run s3://bucket/prefix`, `gs://`, `az://`, `file://`):
//! the object-store backend behind [`crate::RunDir`] (the local backend is the plain run
//! directory written through `renju-fs`).
//!
//! A remote run keeps the layout of [`crate::RunDir`] under the URL's prefix (`config.toml`,
//! `selfplay/*.npz`, `models/gen-NNNNNN/*`, `models/LATEST`) plus `models/gen-NNNNNN.manifest.json`
//! and `trainer-lease/`. Each process works in a local cache directory (the run directory its
//! code reads and writes as before) and exchanges whole objects with the store:
//! - a shard or model file is one PUT of the whole file: it appears whole or not at all; a PUT
//!   or multipart upload cut by a kill is never listed, so never read;
//! - objects of a published generation are created with a conditional put (`PutMode::Create`,
//!   `If-None-Match: *` on S3): a generation is never overwritten; its manifest
//!   (`models/gen-NNNNNN.manifest.json`: every file and its size) is written after every file,
//!   and `models/LATEST` after the manifest. Readers download only generations with a manifest,
//!   exactly the files it lists, sizes checked: an upload cut midway is never seen;
//! - self-play uploads its local shards (conditional create; a shard already there is done);
//! - the trainer lists `selfplay/` by prefix and downloads the shards its cache lacks; a shard
//!   that a lagging listing does not show yet is picked up by a later listing;
//! - one trainer per run: the lease is a sequence of records `trainer-lease/NNNNNNNNNNNN`
//!   (owner, expiry), the newest in force; taking it, taking over an expired one, renewing and
//!   giving it back each create the next record with a conditional put, so two trainers racing
//!   for it cannot both win, on every backend ([`LEASE_DIR`], [`LEASE_SECONDS`]).
//! - the trainer's state: each checkpoint goes up whole (`checkpoints/step-NNNNNNNNN/*`, then
//!   its manifest `checkpoints/step-NNNNNNNNN.manifest.json` created conditionally, then
//!   `checkpoints/LATEST`), the newest `keep_checkpoints` kept; a trainer on a fresh cache
//!   resumes from the newest one ([`ObjectRun::push_checkpoint`], [`ObjectRun::pull_checkpoint`]);
//!   `train.log` and `generations.jsonl` are rewritten whole, and each TensorBoard event file
//!   when it has grown ([`crate::RunDir::sync_logs_out`], [`ObjectRun::push_event_files`]).
//!
//! Credentials and endpoints come from the standard environment variables read by
//! `object_store`'s builders: `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_REGION`,
//! `AWS_ENDPOINT_URL` (or `AWS_ENDPOINT`), `AWS_ALLOW_HTTP=true` for a plain-HTTP endpoint;
//! `GOOGLE_SERVICE_ACCOUNT` / `GOOGLE_APPLICATION_CREDENTIALS`; `AZURE_STORAGE_ACCOUNT_NAME`,
//! `AZURE_STORAGE_ACCOUNT_KEY`. GCS and Azure need the `gcp` / `azure` cargo features.

use crate::generations::{
    generation_dir_name, latest_record, list_generations, parse_generation_dir_name, read_latest, write_latest,
    LATEST_FILE,
};
use crate::rundir::{checkpoint_dir_name, parse_checkpoint_dir_name, TENSORBOARD_DIR};
use anyhow::{anyhow, bail, ensure, Context, Result};
use object_store::path::Path as ObjPath;
use object_store::{ObjectStore, PutMode, PutOptions, PutPayload};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// How long a trainer's lease on a remote run lasts without renewal (seconds), unless
/// [`LEASE_SECONDS_ENV`] says otherwise; the trainer renews it every third of this.
pub const LEASE_SECONDS: u64 = 60;

/// The environment variable that sets the lease's duration in seconds instead of
/// [`LEASE_SECONDS`] (at least 3: the trainer renews every third).
pub const LEASE_SECONDS_ENV: &str = "RENJU_ZERO_LEASE_SECONDS";

/// The lease duration: [`LEASE_SECONDS_ENV`] when set, else [`LEASE_SECONDS`]. Errors name a
/// value that is not a whole number of seconds of at least 3.
fn lease_seconds_from_env() -> Result<u64> {
    let Some(v) = std::env::var_os(LEASE_SECONDS_ENV) else { return Ok(LEASE_SECONDS) };
    let v = v.to_string_lossy();
    match v.trim().parse::<u64>() {
        Ok(s) if s >= 3 => Ok(s),
        _ => bail!("{LEASE_SECONDS_ENV}={v:?}: the trainer lease needs a whole number of seconds, at least 3"),
    }
}

/// The directory of the lease records under the run's prefix: `trainer-lease/NNNNNNNNNNNN`,
/// one object per write of the lease (an epoch), the newest epoch the one in force.
pub const LEASE_DIR: &str = "trainer-lease";

/// Epochs below the newest that a lease write leaves in place (older ones it deletes). A writer
/// that listed the epochs before one was deleted and then recreates it still sees these newer
/// ones, so it knows it lost.
const LEASE_EPOCHS_KEPT: u64 = 3;

/// The object of lease epoch `epoch`.
fn lease_key(epoch: u64) -> String {
    format!("{LEASE_DIR}/{epoch:012}")
}

/// Whether `run` names a remote run (`scheme://...`) rather than a local directory.
pub fn is_remote(run: &str) -> bool {
    run.contains("://")
}

/// The local cache directory for the remote run `url`: `$RENJU_ZERO_CACHE` when set (one per
/// process that shares a machine), else `runs/remote/<host>/<prefix>`.
pub fn default_cache_dir(url: &str) -> PathBuf {
    if let Some(dir) = std::env::var_os("RENJU_ZERO_CACHE") {
        return PathBuf::from(dir);
    }
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let clean: String =
        rest.chars().map(|c| if c.is_ascii_alphanumeric() || "-_./".contains(c) { c } else { '_' }).collect();
    Path::new("runs/remote").join(clean.trim_matches('/').replace("..", "_"))
}

/// A run's objects in an object store: the store, the run's prefix in it, and a blocking
/// interface over `object_store`'s async one (its own small tokio runtime).
pub struct ObjectRun {
    url: String,
    store: Arc<dyn ObjectStore>,
    prefix: ObjPath,
    rt: tokio::runtime::Runtime,
    /// Shard names this process has uploaded (or found already uploaded).
    uploaded: Mutex<HashSet<String>>,
    /// The length of each TensorBoard event file as this process last uploaded or downloaded it.
    event_files: Mutex<HashMap<String, u64>>,
    /// The lease epoch this process last wrote, when, and for which owner, while it holds it.
    lease: Mutex<Option<(u64, SystemTime, String)>>,
    /// How long the lease lasts without renewal ([`LEASE_SECONDS`]).
    lease_seconds: u64,
    /// Writes allowed before every further one fails (an upload cut midway).
    #[cfg(test)]
    writes_left: Mutex<Option<usize>>,
}

impl std::fmt::Debug for ObjectRun {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ObjectRun({})", self.url)
    }
}

/// Generation `g`'s manifest object, `models/gen-NNNNNN.manifest.json`: written after every
/// file of the generation and before `LATEST`; a generation without it is not published.
pub fn manifest_object(g: u64) -> String {
    format!("models/{}.manifest.json", generation_dir_name(g))
}

/// A generation's manifest: its files and their sizes in bytes.
#[derive(serde::Serialize, serde::Deserialize, Debug)]
struct Manifest {
    generation: u64,
    files: BTreeMap<String, u64>,
}

/// The directory of checkpoints in the run, in the store as in a cache.
pub const CHECKPOINTS_DIR: &str = "checkpoints";

/// The manifest of the store's checkpoint at `step`, `checkpoints/step-NNNNNNNNN.manifest.json`:
/// written after every file of the checkpoint; a checkpoint without it does not exist.
pub fn checkpoint_manifest_object(step: u64) -> String {
    format!("{CHECKPOINTS_DIR}/{}.manifest.json", checkpoint_dir_name(step))
}

/// A checkpoint's manifest: its step, its files and their sizes in bytes.
#[derive(serde::Serialize, serde::Deserialize, Debug)]
struct CheckpointManifest {
    step: u64,
    files: BTreeMap<String, u64>,
}

/// The lease record of an epoch in [`LEASE_DIR`] (JSON).
#[derive(serde::Serialize, serde::Deserialize, Debug)]
struct Lease {
    owner: String,
    /// Seconds since the Unix epoch after which the lease may be taken over.
    expires: u64,
}

fn unix_now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// The retry policy for remote runs: a few quick retries, so that an unreachable endpoint fails
/// within seconds rather than after `object_store`'s default three minutes.
fn retry() -> object_store::RetryConfig {
    object_store::RetryConfig {
        max_retries: 3,
        retry_timeout: Duration::from_secs(20),
        backoff: object_store::BackoffConfig::default(),
    }
}

/// Builds the store for `url` (scheme `s3`, `gs`, `az`/`abfs`, `file`) from the environment.
fn build_store(url: &str) -> Result<(Arc<dyn ObjectStore>, ObjPath)> {
    let parsed = url::Url::parse(url).with_context(|| format!("{url}: not a valid URL"))?;
    let (scheme, path) = object_store::ObjectStoreScheme::parse(&parsed)
        .map_err(|e| anyhow!("{url}: not a storage URL (s3://, gs://, az://, file://): {e}"))?;
    let prefix = ObjPath::parse(path.as_ref()).map_err(|e| anyhow!("{url}: bad path: {e}"))?;
    use object_store::ObjectStoreScheme as S;
    let store: Arc<dyn ObjectStore> = match scheme {
        S::AmazonS3 => Arc::new(
            object_store::aws::AmazonS3Builder::from_env()
                .with_url(url)
                .with_retry(retry())
                .build()
                .map_err(|e| anyhow!("{url}: cannot configure S3: {e}"))?,
        ),
        S::Local => {
            let dir = parsed.to_file_path().map_err(|_| anyhow!("{url}: not a local path"))?;
            std::fs::metadata(&dir).with_context(|| format!("{url}: the directory {} is missing", dir.display()))?;
            return Ok((Arc::new(object_store::local::LocalFileSystem::new_with_prefix(dir)?), ObjPath::default()));
        }
        #[cfg(feature = "gcp")]
        S::GoogleCloudStorage => Arc::new(
            object_store::gcp::GoogleCloudStorageBuilder::from_env()
                .with_url(url)
                .with_retry(retry())
                .build()
                .map_err(|e| anyhow!("{url}: cannot configure GCS: {e}"))?,
        ),
        #[cfg(feature = "azure")]
        S::MicrosoftAzure => Arc::new(
            object_store::azure::MicrosoftAzureBuilder::from_env()
                .with_url(url)
                .with_retry(retry())
                .build()
                .map_err(|e| anyhow!("{url}: cannot configure Azure: {e}"))?,
        ),
        other => bail!("{url}: {other:?} storage is not built in (GCS and Azure need the `gcp` / `azure` features)"),
    };
    Ok((store, prefix))
}

impl ObjectRun {
    /// Opens the remote run at `url` and checks that the store answers (a listing of the
    /// prefix). Errors (unreachable endpoint, missing bucket, bad credentials) name the URL and
    /// what failed; nothing is written.
    pub fn open(url: &str) -> Result<ObjectRun> {
        let (store, prefix) = build_store(url)?;
        let run = ObjectRun::with_store(url, store, prefix)?;
        run.rt
            .block_on(run.store.list_with_delimiter(Some(&run.prefix)))
            .map_err(|e| anyhow!("{url}: the store did not answer a listing of the run's prefix: {e}"))?;
        Ok(run)
    }

    /// The run under `prefix` in an existing `store` (tests use `object_store`'s `InMemory`).
    pub fn with_store(url: &str, store: Arc<dyn ObjectStore>, prefix: ObjPath) -> Result<ObjectRun> {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .context("starting the object-store runtime")?;
        Ok(ObjectRun {
            url: url.trim_end_matches('/').to_string(),
            store,
            prefix,
            rt,
            uploaded: Mutex::default(),
            event_files: Mutex::default(),
            lease: Mutex::default(),
            lease_seconds: lease_seconds_from_env()?,
            #[cfg(test)]
            writes_left: Mutex::default(),
        })
    }

    /// The run's URL.
    pub fn url(&self) -> &str {
        &self.url
    }

    fn key(&self, rel: &str) -> ObjPath {
        rel.split('/').filter(|p| !p.is_empty()).fold(self.prefix.clone(), |p, part| p.child(part))
    }

    /// The object `rel` (a path relative to the run), or `None` when it does not exist.
    pub fn get(&self, rel: &str) -> Result<Option<Vec<u8>>> {
        let key = self.key(rel);
        self.rt
            .block_on(async {
                match self.store.get(&key).await {
                    Ok(r) => Ok(Some(r.bytes().await?.to_vec())),
                    Err(object_store::Error::NotFound { .. }) => Ok(None),
                    Err(e) => Err(e),
                }
            })
            .map_err(|e| anyhow!("{}/{rel}: reading failed: {e}", self.url))
    }

    /// Writes `rel` whole, replacing what is there (`models/LATEST`, a forced `config.toml`).
    pub fn put(&self, rel: &str, bytes: &[u8]) -> Result<()> {
        self.cut_for_test(rel)?;
        let key = self.key(rel);
        self.rt
            .block_on(self.store.put(&key, PutPayload::from(bytes.to_vec())))
            .map(|_| ())
            .map_err(|e| anyhow!("{}/{rel}: writing failed: {e}", self.url))
    }

    /// Creates `rel` whole unless it exists (conditional put: `PutMode::Create`). Returns
    /// `false` when it existed.
    pub fn create(&self, rel: &str, bytes: &[u8]) -> Result<bool> {
        self.cut_for_test(rel)?;
        let key = self.key(rel);
        let opts = PutOptions { mode: PutMode::Create, ..PutOptions::default() };
        match self.rt.block_on(self.store.put_opts(&key, PutPayload::from(bytes.to_vec()), opts)) {
            Ok(_) => Ok(true),
            Err(object_store::Error::AlreadyExists { .. } | object_store::Error::Precondition { .. }) => Ok(false),
            Err(e) => Err(anyhow!("{}/{rel}: conditional write failed: {e}", self.url)),
        }
    }

    /// Fails the write of `rel` once the writes a test allowed are spent.
    #[cfg(test)]
    fn cut_for_test(&self, rel: &str) -> Result<()> {
        match self.writes_left.lock().unwrap().as_mut() {
            Some(0) => bail!("{}/{rel}: upload cut", self.url),
            Some(n) => *n -= 1,
            None => {}
        }
        Ok(())
    }

    #[cfg(not(test))]
    fn cut_for_test(&self, _rel: &str) -> Result<()> {
        Ok(())
    }

    /// The names of the objects directly under the directory `rel` (`""`: the run's root).
    pub fn list(&self, rel: &str) -> Result<Vec<String>> {
        let key = self.key(rel);
        let listed = self
            .rt
            .block_on(self.store.list_with_delimiter(Some(&key)))
            .map_err(|e| anyhow!("{}/{rel}: listing failed: {e}", self.url))?;
        let mut names: Vec<String> =
            listed.objects.iter().filter_map(|m| m.location.filename().map(String::from)).collect();
        names.sort();
        Ok(names)
    }

    /// The newest published generation according to `models/LATEST`, if any.
    pub fn latest_generation(&self) -> Result<Option<u64>> {
        let Some(bytes) = self.get(&format!("models/{LATEST_FILE}"))? else { return Ok(None) };
        let text = String::from_utf8_lossy(&bytes);
        let g = parse_generation_dir_name(text.trim());
        g.map(Some)
            .ok_or_else(|| anyhow!("{}/models/{LATEST_FILE}: not a generation name: {:?}", self.url, text.trim()))
    }

    /// The newest generation whose manifest is in the store: published whole, even when a kill
    /// came before `models/LATEST` was moved to it (then newer than [`Self::latest_generation`]).
    pub fn newest_manifest_generation(&self) -> Result<Option<u64>> {
        Ok(self
            .list("models")?
            .iter()
            .filter_map(|n| parse_generation_dir_name(n.strip_suffix(".manifest.json")?))
            .max())
    }

    /// Downloads generation `g` into `models/` of the local run directory `local` unless it is
    /// there, then points the local `LATEST` at it. Only a generation whose manifest
    /// ([`manifest_object`]) is in the store is downloaded, exactly the files it lists, each
    /// checked against its size; the files go into a temporary directory published whole
    /// ([`renju_fs::publish_dir`]). Errors: no manifest (an upload cut midway: the generation is
    /// not published), a listed file missing or of another size.
    pub fn pull_generation(&self, g: u64, local: &Path) -> Result<()> {
        let name = generation_dir_name(g);
        let models = local.join("models");
        let dest = models.join(&name);
        if !dest.exists() {
            let manifest = manifest_object(g);
            let bytes = self.get(&manifest)?.with_context(|| {
                format!(
                    "{}/{manifest} is missing: the upload of {name} is incomplete, so it is not published",
                    self.url
                )
            })?;
            let m: Manifest = serde_json::from_slice(&bytes)
                .with_context(|| format!("{}/{manifest}: not a generation manifest", self.url))?;
            ensure!(
                m.generation == g && !m.files.is_empty(),
                "{}/{manifest}: names generation {} with {} files",
                self.url,
                m.generation,
                m.files.len()
            );
            self.download_dir(&format!("models/{name}"), &manifest, &m.files, &dest)?;
        }
        if read_latest(&models).ok().flatten() == Some(name) {
            return Ok(());
        }
        write_latest(&models, g)
    }

    /// Downloads the files `files` (name and size) of the store's directory `remote` into a
    /// temporary directory next to `dest`, each checked against its size, and publishes it whole
    /// as `dest` ([`renju_fs::publish_dir`]). `manifest` is the object that lists them (named in
    /// errors). A `dest` that appeared meanwhile is kept.
    fn download_dir(&self, remote: &str, manifest: &str, files: &BTreeMap<String, u64>, dest: &Path) -> Result<()> {
        let parent = dest.parent().context("a download destination has a parent directory")?;
        let name = dest.file_name().unwrap_or_default().to_string_lossy();
        let tmp = parent.join(format!(".tmp-{name}-{}", std::process::id()));
        if tmp.exists() {
            std::fs::remove_dir_all(&tmp).with_context(|| format!("removing {}", tmp.display()))?;
        }
        std::fs::create_dir_all(&tmp).with_context(|| format!("creating {}", tmp.display()))?;
        let fetched = files.iter().try_for_each(|(f, &size)| {
            ensure!(!f.contains('/') && f != "..", "{}/{manifest}: bad file name {f:?}", self.url);
            let rel = format!("{remote}/{f}");
            let bytes = self.get(&rel)?.with_context(|| format!("{}/{rel} is missing", self.url))?;
            ensure!(bytes.len() as u64 == size, "{}/{rel}: {} bytes, its manifest says {size}", self.url, bytes.len());
            std::fs::write(tmp.join(f), bytes).with_context(|| format!("writing {}", tmp.join(f).display()))
        });
        if let Err(e) = fetched.and_then(|_| renju_fs::publish_dir(&tmp, dest)) {
            let _ = std::fs::remove_dir_all(&tmp);
            if !dest.exists() {
                return Err(e);
            }
        }
        Ok(())
    }

    /// The steps of the checkpoints in the store (those with a manifest,
    /// [`checkpoint_manifest_object`]), ascending.
    pub fn checkpoint_steps(&self) -> Result<Vec<u64>> {
        let mut steps: Vec<u64> = self
            .list(CHECKPOINTS_DIR)?
            .iter()
            .filter_map(|n| parse_checkpoint_dir_name(n.strip_suffix(".manifest.json")?))
            .collect();
        steps.sort_unstable();
        Ok(steps)
    }

    /// Uploads the local checkpoint directory `dir` (`checkpoints/step-NNNNNNNNN/`) unless the
    /// store has that checkpoint already (its manifest): each file whole, then its manifest with a
    /// conditional create, then `checkpoints/LATEST` (informative: a resume takes the newest
    /// manifest). A file left by an upload cut midway (no manifest lists it, so nothing reads it)
    /// is replaced. Then deletes the store's checkpoints older than the newest `keep` (manifest
    /// first). Returns whether it uploaded.
    pub fn push_checkpoint(&self, dir: &Path, keep: usize) -> Result<bool> {
        let name = dir.file_name().unwrap_or_default().to_string_lossy().into_owned();
        let step = parse_checkpoint_dir_name(&name)
            .with_context(|| format!("{}: not a checkpoint directory (step-NNNNNNNNN)", dir.display()))?;
        let manifest = checkpoint_manifest_object(step);
        if self.get(&manifest)?.is_some() {
            return Ok(false);
        }
        let mut files = BTreeMap::new();
        let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
            .with_context(|| format!("reading {}", dir.display()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_file())
            .collect();
        paths.sort();
        for p in paths {
            let fname = p.file_name().unwrap_or_default().to_string_lossy().into_owned();
            let bytes = std::fs::read(&p).with_context(|| format!("reading {}", p.display()))?;
            let rel = format!("{CHECKPOINTS_DIR}/{name}/{fname}");
            if !self.create(&rel, &bytes)? && self.get(&rel)?.as_deref() != Some(&bytes[..]) {
                self.put(&rel, &bytes)?;
            }
            files.insert(fname, bytes.len() as u64);
        }
        ensure!(!files.is_empty(), "{}: an empty checkpoint directory", dir.display());
        let record = serde_json::to_vec_pretty(&CheckpointManifest { step, files })?;
        if !self.create(&manifest, &record)? {
            return Ok(false);
        }
        self.put(&format!("{CHECKPOINTS_DIR}/{LATEST_FILE}"), format!("{name}\n").as_bytes())?;
        let steps = self.checkpoint_steps()?;
        let stale = steps.len().saturating_sub(keep.max(1));
        for old in steps.into_iter().take(stale) {
            let old_name = checkpoint_dir_name(old);
            self.delete(&checkpoint_manifest_object(old))?;
            for f in self.list(&format!("{CHECKPOINTS_DIR}/{old_name}"))? {
                self.delete(&format!("{CHECKPOINTS_DIR}/{old_name}/{f}"))?;
            }
        }
        Ok(true)
    }

    /// Downloads the store's checkpoint at `step` into `checkpoints/step-NNNNNNNNN/` of the
    /// local run directory `local` unless it is there (exactly the files its manifest lists,
    /// sizes checked, published whole). Returns its local directory.
    pub fn pull_checkpoint(&self, step: u64, local: &Path) -> Result<PathBuf> {
        let name = checkpoint_dir_name(step);
        let dest = local.join(CHECKPOINTS_DIR).join(&name);
        if !dest.exists() {
            let manifest = checkpoint_manifest_object(step);
            let bytes = self.get(&manifest)?.with_context(|| format!("{}/{manifest} is missing", self.url))?;
            let m: CheckpointManifest = serde_json::from_slice(&bytes)
                .with_context(|| format!("{}/{manifest}: not a checkpoint manifest", self.url))?;
            ensure!(
                m.step == step && !m.files.is_empty(),
                "{}/{manifest}: names step {} with {} files",
                self.url,
                m.step,
                m.files.len()
            );
            self.download_dir(&format!("{CHECKPOINTS_DIR}/{name}"), &manifest, &m.files, &dest)?;
        }
        Ok(dest)
    }

    /// Deletes the object `rel` (one that is not there is no error).
    fn delete(&self, rel: &str) -> Result<()> {
        match self.rt.block_on(self.store.delete(&self.key(rel))) {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(anyhow!("{}/{rel}: deleting failed: {e}", self.url)),
        }
    }

    /// Uploads every local generation of `local/models/` newer than the store's `LATEST`: each
    /// file with a conditional create, then its manifest ([`manifest_object`]), then `LATEST`.
    /// A file or manifest already in the store with other bytes means another trainer published
    /// that generation: an error, nothing overwritten. An upload cut midway leaves objects that
    /// no manifest lists; the next push completes it.
    pub fn push_generations(&self, local: &Path) -> Result<()> {
        let models = local.join("models");
        let remote = self.latest_generation()?;
        for g in list_generations(&models)? {
            if remote.is_some_and(|r| g <= r) {
                continue;
            }
            let name = generation_dir_name(g);
            let mut files: Vec<PathBuf> = std::fs::read_dir(models.join(&name))
                .with_context(|| format!("reading {}", models.join(&name).display()))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.is_file())
                .collect();
            files.sort();
            let mut manifest = Manifest { generation: g, files: BTreeMap::new() };
            for f in files {
                let fname = f.file_name().unwrap_or_default().to_string_lossy().into_owned();
                let bytes = std::fs::read(&f).with_context(|| format!("reading {}", f.display()))?;
                self.create_or_match(&format!("models/{name}/{fname}"), &bytes, g)?;
                manifest.files.insert(fname, bytes.len() as u64);
            }
            self.create_or_match(&manifest_object(g), &serde_json::to_vec_pretty(&manifest)?, g)?;
            self.put(&format!("models/{LATEST_FILE}"), latest_record(g).as_bytes())?;
        }
        Ok(())
    }

    /// Creates `rel` (an object of generation `g`) unless the store has it with these bytes.
    fn create_or_match(&self, rel: &str, bytes: &[u8], g: u64) -> Result<()> {
        if !self.create(rel, bytes)? && self.get(rel)?.as_deref() != Some(bytes) {
            bail!("{}/{rel} already exists with other contents: another trainer published generation {g}; refusing to overwrite it", self.url);
        }
        Ok(())
    }

    /// Uploads the shards of the local `selfplay` directory not uploaded yet (conditional
    /// create: one whole PUT each). Returns how many were new in the store.
    pub fn push_shards(&self, selfplay: &Path) -> Result<usize> {
        let mut new = 0;
        let Ok(shards) = renju_selfplay::record::list_shards(selfplay) else { return Ok(0) };
        for p in shards {
            let name = p.file_name().unwrap_or_default().to_string_lossy().into_owned();
            if self.uploaded.lock().unwrap().contains(&name) {
                continue;
            }
            let bytes = std::fs::read(&p).with_context(|| format!("reading {}", p.display()))?;
            if self.create(&format!("selfplay/{name}"), &bytes)? {
                new += 1;
            }
            self.uploaded.lock().unwrap().insert(name);
        }
        Ok(new)
    }

    /// Downloads the store's shards that the local `selfplay` directory (and its `rejected/`)
    /// lacks. Returns how many it downloaded.
    pub fn pull_shards(&self, selfplay: &Path) -> Result<usize> {
        let mut new = 0;
        for name in self.list("selfplay")? {
            if !name.ends_with(".npz")
                || selfplay.join(&name).exists()
                || selfplay.join("rejected").join(&name).exists()
            {
                continue;
            }
            if let Some(bytes) = self.get(&format!("selfplay/{name}"))? {
                renju_fs::write_atomic(&selfplay.join(&name), &bytes)?;
                new += 1;
            }
        }
        Ok(new)
    }

    /// Uploads the TensorBoard event files of the local `dir` whose length differs from what this
    /// process last uploaded, each rewritten whole under `tensorboard/` (an event file only grows,
    /// and each trainer process writes its own). Returns how many it uploaded.
    pub fn push_event_files(&self, dir: &Path) -> Result<usize> {
        let Ok(entries) = std::fs::read_dir(dir) else { return Ok(0) };
        let mut files: Vec<PathBuf> = entries.flatten().map(|e| e.path()).filter(|p| p.is_file()).collect();
        files.sort();
        let mut new = 0;
        for p in files {
            let name = p.file_name().unwrap_or_default().to_string_lossy().into_owned();
            let len = std::fs::metadata(&p).with_context(|| format!("reading {}", p.display()))?.len();
            if self.event_files.lock().unwrap().get(&name) == Some(&len) {
                continue;
            }
            let bytes = std::fs::read(&p).with_context(|| format!("reading {}", p.display()))?;
            self.put(&format!("{TENSORBOARD_DIR}/{name}"), &bytes)?;
            self.event_files.lock().unwrap().insert(name, bytes.len() as u64);
            new += 1;
        }
        Ok(new)
    }

    /// Downloads the store's TensorBoard event files that the local `dir` lacks (those of the
    /// run's earlier trainers), so that TensorBoard on the cache shows the whole run. Returns
    /// how many it downloaded.
    pub fn pull_event_files(&self, dir: &Path) -> Result<usize> {
        let mut new = 0;
        let names = self.list(TENSORBOARD_DIR)?;
        if !names.is_empty() {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        }
        for name in names {
            if dir.join(&name).exists() {
                continue;
            }
            if let Some(bytes) = self.get(&format!("{TENSORBOARD_DIR}/{name}"))? {
                renju_fs::write_atomic(&dir.join(&name), &bytes)?;
                self.event_files.lock().unwrap().insert(name, bytes.len() as u64);
                new += 1;
            }
        }
        Ok(new)
    }

    /// The lease epochs in the store, ascending.
    fn lease_epochs(&self) -> Result<Vec<u64>> {
        let mut epochs: Vec<u64> = self.list(LEASE_DIR)?.iter().filter_map(|n| n.parse().ok()).collect();
        epochs.sort_unstable();
        Ok(epochs)
    }

    /// The newest lease epoch and its record (`None` for an unreadable one: a lease anyone may
    /// take over), or `None` when no lease was ever written.
    fn newest_lease(&self) -> Result<Option<(u64, Option<Lease>)>> {
        let Some(&epoch) = self.lease_epochs()?.last() else { return Ok(None) };
        let record = self.get(&lease_key(epoch))?.and_then(|b| serde_json::from_slice::<Lease>(&b).ok());
        Ok(Some((epoch, record)))
    }

    /// The trainer holding the run and until when (seconds since the Unix epoch), or `None` when
    /// the lease is free (never taken, given back or expired).
    pub fn lease_holder(&self) -> Result<Option<(String, u64)>> {
        Ok(self.newest_lease()?.and_then(|(_, l)| l).filter(|l| l.expires > unix_now()).map(|l| (l.owner, l.expires)))
    }

    /// Takes the one-trainer lease for `owner`: writes the next lease epoch when the newest one
    /// is free (none, given back, expired) or `owner`'s own (a renewal). The write is a
    /// conditional create of the new epoch's object, so of trainers racing for the same epoch
    /// exactly one wins, on every backend (`file://` included); no record is ever replaced or
    /// deleted while it may be in force. An unexpired lease of another owner is an error naming
    /// it and its expiry; losing a race is an error too.
    pub fn acquire_lease(&self, owner: &str) -> Result<()> {
        let newest = self.newest_lease()?;
        if let Some(l) = newest.as_ref().and_then(|(_, l)| l.as_ref()) {
            if l.owner != owner && l.expires > unix_now() {
                bail!(
                    "{}: another trainer holds the run ({}) until {}; only one trainer may run on a run",
                    self.url,
                    l.owner,
                    humantime::format_rfc3339_seconds(UNIX_EPOCH + Duration::from_secs(l.expires))
                );
            }
        }
        let epoch = newest.map_or(0, |(e, _)| e + 1);
        if !self.write_lease_epoch(epoch, owner, unix_now() + self.lease_seconds)? {
            bail!("{}: another trainer took the lease at the same time", self.url);
        }
        *self.lease.lock().unwrap() = Some((epoch, SystemTime::now(), owner.to_string()));
        Ok(())
    }

    /// Creates lease epoch `epoch` for `owner` until `expires`, then deletes the epochs more
    /// than [`LEASE_EPOCHS_KEPT`] below it. Returns `false` when another writer created it
    /// first, or when a newer epoch exists (this writer recreated a deleted one from a stale
    /// listing).
    fn write_lease_epoch(&self, epoch: u64, owner: &str, expires: u64) -> Result<bool> {
        let record = serde_json::to_vec(&Lease { owner: owner.into(), expires })?;
        if !self.create(&lease_key(epoch), &record)? {
            return Ok(false);
        }
        let epochs = self.lease_epochs()?;
        if epochs.last().is_some_and(|&newest| newest > epoch) {
            self.rt.block_on(self.store.delete(&self.key(&lease_key(epoch)))).ok();
            return Ok(false);
        }
        for old in epochs.into_iter().filter(|&e| e + LEASE_EPOCHS_KEPT < epoch) {
            // A record left behind is harmless: only the newest epoch is in force.
            self.rt.block_on(self.store.delete(&self.key(&lease_key(old)))).ok();
        }
        Ok(true)
    }

    /// Renews the lease held by `owner` when a third of its duration ([`LEASE_SECONDS`]) has
    /// passed since it was last written. Errors when another trainer has taken it over.
    pub fn renew_lease(&self, owner: &str) -> Result<()> {
        let due = self
            .lease
            .lock()
            .unwrap()
            .as_ref()
            .is_none_or(|(_, t, _)| t.elapsed().unwrap_or_default().as_secs() >= self.lease_seconds / 3);
        if due {
            self.acquire_lease(owner).with_context(|| format!("{}: renewing the trainer lease", self.url))?;
        }
        Ok(())
    }

    /// Runs `work` (a gate match, anything that may outlast the lease) while a second thread
    /// renews `owner`'s lease when due ([`ObjectRun::renew_lease`], checked six times per lease
    /// duration). Returns `work`'s result, or the renewal's error when another trainer took the
    /// lease meanwhile (`work` still runs to its end).
    pub fn with_lease_renewed<T>(&self, owner: &str, work: impl FnOnce() -> T) -> Result<T> {
        let every = Duration::from_millis(self.lease_seconds * 1000 / 6);
        let (done, wait) = std::sync::mpsc::channel::<()>();
        std::thread::scope(|s| {
            let renewer = s.spawn(move || loop {
                match wait.recv_timeout(every) {
                    Err(std::sync::mpsc::RecvTimeoutError::Timeout) => self.renew_lease(owner)?,
                    _ => return Ok(()),
                }
            });
            let out = work();
            drop(done);
            let renewed: Result<()> = renewer.join().unwrap_or_else(|_| Err(anyhow!("the lease renewer panicked")));
            renewed.map(|_| out)
        })
    }

    /// Gives the lease up if this process holds it: writes the next epoch as a record that has
    /// already expired (conditional like every lease write; when another trainer wrote since,
    /// the lease was no longer this process's and nothing is written).
    pub fn release_lease(&self) -> Result<()> {
        if let Some((epoch, _, owner)) = self.lease.lock().unwrap().take() {
            self.write_lease_epoch(epoch + 1, &owner, 0)
                .with_context(|| format!("{}: giving the trainer lease back", self.url))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use object_store::memory::InMemory;

    fn memory_run() -> ObjectRun {
        ObjectRun::with_store("memory:///r", Arc::new(InMemory::new()), ObjPath::from("r")).unwrap()
    }

    #[test]
    fn create_never_overwrites_and_list_shows_only_direct_children() {
        let r = memory_run();
        assert!(r.create("models/gen-000001/a", b"one").unwrap());
        assert!(!r.create("models/gen-000001/a", b"two").unwrap());
        assert_eq!(r.get("models/gen-000001/a").unwrap().unwrap(), b"one");
        r.put("models/LATEST", b"gen-000001\n").unwrap();
        assert_eq!(r.list("models").unwrap(), vec!["LATEST"]);
        assert_eq!(r.latest_generation().unwrap(), Some(1));
        assert_eq!(r.get("missing").unwrap(), None);
    }

    #[test]
    fn a_second_trainer_is_refused_until_the_lease_expires() {
        let r = memory_run();
        r.acquire_lease("a").unwrap();
        r.acquire_lease("a").unwrap(); // renewal by its holder
        let e = r.acquire_lease("b").unwrap_err();
        assert!(format!("{e:#}").contains("another trainer holds the run (a)"), "{e:#}");
        expire_lease(&r, "a");
        r.acquire_lease("b").unwrap();
        assert_eq!(r.lease_holder().unwrap().map(|(o, _)| o).as_deref(), Some("b"));
        r.release_lease().unwrap();
        assert_eq!(r.lease_holder().unwrap(), None);
    }

    /// Writes the lease `owner` holds on `run` again as expired.
    fn expire_lease(run: &ObjectRun, owner: &str) {
        let (epoch, _) = run.newest_lease().unwrap().unwrap();
        assert!(run.write_lease_epoch(epoch + 1, owner, unix_now() - 1).unwrap());
    }

    /// A `file://` run over the directory `dir`.
    fn file_run(dir: &Path) -> ObjectRun {
        let url = url::Url::from_directory_path(dir).unwrap().to_string();
        ObjectRun::open(&url).unwrap()
    }

    #[test]
    fn two_trainers_racing_to_take_over_an_expired_file_lease_cannot_both_win() {
        let d = tempfile::tempdir().unwrap();
        let runs = [file_run(d.path()), file_run(d.path()), file_run(d.path())];
        for round in 0..40 {
            // An expired lease of a vanished trainer.
            let old = format!("old-{round}");
            runs[2].acquire_lease(&old).unwrap();
            expire_lease(&runs[2], &old);
            let barrier = std::sync::Barrier::new(2);
            let won: Vec<bool> = std::thread::scope(|s| {
                let racers: Vec<_> = (0..2)
                    .map(|i| {
                        let (run, barrier) = (&runs[i], &barrier);
                        s.spawn(move || {
                            barrier.wait();
                            run.acquire_lease(&format!("t{i}")).is_ok()
                        })
                    })
                    .collect();
                racers.into_iter().map(|h| h.join().unwrap()).collect()
            });
            assert_eq!(won.iter().filter(|&&w| w).count(), 1, "round {round}: winners {won:?}");
            let winner = won.iter().position(|&w| w).unwrap();
            // The loser is refused while the winner holds it; the winner renews it.
            assert!(runs[1 - winner].acquire_lease(&format!("t{}", 1 - winner)).is_err());
            runs[winner].acquire_lease(&format!("t{winner}")).unwrap();
            runs[winner].release_lease().unwrap();
            runs[2].lease.lock().unwrap().take();
        }
    }

    #[test]
    fn a_lease_write_from_a_stale_listing_loses() {
        let r = memory_run();
        for _ in 0..6 {
            r.acquire_lease("a").unwrap(); // epochs 0..=5; 0 and 1 deleted
        }
        assert_eq!(r.lease_epochs().unwrap(), vec![2, 3, 4, 5]);
        // A trainer that listed epoch 0 as the newest creates epoch 1 again: a newer one exists.
        assert!(!r.write_lease_epoch(1, "b", unix_now() + 60).unwrap());
        assert_eq!(r.lease_epochs().unwrap(), vec![2, 3, 4, 5]);
        assert_eq!(r.lease_holder().unwrap().map(|(o, _)| o).as_deref(), Some("a"));
        // Racing for an existing epoch loses too.
        assert!(!r.write_lease_epoch(5, "b", unix_now() + 60).unwrap());
    }

    #[test]
    fn an_upload_cut_midway_is_never_visible_and_a_retry_completes_it() {
        let d = tempfile::tempdir().unwrap();
        let store = d.path().join("store");
        std::fs::create_dir(&store).unwrap();
        let (cache, other) = (d.path().join("cache"), d.path().join("other"));
        let files = ["config.json", "model.pt", "model.safetensors"];
        let publish = |g: u64| {
            crate::generations::publish_generation(&cache.join("models"), g, |tmp| {
                files.iter().try_for_each(|f| Ok(std::fs::write(tmp.join(f), format!("{f} of {g}"))?))
            })
            .unwrap()
        };
        let writer = file_run(&store);
        publish(0);
        writer.push_generations(&cache).unwrap();
        publish(1);
        // Two files of generation 1 reach the store, then the upload is cut.
        *writer.writes_left.lock().unwrap() = Some(2);
        assert!(writer.push_generations(&cache).is_err());
        let reader = file_run(&store);
        assert_eq!(reader.latest_generation().unwrap(), Some(0));
        assert_eq!(reader.newest_manifest_generation().unwrap(), Some(0));
        let e = reader.pull_generation(1, &other).unwrap_err();
        assert!(format!("{e:#}").contains("gen-000001"), "{e:#}");
        assert!(!other.join("models/gen-000001").exists(), "a partial generation reached a cache");
        // A shard upload cut before its object was written, and one cut inside the put (the
        // staging file `object_store` leaves for `file://`), are not there to read.
        let selfplay = cache.join("selfplay");
        std::fs::create_dir_all(&selfplay).unwrap();
        std::fs::write(selfplay.join("sp-a.npz"), b"shard").unwrap();
        *writer.writes_left.lock().unwrap() = Some(0);
        assert!(writer.push_shards(&selfplay).is_err());
        std::fs::create_dir_all(store.join("selfplay")).unwrap();
        std::fs::write(store.join("selfplay/sp-b.npz#1"), b"sha").unwrap();
        assert_eq!(reader.pull_shards(&other.join("selfplay")).unwrap(), 0);
        // The retry completes both.
        *writer.writes_left.lock().unwrap() = None;
        writer.push_generations(&cache).unwrap();
        assert_eq!(writer.push_shards(&selfplay).unwrap(), 1);
        assert_eq!(reader.latest_generation().unwrap(), Some(1));
        assert_eq!(reader.newest_manifest_generation().unwrap(), Some(1));
        reader.pull_generation(1, &other).unwrap();
        for f in files {
            assert_eq!(std::fs::read_to_string(other.join("models/gen-000001").join(f)).unwrap(), format!("{f} of 1"));
        }
        assert_eq!(reader.pull_shards(&other.join("selfplay")).unwrap(), 1);
    }

    #[test]
    fn checkpoints_go_up_whole_once_and_only_the_newest_are_kept() {
        let r = memory_run();
        let d = tempfile::tempdir().unwrap();
        let (cache, fresh) = (d.path().join("cache"), d.path().join("fresh"));
        let write = |step: u64, bytes: &str| {
            let dir = cache.join(CHECKPOINTS_DIR).join(checkpoint_dir_name(step));
            std::fs::create_dir_all(&dir).unwrap();
            for f in ["model.safetensors", "state.json"] {
                std::fs::write(dir.join(f), format!("{f} {bytes}")).unwrap();
            }
            dir
        };
        assert_eq!(r.checkpoint_steps().unwrap(), Vec::<u64>::new());
        // An upload cut after one file: no manifest, so no checkpoint; the retry, with other
        // bytes, replaces the leftover.
        let dir = write(8, "of a lost trainer");
        *r.writes_left.lock().unwrap() = Some(1);
        assert!(r.push_checkpoint(&dir, 2).is_err());
        assert_eq!(r.checkpoint_steps().unwrap(), Vec::<u64>::new());
        *r.writes_left.lock().unwrap() = None;
        let dir = write(8, "at step 8");
        assert!(r.push_checkpoint(&dir, 2).unwrap());
        assert!(!r.push_checkpoint(&dir, 2).unwrap(), "a checkpoint is written once");
        for step in [16, 24] {
            assert!(r.push_checkpoint(&write(step, &format!("at step {step}")), 2).unwrap());
        }
        assert_eq!(r.checkpoint_steps().unwrap(), vec![16, 24]);
        assert_eq!(r.list("checkpoints/step-000000008").unwrap(), Vec::<String>::new());
        assert_eq!(r.get("checkpoints/LATEST").unwrap().unwrap(), b"step-000000024\n");
        let got = r.pull_checkpoint(24, &fresh).unwrap();
        assert_eq!(got, fresh.join("checkpoints/step-000000024"));
        assert_eq!(std::fs::read_to_string(got.join("state.json")).unwrap(), "state.json at step 24");
        assert!(r.pull_checkpoint(8, &d.path().join("other")).is_err(), "a pruned checkpoint was downloaded");
    }

    #[test]
    fn the_lease_is_renewed_while_a_long_step_runs() {
        let store: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
        let run = || {
            let mut r = ObjectRun::with_store("memory:///r", store.clone(), ObjPath::from("r")).unwrap();
            r.lease_seconds = 2;
            r
        };
        let (a, b) = (run(), run());
        a.acquire_lease("a").unwrap();
        // A step longer than the lease: b must still find it held at its end.
        let b_won = a
            .with_lease_renewed("a", || {
                std::thread::sleep(Duration::from_millis(3500));
                b.acquire_lease("b").is_ok()
            })
            .unwrap();
        assert!(!b_won, "another trainer took the lease during the step");
        // Without renewal it expires.
        std::thread::sleep(Duration::from_millis(3100));
        b.acquire_lease("b").unwrap();
        // The holder's renewal now fails, and the step reports it.
        let lost = a.with_lease_renewed("a", || std::thread::sleep(Duration::from_millis(1000))).unwrap_err();
        assert!(format!("{lost:#}").contains("another trainer holds the run (b)"), "{lost:#}");
    }

    #[test]
    fn shards_go_up_once_and_come_down_to_another_cache() {
        let r = memory_run();
        let d = tempfile::tempdir().unwrap();
        let (a, b) = (d.path().join("a/selfplay"), d.path().join("b/selfplay"));
        std::fs::create_dir_all(&a).unwrap();
        std::fs::write(a.join("sp-x.npz"), b"shard").unwrap();
        std::fs::write(a.join("sp-y.npz.tmp"), b"half").unwrap();
        assert_eq!(r.push_shards(&a).unwrap(), 1);
        assert_eq!(r.push_shards(&a).unwrap(), 0);
        assert_eq!(r.pull_shards(&b).unwrap(), 1);
        assert_eq!(r.pull_shards(&b).unwrap(), 0);
        assert_eq!(std::fs::read(b.join("sp-x.npz")).unwrap(), b"shard");
    }

    #[test]
    fn unreachable_endpoint_is_one_error_naming_the_url() {
        std::env::set_var("AWS_ALLOW_HTTP", "true");
        std::env::set_var("AWS_ENDPOINT_URL", "http://127.0.0.1:9");
        std::env::set_var("AWS_ACCESS_KEY_ID", "x");
        std::env::set_var("AWS_SECRET_ACCESS_KEY", "y");
        std::env::set_var("AWS_REGION", "garage");
        let e = ObjectRun::open("s3://nobucket/run").unwrap_err();
        let msg = format!("{e:#}");
        assert!(msg.contains("s3://nobucket/run") && msg.contains("did not answer"), "{msg}");
    }
}
