//! `renju-zero export --format onnx`: the file Rapfi's ONNX Runtime evaluator loads, for both
//! network families and every encoder version. ONNX Runtime (the project's Python, installed by
//! scripts/env.sh) runs it on 1,000 random positions, one at a time as Rapfi does, and it agrees
//! with our own evaluator given the same stones-only inputs within 1e-4; `model_version`
//! decodes to the model's rule and size, and a checker that reads the file as Rapfi does
//! refuses it for another rule or size.

use renju_rules::Rule;
use renju_selfplay::encode::{global, plane, plane_v3, random_positions, NUM_GLOBALS, NUM_PLANES};
use renju_selfplay::eval::Evaluator;
use renju_selfplay::stones_only::to_stones_only;
use renju_trainer::model::{publish_model, ModelConfig, ModelEvaluator};
use renju_trainer::onnx::{read_model_version, RapfiModelVersion};
use renju_trainer::{Net, NetConfig};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const SIZE: usize = 15;
const POSITIONS: usize = 1000;
const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/trainer/python/rapfi_onnx.py");

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_renju-zero"))
}

/// The project's Python (torch, onnx, onnxruntime), as scripts/env.sh installs it.
fn python() -> PathBuf {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join(".venv/bin/python");
    assert!(p.exists(), "{} is missing: `source scripts/env.sh` installs the project's Python", p.display());
    p
}

