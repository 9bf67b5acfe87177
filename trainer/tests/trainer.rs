//! Trainer tests: overfitting, symmetry alignment, TorchScript parity,
//! TensorBoard read-back, error messages.

mod common;

use common::{tiny_config, write_real_shard, write_shard, SIZE};
use renju_selfplay::action::action_space_size;
use renju_selfplay::encode::{NUM_GLOBALS, NUM_PLANES};
use renju_selfplay::eval::Evaluator;
use renju_trainer::config::{LrSchedule, NetConfig, OptimizerConfig, TrainerConfig};
use renju_trainer::metrics::{read_scalars, MetricsSink, TensorBoardSink};
use renju_trainer::model::{load_model, ModelConfig, ModelEvaluator};
use renju_trainer::replay::SymmetryTable;
use renju_trainer::{RunDir, Trainer};

fn idx(x: usize, y: usize) -> usize {
    y * SIZE + x
}

#[test]
fn tiny_net_overfits_a_small_data_set() {
    let run = tempfile::tempdir().unwrap();
    write_shard(&RunDir::new(run.path()).selfplay(), 0..32);
    let mut cfg = tiny_config();
    cfg.batch_size = 32;
    cfg.augment_symmetry = false;
    cfg.l2 = 0.0;
    cfg.optimizer = OptimizerConfig::Adamw { beta1: 0.9, beta2: 0.999, eps: 1e-8, weight_decay: 0.0 };
    cfg.schedule = LrSchedule { lr: 0.01, warmup_steps: 10, milestones: vec![(250, 0.3)] };
    let mut t = Trainer::open_or_resume(&RunDir::new(run.path()), cfg).unwrap();
    let st = t.refresh_window().unwrap();
    assert_eq!((st.total_samples, st.window_samples, st.shards), (32, 32, 1));
    let first = t.train_steps(1).unwrap();
    // Untrained: about ln(A) + ln(3) = ln(239) + ln(3) = 6.575 nats.
    assert!(first.loss > 3.0, "initial loss {}", first.loss);
    let m = t.train_steps(349).unwrap();
    let last = *m.step_losses.last().unwrap();
    assert!(last < 0.1, "final loss {last} (policy {}, value {})", m.policy_loss, m.value_loss);
}

#[test]
fn symmetry_keeps_planes_and_policy_target_aligned() {
    let p = SIZE * SIZE;
    let a = action_space_size(SIZE);
    let table = SymmetryTable::new(SIZE);
    // A black stone on b1 (x=1, y=0), a white stone on d3 (x=3, y=2); policy 0.75 on b1 and
    // 0.25 on d3; protocol actions get distinct values that must not move.
    let mut planes = vec![0u8; NUM_PLANES * p];
    planes[idx(1, 0)] = 1;
    planes[p + idx(3, 2)] = 1;
    let mut policy = vec![0f32; a];
    policy[idx(1, 0)] = 0.75;
    policy[idx(3, 2)] = 0.25;
    for (k, v) in policy[p..].iter_mut().enumerate() {
        *v = 100.0 + k as f32;
    }
    // Symmetry bits: 4 = transpose first, 1 = flip x, 2 = flip y (renju_rules::Symmetry).
    // Expected images of (1,0) and (3,2), written out by hand.
    let expected = [
        (0, (1, 0), (3, 2)),
        (1, (13, 0), (11, 2)),
        (2, (1, 14), (3, 12)),
        (3, (13, 14), (11, 12)),
        (4, (0, 1), (2, 3)),
        (5, (14, 1), (12, 3)),
        (6, (0, 13), (2, 11)),
        (7, (14, 13), (12, 11)),
    ];
    for (k, b, w) in expected {
        let mut out_planes = vec![0f32; NUM_PLANES * p];
        let mut out_policy = vec![0f32; a];
        table.planes(k, &planes, &mut out_planes);
        table.policy(k, &policy, &mut out_policy);
        assert_eq!(out_planes[idx(b.0, b.1)], 1.0, "symmetry {k}: black stone");
        assert_eq!(out_planes[p + idx(w.0, w.1)], 1.0, "symmetry {k}: white stone");
        assert_eq!(out_planes.iter().sum::<f32>(), 2.0, "symmetry {k}: stone count");
        assert_eq!(out_policy[idx(b.0, b.1)], 0.75, "symmetry {k}: policy on the black stone");
        assert_eq!(out_policy[idx(w.0, w.1)], 0.25, "symmetry {k}: policy on the white stone");
        assert_eq!(out_policy[..p].iter().sum::<f32>(), 1.0);
        assert_eq!(&out_policy[p..], &policy[p..], "symmetry {k}: protocol actions moved");
    }
}

