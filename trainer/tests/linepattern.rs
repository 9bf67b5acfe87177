//! Line-pattern net: the exported table evaluator equals the tch model, publishing records the
//! table with its checksum, the kind is checked on load, and a tiny net overfits.

mod common;

use common::{tiny_config, write_shard, SIZE};
use renju_selfplay::action::action_space_size;
use renju_selfplay::encode::{NUM_GLOBALS, NUM_PLANES};
use renju_selfplay::eval::Evaluator;
use renju_selfplay::linepattern::{Precision, TABLE_FILE};
use renju_trainer::config::{LrSchedule, NetConfig, NetKind, OptimizerConfig};
use renju_trainer::model::{load_evaluator, load_line_table, load_model, ModelConfig, ModelEvaluator};
use renju_trainer::{RunDir, Trainer};

fn line_config() -> renju_trainer::TrainerConfig {
    let mut cfg = tiny_config();
    cfg.net = NetConfig::preset("linepattern-tiny").unwrap();
    cfg
}

/// Serialises the tests of this file that train or draw from torch's global random generator
/// and seeds it: tests run in parallel threads of one process, and a test that draws while
/// another initialises a net would change that net's weights from run to run.
fn seeded_torch(seed: i64) -> std::sync::MutexGuard<'static, ()> {
    static TORCH: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let guard = TORCH.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    tch::manual_seed(seed);
    guard
}

/// `n` positions of random RIF games (every decision kind, 0..=60 stones).
fn random_positions(n: usize, seed: u64) -> (Vec<f32>, Vec<f32>) {
    renju_selfplay::encode::random_positions(n, SIZE, 0..=60, seed)
}

/// A line-pattern run trained a few steps (biases off zero) and published as generation 1.
fn trained_run() -> (tempfile::TempDir, std::path::PathBuf) {
    trained_run_with(0)
}

/// [`trained_run`] with a dynamic pointwise policy stage of `k` outputs (0: none).
fn trained_run_with(k: usize) -> (tempfile::TempDir, std::path::PathBuf) {
    let run = tempfile::tempdir().unwrap();
    write_shard(&RunDir::new(run.path()).selfplay(), 0..32);
    let mut cfg = line_config();
    cfg.net.policy_pointwise = k;
    cfg.schedule = LrSchedule { lr: 0.05, warmup_steps: 1, milestones: vec![] };
    let mut t = Trainer::open_or_resume(&RunDir::new(run.path()), cfg).unwrap();
    t.refresh_window().unwrap();
    t.train_steps(5).unwrap();
    assert_eq!(t.publish().unwrap(), 1);
    t.checkpoint().unwrap();
    let models = run.path().join("models");
    (run, models)
}

#[test]
fn table_evaluator_equals_the_tch_model_on_1000_random_positions() {
    table_evaluator_equals_the_tch_model(0);
}

/// The same with the dynamic pointwise policy stage: its trained weights (off their zero start)
/// reach the table file, and the table evaluator computes the stage as tch does.
#[test]
fn table_evaluator_equals_the_tch_model_with_a_pointwise_policy_stage() {
    table_evaluator_equals_the_tch_model(3);
}

