//! End-to-end test of a run on object storage (`--run file:///...`, `object_store`'s local
//! backend, the same code path as `s3://`): one `trainer` and two `selfplay` processes, each
//! with its own cache directory, until two generations are published; one self-play process
//! killed with SIGKILL and restarted. Then the run's invariants: contiguous generations, `LATEST`
//! the newest, every shard readable, nothing duplicated, the trainer lease given back. The same
//! scenario against a real S3 server (Garage) is `scripts/s3-e2e.sh`. And a lost trainer
//! machine: the trainer SIGKILLed and its cache deleted, a new trainer on a new cache resumes
//! from the store's checkpoint after the lease expires; `check-run` passes on the store.

use renju_trainer::store::ObjectRun;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const CONFIG: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/e2e.toml");

fn bin(cache: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_renju-zero"));
    c.env("RENJU_ZERO_CACHE", cache).stdin(Stdio::null()).stdout(Stdio::null());
    c
}

fn selfplay(url: &str, cache: &Path) -> Child {
    bin(cache).args(["selfplay", "--run", url]).stderr(Stdio::null()).spawn().expect("starting renju-zero selfplay")
}

fn wait_until(what: &str, secs: u64, mut done: impl FnMut() -> bool) {
    let t0 = Instant::now();
    while !done() {
        assert!(t0.elapsed() < Duration::from_secs(secs), "{what} did not happen within {secs} s");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The shards in the store, by the processes' listing (what the trainer sees).
fn store_shards(store: &ObjectRun) -> Vec<String> {
    store.list("selfplay").unwrap().into_iter().filter(|n| n.ends_with(".npz")).collect()
}

#[test]
fn a_trainer_and_two_selfplay_processes_share_a_store_and_survive_a_killed_worker() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("store");
    std::fs::create_dir(&root).unwrap();
    let url = format!("file://{}", root.display());
    let mut trainer = bin(&dir.path().join("cache-trainer"))
        .args(["trainer", "--run", &url, "--config", CONFIG, "--max-generations", "2"])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_until("the trainer's config.toml in the store", 60, || root.join("config.toml").exists());
    let mut a = selfplay(&url, &dir.path().join("cache-a"));
    let cache_b = dir.path().join("cache-b");
    let mut b = selfplay(&url, &cache_b);
    let store = ObjectRun::open(&url).unwrap();

    // SIGKILL worker B once it has uploaded a shard (it may be in the middle of the next one).
    let b_tag = |n: &String| n.contains(&format!("-p{}-", b.id()));
    wait_until("a shard of worker B in the store", 240, || store_shards(&store).iter().any(b_tag));
    b.kill().unwrap();
    b.wait().unwrap();
    let mut b = selfplay(&url, &cache_b);

    let t0 = Instant::now();
    while trainer.try_wait().unwrap().is_none() {
        assert!(t0.elapsed() < Duration::from_secs(300), "the trainer did not publish generation 2");
        std::thread::sleep(Duration::from_millis(100));
    }
    let out = trainer.wait_with_output().unwrap();
    assert!(out.status.success(), "trainer failed: {}", String::from_utf8_lossy(&out.stderr));
    for c in [&mut a, &mut b] {
        c.kill().unwrap();
        c.wait().unwrap();
    }

    // Contiguous generations, LATEST the newest, each with its files and its manifest.
    let gens: Vec<String> = std::fs::read_dir(root.join("models"))
        .unwrap()
        .flatten()
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("gen-"))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    assert_eq!(gens, vec!["gen-000000", "gen-000001", "gen-000002"]);
    assert_eq!(store.latest_generation().unwrap(), Some(2));
    for g in &gens {
        assert!(store.list(&format!("models/{g}")).unwrap().contains(&"config.json".to_string()), "{g}");
        assert!(store.get(&format!("models/{g}.manifest.json")).unwrap().is_some(), "{g} has no manifest");
    }
    // Every shard readable, none duplicated (by name or by contents), and what the trainer
    // downloaded is what the store holds.
    let names = store_shards(&store);
    assert!(names.len() >= 2, "{names:?}");
    let mut by_contents = BTreeMap::new();
    for n in &names {
        let bytes = store.get(&format!("selfplay/{n}")).unwrap().unwrap();
        let tmp = dir.path().join("check.npz");
        std::fs::write(&tmp, &bytes).unwrap();
        renju_selfplay::record::read_shard(&tmp).unwrap_or_else(|e| panic!("shard {n} unreadable: {e:#}"));
        assert!(by_contents.insert(bytes, n.clone()).is_none(), "shard {n} duplicates another");
    }
    for e in std::fs::read_dir(dir.path().join("cache-trainer/selfplay")).unwrap().flatten() {
        let n = e.file_name().to_string_lossy().into_owned();
        if n.ends_with(".npz") {
            assert_eq!(store.get(&format!("selfplay/{n}")).unwrap(), Some(std::fs::read(e.path()).unwrap()), "{n}");
        }
    }
    // Both workers contributed, the restarted one included; the lease was given back.
    let writers: BTreeSet<&str> = names.iter().filter_map(|n| n.split('-').nth(2)).collect();
    assert!(writers.len() >= 2, "shards from one process only: {names:?}");
    assert_eq!(store.lease_holder().unwrap(), None);
}

