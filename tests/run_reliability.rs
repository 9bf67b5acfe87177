//! A run that survives its users: signals always stop `train`, even with its stderr
//! closed (`| tee` ended by the same Ctrl-C).

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const CONFIG: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/e2e.toml");

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_renju-zero"))
}

/// Sends `signal` (a `kill -s` name such as `INT`) to the child.
fn signal(child: &Child, signal: &str) {
    let ok =
        Command::new("kill").args(["-s", signal, &child.id().to_string()]).status().expect("running kill").success();
    assert!(ok, "kill -s {signal} failed");
}

/// Waits until `path` exists, failing if the child exits first or `limit` passes.
fn wait_for(child: &mut Child, path: &Path, limit: Duration) {
    let t0 = Instant::now();
    while !path.exists() {
        assert!(t0.elapsed() < limit, "{} never appeared", path.display());
        if let Some(status) = child.try_wait().unwrap() {
            panic!("the process exited ({status}) before {} appeared", path.display());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Waits for the child to exit within `limit`; kills it and fails otherwise.
fn wait_exit(child: &mut Child, limit: Duration) -> (std::process::ExitStatus, Duration) {
    let t0 = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return (status, t0.elapsed());
        }
        if t0.elapsed() > limit {
            child.kill().ok();
            child.wait().ok();
            panic!("the process did not exit within {limit:?} of the signal");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn spawn_train(run: &Path) -> Child {
    bin()
        .args(["train", "--config", CONFIG, "--run"])
        .arg(run)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starting renju-zero train")
}

#[test]
fn sigint_stops_train_with_its_stderr_closed_and_writes_a_checkpoint() {
    for sig in ["INT", "TERM", "HUP"] {
        let dir = tempfile::tempdir().unwrap();
        let run = dir.path().join("run");
        let mut child = spawn_train(&run);
        // Training is under way once the step-8 checkpoint exists (`checkpoint_every = 8`).
        wait_for(&mut child, &run.join("checkpoints/step-000000008"), Duration::from_secs(240));
        // The terminal's Ctrl-C also ends `tee`: close the pipes' read ends first.
        drop(child.stdout.take());
        drop(child.stderr.take());
        signal(&child, sig);
        let (status, took) = wait_exit(&mut child, Duration::from_secs(10));
        eprintln!("SIG{sig}: train exited with {status} after {took:?}");
        assert!(status.success(), "SIG{sig}: train exited with {status}");
        let log = std::fs::read_to_string(run.join("train.log")).unwrap();
        let stopped = log.lines().filter_map(|l| l.split("trainer stopped at step ").nth(1)).next_back();
        let step: u64 = stopped
            .unwrap_or_else(|| panic!("SIG{sig}: no stop line in train.log: {log}"))
            .split_whitespace()
            .next()
            .unwrap()
            .parse()
            .unwrap();
        let ckpt = std::fs::read_to_string(run.join("checkpoints/LATEST")).unwrap();
        assert_eq!(ckpt.trim(), format!("step-{step:09}"), "SIG{sig}: the stop did not checkpoint its step");
        if sig == "INT" {
            selfplay_run_stops_on_sigint_leaving_whole_shards(&run);
        }
    }
}

fn shard_files(run: &Path) -> Vec<std::path::PathBuf> {
    let mut v: Vec<_> =
        std::fs::read_dir(run.join("selfplay")).unwrap().flatten().map(|e| e.path()).filter(|p| p.is_file()).collect();
    v.sort();
    v
}

/// `selfplay --run` on a run with published generations: once it has written a shard, SIGINT
/// (stderr closed) ends it within 10 s; what it leaves are whole shards only (finished games are
/// flushed as one last shard, games in progress dropped).
fn selfplay_run_stops_on_sigint_leaving_whole_shards(run: &Path) {
    let before = shard_files(run).len();
    let mut child = bin()
        .args(["selfplay", "--run"])
        .arg(run)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    while shard_files(run).len() == before {
        assert!(t0.elapsed() < Duration::from_secs(120), "selfplay --run wrote no shard");
        assert!(child.try_wait().unwrap().is_none(), "selfplay --run exited early");
        std::thread::sleep(Duration::from_millis(50));
    }
    drop(child.stdout.take());
    drop(child.stderr.take());
    signal(&child, "INT");
    let (status, took) = wait_exit(&mut child, Duration::from_secs(10));
    eprintln!("SIGINT: selfplay --run exited with {status} after {took:?}");
    assert!(status.success(), "selfplay --run exited with {status}");
    for p in shard_files(run) {
        assert!(p.extension().is_some_and(|e| e == "npz"), "left behind: {}", p.display());
        renju_selfplay::record::read_shard(&p).unwrap_or_else(|e| panic!("{}: {e:#}", p.display()));
    }
}

#[test]
fn a_second_signal_exits_at_once() {
    use std::io::BufRead;
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    let mut child = spawn_train(&run);
    wait_for(&mut child, &run.join("models/LATEST"), Duration::from_secs(240));
    let stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    signal(&child, "INT");
    // Two signals sent back to back may merge into one pending signal: send the second once the
    // first has been handled (its notice printed).
    for line in stderr.lines() {
        if line.unwrap().contains("stopping") {
            break;
        }
    }
    signal(&child, "INT");
    let (status, _) = wait_exit(&mut child, Duration::from_secs(10));
    assert_eq!(status.code(), Some(130), "{status}");
}

#[test]
fn one_trainer_per_run_directory_and_a_killed_holder_never_blocks() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    let mut first = spawn_train(&run);
    wait_for(&mut first, &run.join("models/LATEST"), Duration::from_secs(240));
    let holder = format!("pid {}", first.id());
    for cmd in ["train", "trainer"] {
        let t0 = Instant::now();
        let mut c = bin();
        c.arg(cmd).arg("--run").arg(&run);
        if cmd == "train" {
            c.args(["--config", CONFIG]);
        }
        let out = c.args(["--max-generations", "1"]).stdin(Stdio::null()).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "a second {cmd} was not refused: {err}");
        assert!(err.contains("in use by another trainer") && err.contains(&holder), "{cmd}: {err}");
        assert!(t0.elapsed() < Duration::from_secs(10), "{cmd} took {:?} to refuse", t0.elapsed());
    }
    // A SIGKILLed holder leaves its lock file behind; the OS has released the lock itself.
    first.kill().unwrap();
    first.wait().unwrap();
    assert!(run.join("trainer.lock").exists());
    let out = bin()
        .args(["train", "--config", CONFIG, "--run"])
        .arg(&run)
        .args(["--max-generations", "1"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "train after a killed holder: {}", String::from_utf8_lossy(&out.stderr));
    let second = std::fs::read_to_string(run.join("trainer.lock")).unwrap();
    assert!(!second.contains(&holder), "the lock file still names the killed holder: {second}");
    // Every line names its writer: both trainers appear in train.log, and generations.jsonl
    // says who published each generation.
    let log = std::fs::read_to_string(run.join("train.log")).unwrap();
    assert!(log.lines().all(|l| l.contains(" pid ")), "a train.log line without its writer: {log}");
    assert!(log.contains(&format!("train {holder}@")), "{log}");
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(run.join("generations.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(!lines.is_empty());
    for l in &lines {
        assert!(l["writer"].as_str().is_some_and(|w| w.starts_with("train pid ")), "{l}");
    }
}

/// The suite's short version of `scripts/soak.sh` (which runs 20 kills): 3 SIGKILLs (one into a
/// generation being published, one at a random moment, one into a checkpoint write), a clean
/// session, `check-run`, then a full-disk session that must fail naming a path and leave nothing
/// half-published.
#[test]
fn soak_three_kills_then_a_full_disk_keep_every_invariant() {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/soak.sh");
    let out = Command::new("bash")
        .arg(script)
        .env("KILLS", "3")
        .env("SEED", "3")
        .env("BIN", env!("CARGO_BIN_EXE_renju-zero"))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "soak failed:\n{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("soak: 3 SIGKILLs") && stdout.contains("all checks passed"), "{stdout}");
    assert!(!stdout.contains("problem:"), "{stdout}");
}

/// A run directory the process may not write (as root, the test drops to `nobody` with
/// `setpriv`, since root writes anywhere): a clear error naming the path, and the run is
/// unchanged.
#[test]
fn a_read_only_run_directory_is_a_clear_error_naming_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    std::fs::create_dir(&run).unwrap();
    std::fs::write(run.join("config.toml"), std::fs::read_to_string(CONFIG).unwrap()).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(&run, std::fs::Permissions::from_mode(0o555)).unwrap();
    let is_root = Command::new("id").arg("-u").output().is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0");
    let mut cmd = if is_root {
        let mut c = Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups", env!("CARGO_BIN_EXE_renju-zero")]);
        c
    } else {
        bin()
    };
    let out = cmd
        .args(["trainer", "--run"])
        .arg(&run)
        .args(["--max-generations", "0"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&run.join("trainer.lock").display().to_string()) && err.contains("Permission denied"),
        "{err}"
    );
    let left: Vec<_> = std::fs::read_dir(&run).unwrap().flatten().map(|e| e.file_name()).collect();
    assert_eq!(left, vec![std::ffi::OsString::from("config.toml")]);
}

#[test]
fn a_bad_config_is_named_and_leaves_no_run_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let config = tmp.path().join("bad.toml");
    std::fs::write(&config, "[pipeline]\nsteps_per_generation = 10\nno_such_key = 3\n").unwrap();
    let run = tmp.path().join("run");
    let out = bin().args(["train", "--config"]).arg(&config).arg("--run").arg(&run).output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no_such_key") && err.contains("bad.toml"), "{err}");
    assert!(!run.exists(), "a rejected config must not create {}", run.display());
    // A bad override, the same.
    std::fs::write(&config, "[pipeline]\nsteps_per_generation = 10\n").unwrap();
    let out = bin()
        .args(["train", "--config"])
        .arg(&config)
        .arg("--run")
        .arg(&run)
        .args(["--set", "pipeline.keep_generations_every=0"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("keep_generations_every must be at least 1"), "{err}");
    assert!(!run.exists());
}

/// `check-run` on a path that is not a run directory (missing, or without `config.toml`) says
/// so, instead of checking an empty run's invariants.
#[test]
fn check_run_on_a_missing_or_empty_directory_says_it_is_not_a_run_directory() {
    let dir = tempfile::tempdir().unwrap();
    let check = |run: &Path| {
        let out = bin().arg("check-run").arg("--run").arg(run).stdin(Stdio::null()).output().unwrap();
        (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
    };
    let missing = dir.path().join("nope");
    let (code, err) = check(&missing);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains(&format!("{} is not a run directory: it does not exist", missing.display())), "{err}");
    let (code, err) = check(dir.path());
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains(&format!("{} is not a run directory: it has no config.toml", dir.path().display())), "{err}");
    assert!(!err.contains("are missing"), "{err}");
}
