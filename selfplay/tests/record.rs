//! Shard round trip and corruption detection (DESIGN.md "Self-play shards").

use renju_rules::{Action, Player, Point, Protocol, Rule};
use renju_selfplay::action::action_space_size;
use renju_selfplay::encode::{NUM_GLOBALS, NUM_PLANES};
use renju_selfplay::record::*;

fn sample_writer(size: usize) -> ShardWriter {
    let mut w = ShardWriter::new(size, Rule::Renju, Protocol::Rif, "test");
    for g in 0..2 {
        let positions: Vec<PositionRecord> = (0..3)
            .map(|k| {
                let mut policy = vec![0.0; action_space_size(size)];
                policy[k] = 1.0;
                PositionRecord {
                    planes: (0..NUM_PLANES * size * size).map(|i| ((i + k) % 2) as u8).collect(),
                    globals: (0..NUM_GLOBALS).map(|i| i as f32 * 0.5).collect(),
                    policy,
                    value: [1.0, 0.0, 0.0],
                    root_value: 0.25 * k as f32,
                    generation: 7 + g,
                    game_index: -1,
                    opponent_reply: k as i64 - 1,
                    short_value: 0.5 - 0.5 * k as f32,
                }
            })
            .collect();
        let meta = GameMeta {
            opening: None,
            decisions: vec![(Player::First, Action::Place(Point::new(4, 4))), (Player::Second, Action::Swap)],
            result: GameResult { winner: Some(Player::Second), reason: EndReason::Five, black_player: Player::Second },
            resign_disabled: g == 1,
            false_resignation: false,
            would_resign: false,
            proven_positions: 0,
            proven_overruled: 0,
            generation_first: 7 + g,
            generation_last: 7 + g,
        };
        w.push_game(meta, positions).unwrap();
    }
    w
}

#[test]
fn shard_round_trips() {
    let dir = tempfile::tempdir().unwrap();
    let mut w = sample_writer(9);
    let path = w.write(dir.path()).unwrap();
    assert!(path.file_name().unwrap().to_str().unwrap().starts_with("sp-test-"));
    assert_eq!(w.positions(), 0, "writer is emptied after writing");
    // No temp file left behind.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    let s = read_shard(&path).unwrap();
    assert_eq!(s.len(), 6);
    assert_eq!(s.planes.shape(), &[6, NUM_PLANES, 9, 9]);
    assert_eq!(s.planes[[4, 0, 0, 1]], ((9 + 1) % 2) as u8);
    assert_eq!(s.policy[[4, 1]], 1.0);
    assert_eq!(s.globals[[5, 3]], 1.5);
    assert_eq!(s.generation.to_vec(), vec![7, 7, 7, 8, 8, 8]);
    assert_eq!(s.game_index.to_vec(), vec![0, 0, 0, 1, 1, 1]);
    assert_eq!(s.root_value[2], 0.5);
    assert_eq!(s.opponent_reply.to_vec(), vec![-1, 0, 1, -1, 0, 1]);
    assert_eq!(s.short_value.to_vec(), vec![0.5, 0.0, -0.5, 0.5, 0.0, -0.5]);
    assert_eq!(s.meta.games.len(), 2);
    assert_eq!(s.meta.games[0].decisions[1], (Player::Second, Action::Swap));
    assert!(s.meta.games[1].resign_disabled);
    assert_eq!(s.meta.rule, Rule::Renju);
    assert_eq!(s.meta.protocol, Protocol::Rif);
    assert_eq!(list_shards(dir.path()).unwrap(), vec![path]);
}