fn ok(out: &Output, what: &str) -> String {
    assert!(
        out.status.success(),
        "{what} failed ({}):\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Publishes generation 0 of `net` (encoder `version`, `rule`, side [`SIZE`]) under `dir`, every
/// variable moved off its initial value by noise of deviation `noise` (biases and batch-norm
/// statistics too), so that every path from the inputs to the outputs carries signal.
fn generation(dir: &Path, net: NetConfig, version: u32, rule: Rule, seed: i64, noise: f64) -> PathBuf {
    // Torch's generator is global: tests running in parallel take turns, so each draws from
    // its own seed only.
    static TORCH_RNG: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _turn = TORCH_RNG.lock().unwrap_or_else(|e| e.into_inner());
    tch::manual_seed(seed);
    let cfg = ModelConfig::for_encoder(0, rule, SIZE, net, version).unwrap();
    let vs = tch::nn::VarStore::new(tch::Device::Cpu);
    let _net = Net::new(&vs.root(), &cfg.net, cfg.shape).unwrap();
    tch::no_grad(|| {
        let mut vars: Vec<_> = vs.variables().into_iter().collect();
        // A fixed order: the noise drawn for each variable depends only on the seed.
        vars.sort_by(|a, b| a.0.cmp(&b.0));
        for (name, mut v) in vars {
            let noise = v.randn_like() * noise;
            let noise = if name.ends_with("running_var") { noise.abs() } else { noise };
            let _ = v.g_add_(&noise);
        }
    });
    publish_model(dir, &vs, &cfg).unwrap()
}

/// Exports `gen` to `<gen>.onnx` through the command; returns the file.
fn export(gen: &Path) -> PathBuf {
    let out = gen.with_extension("onnx");
    let run = bin()
        .args(["export", "--format", "onnx", "--model"])
        .arg(gen)
        .arg("--out")
        .arg(&out)
        .arg("--python")
        .arg(python())
        .output()
        .unwrap();
    let stdout = ok(&run, "export --format onnx");
    assert!(stdout.contains("model_version 0x"), "{stdout}");
    out
}

fn softmax(x: &[f32]) -> Vec<f32> {
    let m = x.iter().cloned().fold(f32::MIN, f32::max);
    let e: Vec<f32> = x.iter().map(|v| (v - m).exp()).collect();
    let s: f32 = e.iter().sum();
    e.iter().map(|v| v / s).collect()
}

fn read_f32(path: &Path) -> Vec<f32> {
    std::fs::read(path).unwrap().chunks_exact(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect()
}

/// Runs `onnx` with ONNX Runtime on [`POSITIONS`] random positions and compares it with our
/// evaluator of `gen` given the same stones-only inputs: win/draw/loss probabilities and the
/// placement logits within 1e-4. Returns the largest differences (value, policy).
fn agrees_with_our_evaluator(onnx: &Path, gen: &Path, seed: u64) -> (f32, f32) {
    let cfg = ModelConfig::read(gen).unwrap();
    let (n, pp) = (POSITIONS, SIZE * SIZE);
    let (mut planes, mut globals) = random_positions(n, SIZE, 0..=60, seed);
    // Rapfi's inputs: own and opponent stones, -1 when Black is to move.
    let mut board = Vec::with_capacity(n * 2 * pp);
    let mut side = Vec::with_capacity(n);
    for (pos, g) in planes.chunks_exact(NUM_PLANES * pp).zip(globals.chunks_exact_mut(NUM_GLOBALS)) {
        for c in [plane::OWN, plane::OPPONENT] {
            board.extend(pos[c * pp..(c + 1) * pp].iter().map(|&x| x as i8));
        }
        side.push(if g[global::DECIDER_IS_BLACK] > 0.5 { -1f32 } else { 1.0 });
        // The positions come from renju games; the model may be of another rule.
        let r = global::RULE_ORDER.iter().position(|&r| r == cfg.rule).unwrap();
        g[global::RULE..global::RULE + 3].fill(0.0);
        g[global::RULE + r] = 1.0;
    }
    let blacks = side.iter().filter(|&&s| s < 0.0).count();
    assert!(blacks > n / 10 && blacks < n * 9 / 10, "both colours to move: {blacks} of {n} Black");
    let dir = tempfile::tempdir().unwrap();
    let f = |name: &str| dir.path().join(name);
    std::fs::write(f("board"), board.iter().map(|&b| b as u8).collect::<Vec<u8>>()).unwrap();
    std::fs::write(f("side"), side.iter().flat_map(|s| s.to_le_bytes()).collect::<Vec<u8>>()).unwrap();
    let run = Command::new(python())
        .arg(SCRIPT)
        .arg("run")
        .args([onnx, &f("board"), &f("side"), &f("value"), &f("policy")])
        .output()
        .unwrap();
    ok(&run, "onnxruntime");
    let (value, policy) = (read_f32(&f("value")), read_f32(&f("policy")));
    assert_eq!((value.len(), policy.len()), (n * 3, n * pp));

    // Ours: the stones-only encoding of the same positions.
    to_stones_only(&mut planes, &mut globals, n, SIZE).unwrap();
    let mut ev = ModelEvaluator::load(gen, tch::Device::Cpu).unwrap();
    let a = cfg.shape.actions;
    let (our_logits, our_wdl) = if cfg.encoder_version == 3 {
        // The evaluator would solve the VCF planes; the stones-only graph feeds them as zero.
        let c = plane_v3::COUNT;
        let mut v3 = vec![0f32; n * c * pp];
        for (src, dst) in planes.chunks_exact(NUM_PLANES * pp).zip(v3.chunks_exact_mut(c * pp)) {
            dst[..NUM_PLANES * pp].copy_from_slice(src);
        }
        let pl = tch::Tensor::from_slice(&v3).view([n as i64, c as i64, SIZE as i64, SIZE as i64]);
        let gl = tch::Tensor::from_slice(&globals).view([n as i64, NUM_GLOBALS as i64]);
        let (p, v) = ev.forward_tensors(&pl, &gl);
        let wdl = v.softmax(-1, tch::Kind::Float);
        (Vec::<f32>::try_from(&p.flatten(0, -1)).unwrap(), Vec::<f32>::try_from(&wdl.flatten(0, -1)).unwrap())
    } else {
        let out = ev.evaluate(&planes, &globals, n).unwrap();
        (out.policy_logits, out.wdl)
    };
    let mut worst = (0f32, 0f32);
    let mut spread = 0f32;
    for i in 0..n {
        // Rapfi's value order is win, loss, draw; ours win, draw, loss.
        let p = softmax(&value[i * 3..i * 3 + 3]);
        let ours = &our_wdl[i * 3..i * 3 + 3];
        for (x, y) in [(p[0], ours[0]), (p[1], ours[2]), (p[2], ours[1])] {
            worst.0 = worst.0.max((x - y).abs());
        }
        let theirs = &policy[i * pp..(i + 1) * pp];
        let ours = &our_logits[i * a..i * a + pp];
        for (x, y) in theirs.iter().zip(ours) {
            worst.1 = worst.1.max((x - y).abs());
        }
        let max = theirs.iter().cloned().fold(f32::MIN, f32::max);
        spread = spread.max(max - theirs.iter().cloned().fold(f32::MAX, f32::min));
    }
    eprintln!("{}: largest differences value {:e}, policy {:e}", onnx.display(), worst.0, worst.1);
    assert!(worst.0 < 1e-4 && worst.1 < 1e-4, "{}: value {}, policy {}", onnx.display(), worst.0, worst.1);
    assert!(spread > 1e-2, "the policy logits vary over the board: spread {spread}");
    let wins: Vec<f32> = (0..n).map(|i| our_wdl[i * 3]).collect();
    let range = wins.iter().cloned().fold(f32::MIN, f32::max) - wins.iter().cloned().fold(f32::MAX, f32::min);
    assert!(range > 1e-3, "the win probability varies over the positions: range {range}");
    let gap = (0..n).map(|i| (our_wdl[i * 3] - our_wdl[i * 3 + 2]).abs()).fold(0f32, f32::max);
    assert!(gap > 1e-2, "win and loss differ, so their order is checked: largest gap {gap}");
    worst
}

/// The checker that reads `onnx` as Rapfi does (ONNX Runtime's model metadata, the input and
/// output names) for a game of `rule` on side `size`: `Ok(stdout)` or `Err(stderr)`.
fn rapfi_check(onnx: &Path, rule: &str, size: usize) -> Result<String, String> {
    let out = Command::new(python())
        .arg(SCRIPT)
        .arg("check")
        .arg(onnx)
        .args(["--rule", rule, "--size", &size.to_string()])
        .output()
        .unwrap();
    match out.status.code() {
        Some(0) => Ok(String::from_utf8_lossy(&out.stdout).into_owned()),
        Some(2) => Err(String::from_utf8_lossy(&out.stderr).into_owned()),
        _ => panic!("the checker failed: {}", String::from_utf8_lossy(&out.stderr)),
    }
}

#[test]
fn resnet_exports_agree_with_our_evaluator_and_carry_rule_and_size() {
    let dir = tempfile::tempdir().unwrap();
    let tiny = NetConfig::preset("tiny").unwrap();
    for (version, rule, seed) in [(2u32, Rule::Renju, 1i64), (1, Rule::Standard, 2), (3, Rule::Renju, 3)] {
        let gen = generation(&dir.path().join(format!("v{version}")), tiny.clone(), version, rule, seed, 0.2);
        let onnx = export(&gen);
        agrees_with_our_evaluator(&onnx, &gen, 10 + version as u64);
        let bytes = std::fs::read(&onnx).unwrap();
        let v = RapfiModelVersion::decode(read_model_version(&bytes).unwrap().expect("model_version is set"));
        assert_eq!(v, RapfiModelVersion::of(rule, SIZE));
        assert!(v.serves(rule, SIZE));
        let name = if rule == Rule::Renju { "renju" } else { "standard" };
        let accepted = rapfi_check(&onnx, name, SIZE).unwrap();
        assert!(accepted.contains(&format!("serves {name} on 15x15")), "{accepted}");
        if rule == Rule::Renju {
            assert_eq!(v.to_i64(), 0x0001_0004_0000_4000);
            let e = rapfi_check(&onnx, "standard", SIZE).unwrap_err();
            assert!(e.contains("not for rule standard") && e.contains("0x0001000400004000"), "{e}");
            let e = rapfi_check(&onnx, "renju", 13).unwrap_err();
            assert!(e.contains("not for board size 13"), "{e}");
        } else {
            assert_eq!(v.to_i64(), 0x0001_0002_0000_4000);
            let e = rapfi_check(&onnx, "renju", SIZE).unwrap_err();
            assert!(e.contains("not for rule renju"), "{e}");
        }
    }
}

#[test]
fn line_pattern_export_agrees_with_our_evaluator() {
    let dir = tempfile::tempdir().unwrap();
    // Its summed line features are large, so the value saturates for some initial weights;
    // this seed leaves it unsaturated (win probability 0.34 on average, range 0.72).
    let gen = generation(dir.path(), NetConfig::preset("linepattern-tiny").unwrap(), 2, Rule::Renju, 1, 0.05);
    let onnx = export(&gen);
    agrees_with_our_evaluator(&onnx, &gen, 20);
    assert!(rapfi_check(&onnx, "renju", SIZE).is_ok());
    assert!(rapfi_check(&onnx, "freestyle", SIZE).unwrap_err().contains("not for rule freestyle"));
}

#[test]
fn export_without_the_projects_python_fails_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let gen = generation(dir.path(), NetConfig::preset("tiny").unwrap(), 2, Rule::Renju, 5, 0.2);
    let out = dir.path().join("m.onnx");
    let run = |python: &Path| {
        bin()
            .args(["export", "--format", "onnx", "--model"])
            .arg(&gen)
            .arg("--out")
            .arg(&out)
            .arg("--python")
            .arg(python)
            .output()
            .unwrap()
    };
    // No such interpreter.
    let r = run(&dir.path().join("no-python"));
    assert!(!r.status.success());
    let e = String::from_utf8_lossy(&r.stderr);
    assert!(e.contains("could not start") && e.contains("scripts/env.sh"), "{e}");
    // A Python without the venv's packages (site-packages off): torch is missing.
    let bare = dir.path().join("bare-python");
    std::fs::write(&bare, format!("#!/bin/sh\nexec '{}' -S \"$@\"\n", python().display())).unwrap();
    let mut perm = std::fs::metadata(&bare).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perm, 0o755);
    std::fs::set_permissions(&bare, perm).unwrap();
    let r = run(&bare);
    assert!(!r.status.success());
    let e = String::from_utf8_lossy(&r.stderr);
    assert!(e.contains("needs the Python package 'torch'") && e.contains("scripts/env.sh"), "{e}");
    assert!(!out.exists(), "nothing written");
    let leftovers: Vec<_> = std::fs::read_dir(dir.path()).unwrap().flatten().map(|e| e.file_name()).collect();
    assert!(leftovers.iter().all(|n| !n.to_string_lossy().ends_with(".tmp")), "scratch removed: {leftovers:?}");
}