#[test]
fn publish_then_torchscript_matches_rust_model() {
    let run = tempfile::tempdir().unwrap();
    write_shard(&RunDir::new(run.path()).selfplay(), 0..32);
    let mut t = Trainer::open_or_resume(&RunDir::new(run.path()), tiny_config()).unwrap();
    // Generation 0 was published on creation.
    let models = RunDir::new(run.path()).models();
    assert!(models.join("gen-000000/model.pt").exists());
    t.refresh_window().unwrap();
    t.train_steps(3).unwrap(); // batch-norm statistics move away from their initial values
    assert_eq!(t.publish().unwrap(), 1);
    assert_eq!(std::fs::read_to_string(models.join("LATEST")).unwrap().trim(), "gen-000001");
    let cfg = ModelConfig::read(&models.join("gen-000001")).unwrap();
    assert_eq!((cfg.generation, cfg.trained_steps, cfg.board_size), (1, 3, SIZE));

    let n = 3; // differs from the tracing batch (2)
    let planes: Vec<f32> = (0..n * NUM_PLANES * SIZE * SIZE).map(|i| ((i * 7919) % 5 == 0) as u8 as f32).collect();
    let globals: Vec<f32> = (0..n * NUM_GLOBALS).map(|i| (i % 3) as f32 * 0.5).collect();
    // The evaluator follows LATEST.
    let mut ev = ModelEvaluator::load(&models, tch::Device::Cpu).unwrap();
    assert_eq!(ev.generation(), 1);
    let out = ev.evaluate(&planes, &globals, n).unwrap();
    let a = action_space_size(SIZE);
    assert_eq!(out.policy_logits.len(), n * a);
    assert_eq!(out.wdl.len(), n * 3);
    for row in out.wdl.chunks(3) {
        assert!((row.iter().sum::<f32>() - 1.0).abs() < 1e-5);
    }
    let module = tch::CModule::load(models.join("gen-000001/model.pt")).unwrap();
    let pt = tch::Tensor::from_slice(&planes).view([n as i64, NUM_PLANES as i64, SIZE as i64, SIZE as i64]);
    let gt = tch::Tensor::from_slice(&globals).view([n as i64, NUM_GLOBALS as i64]);
    let y = module.forward_ts(&[pt, gt]).unwrap();
    assert_eq!(y.size(), vec![n as i64, a as i64 + 3]);
    let y: Vec<f32> = Vec::try_from(&y.flatten(0, -1)).unwrap();
    for b in 0..n {
        for i in 0..a {
            let d = (y[b * (a + 3) + i] - out.policy_logits[b * a + i]).abs();
            assert!(d < 1e-4, "policy logit {b},{i} differs by {d}");
        }
        let mut v = y[b * (a + 3) + a..(b + 1) * (a + 3)].to_vec();
        renju_selfplay::eval::softmax(&mut v);
        for (k, x) in v.iter().enumerate() {
            let d = (x - out.wdl[b * 3 + k]).abs();
            assert!(d < 1e-5, "wdl {b},{k} differs by {d}");
        }
    }
    // Publishing never overwrites: an explicit generation 1 is refused and left intact.
    let before = std::fs::read(models.join("gen-000001/model.safetensors")).unwrap();
    let loaded = load_model(&models.join("gen-000001"), tch::Device::Cpu).unwrap();
    let err = renju_trainer::model::publish_model(&models, &loaded.vs, &cfg).unwrap_err();
    assert!(format!("{err:#}").contains("refusing to overwrite"), "{err:#}");
    assert_eq!(std::fs::read(models.join("gen-000001/model.safetensors")).unwrap(), before);
}

#[test]
fn tensorboard_scalars_read_back() {
    let dir = tempfile::tempdir().unwrap();
    {
        let mut sink = TensorBoardSink::new(dir.path()).unwrap();
        sink.scalar("loss/total", 1, 2.5);
        sink.scalar("train/lr", 1, 0.02);
        sink.scalar("loss/total", 2, 1.25);
        sink.flush();
    }
    let files: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(files.len(), 1);
    assert!(files[0].file_name().unwrap().to_string_lossy().starts_with("events.out.tfevents."));
    let scalars = read_scalars(&files[0]).unwrap();
    assert_eq!(
        scalars,
        vec![
            ("loss/total".to_string(), 1, 2.5),
            ("train/lr".to_string(), 1, 0.02),
            ("loss/total".to_string(), 2, 1.25)
        ]
    );
}