fn table_evaluator_equals_the_tch_model(k: usize) {
    let _torch = seeded_torch(1);
    let (_run, models) = trained_run_with(k);
    let gen = models.join("gen-000001");
    let cfg = ModelConfig::read(&gen).unwrap();
    assert_eq!(cfg.net.kind, NetKind::Linepattern);
    let info = cfg.line_table.clone().expect("a line-pattern generation records its table");
    assert_eq!(info.file, TABLE_FILE);
    assert_eq!(info.checksum.len(), 64);
    let mut tch_ev = ModelEvaluator::load(&gen, tch::Device::Cpu).unwrap();
    assert_eq!(info.version, if k > 0 { 2 } else { 1 });
    let net = load_line_table(&gen).unwrap();
    let weights = renju_selfplay::linepattern::LinePatternWeights::read(&gen.join(TABLE_FILE)).unwrap();
    assert_eq!(weights.policy_pointwise(), k);
    if let Some(p) = &weights.pointwise {
        assert!(p.out.iter().all(|v| *v != 0.0), "trained off zero: {:?}", p.out);
    }
    let mut table_ev = net.evaluator().with_precision(Precision::F32);
    let mut quant_ev = net.evaluator().with_precision(Precision::I16);
    let n = 1000;
    let (planes, globals) = random_positions(n, 7);
    let a = action_space_size(SIZE);
    let pl = NUM_PLANES * SIZE * SIZE;
    let mut worst = (0f32, 0f32);
    let mut worst_i16 = (0f32, 0f32);
    let mut black_deciders = 0;
    for chunk in 0..10 {
        let r = chunk * 100..(chunk + 1) * 100;
        let (p, g) = (&planes[r.start * pl..r.end * pl], &globals[r.start * NUM_GLOBALS..r.end * NUM_GLOBALS]);
        black_deciders += g.chunks(NUM_GLOBALS).filter(|g| g[0] > 0.5).count();
        let want = tch_ev.evaluate(p, g, 100).unwrap();
        let got = table_ev.evaluate(p, g, 100).unwrap();
        for (x, y) in want.policy_logits.iter().zip(&got.policy_logits) {
            worst.0 = worst.0.max((x - y).abs());
        }
        for (x, y) in want.wdl.iter().zip(&got.wdl) {
            worst.1 = worst.1.max((x - y).abs());
        }
        let q = quant_ev.evaluate(p, g, 100).unwrap();
        for (x, y) in want.policy_logits.iter().zip(&q.policy_logits) {
            worst_i16.0 = worst_i16.0.max((x - y).abs());
        }
        for (x, y) in want.wdl.iter().zip(&q.wdl) {
            worst_i16.1 = worst_i16.1.max((x - y).abs());
        }
        assert_eq!(got.policy_logits.len(), 100 * a);
    }
    assert!(black_deciders > 100 && black_deciders < 900, "both colours decide: {black_deciders}");
    assert!(worst.0 < 1e-4 && worst.1 < 1e-4, "largest differences: logits {}, wdl {}", worst.0, worst.1);
    // The i16 table (the default in self-play): within the stated quantisation tolerance,
    // 1e-2 on a logit and 1e-3 on a W/D/L probability (docs/DESIGN.md), and really quantised.
    eprintln!("i16 table vs tch: largest differences logits {}, wdl {}", worst_i16.0, worst_i16.1);
    assert!(worst_i16.0 < 1e-2 && worst_i16.1 < 1e-3, "i16: logits {}, wdl {}", worst_i16.0, worst_i16.1);
    assert!(worst_i16.0 > worst.0, "the i16 evaluator differs from the f32 one");
    // The outputs are not trivially equal: logits vary across points.
    let out = table_ev.evaluate(&planes[..pl], &globals[..NUM_GLOBALS], 1).unwrap();
    let spread = out.policy_logits.iter().cloned().fold(f32::MIN, f32::max)
        - out.policy_logits.iter().cloned().fold(f32::MAX, f32::min);
    assert!(spread > 1e-3, "logit spread {spread}");

    // TorchScript export keeps working: model.pt gives the tch outputs for a batch of 3.
    let module = tch::CModule::load(gen.join("model.pt")).unwrap();
    let k = 3;
    let pt = tch::Tensor::from_slice(&planes[..k * pl]).view([k as i64, NUM_PLANES as i64, SIZE as i64, SIZE as i64]);
    let gt = tch::Tensor::from_slice(&globals[..k * NUM_GLOBALS]).view([k as i64, NUM_GLOBALS as i64]);
    let y: Vec<f32> = Vec::try_from(&module.forward_ts(&[pt, gt]).unwrap().flatten(0, -1)).unwrap();
    let want = tch_ev.evaluate(&planes[..k * pl], &globals[..k * NUM_GLOBALS], k).unwrap();
    for b in 0..k {
        for i in 0..a {
            let d = (y[b * (a + 3) + i] - want.policy_logits[b * a + i]).abs();
            assert!(d < 1e-4, "TorchScript logit {b},{i} differs by {d}");
        }
    }
}

