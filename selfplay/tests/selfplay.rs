//! Self-play end to end: every protocol of RULES.md §5 plays complete games with PUCT and with
//! the Gumbel root search; shards replay.

use renju_rules::{Action, Game, Opening, Protocol, Rule};
use renju_selfplay::eval::{HeuristicEvaluator, UniformEvaluator};
use renju_selfplay::mcts::{SearchAlgorithm, SearchConfig};
use renju_selfplay::record::{read_shard, EndReason};
use renju_selfplay::server::{InferenceServer, ServerConfig};
use renju_selfplay::worker::{run_selfplay, run_selfplay_paced, SelfplayConfig, ShardSink};
use std::sync::atomic::AtomicBool;

fn protocols() -> Vec<Protocol> {
    vec![
        Protocol::Free { centre: true },
        Protocol::Free { centre: false },
        Protocol::Swap1,
        Protocol::Rif,
        Protocol::FifthN { n: Some(3) },
        Protocol::FifthN { n: None },
        Protocol::Designated { opening: None, swap: true, offers: 2 },
        Protocol::Designated { opening: Some(Opening::Direct(1)), swap: false, offers: 0 },
        Protocol::BlackSets,
        Protocol::Lianhuan,
        Protocol::Soosorv { n: 8, opening: None },
        Protocol::Taraguchi { n: 10, opening: None },
        Protocol::Taraguchi { n: 3, opening: Some(Opening::Indirect(2)) },
        Protocol::Swap2 { opening: None },
        Protocol::Swap2 { opening: Some(Opening::Direct(3)) },
    ]
}

#[test]
fn every_protocol_plays_complete_games() {
    let dir = tempfile::tempdir().unwrap();
    let cases =
        protocols().into_iter().flat_map(|p| [(p.clone(), SearchAlgorithm::Puct), (p, SearchAlgorithm::Gumbel)]);
    for (k, (protocol, algorithm)) in cases.enumerate() {
        let cfg = SelfplayConfig {
            size: 11,
            rule: Rule::Renju,
            protocol: protocol.clone(),
            playouts: 12,
            fast_playouts: 6,
            full_search_fraction: 0.5,
            games_per_thread: 3,
            threads: 1,
            seed: k as u64,
            search: SearchConfig { algorithm, ..SearchConfig::default() },
            ..SelfplayConfig::default()
        };
        let server = InferenceServer::spawn(Box::new(UniformEvaluator::new(11)), 4, ServerConfig::default());
        let out = dir.path().join(format!("p{k}"));
        let mut sink = ShardSink::new(&out, &cfg, "t", 100);
        let stop = AtomicBool::new(false);
        let prog = run_selfplay(&cfg, &server.handle(), Some(3), &stop, &mut sink, &mut |_| {}).unwrap();
        server.join();
        assert_eq!(prog.games, 3, "{protocol:?} {algorithm:?}");
        assert_eq!(sink.written.len(), 1);
        let shard = read_shard(&sink.written[0]).unwrap();
        assert_eq!(shard.meta.games.len(), 3);
        assert_eq!(shard.meta.protocol, protocol);
        assert_eq!(shard.len() as u64, prog.positions);
        assert!(shard.generation.iter().all(|&g| g == 4), "generation of the served evaluator is recorded");
        for row in shard.policy.rows() {
            assert!((row.sum() - 1.0).abs() < 1e-4, "policy target sums to 1");
        }
        for g in &shard.meta.games {
            assert_ne!(g.result.reason, EndReason::ForbiddenMove, "a forbidden black move was played");
            // Replaying the decisions through the rules gives the recorded result.
            let mut replay = Game::new(11, Rule::Renju, protocol.clone(), None).unwrap();
            for &(p, a) in &g.decisions {
                assert_eq!(replay.to_decide(), p);
                replay.apply(a).unwrap();
            }
            if g.result.reason != EndReason::Resignation {
                let o = replay.outcome().expect("the game is over");
                assert_eq!(o.winner, g.result.winner, "{protocol:?}");
            }
        }
    }
}

