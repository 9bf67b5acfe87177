//! Shared helpers: synthetic self-play shards with a learnable target.
#![allow(dead_code)]

use renju_rules::{Player, Protocol, Rule};
use renju_selfplay::action::action_space_size;
use renju_selfplay::encode::{NUM_GLOBALS, NUM_PLANES};
use renju_selfplay::record::{EndReason, GameMeta, GameResult, PositionRecord, ShardWriter};
use renju_trainer::config::{NetConfig, OptimizerConfig, TrainerConfig, WindowConfig};
use std::path::Path;

pub const SIZE: usize = 15;

/// Position `k` of a synthetic data set: a few "stones" in planes 0/1, a one in plane 4 (the
/// "last stone") at point `t(k)`; the policy target is one-hot on `t(k)`; the value target is
/// win when global 0 is 1, loss otherwise; the opponent's reply is `t(k)` too when `k % 3 ==
/// 1`, the swap when `k % 3 == 2`, none when `k % 3 == 0`; the short-horizon value is half the
/// result (0.5 or -0.5).
pub fn position(k: usize) -> PositionRecord {
    let p = SIZE * SIZE;
    let target = (k * 37 + 11) % p;
    let mut planes = vec![0u8; NUM_PLANES * p];
    planes[target] = 1; // a black stone there
    planes[p + (k * 53 + 3) % p] = 1; // a white stone elsewhere
    planes[4 * p + target] = 1;
    for i in 0..p {
        planes[7 * p + i] = 1;
    }
    let mut globals = vec![0f32; NUM_GLOBALS];
    globals[0] = (k % 2) as f32;
    let mut policy = vec![0f32; action_space_size(SIZE)];
    policy[target] = 1.0;
    let value = if k % 2 == 1 { [1.0, 0.0, 0.0] } else { [0.0, 0.0, 1.0] };
    let opponent_reply = match k % 3 {
        0 => -1,
        1 => target as i64,
        _ => renju_selfplay::action::action_index(renju_rules::Action::Swap, SIZE) as i64,
    };
    PositionRecord {
        planes,
        globals,
        policy,
        value,
        root_value: 0.0,
        generation: 0,
        game_index: 0,
        opponent_reply,
        short_value: 0.5 * (value[0] - value[2]),
    }
}

/// Writes one renju shard of positions `range` into `dir`; returns its path.
pub fn write_shard(dir: &Path, range: std::ops::Range<usize>) -> std::path::PathBuf {
    write_shard_of_rule(dir, Rule::Renju, range)
}

/// [`write_shard`] for games of `rule`.
pub fn write_shard_of_rule(dir: &Path, rule: Rule, range: std::ops::Range<usize>) -> std::path::PathBuf {
    write_records(dir, rule, Protocol::Free { centre: true }, range.map(position).collect())
}

/// Writes one shard of `n` encoded positions of random RIF renju games (5-40 stones,
/// `renju_selfplay::encode::random_positions`) into `dir`, each with a one-hot policy target on
/// an empty point and a win target; returns its path. For tests that need real boards (the
/// version-3 VCF planes rebuild the board from the planes).
pub fn write_real_shard(dir: &Path, n: usize, seed: u64) -> std::path::PathBuf {
    let (planes, globals) = renju_selfplay::encode::random_positions(n, SIZE, 5..=40, seed);
    let (pl, p) = (NUM_PLANES * SIZE * SIZE, SIZE * SIZE);
    let records = (0..n)
        .map(|i| {
            let pos = &planes[i * pl..(i + 1) * pl];
            let empty = (0..p).find(|&j| pos[j] == 0.0 && pos[p + j] == 0.0).expect("a board with an empty point");
            let mut policy = vec![0f32; action_space_size(SIZE)];
            policy[empty] = 1.0;
            PositionRecord {
                planes: pos.iter().map(|&x| x as u8).collect(),
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
    write_records(dir, Rule::Renju, Protocol::Rif, records)
}

/// Writes `records` as one game of one 15x15 shard into `dir`; returns its path.
fn write_records(dir: &Path, rule: Rule, protocol: Protocol, records: Vec<PositionRecord>) -> std::path::PathBuf {
    let mut w = ShardWriter::new(SIZE, rule, protocol, "test");
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
    w.push_game(game, records).unwrap();
    let path = w.write(dir).unwrap();
    // Distinct millisecond time stamps keep the shard order unambiguous.
    std::thread::sleep(std::time::Duration::from_millis(3));
    path
}

/// A config for tests: tiny net, CPU, no TensorBoard, small window.
pub fn tiny_config() -> TrainerConfig {
    TrainerConfig {
        net: NetConfig::preset("tiny").unwrap(),
        batch_size: 16,
        device: renju_trainer::config::DeviceChoice::Cpu,
        tensorboard: false,
        min_samples_to_train: 1,
        checkpoint_every: 1_000_000,
        window: WindowConfig { min_samples: 1000, ..Default::default() },
        optimizer: OptimizerConfig::Sgd { momentum: 0.9 },
        ..Default::default()
    }
}