#[test]
fn new_shards_are_listed_by_name_without_the_seen_ones() {
    let dir = tempfile::tempdir().unwrap();
    let a = sample_writer(9).write(dir.path()).unwrap();
    let b = sample_writer(9).write(dir.path()).unwrap();
    // Names, not write order, decide the order; other files and `.tmp` files are not shards.
    let early = dir.path().join("sp-a-1-000001.npz");
    std::fs::copy(&a, &early).unwrap();
    std::fs::write(dir.path().join("sp-a-2-000002.npz.tmp"), b"partial").unwrap();
    std::fs::write(dir.path().join("notes.txt"), b"x").unwrap();
    let name = |p: &std::path::Path| p.file_name().unwrap().to_owned();
    let mut all = vec![a.clone(), b.clone(), early.clone()];
    all.sort_by_key(|p| name(p));
    assert_eq!(all[0], early);
    assert_eq!(list_shards(dir.path()).unwrap(), all);
    let seen: std::collections::HashSet<_> = [name(&early), name(&b)].into_iter().collect();
    assert_eq!(list_new_shards(dir.path(), &seen).unwrap(), vec![a.clone()]);
    let every: std::collections::HashSet<_> = all.iter().map(|p| name(p)).collect();
    assert!(list_new_shards(dir.path(), &every).unwrap().is_empty());
    // Only the metadata and generations of a shard, as the full read gives them.
    let (meta, generation) = read_shard_generations(&a).unwrap();
    let full = read_shard(&a).unwrap();
    assert_eq!(generation.to_vec(), vec![7, 7, 7, 8, 8, 8]);
    assert_eq!(generation, full.generation);
    assert_eq!(meta.games.len(), full.meta.games.len());
    let err = format!("{:#}", read_shard_generations(&dir.path().join("notes.txt")).unwrap_err());
    assert!(err.contains("notes.txt"), "{err}");
}

#[test]
fn two_writes_get_distinct_names() {
    let dir = tempfile::tempdir().unwrap();
    let a = sample_writer(9).write(dir.path()).unwrap();
    let b = sample_writer(9).write(dir.path()).unwrap();
    assert_ne!(a, b);
}

#[test]
fn truncated_shard_error_names_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = sample_writer(9).write(dir.path()).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    std::fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
    let err = format!("{:#}", read_shard(&path).unwrap_err());
    assert!(err.contains(path.file_name().unwrap().to_str().unwrap()), "error does not name the file: {err}");
}

#[test]
fn wrong_push_lengths_are_rejected() {
    let mut w = ShardWriter::new(9, Rule::Renju, Protocol::Rif, "t");
    let meta = GameMeta {
        opening: None,
        decisions: vec![],
        result: GameResult { winner: None, reason: EndReason::StoneCap, black_player: Player::First },
        resign_disabled: false,
        false_resignation: false,
        would_resign: false,
        proven_positions: 0,
        proven_overruled: 0,
        generation_first: 0,
        generation_last: 0,
    };
    let p = PositionRecord {
        planes: vec![0; 3],
        globals: vec![0.0; NUM_GLOBALS],
        policy: vec![0.0; action_space_size(9)],
        value: [0.0, 1.0, 0.0],
        root_value: 0.0,
        generation: 0,
        game_index: 0,
        opponent_reply: -1,
        short_value: 0.0,
    };
    let err = w.push_game(meta.clone(), vec![p.clone()]).unwrap_err().to_string();
    assert!(err.contains("planes has 3 bytes"), "{err}");
    let reply =
        PositionRecord { planes: vec![0; NUM_PLANES * 81], opponent_reply: action_space_size(9) as i64, ..p.clone() };
    let err = w.push_game(meta.clone(), vec![reply]).unwrap_err().to_string();
    assert!(err.contains("opponent_reply 95 is neither -1 nor an action index below 95"), "{err}");
    for bad in [1.5, f32::NAN] {
        let short = PositionRecord { planes: vec![0; NUM_PLANES * 81], short_value: bad, ..p.clone() };
        let valid = PositionRecord { planes: vec![0; NUM_PLANES * 81], ..p.clone() };
        let err = w.push_game(meta.clone(), vec![valid, short]).unwrap_err().to_string();
        assert!(err.contains(&format!("position 1: short_value {bad} is outside -1..=1")), "{err}");
    }
    assert_eq!((w.positions(), w.games()), (0, 0), "a refused game leaves nothing behind");
}

