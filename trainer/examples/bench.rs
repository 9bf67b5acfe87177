//! Trainer and inference throughput against raw tch loops with the same network and batch.
//!
//! ```text
//! cargo run --release -p renju-trainer --example bench -- [--preset small] [--batch 256]
//!     [--steps 20] [--eval-batch 256] [--eval-iters 30] [--device cpu|cuda]
//! ```
//!
//! - Training: `Trainer::train_steps` (replay window of synthetic shards, background loader,
//!   symmetry augmentation, loss, backward, clipping, SGD-Nesterov step, statistics) against a
//!   raw loop of forward + the same loss + backward + the same optimiser step on random tensors
//!   already on the device. The ratio is the share of compute the pipeline keeps (target >= 90%).
//!   For a line-pattern preset the raw loop also runs through the board convolutions
//!   (`LinePath::Board`) to show what the training path's pattern gather saves. Positions are
//!   random RIF midgames (0..=60 stones).
//! - Inference: `ModelEvaluator::evaluate` on `&[f32]` inputs (copy in, forward, softmax, copy
//!   out) against a raw no-grad forward on tensors already on the device, same batch.

use anyhow::Result;
use renju_rules::{Player, Protocol, Rule};
use renju_selfplay::action::action_space_size;
use renju_selfplay::encode::{NUM_GLOBALS, NUM_PLANES};
use renju_selfplay::eval::Evaluator;
use renju_selfplay::record::{EndReason, GameMeta, GameResult, PositionRecord, ShardWriter};
use renju_trainer::config::{DeviceChoice, NetConfig, TrainerConfig, WindowConfig};
use renju_trainer::net::LinePath;
use renju_trainer::net::{Net, NetShape};
use renju_trainer::optim::Optimizer;
use renju_trainer::{ModelEvaluator, RunDir, Trainer};
use std::time::Instant;
use tch::{nn, Kind, Tensor};

const SIZE: usize = 15;

fn arg(name: &str, default: &str) -> String {
    let args: Vec<String> = std::env::args().collect();
    args.iter().position(|a| a == name).and_then(|i| args.get(i + 1).cloned()).unwrap_or_else(|| default.to_string())
}