#[test]
fn every_position_records_the_opponents_reply_to_it() {
    use renju_selfplay::action::action_index;
    // No resignation: a game's positions are its decisions, in order.
    let cfg = SelfplayConfig { resign_threshold: None, ..every_decision_recorded() };
    let shard = uniform_shard(&cfg, 3);
    let (mut own_again, mut protocol_replies) = (0, 0);
    for (g, game) in shard.meta.games.iter().enumerate() {
        let replies: Vec<i64> =
            (0..shard.len()).filter(|&i| shard.game_index[i] == g as i64).map(|i| shard.opponent_reply[i]).collect();
        assert_eq!(replies.len(), game.decisions.len(), "game {g}: one position per decision");
        for (i, &reply) in replies.iter().enumerate() {
            let (me, _) = game.decisions[i];
            let want = match game.decisions.get(i + 1) {
                Some(&(them, action)) if them != me => action_index(action, 11) as i64,
                Some(_) => {
                    own_again += 1;
                    -1
                }
                None => -1,
            };
            assert_eq!(reply, want, "game {g}, decision {i}");
            protocol_replies += usize::from(reply >= 121);
        }
    }
    // RIF: the first player places three stones in a row, and the swap is a protocol reply.
    assert!(
        own_again >= 6 && protocol_replies >= 3,
        "{own_again} repeated deciders, {protocol_replies} protocol replies"
    );
}

#[test]
fn fast_search_positions_can_be_recorded_as_value_only_samples() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = SelfplayConfig {
        size: 9,
        protocol: Protocol::Free { centre: true },
        stone_cap: Some(30),
        playouts: 8,
        fast_playouts: 3,
        full_search_fraction: 0.5,
        record_fast_positions: true,
        resign_threshold: None,
        games_per_thread: 2,
        ..SelfplayConfig::default()
    };
    let server = InferenceServer::spawn(Box::new(HeuristicEvaluator::new(9)), 0, ServerConfig::default());
    let mut sink = ShardSink::new(dir.path(), &cfg, "v", 10);
    let stop = AtomicBool::new(false);
    let prog = run_selfplay(&cfg, &server.handle(), Some(2), &stop, &mut sink, &mut |_| {}).unwrap();
    server.join();
    let shard = read_shard(&sink.written[0]).unwrap();
    // Every decision is recorded: full searches with a policy target summing to 1, fast ones
    // with an all-zero target (value only).
    assert_eq!(shard.len() as u64, prog.decisions);
    let sums: Vec<f32> = shard.policy.rows().into_iter().map(|r| r.sum()).collect();
    let (full, fast) =
        (sums.iter().filter(|&&x| (x - 1.0).abs() < 1e-4).count(), sums.iter().filter(|&&x| x == 0.0).count());
    assert_eq!(full + fast, sums.len(), "{sums:?}");
    assert!(full > 0 && fast > 0, "{full} full, {fast} fast");
}

#[test]
fn heuristic_selfplay_with_resignation_and_two_threads() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = SelfplayConfig {
        size: 15,
        protocol: Protocol::Rif,
        playouts: 24,
        fast_playouts: 8,
        threads: 2,
        games_per_thread: 2,
        resign_threshold: Some(-0.8),
        resign_consecutive: 2,
        resign_disabled_fraction: 0.5,
        ..SelfplayConfig::default()
    };
    let server = InferenceServer::spawn(Box::new(HeuristicEvaluator::new(15)), 0, ServerConfig::default());
    let mut sink = ShardSink::new(dir.path(), &cfg, "h", 2);
    let stop = AtomicBool::new(false);
    let prog = run_selfplay(&cfg, &server.handle(), Some(4), &stop, &mut sink, &mut |_| {}).unwrap();
    server.join();
    assert_eq!(prog.games, 4);
    assert_eq!(prog.wins_first + prog.wins_second + prog.draws, 4);
    let total: usize = sink.written.iter().map(|p| read_shard(p).unwrap().meta.games.len()).sum();
    assert_eq!(total, 4);
}