#[test]
fn bad_models_and_empty_window_give_errors_naming_the_file() {
    let run = tempfile::tempdir().unwrap();
    let mut t = Trainer::open_or_resume(&RunDir::new(run.path()), tiny_config()).unwrap();
    // Empty replay window.
    t.refresh_window().unwrap();
    let err = format!("{:#}", t.train_steps(1).unwrap_err());
    assert!(err.contains("replay window is empty") && err.contains("selfplay"), "{err}");

    let gen0 = run.path().join("models/gen-000000");
    // Missing model directory.
    let missing = run.path().join("models/gen-000042");
    let err = format!("{:#}", ModelEvaluator::load(&missing, tch::Device::Cpu).err().unwrap());
    assert!(err.contains("gen-000042"), "{err}");

    // Corrupt weights.
    let copy = run.path().join("copy");
    std::fs::create_dir(&copy).unwrap();
    for f in ["config.json", "model.safetensors", "model.pt"] {
        std::fs::copy(gen0.join(f), copy.join(f)).unwrap();
    }
    std::fs::write(copy.join("model.safetensors"), b"not a safetensors file").unwrap();
    let err = format!("{:#}", ModelEvaluator::load(&copy, tch::Device::Cpu).err().unwrap());
    assert!(err.contains(&copy.join("model.safetensors").display().to_string()) && err.contains("corrupt"), "{err}");

    // Missing weights.
    std::fs::remove_file(copy.join("model.safetensors")).unwrap();
    let err = format!("{:#}", ModelEvaluator::load(&copy, tch::Device::Cpu).err().unwrap());
    assert!(err.contains(&copy.join("model.safetensors").display().to_string()) && err.contains("missing"), "{err}");

    // Encoder version mismatch.
    std::fs::copy(gen0.join("model.safetensors"), copy.join("model.safetensors")).unwrap();
    let text = std::fs::read_to_string(copy.join("config.json")).unwrap();
    let mut json: serde_json::Value = serde_json::from_str(&text).unwrap();
    json["encoder_version"] = serde_json::json!(999);
    std::fs::write(copy.join("config.json"), json.to_string()).unwrap();
    let err = format!("{:#}", ModelEvaluator::load(&copy, tch::Device::Cpu).err().unwrap());
    assert!(err.contains("encoder version 999") && err.contains("config.json"), "{err}");

    // Corrupt config.
    std::fs::write(copy.join("config.json"), b"{ truncated").unwrap();
    let err = format!("{:#}", ModelEvaluator::load(&copy, tch::Device::Cpu).err().unwrap());
    assert!(err.contains(&copy.join("config.json").display().to_string()) && err.contains("corrupt"), "{err}");

    // Corrupt checkpoint.
    drop(t);
    let ckpt = run.path().join("checkpoints/step-000000000");
    std::fs::write(ckpt.join("optimizer.safetensors"), b"garbage").unwrap();
    let err = format!("{:#}", Trainer::open_or_resume(&RunDir::new(run.path()), tiny_config()).err().unwrap());
    assert!(err.contains(&ckpt.join("optimizer.safetensors").display().to_string()), "{err}");
}

#[test]
fn window_grows_with_samples_and_counts_them() {
    let run = tempfile::tempdir().unwrap();
    let sp = RunDir::new(run.path()).selfplay();
    let mut cfg = tiny_config();
    // c = 20, alpha = 0.75, beta = 0.4.
    cfg.window = renju_trainer::config::WindowConfig { min_samples: 20, alpha: 0.75, beta: 0.4, max_samples: 1000 };
    cfg.samples_per_new_sample = 2.0;
    let mut t = Trainer::open_or_resume(&RunDir::new(run.path()), cfg).unwrap();
    write_shard(&sp, 0..15);
    let st = t.refresh_window().unwrap();
    assert_eq!((st.total_samples, st.window_samples), (15, 15));
    // budget 15 * 2 = 30 samples = 1 batch of 16.
    assert_eq!(t.steps_allowed(), 1);
    write_shard(&sp, 15..80);
    let st = t.refresh_window().unwrap();
    // N = 80 = 4c: 20 * (1 + 0.4 * (4^0.75 - 1) / 0.75) = 39.5 -> 39.
    assert_eq!((st.total_samples, st.window_samples, st.shards), (80, 39, 2));
    t.train_steps(2).unwrap();
    assert_eq!(t.samples_trained(), 32);
    assert_eq!(t.steps_allowed(), (160 - 32) / 16);
}

