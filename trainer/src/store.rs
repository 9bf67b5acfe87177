//! Run directories on object storage (`--run s3://bucket/prefix`, `gs://`, `az://`, `file://`):
//! the object-store backend behind [`crate::RunDir`] (the local backend is the plain run
//! directory written through `renju-fs`).
//!
//! A remote run keeps the layout of [`crate::RunDir`] under the URL's prefix (`config.toml`,
//! `selfplay/*.npz`, `models/gen-NNNNNN/*`, `models/LATEST`) plus `trainer.lease`. Each process
//! works in a local cache directory (the run directory its code reads and writes as before) and
//! exchanges whole objects with the store:
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
//! - one trainer per run: `trainer.lease` (owner, expiry) is created or taken over when expired
//!   with a conditional put and renewed while training ([`LEASE_SECONDS`]).
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
use anyhow::{anyhow, bail, ensure, Context, Result};
use object_store::path::Path as ObjPath;
use object_store::{ObjectStore, PutMode, PutOptions, PutPayload, UpdateVersion};
use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// How long a trainer's lease on a remote run lasts without renewal (seconds); the trainer
/// renews it every third of this.
pub const LEASE_SECONDS: u64 = 60;

/// The name of the lease object under the run's prefix.
pub const LEASE_OBJECT: &str = "trainer.lease";

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
    /// The version of the lease object this process last wrote (its e-tag), while it holds it.
    lease: Mutex<Option<(UpdateVersion, SystemTime)>>,
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