#[test]
fn server_replies_carry_the_published_generation() {
    let server = InferenceServer::spawn(Box::new(UniformEvaluator::new(9)), 1, ServerConfig::default());
    let h = server.handle();
    let g = Game::new(9, Rule::Renju, Protocol::Free { centre: true }, None).unwrap();
    let mut planes = vec![0.0; renju_selfplay::encode::planes_len(9)];
    let mut globals = vec![0.0; renju_selfplay::encode::NUM_GLOBALS];
    renju_selfplay::encode::encode(&g, &mut planes, &mut globals);
    assert_eq!(h.evaluate(planes.clone(), globals.clone(), 1).unwrap().generation, 1);
    h.publish(Box::new(HeuristicEvaluator::new(9)), 2).unwrap();
    let r = h.evaluate(planes.clone(), globals.clone(), 1).unwrap();
    assert_eq!(r.generation, 2);
    assert_eq!(r.output.wdl.len(), 3);
    // A size mismatch is refused with a clear error.
    let err = h.publish(Box::new(UniformEvaluator::new(15)), 3).unwrap_err().to_string();
    assert!(err.contains("side 15"), "{err}");
    let err = h.evaluate(vec![0.0; 5], globals, 1).unwrap_err().to_string();
    assert!(err.contains("planes has 5 floats"), "{err}");
    drop(h);
    let stats = server.join();
    assert_eq!(stats.positions, 2);
    let _ = Action::Keep;
}

#[test]
fn with_the_vcf_check_proven_positions_are_recorded_with_exact_targets() {
    // Every decision recorded (full_search_fraction 1): wherever the side to move has a VCF (and
    // neither side a five point, where the older shortcuts decide), the policy target is the
    // solver's first move, the search value is exactly a win and so is the game's result.
    use renju_rules::vcf::{five_points, vcf, Limits, Vcf};
    let cfg = SelfplayConfig {
        size: 11,
        rule: Rule::Renju,
        protocol: Protocol::Free { centre: true },
        playouts: 12,
        fast_playouts: 12,
        full_search_fraction: 1.0,
        games_per_thread: 4,
        threads: 1,
        seed: 5,
        resign_threshold: None,
        search: renju_selfplay::mcts::SearchConfig { vcf_nodes: 500, ..Default::default() },
        ..SelfplayConfig::default()
    };
    let shard = uniform_shard(&cfg, 4);
    let mut proven = 0;
    let mut rows_seen = 0;
    for (gi, g) in shard.meta.games.iter().enumerate() {
        let rows: Vec<usize> = (0..shard.len()).filter(|&r| shard.game_index[r] as usize == gi).collect();
        assert_eq!(rows.len(), g.decisions.len(), "every decision is recorded");
        rows_seen += rows.len();
        let mut game = Game::new(11, Rule::Renju, cfg.protocol.clone(), None).unwrap();
        for (&(_, a), &row) in g.decisions.iter().zip(&rows) {
            let c = game.next_color();
            let b = game.board();
            if b.stone_count() > 0 && five_points(b, c).is_empty() && five_points(b, c.opponent()).is_empty() {
                if let Vcf::Win { line } = vcf(b, c, &Limits::nodes(500)) {
                    proven += 1;
                    let first = renju_selfplay::action::action_index(Action::Place(line[0]), 11);
                    assert_eq!(shard.policy[[row, first]], 1.0, "policy target on the winning move");
                    assert_eq!(shard.root_value[row], 1.0, "exact search value");
                    assert_eq!(shard.value.row(row).to_vec(), vec![1.0, 0.0, 0.0], "the game is won");
                    assert_eq!(a, Action::Place(line[0]), "the winning move is played");
                }
            }
            game.apply(a).unwrap();
        }
    }
    assert_eq!(rows_seen, shard.len());
    eprintln!("{proven} proven positions in {rows_seen}");
    assert!(proven >= 3, "only {proven} proven positions");
}