fn write_shards(dir: &std::path::Path, shards: usize, per_shard: usize) -> Result<()> {
    let p = SIZE * SIZE;
    let a = action_space_size(SIZE);
    let mut k = 0usize;
    for _ in 0..shards {
        let mut w = ShardWriter::new(SIZE, Rule::Renju, Protocol::Free { centre: true }, "bench");
        // Random RIF midgames (0..=60 stones, every decision kind), as self-play records them.
        let (planes, globals) = renju_selfplay::encode::random_positions(per_shard, SIZE, 0..=60, k as u64);
        let positions = (0..per_shard)
            .map(|i| {
                k += 1;
                let mut policy = vec![0f32; a];
                for j in 0..8 {
                    policy[(k * 7 + j * 29) % p] = 0.125;
                }
                PositionRecord {
                    planes: planes[i * NUM_PLANES * p..(i + 1) * NUM_PLANES * p].iter().map(|&x| x as u8).collect(),
                    globals: globals[i * NUM_GLOBALS..(i + 1) * NUM_GLOBALS].to_vec(),
                    policy,
                    value: [1.0, 0.0, 0.0],
                    root_value: 0.0,
                    generation: 0,
                    game_index: 0,
                    opponent_reply: -1,
                    short_value: 1.0,
                }
            })
            .collect();
        let game = GameMeta {
            opening: None,
            decisions: vec![],
            result: GameResult { winner: Some(Player::First), reason: EndReason::Five, black_player: Player::First },
            resign_disabled: false,
            false_resignation: false,
            would_resign: false,
            proven_positions: 0,
            proven_overruled: 0,
            generation_first: 0,
            generation_last: 0,
        };
        w.push_game(game, positions)?;
        w.write(dir)?;
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    Ok(())
}

fn main() -> Result<()> {
    let preset = arg("--preset", "small");
    let batch: usize = arg("--batch", "256").parse()?;
    let steps: u64 = arg("--steps", "20").parse()?;
    let eval_batch: usize = arg("--eval-batch", "256").parse()?;
    let eval_iters: usize = arg("--eval-iters", "30").parse()?;
    let device = match arg("--device", "auto").as_str() {
        "cpu" => DeviceChoice::Cpu,
        "cuda" => DeviceChoice::Cuda,
        _ => DeviceChoice::Auto,
    };
    let dev = device.resolve()?;
    let net_cfg = NetConfig::preset(&preset)?;
    println!("preset {preset} ({:?}; resnet {} blocks x {} channels, linepattern F {} x {} line channels), batch {batch}, device {dev:?}, torch threads {}",
        net_cfg.kind, net_cfg.blocks, net_cfg.channels, net_cfg.line_features, net_cfg.line_channels, tch::get_num_threads());

    // ---- training through the Trainer ----
    let run = tempfile::tempdir()?;
    write_shards(&RunDir::new(run.path()).selfplay(), 8, 1024)?;
    let cfg = TrainerConfig {
        net: net_cfg.clone(),
        batch_size: batch,
        device,
        tensorboard: false,
        min_samples_to_train: 1,
        checkpoint_every: 1_000_000,
        window: WindowConfig { min_samples: 100_000, ..Default::default() },
        ..Default::default()
    };
    let mut trainer = Trainer::open_or_resume(&RunDir::new(run.path()), cfg.clone())?;
    trainer.refresh_window()?;

    // Raw loop: the same network and optimiser on random tensors already on the device.
    let shape = NetShape::current(SIZE);
    let vs = nn::VarStore::new(dev);
    let net = Net::new(&vs.root(), &net_cfg, shape)?;
    let mut opt = Optimizer::new(&vs, cfg.optimizer.clone());
    let decayed: Vec<Tensor> =
        vs.variables().into_iter().filter(|(n, t)| renju_trainer::net::is_decayed(n, t)).map(|(_, t)| t).collect();
    let b = batch as i64;
    let (pl_raw, gl_raw) = renju_selfplay::encode::random_positions(batch, SIZE, 0..=60, 99);
    let planes = Tensor::from_slice(&pl_raw).view([b, shape.planes as i64, SIZE as i64, SIZE as i64]).to_device(dev);
    let globals = Tensor::from_slice(&gl_raw).view([b, shape.globals as i64]).to_device(dev);
    let target_p = Tensor::rand([b, shape.actions as i64], (Kind::Float, dev)).softmax(-1, Kind::Float);
    let target_v = Tensor::rand([b, 3], (Kind::Float, dev)).softmax(-1, Kind::Float);
    // `board`: the line-pattern net through its board-convolution path (LinePath::Board) instead
    // of the pattern-gather training path, to show what the gather saves.
    let raw_step = |opt: &mut Optimizer, board: bool| {
        let (p, v) = match (&net, board) {
            (Net::Line(l), true) => l.forward(&planes, &globals, LinePath::Board),
            _ => net.forward(&planes, &globals, true),
        };
        let pl = -(&target_p * p.log_softmax(-1, Kind::Float)).sum_dim_intlist(1, false, Kind::Float).mean(Kind::Float);
        let vl = -(&target_v * v.log_softmax(-1, Kind::Float)).sum_dim_intlist(1, false, Kind::Float).mean(Kind::Float);
        let sq: Vec<Tensor> = decayed.iter().map(|w| w.square().sum(Kind::Float)).collect();
        let loss = pl + vl + Tensor::stack(&sq, 0).sum(Kind::Float) * cfg.l2;
        opt.zero_grad();
        loss.backward();
        let _ = opt.clip_grad_norm(cfg.grad_clip);
        opt.step(0.01);
        loss
    };

    // Warm-up, then alternate rounds of both so they share the machine's noise.
    trainer.train_steps(2)?;
    let line = matches!(net, Net::Line(_));
    for _ in 0..2 {
        let _ = raw_step(&mut opt, false);
        if line {
            let _ = raw_step(&mut opt, true);
        }
    }
    let rounds = 5u64;
    let per_round = steps.div_ceil(rounds).max(1);
    let (mut t_trainer, mut t_raw, mut t_board) = (0.0, 0.0, 0.0);
    let mut m = Default::default();
    for _ in 0..rounds {
        let t = Instant::now();
        m = trainer.train_steps(per_round)?;
        t_trainer += t.elapsed().as_secs_f64();
        let t = Instant::now();
        let mut last = Tensor::zeros([], (Kind::Float, dev));
        for _ in 0..per_round {
            last = raw_step(&mut opt, false);
        }
        let _ = last.double_value(&[]); // synchronise
        t_raw += t.elapsed().as_secs_f64();
        if line {
            let t = Instant::now();
            for _ in 0..per_round {
                last = raw_step(&mut opt, true);
            }
            let _ = last.double_value(&[]);
            t_board += t.elapsed().as_secs_f64();
        }
    }
    let m: renju_trainer::TrainMetrics = m;
    let samples = (rounds * per_round) as f64 * batch as f64;
    let trainer_sps = samples / t_trainer;
    let raw_sps = samples / t_raw;
    let board_sps = samples / t_board.max(1e-9);

    // ---- inference ----
    let mut ev = ModelEvaluator::load(&RunDir::new(run.path()).models(), dev)?;
    let n = eval_batch;
    let pl: Vec<f32> = (0..n * shape.planes * SIZE * SIZE).map(|i| ((i * 7919) % 7 == 0) as u8 as f32).collect();
    let gl: Vec<f32> = vec![0.5; n * shape.globals];
    let pt = Tensor::from_slice(&pl)
        .view([n as i64, shape.planes as i64, SIZE as i64, SIZE as i64])
        .to_device(dev)
        .to_kind(ev.kind());
    let gt = Tensor::from_slice(&gl).view([n as i64, shape.globals as i64]).to_device(dev).to_kind(ev.kind());
    for _ in 0..3 {
        ev.evaluate(&pl, &gl, n)?;
        let _ = ev.forward_tensors(&pt, &gt);
    }
    // Alternate the two measurements to share the machine's noise.
    let (mut t_ev, mut t_raw) = (0.0, 0.0);
    for _ in 0..eval_iters {
        let t = Instant::now();
        let out = ev.evaluate(&pl, &gl, n)?;
        assert_eq!(out.wdl.len(), 3 * n);
        t_ev += t.elapsed().as_secs_f64();
        let t = Instant::now();
        let (p, v) = ev.forward_tensors(&pt, &gt);
        let _ = (p.double_value(&[0, 0]), v.double_value(&[0, 0])); // synchronise
        t_raw += t.elapsed().as_secs_f64();
    }
    let ev_pps = (eval_iters * n) as f64 / t_ev;
    let raw_pps = (eval_iters * n) as f64 / t_raw;

    println!(
        "training:  Trainer {trainer_sps:.1} samples/s, raw loop {raw_sps:.1} samples/s, ratio {:.1}%",
        100.0 * trainer_sps / raw_sps
    );
    if line {
        println!(
            "training:  raw loop through the board convolutions (LinePath::Board) {board_sps:.1} samples/s: the pattern gather is {:.1}x",
            raw_sps / board_sps
        );
    }
    println!(
        "inference: ModelEvaluator {ev_pps:.1} positions/s, raw forward {raw_pps:.1} positions/s, ratio {:.1}%",
        100.0 * ev_pps / raw_pps
    );
    println!(
        "last train_steps: loss {:.3}, policy {:.3}, value {:.3}, grad norm {:.3}",
        m.loss, m.policy_loss, m.value_loss, m.grad_norm
    );
    // Publishing a generation (weights, TorchScript trace, and for a line-pattern net the table),
    // which the pipeline does every `steps_per_generation` steps.
    let t = Instant::now();
    let publishes = 3;
    for _ in 0..publishes {
        trainer.publish()?;
    }
    println!("publish: {:.2} s per generation", t.elapsed().as_secs_f64() / publishes as f64);
    Ok(())
}