#[test]
fn the_window_holds_only_its_own_shards_arrays() {
    use common::write_shard_of_rule;
    use renju_trainer::config::WindowConfig;
    use renju_trainer::replay::ReplayWindow;
    let dir = tempfile::tempdir().unwrap();
    let sp = dir.path();
    // The oldest shard is of another rule: its length reads, its arrays would be rejected.
    let foreign_old = write_shard_of_rule(sp, renju_rules::Rule::Standard, 0..10);
    for k in 1..10 {
        write_shard(sp, k * 10..k * 10 + 10);
    }
    let cfg = WindowConfig { min_samples: 20, alpha: 0.75, beta: 0.4, max_samples: 25 };
    let mut w = ReplayWindow::new(sp, renju_trainer::NetShape::current(SIZE), renju_rules::Rule::Renju, cfg);
    let st = w.refresh().unwrap();
    assert_eq!((st.total_samples, st.window_samples, st.shards), (100, 25, 10));
    assert_eq!(w.resident_samples(), 30, "the arrays of the newest three shards, which cover the window of 25");
    assert!(w.take_rejected().is_empty(), "a shard outside the window has only its length read");
    assert!(foreign_old.exists());
    // One inside the window is rejected when its arrays are read, and the window is made without it.
    let foreign_new = write_shard_of_rule(sp, renju_rules::Rule::Standard, 0..10);
    let st = w.refresh().unwrap();
    let rejected = w.take_rejected();
    assert_eq!(rejected.len(), 1, "{rejected:?}");
    assert!(rejected[0].1.contains("rule Standard"), "{}", rejected[0].1);
    assert!(!foreign_new.exists() && rejected[0].0.exists(), "moved aside, not lost");
    assert_eq!((st.total_samples, st.window_samples, st.shards), (100, 25, 10));
    assert_eq!(w.resident_samples(), 30);
    assert_eq!(w.snapshot().len(), 25);
}

#[test]
fn export_writes_torchscript_and_safetensors_and_never_overwrites() {
    use renju_trainer::export::{export, ExportFormat};
    let run = tempfile::tempdir().unwrap();
    let t = Trainer::open_or_resume(&RunDir::new(run.path()), tiny_config()).unwrap();
    drop(t);
    let models = RunDir::new(run.path()).models();
    let out = tempfile::tempdir().unwrap();
    let pt = out.path().join("net.pt");
    let st = out.path().join("net.safetensors");
    export(&models, ExportFormat::TorchScript, &pt).unwrap();
    export(&models, ExportFormat::Safetensors, &st).unwrap();
    // The safetensors export holds exactly the published weights.
    let a = tch::Tensor::read_safetensors(&st).unwrap();
    let b = tch::Tensor::read_safetensors(models.join("gen-000000/model.safetensors")).unwrap();
    assert_eq!(a.len(), b.len());
    let b: std::collections::HashMap<_, _> = b.into_iter().collect();
    for (name, t) in &a {
        assert!(t.equal(&b[name]), "tensor {name} differs");
    }
    // The TorchScript export gives the evaluator's outputs.
    let n = 2;
    let planes = vec![0.5f32; n * NUM_PLANES * SIZE * SIZE];
    let globals = vec![1.0f32; n * NUM_GLOBALS];
    let out_ev = ModelEvaluator::load(&models, tch::Device::Cpu).unwrap().evaluate(&planes, &globals, n).unwrap();
    let module = tch::CModule::load(&pt).unwrap();
    let y = module
        .forward_ts(&[
            tch::Tensor::from_slice(&planes).view([n as i64, NUM_PLANES as i64, SIZE as i64, SIZE as i64]),
            tch::Tensor::from_slice(&globals).view([n as i64, NUM_GLOBALS as i64]),
        ])
        .unwrap();
    let a_len = action_space_size(SIZE) as i64;
    let p: Vec<f32> = Vec::try_from(&y.narrow(1, 0, a_len).flatten(0, -1)).unwrap();
    for (x, y) in p.iter().zip(&out_ev.policy_logits) {
        assert!((x - y).abs() < 1e-4);
    }
    // An existing output is refused and left unchanged.
    let before = std::fs::read(&pt).unwrap();
    let err = format!("{:#}", export(&models, ExportFormat::TorchScript, &pt).unwrap_err());
    assert!(err.contains("refusing to overwrite") && err.contains("net.pt"), "{err}");
    assert_eq!(std::fs::read(&pt).unwrap(), before);
}