#[test]
fn proven_value_targets_replace_the_game_result_where_the_solver_decides() {
    // A uniform evaluator misses most longer VCFs, so games often end against what a position
    // already decided. Every decision is recorded; each one's value target must be the solver's
    // result where it proves one (a VCF of the decider: win; an opponent VCF no move refutes:
    // loss), else the game's result, and the games' metadata count exactly those positions.
    use renju_rules::vcf::{refutations, vcf, Defence, Limits, Vcf};
    let cfg = SelfplayConfig {
        size: 11,
        protocol: Protocol::Free { centre: true },
        playouts: 12,
        fast_playouts: 12,
        full_search_fraction: 1.0,
        games_per_thread: 4,
        seed: 3,
        resign_threshold: None,
        proven_value_nodes: 500,
        ..SelfplayConfig::default()
    };
    let shard = uniform_shard(&cfg, 8);
    let limits = Limits::nodes(500);
    let (mut proven, mut overruled) = (0u32, 0u32);
    for (gi, g) in shard.meta.games.iter().enumerate() {
        let rows: Vec<usize> = (0..shard.len()).filter(|&r| shard.game_index[r] as usize == gi).collect();
        assert_eq!(rows.len(), g.decisions.len(), "every decision is recorded");
        let mut game = Game::new(11, Rule::Renju, cfg.protocol.clone(), None).unwrap();
        let (mut game_proven, mut game_overruled) = (0, 0);
        for (&(who, a), &row) in g.decisions.iter().zip(&rows) {
            let c = game.next_color();
            let by_result = match g.result.winner {
                None => [0.0, 1.0, 0.0],
                Some(w) if w == who => [1.0, 0.0, 0.0],
                Some(_) => [0.0, 0.0, 1.0],
            };
            let exact = if let Vcf::Win { .. } = vcf(game.board(), c, &limits) {
                Some([1.0, 0.0, 0.0])
            } else {
                match refutations(game.board(), c, &limits) {
                    Defence::Threat { refutations, .. } if refutations.is_empty() => Some([0.0, 0.0, 1.0]),
                    _ => None,
                }
            };
            let want = exact.unwrap_or(by_result);
            assert_eq!(shard.value.row(row).to_vec(), want.to_vec(), "game {gi}, decision {row}");
            if exact.is_some() {
                game_proven += 1;
                game_overruled += u32::from(want != by_result);
            }
            game.apply(a).unwrap();
        }
        assert_eq!((g.proven_positions, g.proven_overruled), (game_proven, game_overruled), "game {gi}");
        proven += game_proven;
        overruled += game_overruled;
    }
    eprintln!("{proven} proven positions, {overruled} against the game's result, of {}", shard.len());
    assert!(proven >= 5, "only {proven} proven positions");
    assert!(overruled >= 1, "no game ended against a proven result");
}

/// Counts the positions evaluated, delegating to the heuristic.
struct Counting(HeuristicEvaluator, std::sync::Arc<std::sync::atomic::AtomicUsize>);

impl renju_selfplay::eval::Evaluator for Counting {
    fn evaluate(
        &mut self,
        planes: &[f32],
        globals: &[f32],
        n: usize,
    ) -> anyhow::Result<renju_selfplay::eval::EvalOutput> {
        self.1.fetch_add(n, std::sync::atomic::Ordering::SeqCst);
        self.0.evaluate(planes, globals, n)
    }
    fn board_size(&self) -> usize {
        self.0.board_size()
    }
}

