//! A published line-pattern generation end to end: `train` with `kind = "linepattern"` publishes
//! generations with their table (self-play evaluates it in the worker threads), and the table
//! plays `selfplay --evaluator model`, `arena` and `gomocup`.
use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

const CONFIG: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/e2e-linepattern.toml");

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_renju-zero"))
}

#[test]
fn a_line_pattern_generation_plays_selfplay_arena_and_gomocup() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    let out =
        bin().args(["train", "--config", CONFIG, "--run"]).arg(&run).args(["--max-generations", "1"]).output().unwrap();
    assert!(out.status.success(), "train failed: {}", String::from_utf8_lossy(&out.stderr));
    let gen1 = run.join("models/gen-000001");
    let cfg: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(gen1.join("config.json")).unwrap()).unwrap();
    assert_eq!(cfg["net"]["kind"], "linepattern");
    assert_eq!(cfg["line_table"]["file"], "linepattern.safetensors");
    assert!(gen1.join("linepattern.safetensors").is_file() && gen1.join("model.pt").is_file());

    // selfplay --evaluator model: the table plays, positions recorded as generation 1's.
    let sp = dir.path().join("sp");
    let out = bin()
        .args(["selfplay", "--evaluator"])
        .arg(format!("model:{}", run.join("models").display()))
        .args([
            "--games",
            "2",
            "--size",
            "9",
            "--playouts",
            "8",
            "--fast-playouts",
            "4",
            "--stone-cap",
            "30",
            "--full-search-fraction",
            "1",
            "--quiet",
            "--out",
        ])
        .arg(&sp)
        .output()
        .unwrap();
    assert!(out.status.success(), "selfplay failed: {}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("evaluated in the worker threads"));
    let mut gens = BTreeSet::new();
    for e in std::fs::read_dir(&sp).unwrap().flatten() {
        gens.extend(renju_selfplay::record::read_shard(&e.path()).unwrap().generation.iter().copied());
    }
    assert_eq!(gens, BTreeSet::from([1]));

    // arena: the table against the heuristic.
    let ar = dir.path().join("arena");
    let out = bin()
        .args(["arena", "--player"])
        .arg(format!("lp=model:{},playouts=6", run.join("models").display()))
        .args([
            "--player",
            "h=heuristic,playouts=6",
            "--games",
            "2",
            "--size",
            "9",
            "--rule",
            "renju",
            "--seed",
            "3",
            "--threads",
            "1",
            "--quiet",
            "--out",
        ])
        .arg(&ar)
        .output()
        .unwrap();
    assert!(out.status.success(), "arena failed: {}", String::from_utf8_lossy(&out.stderr));
    let games = std::fs::read_to_string(ar.join("games.jsonl")).unwrap();
    assert_eq!(games.lines().count(), 2);

    // gomocup: the brain answers BEGIN with a point on the board.
    let mut child = bin()
        .args(["gomocup", "--model"])
        .arg(run.join("models"))
        .args(["--playouts", "8"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, "START 9\nINFO rule 4\nBEGIN\nEND").unwrap();
    drop(stdin);
    let lines: Vec<String> = BufReader::new(child.stdout.take().unwrap())
        .lines()
        .map_while(Result::ok)
        .filter(|l| !l.starts_with("MESSAGE") && !l.starts_with("DEBUG"))
        .collect();
    assert!(child.wait().unwrap().success());
    assert_eq!(lines.first().map(String::as_str), Some("OK"), "{lines:?}");
    let mv: Vec<i64> = lines[1].split(',').filter_map(|v| v.trim().parse().ok()).collect();
    assert!(mv.len() == 2 && mv.iter().all(|&v| (0..9).contains(&v)), "{lines:?}");
}

/// `pipeline.selfplay_waits_for_trainer`: with a trainer far slower than self-play (5 training
/// samples per new sample on a 9x9 board), paced self-play waits, so the run trains close to
/// that ratio. (Unpaced, the same 800 steps published as four generations of 200 trained 0.02
/// samples per sample: self-play outran the trainer 250 times over.)
#[test]
fn paced_selfplay_lets_the_trainer_reach_its_samples_per_new_sample() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("paced");
    let out = bin()
        .args(["train", "--config", CONFIG, "--run"])
        .arg(&run)
        .args(["--max-generations", "1"])
        .args(["--set", "training.samples_per_new_sample=5", "--set", "pipeline.steps_per_generation=800"])
        .args(["--set", "pipeline.games_per_shard=1", "--set", "pipeline.selfplay_waits_for_trainer=true"])
        .output()
        .unwrap();
    assert!(out.status.success(), "train failed: {}", String::from_utf8_lossy(&out.stderr));
    let log = std::fs::read_to_string(run.join("generations.jsonl")).unwrap();
    let last: serde_json::Value = serde_json::from_str(log.lines().last().unwrap()).unwrap();
    let ratio = last["samples_trained"].as_f64().unwrap() / last["total_samples"].as_f64().unwrap();
    // At any look the trainer is at most a round (8 steps of 16 samples) and what self-play
    // wrote since the previous look behind.
    assert!(ratio >= 4.0, "paced self-play: {ratio:.2} training samples per sample, want close to 5");
    let log = std::fs::read_to_string(run.join("train.log")).unwrap();
    assert!(log.contains("self-play waited for the trainer"), "{log}");
}