#[test]
fn a_version_1_model_still_loads_and_plays() {
    use rand::SeedableRng;
    use renju_rules::{Action, Game, Point, Protocol, Rule};
    use renju_selfplay::encode::{encode, planes_for_version, planes_len};
    use renju_selfplay::mcts::{search_with, Mcts, SearchConfig};
    use renju_trainer::{Net, NetShape};
    // A model directory as a build of encoder version 1 published it: 8 input planes.
    let dir = tempfile::tempdir().unwrap();
    let models = dir.path().join("models");
    let net_cfg = tiny_config().net;
    let shape = NetShape::for_version(1, SIZE).unwrap();
    assert_eq!((shape.planes, shape.globals), (8, NUM_GLOBALS));
    let vs = tch::nn::VarStore::new(tch::Device::Cpu);
    let _net = Net::new(&vs.root(), &net_cfg, shape).unwrap();
    let mc = ModelConfig::for_encoder(0, Rule::Renju, SIZE, net_cfg, 1).unwrap();
    assert_eq!(mc.shape, shape);
    renju_trainer::model::publish_model(&models, &vs, &mc).unwrap();
    let mut ev = ModelEvaluator::load(&models, tch::Device::Cpu).unwrap();
    assert_eq!(ev.config().encoder_version, 1);
    // It evaluates positions of the current encoding: the same output as its TorchScript
    // module given the version-1 planes of the same position.
    let mut g = Game::new(SIZE, Rule::Renju, Protocol::Free { centre: false }, None).unwrap();
    for (x, y) in [(4, 4), (5, 5), (4, 5)] {
        g.apply(Action::Place(Point::new(x, y))).unwrap();
    }
    let (mut planes, mut globals) = (vec![0.0; planes_len(SIZE)], vec![0.0; NUM_GLOBALS]);
    encode(&g, &mut planes, &mut globals);
    let out = ev.evaluate(&planes, &globals, 1).unwrap();
    let v1 = planes_for_version(1, &planes, &globals, 1, SIZE).unwrap();
    let module = tch::CModule::load(models.join("gen-000000/model.pt")).unwrap();
    let y = module
        .forward_ts(&[
            tch::Tensor::from_slice(&v1).view([1, 8, SIZE as i64, SIZE as i64]),
            tch::Tensor::from_slice(&globals).view([1, NUM_GLOBALS as i64]),
        ])
        .unwrap();
    let y: Vec<f32> = Vec::try_from(&y.flatten(0, -1)).unwrap();
    let a = action_space_size(SIZE);
    for (i, (ts, ours)) in y[..a].iter().zip(&out.policy_logits).enumerate() {
        assert!((ts - ours).abs() < 1e-4, "policy logit {i}");
    }
    // And it plays: a search over it picks a legal move.
    let mut m = Mcts::new(&g, SearchConfig::default());
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
    search_with(&mut m, 24, 4, &mut rng, |p, gl, n| ev.evaluate(p, gl, n)).unwrap();
    let best = m.root_children().into_iter().max_by_key(|c| c.1).unwrap().0;
    assert!(g.is_legal(renju_selfplay::action::action_from_index(best, SIZE).unwrap()));
}

#[test]
fn encoder_versions_1_and_3_train_publish_and_play() {
    use renju_selfplay::encode::{planes_for_version, random_positions, NUM_PLANES};
    let (planes, globals) = random_positions(3, SIZE, 10..=30, 7);
    for (version, want_planes) in [(1u32, 8usize), (3, 11)] {
        let run = tempfile::tempdir().unwrap();
        let rd = RunDir::new(run.path());
        write_real_shard(&rd.selfplay(), 48, 5);
        let mut cfg = tiny_config();
        cfg.encoder_version = version;
        cfg.vcf_plane_dropout = 0.5;
        let mut t = Trainer::open_or_resume(&rd, cfg.clone()).unwrap();
        t.refresh_window().unwrap();
        let m = t.train_steps(3).unwrap();
        assert!(m.loss.is_finite() && m.loss > 0.0, "version {version}: loss {}", m.loss);
        assert_eq!(t.publish().unwrap(), 1);
        t.checkpoint().unwrap();
        let mut ev = ModelEvaluator::load(&rd.models(), tch::Device::Cpu).unwrap();
        assert_eq!(ev.config().encoder_version, version);
        assert_eq!(ev.config().shape.planes, want_planes);
        // It plays positions of the current encoding, converting them itself: the same output
        // as its TorchScript module given the converted planes.
        let out = ev.evaluate(&planes, &globals, 3).unwrap();
        let conv = planes_for_version(version, &planes, &globals, 3, SIZE).unwrap();
        assert_eq!(conv.len(), 3 * want_planes * SIZE * SIZE);
        let module = tch::CModule::load(rd.generation(1).join("model.pt")).unwrap();
        let y = module
            .forward_ts(&[
                tch::Tensor::from_slice(&conv).view([3, want_planes as i64, SIZE as i64, SIZE as i64]),
                tch::Tensor::from_slice(&globals).view([3, NUM_GLOBALS as i64]),
            ])
            .unwrap();
        let y: Vec<f32> = Vec::try_from(&y.flatten(0, -1)).unwrap();
        let a = action_space_size(SIZE);
        for (ts, ours) in y[..a].iter().zip(&out.policy_logits[..a]) {
            assert!((ts - ours).abs() < 1e-4, "version {version}: {ts} vs {ours}");
        }
        // Resuming the run with another encoder version is refused, naming both.
        drop(t);
        let mut other = cfg.clone();
        other.encoder_version = 2;
        let e = format!("{:#}", Trainer::open_or_resume(&rd, other).err().unwrap());
        assert!(e.contains(&format!("encoder version {version}")) && e.contains("version 2"), "{e}");
        assert_eq!(NUM_PLANES, 9, "the shards hold version 2");
    }
}

