//! The shard reader under bad input: arbitrary bytes and mutated real shards
//! (bytes overwritten, truncated, extended) always give `Ok` or an error naming the file, never a
//! panic. Cases per property: proptest's default 256, or `PROPTEST_CASES` (scripts/fuzz.sh runs
//! more).

use proptest::prelude::*;
use renju_rules::{Player, Protocol, Rule};
use renju_selfplay::action::action_space_size;
use renju_selfplay::encode::{NUM_GLOBALS, NUM_PLANES};
use renju_selfplay::record::*;
use std::path::PathBuf;
use std::sync::OnceLock;

const SIZE: usize = 7;

/// The bytes of a small valid shard (2 games of 2 positions on 7x7), made once.
fn valid_shard() -> &'static [u8] {
    static BYTES: OnceLock<Vec<u8>> = OnceLock::new();
    BYTES.get_or_init(|| {
        let mut w = ShardWriter::new(SIZE, Rule::Renju, Protocol::Rif, "fuzz");
        for g in 0..2 {
            let positions = (0..2)
                .map(|k| PositionRecord {
                    planes: vec![(k % 2) as u8; NUM_PLANES * SIZE * SIZE],
                    globals: vec![0.5; NUM_GLOBALS],
                    policy: {
                        let mut p = vec![0.0; action_space_size(SIZE)];
                        p[k] = 1.0;
                        p
                    },
                    value: [0.0, 1.0, 0.0],
                    root_value: 0.0,
                    generation: g,
                    game_index: -1,
                    opponent_reply: k as i64 - 1,
                    short_value: 0.5 - 0.25 * k as f32,
                })
                .collect();
            let meta = GameMeta {
                opening: None,
                decisions: vec![],
                result: GameResult { winner: None, reason: EndReason::BoardFull, black_player: Player::First },
                resign_disabled: false,
                false_resignation: false,
                would_resign: false,
                proven_positions: 0,
                proven_overruled: 0,
                generation_first: g,
                generation_last: g,
            };
            w.push_game(meta, positions).unwrap();
        }
        let dir = tempfile::tempdir().unwrap();
        let p = w.write(dir.path()).unwrap();
        std::fs::read(p).unwrap()
    })
}

fn read_bytes(bytes: &[u8]) -> (PathBuf, anyhow::Result<Shard>, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("sp-fuzz.npz");
    std::fs::write(&p, bytes).unwrap();
    let r = read_shard(&p);
    (p, r, dir)
}

proptest! {
    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..2048)) {
        let (p, r, _dir) = read_bytes(&bytes);
        if let Err(e) = r {
            let msg = format!("{e:#}");
            prop_assert!(msg.contains(&p.display().to_string()), "{}", msg);
        }
    }

    #[test]
    fn mutated_shards_never_panic(
        edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..8),
        cut in proptest::option::of(any::<prop::sample::Index>()),
        tail in proptest::collection::vec(any::<u8>(), 0..16),
    ) {
        let mut bytes = valid_shard().to_vec();
        for (i, b) in &edits {
            let at = i.index(bytes.len());
            bytes[at] = *b;
        }
        if let Some(c) = cut {
            bytes.truncate(c.index(bytes.len()));
        }
        bytes.extend(&tail);
        let (p, r, _dir) = read_bytes(&bytes);
        match r {
            // What reads must be self-consistent: every array has one row per position.
            Ok(s) => {
                let n = s.len();
                prop_assert_eq!(s.generation.len(), n);
                prop_assert_eq!(s.value.shape()[0], n);
            }
            Err(e) => {
                let msg = format!("{e:#}");
                prop_assert!(msg.contains(&p.display().to_string()), "{}", msg);
            }
        }
    }
}

#[test]
fn the_unmutated_shard_reads() {
    let (_, r, _dir) = read_bytes(valid_shard());
    assert_eq!(r.unwrap().len(), 4);
}