#[test]
fn paused_selfplay_evaluates_nothing_until_resumed() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let cfg = SelfplayConfig {
        size: 9,
        protocol: Protocol::Free { centre: true },
        stone_cap: Some(20),
        playouts: 8,
        fast_playouts: 4,
        threads: 2,
        games_per_thread: 2,
        ..SelfplayConfig::default()
    };
    let dir = tempfile::tempdir().unwrap();
    let evaluated = std::sync::Arc::new(AtomicUsize::new(0));
    let server = InferenceServer::spawn(
        Box::new(Counting(HeuristicEvaluator::new(9), evaluated.clone())),
        0,
        ServerConfig::default(),
    );
    let (stop, pause) = (AtomicBool::new(false), AtomicBool::new(true));
    let mut sink = ShardSink::new(dir.path(), &cfg, "p", 10);
    std::thread::scope(|s| {
        let run = s.spawn(|| {
            run_selfplay_paced(&cfg, &server.handle(), Some(4), &stop, &pause, &mut sink, &mut |_| {}).unwrap()
        });
        std::thread::sleep(std::time::Duration::from_millis(300));
        assert_eq!(evaluated.load(Ordering::SeqCst), 0, "a paused run evaluated positions");
        pause.store(false, Ordering::SeqCst);
        let prog = run.join().unwrap();
        assert_eq!(prog.games, 4);
        assert!(evaluated.load(Ordering::SeqCst) > 0);
    });
    server.join();
}

#[test]
fn a_stop_ends_a_paused_run() {
    let cfg = SelfplayConfig { size: 9, protocol: Protocol::Free { centre: true }, ..SelfplayConfig::default() };
    let dir = tempfile::tempdir().unwrap();
    let server = InferenceServer::spawn(Box::new(HeuristicEvaluator::new(9)), 0, ServerConfig::default());
    let (stop, pause) = (AtomicBool::new(false), AtomicBool::new(true));
    let mut sink = ShardSink::new(dir.path(), &cfg, "q", 10);
    std::thread::scope(|s| {
        let run = s.spawn(|| run_selfplay_paced(&cfg, &server.handle(), None, &stop, &pause, &mut sink, &mut |_| {}));
        stop.store(true, std::sync::atomic::Ordering::SeqCst);
        let prog = run.join().unwrap().unwrap();
        assert_eq!(prog.games, 0);
    });
    server.join();
}

#[test]
fn the_short_value_is_the_root_value_at_horizon_one_and_the_result_at_a_long_horizon() {
    // Every decision recorded, resignation on: the short value is indexed by the decision.
    let cfg = |horizon| SelfplayConfig {
        resign_threshold: Some(-0.5),
        resign_consecutive: 1,
        resign_disabled_fraction: 0.0,
        short_value_horizon: horizon,
        ..every_decision_recorded()
    };
    for horizon in [1.0, 1e9] {
        let cfg = cfg(horizon);
        let shard = uniform_shard(&cfg, 3);
        let mut decided = 0;
        for i in 0..shard.len() {
            let (short, root) = (shard.short_value[i], shard.root_value[i]);
            let result = shard.value[[i, 0]] - shard.value[[i, 2]];
            if horizon == 1.0 {
                assert_eq!(short, root.clamp(-1.0, 1.0), "position {i}: horizon 1 gives the root value");
            } else {
                assert_eq!(short, result, "position {i}: a long horizon gives the result");
            }
            decided += usize::from(root.abs() > 0.1);
        }
        assert!(decided > 0, "some root values are away from 0, so the check can tell them from the result");
    }
}

/// Plays `games` games of `cfg` (11x11) with the uniform evaluator into one shard, read back.
fn uniform_shard(cfg: &SelfplayConfig, games: u64) -> renju_selfplay::record::Shard {
    let dir = tempfile::tempdir().unwrap();
    let server = InferenceServer::spawn(Box::new(UniformEvaluator::new(11)), 0, ServerConfig::default());
    let mut sink = ShardSink::new(dir.path(), cfg, "u", 100);
    let stop = AtomicBool::new(false);
    run_selfplay(cfg, &server.handle(), Some(games), &stop, &mut sink, &mut |_| {}).unwrap();
    server.join();
    assert_eq!(sink.written.len(), 1, "one shard");
    read_shard(&sink.written[0]).unwrap()
}

/// 11x11 RIF games at a few playouts with every decision recorded, half of them full searches.
fn every_decision_recorded() -> SelfplayConfig {
    SelfplayConfig {
        size: 11,
        protocol: Protocol::Rif,
        playouts: 8,
        fast_playouts: 3,
        full_search_fraction: 0.5,
        record_fast_positions: true,
        games_per_thread: 3,
        ..SelfplayConfig::default()
    }
}
