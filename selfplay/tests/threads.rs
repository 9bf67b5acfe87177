//! Multi-threaded search of one tree ([`search_parallel`]): a legal move, visit counts that add
//! up to the playouts done, the answer of one thread on forced positions, and one evaluator is
//! exactly the one-thread search.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use renju_rules::{Action, Game, Point, Protocol, Rule};
use renju_selfplay::action::{action_from_index, action_index};
use renju_selfplay::eval::{EvalOutput, Evaluator, HeuristicEvaluator};
use renju_selfplay::mcts::{pick_by_visits, search_parallel, search_with, Mcts, SearchConfig};

mod common;
use common::game_with;

type EvalFn = Box<dyn FnMut(&[f32], &[f32], usize) -> anyhow::Result<EvalOutput> + Send>;

/// `threads` heuristic evaluators as the closures the drivers take.
fn heuristics(threads: usize) -> Vec<EvalFn> {
    (0..threads)
        .map(|_| {
            let mut ev = HeuristicEvaluator::new(15);
            Box::new(move |p: &[f32], g: &[f32], n: usize| ev.evaluate(p, g, n)) as EvalFn
        })
        .collect()
}

/// Searches `g` to `visits` root visits with `threads` threads; returns the tree and the most
/// visited move among [`Mcts::root_choices`].
fn search(g: &Game, cfg: SearchConfig, visits: u32, threads: usize) -> (Mcts, usize) {
    let mut m = Mcts::new(g, cfg);
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    search_parallel(&mut m, visits, 8, None, &mut rng, &mut heuristics(threads)).unwrap();
    let pick = pick_by_visits(&m.root_choices(), 0.0, &mut rng).expect("a move");
    (m, pick)
}

#[test]
fn two_threads_play_a_legal_move_and_every_playout_is_a_visit() {
    let g = game_with(Rule::Renju, &[(7, 7), (8, 6), (6, 8)], &[(8, 8), (7, 6)]);
    for (threads, visits) in [(2, 800), (3, 1000), (4, 257)] {
        let (mut m, pick) = search(&g, SearchConfig::default(), visits, threads);
        assert!(g.is_legal(action_from_index(pick, 15).unwrap()));
        assert_eq!(m.root_visits(), visits, "{threads} threads: the budget exactly");
        assert_eq!(m.pending(), 0);
        // The root's own evaluation plus one visit per child playout.
        let child_visits: u32 = m.root_children().iter().map(|c| c.1).sum();
        assert_eq!(child_visits + 1, visits, "{threads} threads");
        let st = m.take_stats();
        assert_eq!(st.playouts, visits as u64, "every completed playout is a root visit");
        assert!(st.evaluations <= st.playouts);
        // The value is a mean of values in [-1, 1].
        assert!(m.root_value().abs() <= 1.0);
        // The tree goes on: reuse after a multi-threaded search.
        let mut g2 = g.clone();
        g2.apply(action_from_index(pick, 15).unwrap()).unwrap();
        m.advance(pick, &g2);
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let target = m.root_visits() + 100;
        search_parallel(&mut m, target, 8, None, &mut rng, &mut heuristics(threads)).unwrap();
        assert_eq!(m.root_visits(), target);
    }
}

#[test]
fn forced_positions_get_the_answer_of_one_thread() {
    let idx = |x, y| action_index(Action::Place(Point::new(x, y)), 15);
    let four = [(3, 7), (4, 7), (5, 7), (6, 7)];
    // Black to move with a four: the five at (7, 7) (shortcuts off: the search must find it).
    let win = game_with(Rule::Renju, &four, &[(2, 7), (0, 0), (14, 0), (0, 14)]);
    // White to move against that four: the block at (7, 7).
    let block = game_with(Rule::Renju, &four, &[(2, 7), (0, 0), (14, 0)]);
    for (g, solver) in [(&win, true), (&win, false), (&block, true), (&block, false)] {
        let cfg = SearchConfig { shortcuts: false, solver, ..SearchConfig::default() };
        let (_, one) = search(g, cfg.clone(), 1500, 1);
        let (m, two) = search(g, cfg, 1500, 2);
        assert_eq!(one, idx(7, 7), "solver {solver}");
        assert_eq!(two, one, "solver {solver}: two threads, the answer of one");
        if solver && std::ptr::eq(g, &win) {
            assert_eq!(m.root_proven(), Some(1.0));
        }
    }
}

#[test]
fn one_evaluator_is_the_one_thread_search_bit_for_bit() {
    let g = game_with(Rule::Renju, &[(7, 7), (8, 6), (6, 8)], &[(8, 8), (7, 6)]);
    let mut a = Mcts::new(&g, SearchConfig::default());
    let mut ev = HeuristicEvaluator::new(15);
    search_with(&mut a, 600, 8, &mut ChaCha8Rng::seed_from_u64(9), |p, gl, n| ev.evaluate(p, gl, n)).unwrap();
    let mut b = Mcts::new(&g, SearchConfig::default());
    search_parallel(&mut b, 600, 8, None, &mut ChaCha8Rng::seed_from_u64(9), &mut heuristics(1)).unwrap();
    assert_eq!(a.root_children(), b.root_children());
    assert_eq!(a.tree_size(), b.tree_size());
    assert_eq!(a.root_value().to_bits(), b.root_value().to_bits());
}

#[test]
fn a_search_whose_playouts_all_end_in_draws_stops_at_its_deadline() {
    // A stone cap one above the stones on the board: every move ends the game in a draw, so
    // after the root's evaluation every playout is backed up without one and the root is never
    // proven (a draw proves nothing). Only the deadline ends these searches.
    let mut g = Game::new(15, Rule::Renju, Protocol::Free { centre: false }, Some(6)).unwrap();
    for (x, y) in [(7, 7), (8, 8), (6, 8), (7, 6), (8, 6)] {
        g.apply(Action::Place(Point::new(x, y))).unwrap();
    }
    assert!(g.outcome().is_none());
    for threads in [1, 2] {
        let (tx, rx) = std::sync::mpsc::channel();
        let g = g.clone();
        std::thread::spawn(move || {
            let mut m = Mcts::new(&g, SearchConfig::default());
            let deadline = std::time::Instant::now() + std::time::Duration::from_millis(20);
            let mut rng = ChaCha8Rng::seed_from_u64(3);
            let r = search_parallel(&mut m, u32::MAX, 8, Some(deadline), &mut rng, &mut heuristics(threads));
            let _ = tx.send(r.map(|()| (m.root_visits(), m.root_proven())));
        });
        // Generous: the search ends about 20 ms in; without a bound on the playouts of one
        // gather it would run until u32::MAX root visits.
        let (visits, proven) = rx
            .recv_timeout(std::time::Duration::from_secs(60))
            .unwrap_or_else(|_| panic!("{threads} threads: the search ran a minute past its 20 ms deadline"))
            .unwrap();
        assert!(visits > 1, "{threads} threads: the draws were searched");
        assert_eq!(proven, None, "{threads} threads: draws prove nothing");
    }
}