#[test]
fn an_unreachable_store_is_one_error_naming_the_url_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    for (url, what) in [("s3://renju-test/run", "did not answer"), ("file:///nonexistent/renju-run", "is missing")] {
        let out = bin(&cache)
            .current_dir(dir.path())
            .env("AWS_ENDPOINT_URL", "http://127.0.0.1:9")
            .env("AWS_ALLOW_HTTP", "true")
            .env("AWS_ACCESS_KEY_ID", "nobody")
            .env("AWS_SECRET_ACCESS_KEY", "nothing")
            .env("AWS_REGION", "garage")
            .args(["trainer", "--run", url, "--config", CONFIG])
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success());
        assert!(err.contains(url) && err.contains(what), "{url}: {err}");
        assert!(!cache.exists(), "{url}: the cache directory was created");
    }
}

/// The store's published generation (`models/LATEST`), 0 when none.
fn latest(store: &ObjectRun) -> u64 {
    store.latest_generation().unwrap().unwrap_or(0)
}

/// The trainer steps at which sessions started, from the run's `train.log` text.
fn session_steps(log: &str) -> Vec<u64> {
    log.lines()
        .filter_map(|l| l.split("trainer at step ").nth(1))
        .filter_map(|r| r.split_whitespace().next()?.parse().ok())
        .collect()
}

#[test]
fn a_trainer_on_a_fresh_machine_resumes_from_the_store_after_the_lost_one_s_lease_expires() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("store");
    std::fs::create_dir(&root).unwrap();
    let url = format!("file://{}", root.display());
    // A generation every 8 steps, a checkpoint every 4; a 3-second lease.
    let small = ["--set", "pipeline.steps_per_generation=8", "--set", "training.checkpoint_every=4"];
    let trainer = |cache: &Path| {
        let mut c = bin(cache);
        c.env("RENJU_ZERO_LEASE_SECONDS", "3").args(["trainer", "--run", &url]);
        c
    };
    let cache_a = dir.path().join("cache-a");
    let mut a = trainer(&cache_a)
        .args(["--config", CONFIG, "--max-generations", "5"])
        .args(small)
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_until("the trainer's config.toml in the store", 60, || root.join("config.toml").exists());
    let mut worker = selfplay(&url, &dir.path().join("cache-w"));
    let store = ObjectRun::open(&url).unwrap();

    // The trainer machine is lost once generation 1 is published: SIGKILL, its cache deleted.
    wait_until("generation 1 in the store", 240, || latest(&store) >= 1);
    a.kill().unwrap();
    a.wait().unwrap();
    std::fs::remove_dir_all(&cache_a).unwrap();
    let lost_at = latest(&store);
    let steps = store.checkpoint_steps().unwrap();
    let &saved = steps.last().expect("the lost trainer's checkpoints are in the store");
    assert!(saved > 0 && steps.len() <= 3, "checkpoints in the store: {steps:?}");
    let log = String::from_utf8(store.get("train.log").unwrap().expect("train.log in the store")).unwrap();
    assert_eq!(session_steps(&log), vec![0], "{log}");
    let lost_events = store.list("tensorboard").unwrap();
    assert_eq!(lost_events.len(), 1, "the lost trainer's TensorBoard file is in the store: {lost_events:?}");

    // A trainer on a fresh machine (a new cache, no --config) once the lease has expired.
    wait_until("the lost trainer's lease to expire", 30, || store.lease_holder().unwrap().is_none());
    let target = (lost_at + 1).to_string();
    let out = trainer(&dir.path().join("cache-b"))
        .args(["--max-generations", &target])
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    worker.kill().unwrap();
    worker.wait().unwrap();
    assert!(out.status.success(), "the new trainer failed: {}", String::from_utf8_lossy(&out.stderr));

    // It resumed from the newest checkpoint (the step never went back) and published the next
    // generation: none re-published, none lost; the run's invariants hold in the store itself.
    assert_eq!(latest(&store), lost_at + 1);
    for g in 0..=lost_at + 1 {
        assert!(store.get(&format!("models/gen-{g:06}.manifest.json")).unwrap().is_some(), "generation {g}");
    }
    let log = String::from_utf8(store.get("train.log").unwrap().unwrap()).unwrap();
    assert_eq!(session_steps(&log), vec![0, saved], "{log}");
    assert!(log.contains(&format!("downloaded the checkpoint at step {saved}")), "{log}");
    let jsonl = String::from_utf8(store.get("generations.jsonl").unwrap().unwrap()).unwrap();
    let listed: Vec<u64> = jsonl
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["generation"].as_u64().unwrap())
        .collect();
    assert_eq!(listed, (1..=lost_at + 1).collect::<Vec<_>>(), "{jsonl}");
    assert!(store.checkpoint_steps().unwrap().last().unwrap() > &saved);
    // Both trainers' TensorBoard files are in the store, and the new cache holds the lost one's.
    let events = store.list("tensorboard").unwrap();
    assert_eq!(events.len(), 2, "{events:?}");
    assert!(dir.path().join("cache-b/tensorboard").join(&lost_events[0]).is_file());
    let check =
        Command::new(env!("CARGO_BIN_EXE_renju-zero")).args(["check-run", "--run"]).arg(&root).output().unwrap();
    assert!(check.status.success(), "check-run: {}", String::from_utf8_lossy(&check.stdout));
    assert_eq!(store.lease_holder().unwrap(), None);
}
