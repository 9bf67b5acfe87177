//! `training.stones_only_dropout`: a dropped sample keeps only the inputs an engine that knows
//! just the stones can give (the forbidden-point and last-stone planes zeroed, and version 3's
//! VCF planes), every other input and every kept sample unchanged.

mod common;

use common::{tiny_config, write_real_shard, SIZE};
use renju_selfplay::encode::{plane, plane_v3, NUM_PLANES};
use renju_selfplay::stones_only::DROPOUT_PLANES;
use renju_trainer::replay::{sample_batch, step_rng, Batch, BatchEncoding, ReplayWindow};
use renju_trainer::{NetShape, RunDir, Trainer};

fn floats(t: &tch::Tensor) -> Vec<f32> {
    Vec::try_from(&t.flatten(0, -1)).unwrap()
}

#[test]
fn dropped_samples_lose_exactly_the_stones_only_planes() {
    let run = tempfile::tempdir().unwrap();
    let rd = RunDir::new(run.path());
    write_real_shard(&rd.selfplay(), 200, 13);
    let shape = NetShape::current(SIZE);
    let mut w = ReplayWindow::new(&rd.selfplay(), shape, renju_rules::Rule::Renju, Default::default());
    w.refresh().unwrap();
    let snap = w.snapshot();
    let sym = renju_trainer::replay::SymmetryTable::new(SIZE);
    let (b, p) = (64usize, SIZE * SIZE);
    let batch = |enc| -> Batch { sample_batch(&snap, shape, &sym, b, true, enc, &mut step_rng(5, 2)).unwrap() };
    let full = floats(&batch(BatchEncoding::CURRENT).planes);
    let plane_sum = |planes: &[f32], c_count: usize, i: usize, c: usize| -> f32 {
        planes[i * c_count * p + c * p..i * c_count * p + (c + 1) * p].iter().sum()
    };
    // Every sample of random games has a last stone and some forbidden points appear.
    assert!((0..b).all(|i| plane_sum(&full, NUM_PLANES, i, plane::LAST1) == 1.0));
    assert!((0..b).any(|i| plane_sum(&full, NUM_PLANES, i, plane::FORBIDDEN) > 0.0), "no forbidden points");

    // Dropout 1: the dropout planes are zero, everything else (targets too) as without dropout.
    let all = BatchEncoding { stones_only_dropout: 1.0, ..BatchEncoding::CURRENT };
    let dropped = batch(all);
    let got = floats(&dropped.planes);
    for i in 0..b {
        for c in 0..NUM_PLANES {
            let r = i * NUM_PLANES * p + c * p..i * NUM_PLANES * p + (c + 1) * p;
            if DROPOUT_PLANES.contains(&c) {
                assert!(got[r].iter().all(|&x| x == 0.0), "sample {i} plane {c} zeroed");
            } else {
                assert_eq!(&got[r.clone()], &full[r], "sample {i} plane {c} kept");
            }
        }
    }
    let plain = batch(BatchEncoding::CURRENT);
    assert_eq!(floats(&dropped.globals), floats(&plain.globals));
    assert_eq!(floats(&dropped.policy), floats(&plain.policy));
    assert_eq!(floats(&dropped.value), floats(&plain.value));

    // Dropout 0.5: some samples keep their last stone, some lose it.
    let half = floats(&batch(BatchEncoding { stones_only_dropout: 0.5, ..BatchEncoding::CURRENT }).planes);
    let kept = (0..b).filter(|&i| plane_sum(&half, NUM_PLANES, i, plane::LAST1) == 1.0).count();
    assert!(kept > 0 && kept < b, "dropout 0.5 kept {kept} of {b} samples");

    // Version 3: a dropped sample loses its VCF planes too, without VCF-plane dropout.
    let v3 = |d| {
        floats(
            &batch(BatchEncoding {
                version: 3,
                vcf_plane_dropout: 0.0,
                stones_only_dropout: d,
                ..BatchEncoding::CURRENT
            })
            .planes,
        )
    };
    let (with, without) = (v3(0.0), v3(1.0));
    let c3 = plane_v3::COUNT;
    let vcf = |planes: &[f32]| -> f32 {
        (0..b)
            .map(|i| plane_sum(planes, c3, i, plane_v3::VCF_OWN) + plane_sum(planes, c3, i, plane_v3::VCF_OPPONENT))
            .sum()
    };
    assert!(vcf(&with) > 0.0, "random midgames give some VCFs");
    assert_eq!(vcf(&without), 0.0);
    for i in 0..b {
        for c in [plane::OWN, plane::OPPONENT, plane::DECIDER_IS_BLACK, plane::OFFERS, plane::ONES] {
            assert_eq!(plane_sum(&without, c3, i, c), plane_sum(&with, c3, i, c), "sample {i} plane {c}");
        }
        assert_eq!(plane_sum(&without, c3, i, plane::LAST1), 0.0);
    }
}

#[test]
fn the_option_is_read_from_the_config_and_trains() {
    let cfg: renju_trainer::TrainerConfig = toml::from_str("stones_only_dropout = 0.5\n").unwrap();
    assert_eq!(cfg.stones_only_dropout, 0.5);
    assert_eq!(renju_trainer::TrainerConfig::default().stones_only_dropout, 0.0);
    let run = tempfile::tempdir().unwrap();
    let rd = RunDir::new(run.path());
    write_real_shard(&rd.selfplay(), 48, 3);
    let mut t =
        Trainer::open_or_resume(&rd, renju_trainer::TrainerConfig { stones_only_dropout: 0.5, ..tiny_config() })
            .unwrap();
    t.refresh_window().unwrap();
    let m = t.train_steps(2).unwrap();
    assert!(m.loss.is_finite() && m.loss > 0.0, "loss {}", m.loss);
}
