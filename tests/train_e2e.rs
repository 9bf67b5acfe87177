//! End-to-end test of the main job (`renju-zero train`): generations published from self-play,
//! later generations trained on games of earlier ones, losses finite and falling, and a kill
//! mid-run followed by a restart that loses and duplicates nothing.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const CONFIG: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/e2e.toml");

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_renju-zero"))
}

fn train(run: &Path, max_gen: u64) -> std::process::Output {
    bin()
        .args(["train", "--config", CONFIG, "--run"])
        .arg(run)
        .args(["--max-generations", &max_gen.to_string()])
        .stdin(Stdio::null())
        .output()
        .expect("running renju-zero train")
}

fn generations(run: &Path) -> Vec<u64> {
    let mut v: Vec<u64> = std::fs::read_dir(run.join("models"))
        .unwrap()
        .filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().to_string_lossy().strip_prefix("gen-").and_then(|n| n.parse().ok()))
        .collect();
    v.sort();
    v
}

fn jsonl(run: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(run.join("generations.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).expect("generations.jsonl holds JSON lines"))
        .collect()
}

fn shards(run: &Path) -> BTreeSet<PathBuf> {
    std::fs::read_dir(run.join("selfplay"))
        .map(|d| {
            d.filter_map(|e| e.ok()).map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "npz")).collect()
        })
        .unwrap_or_default()
}

/// `(tag, step, value)` of every scalar in the run's TensorBoard files.
fn scalars(run: &Path, tag: &str) -> Vec<(i64, f32)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(run.join("tensorboard")).unwrap().flatten() {
        for (t, s, v) in renju_trainer::metrics::read_scalars(&e.path()).unwrap() {
            if t == tag {
                out.push((s, v));
            }
        }
    }
    out.sort_by_key(|x| x.0);
    out
}

#[test]
fn train_publishes_generations_trained_on_earlier_generations_games() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    let out = train(&run, 3);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "train failed: {stderr}");
    // Where the trainer stopped is shown on stderr too (not a terminal here), not only in train.log;
    // the first-step threshold is named only when no step was trained.
    let stop = stderr.lines().find(|l| l.starts_with("trainer stopped at step")).expect("no stop line on stderr");
    assert!(!stop.starts_with("trainer stopped at step 0 ") && !stop.contains("min_samples_to_train"), "{stop}");
    assert_eq!(generations(&run), vec![0, 1, 2, 3]);
    assert_eq!(std::fs::read_to_string(run.join("models/LATEST")).unwrap().trim(), "gen-000003");
    for g in 0..=3 {
        let d = run.join(format!("models/gen-{g:06}"));
        for f in ["model.safetensors", "config.json", "model.pt"] {
            assert!(d.join(f).is_file(), "{} missing", d.join(f).display());
        }
    }
    // Generation 2 was trained on positions that generation 1 played: the shards record the
    // generation of every position, and by the time generation 2 was published, generation
    // 1's self-play had contributed samples to the window.
    let lines = jsonl(&run);
    let gens: Vec<u64> = lines.iter().map(|l| l["generation"].as_u64().unwrap()).collect();
    assert_eq!(gens, vec![1, 2, 3]);
    let by_gen = &lines[1]["samples_by_generation"];
    assert!(by_gen["1"].as_u64().unwrap_or(0) > 0, "no generation-1 samples before generation 2: {by_gen}");
    let mut recorded = BTreeSet::new();
    for p in shards(&run) {
        let s = renju_selfplay::record::read_shard(&p).unwrap();
        recorded.extend(s.generation.iter().copied());
    }
    assert!(recorded.contains(&0) && recorded.contains(&1), "shard generations: {recorded:?}");
    // Losses: finite at every step, and falling on the training data: the last generation fits
    // the recorded positions better than generation 0 did (the per-step loss itself moves with
    // the window, which keeps gaining new games, so it is not compared across steps).
    let losses = scalars(&run, "loss/total");
    assert!(losses.len() >= 72 / 8, "expected a loss per round of 8 steps, got {}", losses.len());
    assert!(losses.iter().all(|(_, v)| v.is_finite()), "non-finite loss: {losses:?}");
    // Self-play statistics per generation: in TensorBoard and in generations.jsonl.
    let black = scalars(&run, "selfplay/black_score");
    assert_eq!(black.len(), 3, "one Black score per published generation 1..=3: {black:?}");
    assert!(black.iter().all(|(_, v)| (0.0..=1.0).contains(v)), "{black:?}");
    let new_games: u64 = lines.iter().map(|l| l["selfplay"]["games"].as_u64().unwrap()).sum();
    assert_eq!(lines.last().unwrap()["selfplay_games"].as_u64(), Some(new_games), "games since the last line add up");
    // `selfplay --evaluator model:DIR` plays the latest generation and records its number.
    let out_dir = dir.path().join("sp-model");
    let out = bin()
        .args(["selfplay", "--evaluator"])
        .arg(format!("model:{}", run.join("models").display()))
        .args([
            "--games",
            "2",
            "--size",
            "9",
            "--playouts",
            "4",
            "--fast-playouts",
            "2",
            "--stone-cap",
            "30",
            "--full-search-fraction",
            "1",
            "--quiet",
            "--out",
        ])
        .arg(&out_dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "selfplay --evaluator model:DIR failed: {}", String::from_utf8_lossy(&out.stderr));
    let mut model_gens = BTreeSet::new();
    for e in std::fs::read_dir(&out_dir).unwrap().flatten() {
        model_gens.extend(renju_selfplay::record::read_shard(&e.path()).unwrap().generation.iter().copied());
    }
    assert_eq!(model_gens, BTreeSet::from([3]), "positions should be recorded as generation 3's");
    // `selfplay --run DIR` says on stderr how it stopped, also with --quiet and no terminal.
    let out = bin()
        .args(["selfplay", "--minutes", "0.05", "--quiet", "--run"])
        .arg(&run)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "selfplay --run failed: {stderr}");
    assert!(stderr.contains("self-play process") && stderr.contains(" stopped: "), "no stop line: {stderr}");
    let (p0, v0) = loss_on_shards(&run, 0);
    let (p3, v3) = loss_on_shards(&run, 3);
    eprintln!("loss on the shards: gen 0 policy {p0:.4} value {v0:.4}; gen 3 policy {p3:.4} value {v3:.4}");
    assert!(p0.is_finite() && v0.is_finite() && p3.is_finite() && v3.is_finite());
    assert!(p3 + v3 < p0 + v0, "loss on the training data did not fall: gen 0 policy {p0:.4} value {v0:.4}, gen 3 policy {p3:.4} value {v3:.4}");
}