#[test]
fn kind_and_table_are_checked_on_load() {
    let _torch = seeded_torch(1);
    let (run, models) = trained_run();
    let gen = models.join("gen-000001");
    // load_evaluator picks the table evaluator by the stored kind; it follows LATEST.
    let (mut ev, cfg) = load_evaluator(&models, renju_trainer::config::DeviceChoice::Cpu).unwrap();
    assert_eq!((cfg.generation, cfg.net.kind), (1, NetKind::Linepattern));
    let (p, g) = random_positions(2, 1);
    assert_eq!(ev.evaluate(&p, &g, 2).unwrap().wdl.len(), 6);
    // The tch loader builds the same family from the stored kind.
    assert!(matches!(load_model(&gen, tch::Device::Cpu).unwrap().net, renju_trainer::Net::Line(_)));
    // A table that is intact but not the one config.json records is refused too.
    let other = models.join("gen-000009");
    std::fs::create_dir_all(&other).unwrap();
    for e in std::fs::read_dir(&gen).unwrap().flatten() {
        std::fs::copy(e.path(), other.join(e.file_name())).unwrap();
    }
    let cfg_path = other.join("config.json");
    let text = std::fs::read_to_string(&cfg_path).unwrap();
    let recorded = ModelConfig::read(&gen).unwrap().line_table.unwrap().checksum;
    std::fs::write(&cfg_path, text.replace(&recorded, &"0".repeat(64))).unwrap();
    let err = format!("{:#}", load_line_table(&other).err().unwrap());
    assert!(err.contains("does not match the one config.json records") && err.contains(TABLE_FILE), "{err}");
    // A corrupt table is refused, naming the file.
    let table = gen.join(TABLE_FILE);
    let mut bytes = std::fs::read(&table).unwrap();
    let n = bytes.len();
    bytes[n - 100] ^= 1;
    std::fs::write(&table, &bytes).unwrap();
    let err = format!("{:#}", load_line_table(&gen).err().unwrap());
    assert!(err.contains("checksum mismatch") && err.contains(TABLE_FILE), "{err}");
    // A residual model is not a line-pattern table.
    let res = tempfile::tempdir().unwrap();
    Trainer::open_or_resume(&RunDir::new(res.path()), tiny_config()).unwrap();
    let err = format!("{:#}", load_line_table(&res.path().join("models")).err().unwrap());
    assert!(err.contains("not a line-pattern net"), "{err}");
    // A line-pattern checkpoint cannot be resumed as a residual run.
    let err = format!("{:#}", Trainer::open_or_resume(&RunDir::new(run.path()), tiny_config()).err().unwrap());
    assert!(err.contains("network/board size/rule differ"), "{err}");
}

#[test]
fn tiny_line_pattern_net_overfits_a_small_data_set() {
    let _torch = seeded_torch(1);
    let run = tempfile::tempdir().unwrap();
    write_shard(&RunDir::new(run.path()).selfplay(), 0..32);
    let mut cfg = line_config();
    cfg.batch_size = 32;
    cfg.augment_symmetry = false;
    cfg.l2 = 0.0;
    cfg.optimizer = OptimizerConfig::Adamw { beta1: 0.9, beta2: 0.999, eps: 1e-8, weight_decay: 0.0 };
    cfg.schedule = LrSchedule { lr: 0.03, warmup_steps: 5, milestones: vec![(30, 0.3)] };
    let mut t = Trainer::open_or_resume(&RunDir::new(run.path()), cfg).unwrap();
    t.refresh_window().unwrap();
    let first = t.train_steps(1).unwrap();
    assert!(first.loss > 3.0, "initial loss {}", first.loss);
    let m = t.train_steps(39).unwrap();
    let last = *m.step_losses.last().unwrap();
    assert!(last < 0.3, "final loss {last} (policy {}, value {})", m.policy_loss, m.value_loss);
}

