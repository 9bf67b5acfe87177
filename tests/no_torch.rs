//! The build without libtorch (`cargo build --release --no-default-features`): a binary with no
//! libtorch among its shared libraries and no run path into a virtualenv, which plays a
//! line-pattern generation as a Gomocup brain, refuses a residual net saying why, and answers
//! the commands that need libtorch by saying so.
//!
//! The test builds that binary itself with the Cargo that runs the tests; the generations it
//! plays are made here with the torch build.

use renju_arena::wire::{parse_xy, EngineProcess};
use renju_rules::Rule;
use renju_selfplay::encode::ENCODER_VERSION;
use renju_trainer::model::{publish_model, ModelConfig};
use renju_trainer::{Net, NetConfig};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// Builds the torch-free binary once per test process, copies it to `target/no-torch/` and
/// returns that path. The build shares the test build's target directory (every dependency is
/// already built there); Cargo then puts that binary at `target/release/renju-zero`, where the
/// other tests expect the default build, so the default binary is set aside first and put back
/// afterwards, also when the torch-free build fails.
fn no_torch_binary() -> PathBuf {
    static BUILT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BUILT
        .get_or_init(|| {
            let root = Path::new(env!("CARGO_MANIFEST_DIR"));
            let default = Path::new(env!("CARGO_BIN_EXE_renju-zero"));
            let dir = root.join("target/no-torch");
            std::fs::create_dir_all(&dir).unwrap();
            let aside = dir.join("renju-zero-default");
            let _ = std::fs::remove_file(&aside);
            std::fs::copy(default, &aside).unwrap();
            let built = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
                .current_dir(root)
                .args(["build", "--release", "-p", "renju-zero", "--no-default-features"])
                .output()
                .expect("running cargo");
            let bin = dir.join("renju-zero");
            let copied = built.status.success() && std::fs::copy(default, &bin).is_ok();
            // A new file, not a write into the one Cargo hard-linked from its build directory.
            std::fs::remove_file(default).unwrap();
            std::fs::rename(&aside, default).unwrap();
            assert!(copied, "cargo build --no-default-features failed:\n{}", String::from_utf8_lossy(&built.stderr));
            bin
        })
        .clone()
}

/// Publishes generation 0 of `net` (renju, 15x15, the current encoder) under `dir`.
fn generation(dir: &Path, net: &str) -> PathBuf {
    let cfg = ModelConfig::for_encoder(0, Rule::Renju, 15, NetConfig::preset(net).unwrap(), ENCODER_VERSION).unwrap();
    let vs = tch::nn::VarStore::new(tch::Device::Cpu);
    let _net = Net::new(&vs.root(), &cfg.net, cfg.shape).unwrap();
    publish_model(dir, &vs, &cfg).unwrap()
}

#[test]
fn has_no_libtorch_and_no_run_path_into_a_virtualenv() {
    let bin = no_torch_binary();
    let out = Command::new("readelf").arg("-d").arg(&bin).output().expect("running readelf");
    assert!(out.status.success());
    let dynamic = String::from_utf8_lossy(&out.stdout);
    assert!(dynamic.contains("(NEEDED)"), "readelf -d lists the shared libraries:\n{dynamic}");
    for line in dynamic.lines().filter(|l| l.contains("(NEEDED)") || l.contains("PATH)")) {
        for word in ["torch", "c10", ".venv", "site-packages"] {
            assert!(!line.contains(word), "the torch-free binary refers to {word}: {line}");
        }
    }
    // The default build does link libtorch, so the check above can tell the two apart.
    let out = Command::new("readelf").arg("-d").arg(env!("CARGO_BIN_EXE_renju-zero")).output().unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("libtorch"));
}

#[test]
fn plays_a_line_pattern_generation_as_a_gomocup_brain() {
    let dir = tempfile::tempdir().unwrap();
    let gen = generation(dir.path(), "linepattern-tiny");
    let command: Vec<String> =
        [no_torch_binary().to_str().unwrap(), "gomocup", "--model", gen.to_str().unwrap()].map(String::from).into();
    let mut brain = EngineProcess::spawn(&command, Stdio::inherit()).unwrap();
    assert_eq!(ask(&mut brain, "START 15"), "OK");
    // Renju, 0.3 s a move.
    for line in ["INFO rule 4", "INFO timeout_turn 300", "INFO timeout_match 0"] {
        brain.send(&format!("{line}\n")).unwrap();
    }
    let first = parse_xy(&ask(&mut brain, "BEGIN")).unwrap();
    assert!((0..15).contains(&first.0) && (0..15).contains(&first.1), "{first:?}");
    let reply = parse_xy(&ask(&mut brain, "TURN 0,0")).unwrap();
    assert!(reply != first && reply != (0, 0), "a new point: {reply:?}");
    brain.send("END\n").unwrap();
    assert!(brain.wait().unwrap().success());
}

/// Sends `line` and returns the answer (MESSAGE and DEBUG lines skipped).
fn ask(brain: &mut EngineProcess, line: &str) -> String {
    brain.send(&format!("{line}\n")).unwrap();
    brain.next_line(Duration::from_secs(60)).expect("the brain answers within 60 s")
}

#[test]
fn refuses_a_residual_net_and_the_commands_that_need_libtorch() {
    let dir = tempfile::tempdir().unwrap();
    let gen = generation(dir.path(), "tiny");
    let out = Command::new(no_torch_binary()).args(["gomocup", "--model"]).arg(&gen).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(e.contains("residual (ResNet) net needs libtorch") && e.contains(&gen.display().to_string()), "{e}");
    for command in ["train", "trainer", "selfplay", "export", "check-run"] {
        let out = Command::new(no_torch_binary()).args([command, "--run", "somewhere"]).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{command}");
        let e = String::from_utf8_lossy(&out.stderr);
        assert!(e.contains(&format!("`renju-zero {command}` needs libtorch")), "{command}: {e}");
    }
    // The heuristic needs no model at all.
    let out = Command::new(no_torch_binary()).args(["rules", "openings"]).output().unwrap();
    assert!(out.status.success() && String::from_utf8_lossy(&out.stdout).contains("D1"));
}

#[test]
fn analyses_a_position_with_a_line_pattern_generation() {
    let dir = tempfile::tempdir().unwrap();
    let gen = generation(dir.path(), "linepattern-tiny");
    let mut child = Command::new(no_torch_binary())
        .args(["analyze", "--model"])
        .arg(&gen)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let query = r#"{"id":"q","rule":"renju","moves":["h8","h9","i8","i9","j8"],"visits":50,"top":2}"#;
    std::io::Write::write_all(child.stdin.as_mut().unwrap(), format!("{query}\n").as_bytes()).unwrap();
    drop(child.stdin.take());
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let answer: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(answer["id"], "q");
    assert_eq!(answer["visits"], 50);
    // The untrained net's choice is arbitrary; the candidates are empty points, and the solver
    // finds Black's four g8 (h8 i8 j8 open three) whoever is to move.
    let candidates = answer["candidates"].as_array().unwrap();
    assert_eq!(candidates.len(), 2, "{answer}");
    for c in candidates {
        let a = c["action"].as_str().unwrap();
        assert!(!["h8", "h9", "i8", "i9", "j8"].contains(&a), "{a} is occupied: {answer}");
    }
    assert_eq!(answer["vcf"]["black"]["result"], "win", "{answer}");
}