/// Mean policy and value cross-entropy (nats) of generation `g` over every position the run's
/// shards hold, batch norm in inference mode.
fn loss_on_shards(run: &Path, g: u64) -> (f64, f64) {
    use tch::{Kind, Tensor};
    let model = renju_trainer::model::load_model(&run.join(format!("models/gen-{g:06}")), tch::Device::Cpu).unwrap();
    let (mut policy_sum, mut value_sum, mut n) = (0.0, 0.0, 0usize);
    for p in shards(run) {
        let s = renju_selfplay::record::read_shard(&p).unwrap();
        let len = s.len();
        let dims = |a: &[usize]| a.iter().map(|&x| x as i64).collect::<Vec<i64>>();
        let planes = Tensor::from_slice(&s.planes.iter().map(|&x| x as f32).collect::<Vec<f32>>())
            .reshape(dims(s.planes.shape()));
        let globals =
            Tensor::from_slice(&s.globals.iter().copied().collect::<Vec<f32>>()).reshape(dims(s.globals.shape()));
        let policy =
            Tensor::from_slice(&s.policy.iter().copied().collect::<Vec<f32>>()).reshape(dims(s.policy.shape()));
        let value = Tensor::from_slice(&s.value.iter().copied().collect::<Vec<f32>>()).reshape(dims(s.value.shape()));
        let (pl, vl) = tch::no_grad(|| model.net.forward(&planes, &globals, false));
        let pce = -(policy * pl.log_softmax(-1, Kind::Float)).sum_dim_intlist(-1, false, Kind::Float);
        let vce = -(value * vl.log_softmax(-1, Kind::Float)).sum_dim_intlist(-1, false, Kind::Float);
        policy_sum += pce.sum(Kind::Double).double_value(&[]);
        value_sum += vce.sum(Kind::Double).double_value(&[]);
        n += len;
    }
    assert!(n > 0);
    (policy_sum / n as f64, value_sum / n as f64)
}