#[test]
fn version_3_batches_carry_the_vcf_planes_and_drop_them_out() {
    use renju_selfplay::encode::{plane_v3, planes_for_version, NUM_PLANES};
    use renju_trainer::replay::{sample_batch, step_rng, BatchEncoding, ReplayWindow};
    use renju_trainer::NetShape;
    let run = tempfile::tempdir().unwrap();
    let rd = RunDir::new(run.path());
    write_real_shard(&rd.selfplay(), 200, 11);
    let shape = NetShape::current(SIZE);
    let mut w = ReplayWindow::new(&rd.selfplay(), shape, renju_rules::Rule::Renju, Default::default());
    w.refresh().unwrap();
    let snap = w.snapshot();
    let sym = SymmetryTable::new(SIZE);
    let (b, p) = (64usize, SIZE * SIZE);
    let batch = |enc| sample_batch(&snap, shape, &sym, b, true, enc, &mut step_rng(3, 9)).unwrap();
    let v2 = batch(BatchEncoding::CURRENT);
    let v2_planes: Vec<f32> = Vec::try_from(&v2.planes.flatten(0, -1)).unwrap();
    let v2_globals: Vec<f32> = Vec::try_from(&v2.globals.flatten(0, -1)).unwrap();
    let want = planes_for_version(3, &v2_planes, &v2_globals, b, SIZE).unwrap();
    // Without dropout: exactly the converted planes of the same samples.
    let v3 = batch(BatchEncoding { version: 3, vcf_plane_dropout: 0.0, ..BatchEncoding::CURRENT });
    assert_eq!(v3.planes.size(), vec![b as i64, 11, SIZE as i64, SIZE as i64]);
    let got: Vec<f32> = Vec::try_from(&v3.planes.flatten(0, -1)).unwrap();
    assert_eq!(got, want.to_vec());
    let vcf_count = |planes: &[f32]| -> usize {
        (0..b).map(|i| planes[i * 11 * p + plane_v3::VCF_OWN * p..(i + 1) * 11 * p].iter().sum::<f32>() as usize).sum()
    };
    let with = vcf_count(&got);
    assert!(with >= 5, "random midgames should give some VCFs: {with} marked points in {b} samples");
    // Dropout 1: the VCF planes are all zero and everything else is unchanged.
    let dropped = batch(BatchEncoding { version: 3, vcf_plane_dropout: 1.0, ..BatchEncoding::CURRENT });
    let dropped: Vec<f32> = Vec::try_from(&dropped.planes.flatten(0, -1)).unwrap();
    assert_eq!(vcf_count(&dropped), 0);
    for i in 0..b {
        let r = i * 11 * p..i * 11 * p + NUM_PLANES * p;
        assert_eq!(&dropped[r.clone()], &want[r]);
    }
    // Dropout 0.5: some samples keep their planes, some lose them.
    let half = batch(BatchEncoding { version: 3, vcf_plane_dropout: 0.5, ..BatchEncoding::CURRENT });
    let half: Vec<f32> = Vec::try_from(&half.planes.flatten(0, -1)).unwrap();
    let kept = vcf_count(&half);
    assert!(kept > 0 && kept < with, "dropout 0.5 kept {kept} of {with} marked points");
}