#[test]
fn pattern_gather_path_equals_the_board_convolutions_in_outputs_and_gradients() {
    use renju_trainer::net::{LineNet, LinePath};
    use renju_trainer::NetShape;
    use tch::{nn, Device, Kind, Tensor};
    let _torch = seeded_torch(5);
    // Double precision: the two paths sum in different orders, and in single precision the
    // rounding of a bias gradient summed over thousands of terms depends on the CPU's kernels.
    let mut vs = nn::VarStore::new(Device::Cpu);
    let net =
        LineNet::new(&vs.root(), &NetConfig::preset("linepattern-tiny").unwrap(), NetShape::current(SIZE)).unwrap();
    vs.double();
    // Biases start at zero; move every variable off its initial value so no term vanishes.
    tch::no_grad(|| {
        for (_, mut v) in vs.variables() {
            let _ = v.f_add_(&(v.randn_like() * 0.05)).unwrap();
        }
    });
    let n = 48;
    let (planes, globals) = random_positions(n, 11);
    let pl =
        Tensor::from_slice(&planes).view([n as i64, NUM_PLANES as i64, SIZE as i64, SIZE as i64]).to_kind(Kind::Double);
    let gl = Tensor::from_slice(&globals).view([n as i64, NUM_GLOBALS as i64]).to_kind(Kind::Double);
    let a = action_space_size(SIZE) as i64;
    // Both deciding colours and both empty and crowded boards are in the sample.
    let colour = pl.select(1, renju_selfplay::encode::plane::DECIDER_IS_BLACK as i64).amax([1, 2], false);
    let blacks = colour.sum(Kind::Float).double_value(&[]) as usize;
    assert!(blacks > 0 && blacks < n, "{blacks} of {n} positions have Black deciding");
    let wp = Tensor::randn([n as i64, a], (Kind::Double, Device::Cpu));
    let wv = Tensor::randn([n as i64, 3], (Kind::Double, Device::Cpu));
    let run = |path: LinePath| -> (Tensor, Tensor, Vec<(String, Tensor)>) {
        for (_, v) in vs.variables() {
            let mut g = v.grad();
            if g.defined() {
                let _ = g.zero_();
            }
        }
        let (p, v) = net.forward(&pl, &gl, path);
        ((&p * &wp).sum(Kind::Double) + (&v * &wv).sum(Kind::Double)).backward();
        let mut grads: Vec<(String, Tensor)> =
            vs.variables().into_iter().map(|(k, v)| (k, v.grad().detach().copy())).collect();
        grads.sort_by(|x, y| x.0.cmp(&y.0));
        (p.detach(), v.detach(), grads)
    };
    let (pb, vb, gb) = run(LinePath::Board);
    let (pp, vp, gp) = run(LinePath::Patterns);
    let max_diff = |x: &Tensor, y: &Tensor| (x - y).abs().max().double_value(&[]);
    let scale = |x: &Tensor| x.abs().max().double_value(&[]).max(1.0);
    assert!(max_diff(&pb, &pp) < 1e-9 * scale(&pb), "policy logits differ by {}", max_diff(&pb, &pp));
    assert!(max_diff(&vb, &vp) < 1e-9 * scale(&vb), "value logits differ by {}", max_diff(&vb, &vp));
    assert_eq!(gb.len(), gp.len());
    let mut line_grads = 0;
    for ((name, x), (_, y)) in gb.iter().zip(&gp) {
        assert!(
            max_diff(x, y) < 1e-9 * scale(x),
            "gradient of {name} differs by {} (scale {})",
            max_diff(x, y),
            scale(x)
        );
        if name.starts_with("line_") && x.abs().max().double_value(&[]) > 0.0 {
            line_grads += 1;
        }
    }
    // Both colours' line mappings (5 layers, weight and bias) received a gradient.
    assert_eq!(line_grads, 20, "line-mapping variables with a gradient");
}

#[test]
fn the_table_cache_shares_a_loaded_net_and_keeps_only_the_newest() {
    let _torch = seeded_torch(1);
    // A run loads every generation it publishes; the cache must not keep them all (it held
    // 17 MB per generation, about 12 GB after 30 minutes of the default config).
    let (_run, models) = trained_run();
    let first = load_line_table(&models.join("gen-000001")).unwrap();
    assert!(std::sync::Arc::ptr_eq(&first, &load_line_table(&models.join("gen-000001")).unwrap()), "not shared");
    for g in 2..=renju_trainer::model::LINE_TABLE_CACHE + 1 {
        let dir = models.join(format!("gen-{g:06}"));
        std::fs::create_dir_all(&dir).unwrap();
        for e in std::fs::read_dir(models.join("gen-000001")).unwrap().flatten() {
            std::fs::copy(e.path(), dir.join(e.file_name())).unwrap();
        }
        load_line_table(&dir).unwrap();
    }
    assert_eq!(std::sync::Arc::strong_count(&first), 1, "the cache still holds the oldest net");
}