#[test]
fn a_killed_run_resumes_without_loss_or_duplication() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    let mut child = bin()
        .args(["train", "--config", CONFIG, "--run"])
        .arg(&run)
        .args(["--max-generations", "4"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Kill it (SIGKILL: no chance to clean up) once generation 2 is out.
    let t0 = Instant::now();
    while !run.join("models/gen-000002").exists() {
        assert!(t0.elapsed() < Duration::from_secs(240), "generation 2 never appeared");
        assert!(child.try_wait().unwrap().is_none(), "train exited early");
        std::thread::sleep(Duration::from_millis(50));
    }
    let killed_pid = child.id();
    child.kill().unwrap();
    child.wait().unwrap();
    let before_shards = shards(&run);
    assert!(!before_shards.is_empty());
    let before_gens = generations(&run);
    assert!(before_gens.starts_with(&[0, 1, 2]), "{before_gens:?}");

    // What a kill (or a bad disk) can leave: a half-written shard of the killed process and a
    // corrupt one. Beside them, shards that live writers are still writing (this test process
    // on this host; a fresh one from another machine): the restart must leave those alone.
    let host = renju_trainer::process::host_tag();
    let killed = format!("sp-{host}-p{killed_pid}-1-000001.npz.tmp");
    let live_here = format!("sp-{host}-p{}-1-000009.npz.tmp", std::process::id());
    let live_elsewhere = "sp-othermachine-p7-1-000009.npz.tmp";
    std::fs::write(run.join("selfplay").join(&killed), b"half a shard").unwrap();
    std::fs::write(run.join("selfplay").join(&live_here), b"being written").unwrap();
    std::fs::write(run.join("selfplay").join(live_elsewhere), b"being written").unwrap();
    std::fs::write(run.join("selfplay/sp-bad-1-000002.npz"), b"not a zip archive").unwrap();

    let out = train(&run, 4);
    assert!(out.status.success(), "resumed train failed: {}", String::from_utf8_lossy(&out.stderr));
    let log = std::fs::read_to_string(run.join("train.log")).unwrap();
    assert!(log.contains(&killed), "the partial shard was not reported: {log}");
    assert!(!run.join("selfplay").join(&killed).exists());
    assert!(run.join("selfplay").join(&live_here).exists(), "a live writer's partial shard was removed");
    assert!(run.join("selfplay").join(live_elsewhere).exists(), "another machine's fresh partial shard was removed");
    assert!(
        log.contains("rejected a shard") && log.contains("sp-bad-1-000002.npz"),
        "the corrupt shard was not reported: {log}"
    );
    assert!(run.join("selfplay/rejected/sp-bad-1-000002.npz").exists(), "the corrupt shard was not kept aside");
    // Every generation exactly once, numbering continued.
    assert_eq!(generations(&run), vec![0, 1, 2, 3, 4]);
    let gens: Vec<u64> = jsonl(&run).iter().map(|l| l["generation"].as_u64().unwrap()).collect();
    assert_eq!(gens, vec![1, 2, 3, 4], "generations.jsonl");
    // No shard lost; every shard readable.
    let after = shards(&run);
    assert!(before_shards.is_subset(&after), "shards lost: {:?}", before_shards.difference(&after).collect::<Vec<_>>());
    for p in &after {
        renju_selfplay::record::read_shard(p).unwrap();
    }
    // The second session resumed the trainer from a checkpoint (not from step 0).
    let log = std::fs::read_to_string(run.join("train.log")).unwrap();
    let starts: Vec<u64> = log
        .lines()
        .filter_map(|l| l.split("trainer at step ").nth(1))
        .map(|r| r.split_whitespace().next().unwrap().parse().unwrap())
        .collect();
    assert_eq!(starts.len(), 2, "{log}");
    assert_eq!(starts[0], 0);
    assert!(starts[1] >= 24, "resumed at step {} (generation 1 was at step 24)", starts[1]);
    // The run ends with generation 4 at step 4 * 24, checkpointed.
    let ckpt = std::fs::read_to_string(run.join("checkpoints/LATEST")).unwrap();
    assert_eq!(ckpt.trim(), "step-000000096");
}

#[test]
fn a_run_directory_made_with_another_config_needs_force() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    let out = train(&run, 0);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let other = dir.path().join("other.toml");
    let text = std::fs::read_to_string(CONFIG).unwrap().replace("playouts = 8", "playouts = 9");
    std::fs::write(&other, text).unwrap();
    let out = bin()
        .args(["train", "--config"])
        .arg(&other)
        .arg("--run")
        .arg(&run)
        .args(["--max-generations", "0"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("selfplay.playouts") && err.contains("--force"), "{err}");
    let out = bin()
        .args(["train", "--force", "--config"])
        .arg(&other)
        .arg("--run")
        .arg(&run)
        .args(["--max-generations", "0"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // An unknown key is an error naming it.
    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, "[selfplay]\nplayoutz = 3\n").unwrap();
    let out = bin().args(["train", "--config"]).arg(&bad).arg("--run").arg(dir.path().join("r2")).output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("playoutz"));
}

#[test]
fn a_gated_pipeline_publishes_only_candidates_that_pass() {
    // A score of 1.01 cannot be reached and the SPRT is off: every candidate is rejected, so
    // training goes on while no generation beyond 0 is published.
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("gated.toml");
    let text = std::fs::read_to_string(CONFIG).unwrap()
        + "gate = true\ngate_games = 2\ngate_playouts = 4\ngate_min_score = 1.01\ngate_sprt = false\n";
    std::fs::write(&config, text).unwrap();
    let run = dir.path().join("run");
    let out = bin()
        .args(["train", "--config"])
        .arg(&config)
        .arg("--run")
        .arg(&run)
        .args(["--minutes", "0.3"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let log = std::fs::read_to_string(run.join("train.log")).unwrap();
    let rejected = log.lines().filter(|l| l.contains("gate at step") && l.contains("rejected")).count();
    assert!(rejected >= 1, "no gate decision in the log: {log}");
    assert!(!log.contains(": pass ("), "{log}");
    assert_eq!(generations(&run), vec![0]);
}