#[test]
fn opponent_replies_take_the_policy_targets_symmetry() {
    use renju_trainer::replay::{sample_batch, step_rng, BatchEncoding};
    let (_run, w, shape, sym) = window_of_sixty_positions();
    let (b, p, a) = (200usize, SIZE * SIZE, action_space_size(SIZE));
    let batch = sample_batch(&w.snapshot(), shape, &sym, b, true, BatchEncoding::CURRENT, &mut step_rng(5, 2)).unwrap();
    let rows = |t: &tch::Tensor| Vec::<f32>::try_from(&t.flatten(0, -1)).unwrap();
    let (policy, reply, weight) = (rows(&batch.policy), rows(&batch.opponent_policy), rows(&batch.opponent_weight));
    let swap = renju_selfplay::action::action_index(renju_rules::Action::Swap, SIZE);
    let (mut same, mut swaps, mut none) = (0, 0, 0);
    for i in 0..b {
        let (pol, rep) = (&policy[i * a..(i + 1) * a], &reply[i * a..(i + 1) * a]);
        match weight[i] {
            0.0 => {
                assert!(rep.iter().all(|&x| x == 0.0), "sample {i}: no reply, yet a target");
                none += 1;
            }
            1.0 => {
                assert_eq!(rep.iter().sum::<f32>(), 1.0, "sample {i}: a one-hot reply");
                if rep[swap] == 1.0 {
                    swaps += 1;
                } else {
                    // The reply is the policy's point: both moved by the sample's symmetry.
                    assert_eq!(&rep[..p], &pol[..p], "sample {i}: reply and policy target apart");
                    same += 1;
                }
            }
            w => panic!("sample {i}: weight {w}"),
        }
    }
    assert!(same > 40 && swaps > 40 && none > 40, "{same} on the point, {swaps} swaps, {none} without");
}

#[test]
fn the_value_target_blends_the_short_horizon_value_by_its_weight() {
    use renju_trainer::replay::{sample_batch, step_rng, BatchEncoding};
    let (_run, w, shape, sym) = window_of_sixty_positions();
    let b = 100usize;
    let rows = |t: &tch::Tensor| Vec::<f32>::try_from(&t.flatten(0, -1)).unwrap();
    // The synthetic positions: a win where global 0 is 1, else a loss; the short value half that.
    for (weight, win, loss) in
        [(0.0, [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]), (0.5, [0.875, 0.0, 0.125], [0.125, 0.0, 0.875])]
    {
        let enc = BatchEncoding { short_value_weight: weight, ..BatchEncoding::CURRENT };
        let batch = sample_batch(&w.snapshot(), shape, &sym, b, true, enc, &mut step_rng(5, 2)).unwrap();
        let (value, globals) = (rows(&batch.value), rows(&batch.globals));
        let wins = (0..b).filter(|&i| globals[i * shape.globals] == 1.0).count();
        for i in 0..b {
            let want = if globals[i * shape.globals] == 1.0 { win } else { loss };
            assert_eq!(&value[i * 3..i * 3 + 3], &want, "weight {weight}, sample {i}");
        }
        assert!(wins > 20 && wins < 80, "{wins} wins of {b}");
    }
}