/// The lease record in `trainer.lease` (JSON).
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
            lease: Mutex::default(),
            lease_seconds: LEASE_SECONDS,
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
        Ok(self.get_versioned(rel)?.map(|(b, _)| b))
    }

    fn get_versioned(&self, rel: &str) -> Result<Option<(Vec<u8>, UpdateVersion)>> {
        let key = self.key(rel);
        self.rt
            .block_on(async {
                match self.store.get(&key).await {
                    Ok(r) => {
                        let v = UpdateVersion { e_tag: r.meta.e_tag.clone(), version: r.meta.version.clone() };
                        Ok(Some((r.bytes().await?.to_vec(), v)))
                    }
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

    /// Creates `rel` whole unless it exists (conditional put). Returns `false` when it existed.
    pub fn create(&self, rel: &str, bytes: &[u8]) -> Result<bool> {
        Ok(self.put_mode(rel, bytes, PutMode::Create)?.is_some())
    }

    /// A put with `mode`; `Ok(None)` when its condition failed. Returns the new version.
    fn put_mode(&self, rel: &str, bytes: &[u8], mode: PutMode) -> Result<Option<UpdateVersion>> {
        self.cut_for_test(rel)?;
        let key = self.key(rel);
        let opts = PutOptions { mode, ..PutOptions::default() };
        match self.rt.block_on(self.store.put_opts(&key, PutPayload::from(bytes.to_vec()), opts)) {
            Ok(r) => Ok(Some(UpdateVersion { e_tag: r.e_tag, version: r.version })),
            Err(object_store::Error::AlreadyExists { .. } | object_store::Error::Precondition { .. }) => Ok(None),
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
            let tmp = models.join(format!(".tmp-{name}-{}", std::process::id()));
            std::fs::create_dir_all(&tmp).with_context(|| format!("creating {}", tmp.display()))?;
            let fetched = m.files.iter().try_for_each(|(f, &size)| {
                ensure!(!f.contains('/') && f != "..", "{}/{manifest}: bad file name {f:?}", self.url);
                let rel = format!("models/{name}/{f}");
                let bytes = self.get(&rel)?.with_context(|| format!("{}/{rel} is missing", self.url))?;
                ensure!(
                    bytes.len() as u64 == size,
                    "{}/{rel}: {} bytes, its manifest says {size}",
                    self.url,
                    bytes.len()
                );
                std::fs::write(tmp.join(f), bytes).with_context(|| format!("writing {}", tmp.join(f).display()))
            });
            if let Err(e) = fetched.and_then(|_| renju_fs::publish_dir(&tmp, &dest)) {
                let _ = std::fs::remove_dir_all(&tmp);
                if !dest.exists() {
                    return Err(e);
                }
            }
        }
        if read_latest(&models).ok().flatten() == Some(name) {
            return Ok(());
        }
        write_latest(&models, g)
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

    /// Takes the one-trainer lease for `owner`: creates `trainer.lease`, or takes it over when
    /// it has expired (conditional on the version read), or renews it when `owner` holds it.
    /// An unexpired lease of another owner is an error naming it and its expiry.
    pub fn acquire_lease(&self, owner: &str) -> Result<()> {
        let record = serde_json::to_vec(&Lease { owner: owner.into(), expires: unix_now() + self.lease_seconds })?;
        let taken = match self.get_versioned(LEASE_OBJECT)? {
            None => self.put_mode(LEASE_OBJECT, &record, PutMode::Create)?,
            Some((bytes, version)) => {
                let held: Option<Lease> = serde_json::from_slice(&bytes).ok();
                if let Some(l) = held.as_ref().filter(|l| l.owner != owner && l.expires > unix_now()) {
                    bail!(
                        "{}: another trainer holds the run ({}) until {}; only one trainer may run on a run",
                        self.url,
                        l.owner,
                        humantime::format_rfc3339_seconds(UNIX_EPOCH + Duration::from_secs(l.expires))
                    );
                }
                self.replace(&record, version)?
            }
        };
        let version =
            taken.with_context(|| format!("{}: another trainer took the lease at the same time", self.url))?;
        *self.lease.lock().unwrap() = Some((version, SystemTime::now()));
        Ok(())
    }

    /// Replaces the lease object if it is still at `version`. Stores without conditional
    /// updates (`file://`) fall back to delete + create, which is safe against a second
    /// trainer starting but not against two starting in the same instant.
    fn replace(&self, record: &[u8], version: UpdateVersion) -> Result<Option<UpdateVersion>> {
        let key = self.key(LEASE_OBJECT);
        let opts = PutOptions { mode: PutMode::Update(version), ..PutOptions::default() };
        match self.rt.block_on(self.store.put_opts(&key, PutPayload::from(record.to_vec()), opts)) {
            Ok(r) => Ok(Some(UpdateVersion { e_tag: r.e_tag, version: r.version })),
            Err(object_store::Error::AlreadyExists { .. } | object_store::Error::Precondition { .. }) => Ok(None),
            Err(object_store::Error::NotImplemented) => {
                self.rt.block_on(self.store.delete(&key)).ok();
                self.put_mode(LEASE_OBJECT, record, PutMode::Create)
            }
            Err(e) => Err(anyhow!("{}/{LEASE_OBJECT}: writing failed: {e}", self.url)),
        }
    }

    /// Renews the lease held by `owner` when a third of its duration ([`LEASE_SECONDS`]) has
    /// passed since it was last written. Errors when another trainer has taken it over.
    pub fn renew_lease(&self, owner: &str) -> Result<()> {
        let due = self
            .lease
            .lock()
            .unwrap()
            .as_ref()
            .is_none_or(|(_, t)| t.elapsed().unwrap_or_default().as_secs() >= self.lease_seconds / 3);
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

    /// Gives the lease up (deletes `trainer.lease`) if this process holds it.
    pub fn release_lease(&self) -> Result<()> {
        if self.lease.lock().unwrap().take().is_some() {
            let key = self.key(LEASE_OBJECT);
            self.rt
                .block_on(self.store.delete(&key))
                .map_err(|e| anyhow!("{}/{LEASE_OBJECT}: deleting failed: {e}", self.url))?;
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
        let expired = serde_json::to_vec(&Lease { owner: "a".into(), expires: unix_now() - 1 }).unwrap();
        r.put(LEASE_OBJECT, &expired).unwrap();
        r.acquire_lease("b").unwrap();
        r.release_lease().unwrap();
        assert_eq!(r.get(LEASE_OBJECT).unwrap(), None);
    }

    /// A `file://` run over the directory `dir`.
    fn file_run(dir: &Path) -> ObjectRun {
        let url = url::Url::from_directory_path(dir).unwrap().to_string();
        ObjectRun::open(&url).unwrap()
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
        reader.pull_generation(1, &other).unwrap();
        for f in files {
            assert_eq!(std::fs::read_to_string(other.join("models/gen-000001").join(f)).unwrap(), format!("{f} of 1"));
        }
        assert_eq!(reader.pull_shards(&other.join("selfplay")).unwrap(), 1);
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