/// Copies the shard at `path` with its optional arrays `opponent_reply` and `short_value`
/// replaced by `reply` and `short` (`None`: left out, as in the shards written before the
/// array existed).
fn rewrite_optional(path: &std::path::Path, reply: Option<ndarray::Array1<i64>>, short: Option<ndarray::Array1<f32>>) {
    use ndarray::{Array1, Array2, Array4};
    use ndarray_npy::{NpzReader, NpzWriter};
    let mut r = NpzReader::new(std::fs::File::open(path).unwrap()).unwrap();
    let planes: Array4<u8> = r.by_name("planes").unwrap();
    let globals: Array2<f32> = r.by_name("globals").unwrap();
    let policy: Array2<f32> = r.by_name("policy").unwrap();
    let value: Array2<f32> = r.by_name("value").unwrap();
    let root_value: Array1<f32> = r.by_name("root_value").unwrap();
    let generation: Array1<i64> = r.by_name("generation").unwrap();
    let game_index: Array1<i64> = r.by_name("game_index").unwrap();
    let meta: Array1<u8> = r.by_name("meta").unwrap();
    let mut w = NpzWriter::new(std::fs::File::create(path).unwrap());
    w.add_array("planes", &planes).unwrap();
    w.add_array("globals", &globals).unwrap();
    w.add_array("policy", &policy).unwrap();
    w.add_array("value", &value).unwrap();
    w.add_array("root_value", &root_value).unwrap();
    w.add_array("generation", &generation).unwrap();
    w.add_array("game_index", &game_index).unwrap();
    if let Some(reply) = reply {
        w.add_array("opponent_reply", &reply).unwrap();
    }
    if let Some(short) = short {
        w.add_array("short_value", &short).unwrap();
    }
    w.add_array("meta", &meta).unwrap();
    w.finish().unwrap();
}

#[test]
fn a_shard_without_opponent_replies_reads_as_having_none() {
    let dir = tempfile::tempdir().unwrap();
    let path = sample_writer(9).write(dir.path()).unwrap();
    rewrite_optional(&path, None, None);
    let s = read_shard(&path).unwrap();
    assert_eq!(s.opponent_reply.to_vec(), vec![-1; 6]);
    assert_eq!(s.policy[[4, 1]], 1.0, "the other arrays read as before");
}

#[test]
fn an_opponent_reply_off_the_action_space_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = sample_writer(9).write(dir.path()).unwrap();
    rewrite_optional(&path, Some(ndarray::Array1::from_vec(vec![-1, 0, 95, -1, 0, 1])), None);
    let err = format!("{:#}", read_shard(&path).unwrap_err());
    assert!(err.contains("`opponent_reply` holds 95, neither -1 nor an action index below 95"), "{err}");
    rewrite_optional(&path, Some(ndarray::Array1::from_vec(vec![-1, 0])), None);
    let err = format!("{:#}", read_shard(&path).unwrap_err());
    assert!(err.contains("`opponent_reply` has 2 entries, expected 6"), "{err}");
}

#[test]
fn a_shard_without_short_values_reads_them_as_the_game_result() {
    let dir = tempfile::tempdir().unwrap();
    let path = sample_writer(9).write(dir.path()).unwrap();
    rewrite_optional(&path, Some(ndarray::Array1::from_vec(vec![-1, 0, 1, -1, 0, 1])), None);
    let s = read_shard(&path).unwrap();
    // The sample writer's value target is a win ([1, 0, 0]) everywhere.
    assert_eq!(s.short_value.to_vec(), vec![1.0; 6]);
    assert_eq!(s.opponent_reply.to_vec(), vec![-1, 0, 1, -1, 0, 1], "the other arrays read as before");
}

#[test]
fn a_short_value_outside_minus_one_to_one_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = sample_writer(9).write(dir.path()).unwrap();
    let replies = || Some(ndarray::Array1::from_vec(vec![-1, 0, 1, -1, 0, 1]));
    rewrite_optional(&path, replies(), Some(ndarray::Array1::from_vec(vec![0.0, 0.5, -1.25, 1.0, -1.0, 0.0])));
    let err = format!("{:#}", read_shard(&path).unwrap_err());
    assert!(err.contains("`short_value` holds -1.25, outside -1..=1"), "{err}");
    rewrite_optional(&path, replies(), Some(ndarray::Array1::from_vec(vec![f32::NAN; 6])));
    let err = format!("{:#}", read_shard(&path).unwrap_err());
    assert!(err.contains("`short_value` holds NaN, outside -1..=1"), "{err}");
    rewrite_optional(&path, replies(), Some(ndarray::Array1::from_vec(vec![0.0; 5])));
    let err = format!("{:#}", read_shard(&path).unwrap_err());
    assert!(err.contains("`short_value` has 5 entries, expected 6"), "{err}");
}