#[test]
fn the_opponent_policy_head_learns_and_stays_out_of_the_published_model() {
    let run = tempfile::tempdir().unwrap();
    let rd = RunDir::new(run.path());
    write_shard(&rd.selfplay(), 0..32);
    let mut cfg = tiny_config();
    cfg.batch_size = 32;
    cfg.augment_symmetry = false;
    cfg.l2 = 0.0;
    cfg.net.opponent_policy = true;
    cfg.opponent_policy_weight = 1.0;
    cfg.optimizer = OptimizerConfig::Adamw { beta1: 0.9, beta2: 0.999, eps: 1e-8, weight_decay: 0.0 };
    cfg.schedule = LrSchedule { lr: 0.01, warmup_steps: 10, milestones: vec![] };
    let mut t = Trainer::open_or_resume(&rd, cfg).unwrap();
    t.refresh_window().unwrap();
    let first = t.train_steps(1).unwrap();
    // Untrained: about ln(A) = ln(239) = 5.5 nats on the 2/3 of positions with a reply.
    assert!(first.opponent_policy_loss > 2.5, "initial opponent-policy loss {}", first.opponent_policy_loss);
    // The last 50 steps' mean: how far it learnt, not how fast (the mean over all steps
    // depends on the initial weights, which tests running in parallel draw from torch's one RNG).
    t.train_steps(249).unwrap();
    let m = t.train_steps(50).unwrap();
    assert!(m.opponent_policy_loss < 0.1, "opponent-policy loss after training {}", m.opponent_policy_loss);
    let total = m.policy_loss + m.value_loss + m.opponent_policy_loss;
    assert!((m.loss - total).abs() < 0.05 * total.max(0.1), "the loss {} is not the sum {total}", m.loss);
    // The published model has the usual outputs and plays without the head, in both families
    // (the line-pattern net's table leaves the head out).
    assert_eq!(t.publish().unwrap(), 1);
    let lines = tempfile::tempdir().unwrap();
    write_shard(&RunDir::new(lines.path()).selfplay(), 0..32);
    let line_cfg = TrainerConfig {
        net: NetConfig { opponent_policy: true, ..NetConfig::preset("linepattern-tiny").unwrap() },
        ..tiny_config()
    };
    let mut lt = Trainer::open_or_resume(&RunDir::new(lines.path()), line_cfg).unwrap();
    lt.refresh_window().unwrap();
    assert!(lt.train_steps(2).unwrap().opponent_policy_loss > 0.0);
    assert_eq!(lt.publish().unwrap(), 1);
    let (planes, globals) = (vec![0f32; NUM_PLANES * SIZE * SIZE], vec![0f32; NUM_GLOBALS]);
    for models in [rd.models(), RunDir::new(lines.path()).models()] {
        let mut ev = ModelEvaluator::load(&models, tch::Device::Cpu).unwrap();
        let out = ev.evaluate(&planes, &globals, 1).unwrap();
        assert_eq!((out.policy_logits.len(), out.wdl.len()), (action_space_size(SIZE), 3), "{}", models.display());
    }
    // A run without the head reports no opponent-policy loss.
    let plain = tempfile::tempdir().unwrap();
    write_shard(&RunDir::new(plain.path()).selfplay(), 0..32);
    let mut t = Trainer::open_or_resume(&RunDir::new(plain.path()), tiny_config()).unwrap();
    t.refresh_window().unwrap();
    assert_eq!(t.train_steps(2).unwrap().opponent_policy_loss, 0.0);
}

#[test]
fn pruning_keeps_the_newest_ten_and_every_kth_generation() {
    use renju_trainer::generations::{list_generations, prune_generations};
    let dir = tempfile::tempdir().unwrap();
    for g in 0..=30u64 {
        let d = dir.path().join(format!("gen-{g:06}"));
        std::fs::create_dir(&d).unwrap();
        std::fs::write(d.join("config.json"), b"{}").unwrap();
    }
    std::fs::write(dir.path().join("LATEST"), b"gen-000030\n").unwrap();
    // every = 1 keeps everything.
    assert!(prune_generations(dir.path(), 1).unwrap().is_empty());
    assert_eq!(list_generations(dir.path()).unwrap().len(), 31);
    // every = 7: of 0..=20 (those with 10 newer ones) only multiples of 7 stay; 21..=30 stay.
    let pruned = prune_generations(dir.path(), 7).unwrap();
    let expected_pruned: Vec<u64> = (1..=20).filter(|g| g % 7 != 0).collect();
    assert_eq!(pruned, expected_pruned);
    let mut kept = vec![0, 7, 14];
    kept.extend(21..=30);
    assert_eq!(list_generations(dir.path()).unwrap(), kept);
    // Nothing else is left behind (no half-deleted directories), LATEST untouched.
    let names: Vec<String> =
        std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    assert_eq!(names.len(), kept.len() + 1, "{names:?}");
    assert_eq!(std::fs::read_to_string(dir.path().join("LATEST")).unwrap(), "gen-000030\n");
    // Idempotent.
    assert!(prune_generations(dir.path(), 7).unwrap().is_empty());
}

/// A replay window over one shard of the synthetic positions 0..60 (in a temporary run kept
/// alive by the first element), with its shape and symmetry table.
fn window_of_sixty_positions(
) -> (tempfile::TempDir, renju_trainer::replay::ReplayWindow, renju_trainer::NetShape, SymmetryTable) {
    let run = tempfile::tempdir().unwrap();
    let rd = RunDir::new(run.path());
    write_shard(&rd.selfplay(), 0..60);
    let shape = renju_trainer::NetShape::current(SIZE);
    let mut w =
        renju_trainer::replay::ReplayWindow::new(&rd.selfplay(), shape, renju_rules::Rule::Renju, Default::default());
    w.refresh().unwrap();
    (run, w, shape, SymmetryTable::new(SIZE))
}
