//! PUCT search: shortcuts, forbidden points, backup by player identity; the Gumbel root
//! search through the tree: exact budget, the winning action found.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use renju_rules::{Action, Color, Game, Point, Protocol, Rule, Verdict};
use renju_selfplay::action::{action_from_index, action_index};
use renju_selfplay::eval::{EvalOutput, Evaluator, HeuristicEvaluator, UniformEvaluator};
use renju_selfplay::mcts::{search_with, Mcts, SearchAlgorithm, SearchConfig};

mod common;
use common::game_with;

fn best_action(g: &Game, visits: u32, eval: &mut dyn Evaluator) -> (usize, Mcts) {
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let mut m = Mcts::new(g, SearchConfig::default());
    search_with(&mut m, visits, 8, &mut rng, |p, gl, n| eval.evaluate(p, gl, n)).unwrap();
    let best = m.root_children().into_iter().max_by_key(|c| c.1).unwrap().0;
    (best, m)
}

const RULES: [Rule; 3] = [Rule::Freestyle, Rule::Standard, Rule::Renju];

#[test]
fn takes_a_five_under_every_rule() {
    for rule in RULES {
        for as_white in [false, true] {
            let four = [(3, 7), (4, 7), (5, 7), (6, 7)];
            let quiet = [(0, 0), (0, 2), (0, 4), (0, 6)];
            let g = if as_white {
                // Black quiet stones plus one more so that White is to move with a four.
                let mut b = quiet.to_vec();
                b.push((14, 14));
                game_with(rule, &b, &four)
            } else {
                game_with(rule, &four, &quiet)
            };
            let (best, _) = best_action(&g, 50, &mut UniformEvaluator::new(15));
            let wins =
                [action_index(Action::Place(Point::new(2, 7)), 15), action_index(Action::Place(Point::new(7, 7)), 15)];
            assert!(wins.contains(&best), "{rule:?} white={as_white}: played {:?}", action_from_index(best, 15));
        }
    }
}

#[test]
fn blocks_a_four_under_every_rule() {
    for rule in RULES {
        for blocker_white in [false, true] {
            // The attacker's simple four on row 11: (3..=6, 10), blocked at (2, 10); five at (7, 10).
            let four = [(3, 10), (4, 10), (5, 10), (6, 10)];
            let g = if blocker_white {
                game_with(rule, &[(3, 10), (4, 10), (5, 10), (6, 10), (10, 14)], &[(2, 10), (10, 0), (12, 0), (14, 2)])
            } else {
                game_with(rule, &[(2, 10), (10, 0), (12, 0), (14, 2)], &four)
            };
            let (best, m) = best_action(&g, 50, &mut UniformEvaluator::new(15));
            let block = action_index(Action::Place(Point::new(7, 10)), 15);
            assert_eq!(best, block, "{rule:?} blocker_white={blocker_white}");
            assert_eq!(m.root_children().len(), 1, "the block is the only move considered");
        }
    }
}

#[test]
fn never_searches_a_forbidden_black_point() {
    // Black (6,7) (7,7) horizontally and (8,8) (8,9) vertically: (8,7) is a double-three.
    let g = game_with(Rule::Renju, &[(6, 7), (7, 7), (8, 8), (8, 9)], &[(0, 14), (2, 14), (4, 14), (14, 0)]);
    let forbidden = Point::new(8, 7);
    assert!(matches!(g.board().classify(forbidden, Color::Black), Verdict::Forbidden(_)));
    let (best, m) = best_action(&g, 400, &mut HeuristicEvaluator::new(15));
    let idx = action_index(Action::Place(forbidden), 15);
    assert_ne!(best, idx);
    assert!(m.root_children().iter().all(|c| c.0 != idx), "forbidden point is a root child");
    assert_eq!(m.policy_target()[idx], 0.0);
    // And deeper: every searched black root move is legal for the game.
    for (a, n, _) in m.root_children() {
        if n > 0 {
            assert!(g.is_legal(action_from_index(a, 15).unwrap()));
        }
    }
}

/// Evaluator saying the deciding player always wins: W/D/L = (1, 0, 0).
struct DeciderWins(usize);
impl Evaluator for DeciderWins {
    fn evaluate(&mut self, _p: &[f32], _g: &[f32], n: usize) -> anyhow::Result<EvalOutput> {
        Ok(EvalOutput {
            policy_logits: vec![0.0; n * renju_selfplay::action::action_space_size(self.0)],
            wdl: [1.0, 0.0, 0.0].repeat(n),
        })
    }
    fn board_size(&self) -> usize {
        self.0
    }
}

/// For every root child visited exactly once, its value seen from the root decider is +1 when
/// the same player decides after it and -1 otherwise (the evaluator says "decider wins").
fn check_identity_backup(g: &Game) {
    let size = g.board().size();
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let mut m = Mcts::new(g, SearchConfig { dirichlet_epsilon: 0.0, ..SearchConfig::default() });
    let kids = g.legal_actions().len() as u32;
    let mut ev = DeciderWins(size);
    search_with(&mut m, kids + 1, 1, &mut rng, |p, gl, n| ev.evaluate(p, gl, n)).unwrap();
    let mut checked = 0;
    for (a, n, q) in m.root_child_values() {
        if n != 1 {
            continue;
        }
        let mut after = g.clone();
        after.apply(action_from_index(a, size).unwrap()).unwrap();
        let expect = if after.to_decide() == g.to_decide() { 1.0 } else { -1.0 };
        assert_eq!(q, expect, "action {:?} at {:?}", action_from_index(a, size), g.decision());
        checked += 1;
    }
    assert!(checked >= 2, "too few children checked");
}

#[test]
fn backup_by_identity_across_lianhuan_double_and_swap() {
    // Lianhuan: First places stone 1 then decides Single (Second moves next) or Double (First
    // places stone 2 as well).
    let mut g = Game::new(15, Rule::Renju, Protocol::Lianhuan, None).unwrap();
    g.apply(Action::Place(Point::new(7, 7))).unwrap();
    check_identity_backup(&g);
    // After a double, Second decides: take the next stone (Keep) or exchange (Swap).
    g.apply(Action::Double).unwrap();
    g.apply(Action::Place(Point::new(8, 8))).unwrap();
    check_identity_backup(&g);
    // Swap1: after Black's stone 1 the White player keeps (places stone 2) or swaps.
    let mut s = Game::new(15, Rule::Renju, Protocol::Swap1, None).unwrap();
    s.apply(Action::Place(Point::new(7, 7))).unwrap();
    check_identity_backup(&s);
}

#[test]
fn tree_reuse_keeps_the_subtree() {
    let g = game_with(Rule::Renju, &[(7, 7), (8, 8)], &[(7, 8), (9, 9)]);
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let mut m = Mcts::new(&g, SearchConfig::default());
    let mut ev = HeuristicEvaluator::new(15);
    search_with(&mut m, 300, 8, &mut rng, |p, gl, n| ev.evaluate(p, gl, n)).unwrap();
    let (best, visits, _) = m.root_children().into_iter().max_by_key(|c| c.1).unwrap();
    let mut g2 = g.clone();
    g2.apply(action_from_index(best, 15).unwrap()).unwrap();
    m.advance(best, &g2);
    // The kept root had `visits` visits: one for its own evaluation plus its subtree.
    assert_eq!(m.root_visits(), visits);
    search_with(&mut m, visits + 100, 8, &mut rng, |p, gl, n| ev.evaluate(p, gl, n)).unwrap();
    assert!(m.root_visits() >= visits + 100);
    let total: f32 = m.policy_target().iter().sum();
    assert!((total - 1.0).abs() < 1e-5);
}

fn child_visits(m: &Mcts) -> u32 {
    m.root_children().iter().map(|c| c.1).sum()
}

#[test]
fn gumbel_search_spends_exactly_its_budget_on_fresh_and_reused_trees() {
    let g = game_with(Rule::Renju, &[(7, 7), (8, 8)], &[(7, 8), (9, 9)]);
    let mut ev = HeuristicEvaluator::new(15);
    let cfg = SearchConfig { algorithm: SearchAlgorithm::Gumbel, ..SearchConfig::default() };
    for (k, budget) in [1u32, 2, 3, 7, 16, 33, 100].into_iter().enumerate() {
        let mut rng = ChaCha8Rng::seed_from_u64(k as u64);
        let mut m = Mcts::new(&g, cfg.clone());
        m.start_gumbel(budget, true, &mut rng);
        search_with(&mut m, 0, 8, &mut rng, |p, gl, n| ev.evaluate(p, gl, n)).unwrap();
        assert_eq!(child_visits(&m), budget, "fresh tree, budget {budget}");
        assert_eq!(m.root_visits(), budget + 1, "the root's own evaluation comes first");
        let pi = m.gumbel_policy().unwrap();
        assert!((pi.iter().sum::<f32>() - 1.0).abs() < 1e-5);
        let a = m.gumbel_action().unwrap();
        assert!(pi[a] > 0.0 && m.root_children().iter().any(|c| c.0 == a));
        // Reuse the subtree of the chosen move: the next search adds exactly its budget.
        let mut g2 = g.clone();
        g2.apply(action_from_index(a, 15).unwrap()).unwrap();
        m.advance(a, &g2);
        let before = child_visits(&m);
        m.start_gumbel(budget, true, &mut rng);
        search_with(&mut m, 0, 8, &mut rng, |p, gl, n| ev.evaluate(p, gl, n)).unwrap();
        assert_eq!(child_visits(&m), before + budget, "reused tree, budget {budget}");
    }
}

#[test]
fn gumbel_search_with_a_uniform_prior_picks_the_one_winning_action() {
    // 9x9 freestyle, Black to move with an open four c5..f5: b5 and g5 make five, the only
    // winning moves; the uniform evaluator gives every position value 0 and the same
    // prior to all empty points, and without shortcuts the root lists every empty point.
    let mut g = Game::new(9, Rule::Freestyle, Protocol::Free { centre: false }, None).unwrap();
    for (b, w) in [((2, 4), (2, 0)), ((3, 4), (4, 0)), ((4, 4), (6, 0)), ((5, 4), (8, 8))] {
        g.apply(Action::Place(Point::new(b.0, b.1))).unwrap();
        g.apply(Action::Place(Point::new(w.0, w.1))).unwrap();
    }
    let fives = [action_index(Action::Place(Point::new(1, 4)), 9), action_index(Action::Place(Point::new(6, 4)), 9)];
    let mut ev = UniformEvaluator::new(9);
    for seed in 0..5 {
        let cfg = SearchConfig {
            algorithm: SearchAlgorithm::Gumbel,
            shortcuts: false,
            gumbel_considered: 81,
            ..SearchConfig::default()
        };
        let mut m = Mcts::new(&g, cfg);
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        m.start_gumbel(200, true, &mut rng);
        search_with(&mut m, 0, 8, &mut rng, |p, gl, n| ev.evaluate(p, gl, n)).unwrap();
        assert_eq!(m.root_children().len(), 73, "every empty point is a root action");
        let a = m.gumbel_action().unwrap();
        assert!(fives.contains(&a), "seed {seed}: chose {a}");
    }
}

/// Quiet white stones (three points apart, far from the VCF positions) to fix the side to move.
const PAD: [(u8, u8); 6] = [(0, 0), (3, 0), (6, 0), (0, 3), (3, 3), (6, 3)];

fn vcf_search(g: &Game, vcf_nodes: u64) -> Mcts {
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let mut m = Mcts::new(g, SearchConfig { vcf_nodes, ..SearchConfig::default() });
    let mut eval = UniformEvaluator::new(15);
    search_with(&mut m, 40, 8, &mut rng, |p, gl, n| eval.evaluate(p, gl, n)).unwrap();
    m
}

#[test]
fn a_proven_vcf_is_the_roots_only_child_with_an_exact_value() {
    // Black's four-four VCF of rules/tests/vcf_positions.rs (k11, l11, n11 then m11), Black to move.
    let black = [(10, 11), (10, 12), (10, 13), (11, 9), (11, 8), (11, 7), (13, 11), (13, 12), (13, 13)];
    let mut white = vec![(10, 9), (11, 6), (13, 9)];
    white.extend_from_slice(&PAD);
    let g = game_with(Rule::Renju, &black, &white);
    let line = match renju_rules::vcf::vcf(g.board(), Color::Black, &renju_rules::vcf::Limits::nodes(10_000)) {
        renju_rules::vcf::Vcf::Win { line } => line,
        other => panic!("{other:?}"),
    };
    let m = vcf_search(&g, 10_000);
    let first = action_index(Action::Place(line[0]), 15);
    assert_eq!(m.root_forced(), Some(first));
    let target = m.policy_target();
    assert_eq!(target[first], 1.0);
    assert_eq!(target.iter().sum::<f32>(), 1.0);
    assert_eq!(m.root_value(), 1.0, "every playout ends in the proven win");
    // Off: the search is free to look elsewhere.
    assert!(vcf_search(&g, 0).root_children().len() > 100);
}

#[test]
fn an_opponent_vcf_restricts_the_root_to_its_refutations() {
    // Black threatens the four-three f10 (rules/tests/vcf_positions.rs), White to move.
    let black = [(2, 9), (3, 9), (4, 9), (5, 10), (5, 11), (6, 13)];
    let mut white = vec![(1, 9)];
    white.extend_from_slice(&PAD[..4]);
    let g = game_with(Rule::Renju, &black, &white);
    let d = renju_rules::vcf::refutations(g.board(), Color::White, &renju_rules::vcf::Limits::nodes(10_000));
    let renju_rules::vcf::Defence::Threat { refutations, .. } = d else { panic!("{d:?}") };
    let mut want: Vec<usize> = refutations.iter().map(|&p| action_index(Action::Place(p), 15)).collect();
    want.sort();
    let m = vcf_search(&g, 10_000);
    let mut got: Vec<usize> = m.root_children().iter().map(|c| c.0).collect();
    got.sort();
    assert_eq!(got, want);
    assert!(got.contains(&action_index(Action::Place(Point::new(5, 9)), 15)), "f10 refutes");
}

/// Black's VCT without a VCF of rules/tests/vct_positions.rs (`black_has_a_vct_but_no_vcf`):
/// the column three h5 h6 h7 capped by White's h8, e4, and the pair d6 e5; Black wins with
/// f4 (a three), h4 (a four-three), g4. White's quiet stones on row 15 fix the side to move.
const VCT_BLACK: [(u8, u8); 6] = [(7, 4), (7, 5), (7, 6), (4, 3), (3, 5), (4, 4)];
const VCT_WHITE: [(u8, u8); 3] = [(7, 7), (8, 6), (6, 5)];
const ROW_15: [(u8, u8); 3] = [(0, 14), (4, 14), (8, 14)];

fn vct_search(g: &Game, vct_nodes: u64, vct_visits: u32, visits: u32) -> Mcts {
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let cfg = SearchConfig { vcf_nodes: 1_000, vct_nodes, vct_visits, solver: true, ..SearchConfig::default() };
    let mut m = Mcts::new(g, cfg);
    let mut eval = UniformEvaluator::new(15);
    search_with(&mut m, visits, 8, &mut rng, |p, gl, n| eval.evaluate(p, gl, n)).unwrap();
    m
}

fn black_vct(g: &Game) -> renju_rules::vct::Vct {
    renju_rules::vct::vct(g.board(), Color::Black, &renju_rules::vcf::Limits::nodes(1_000_000))
}

/// The VCT shape with White to move (two quiet stones on row 15): most White moves leave
/// Black's VCT standing.
fn white_facing_a_vct() -> Game {
    let mut white = VCT_WHITE.to_vec();
    white.extend_from_slice(&ROW_15[..2]);
    let g = game_with(Rule::Renju, &VCT_BLACK, &white);
    assert_eq!(g.next_color(), Color::White);
    let none = renju_rules::vcf::vcf(g.board(), Color::Black, &renju_rules::vcf::Limits::nodes(1_000_000));
    assert_eq!(none, renju_rules::vcf::Vcf::NoWin, "the VCF check alone proves nothing here");
    assert!(matches!(black_vct(&g), renju_rules::vct::Vct::Win { .. }));
    g
}

#[test]
fn moves_that_leave_the_opponent_a_vct_are_proven_losses() {
    // Asked at expansion (`vct_visits = 0`), the check proves the White moves that leave the
    // VCT lost at their one visit. Children proven with more visits were proven deeper in the
    // tree (a quiet black move with two VCF threats, say), which is not the check's doing.
    let g = white_facing_a_vct();
    let m = vct_search(&g, 500, 0, 1_000);
    let shallow = renju_rules::vct::Options { max_depth: 3, vcf_nodes: 0 };
    let (mut at_expansion, mut visited) = (0, 0);
    for &(a, n, q) in &m.root_child_values() {
        let mut after = g.clone();
        after.apply(action_from_index(a, 15).unwrap()).unwrap();
        let limits = renju_rules::vcf::Limits::nodes(1_000_000);
        let easy = renju_rules::vct::vct_with_options(after.board(), Color::Black, &limits, &shallow).0;
        if n > 0 {
            visited += 1;
            if matches!(easy, renju_rules::vct::Vct::Win { .. }) {
                assert_eq!(q, -1.0, "{a}: Black's VCT of three threats stands, yet the child is not proven lost");
            }
        }
        if q == -1.0 && n == 1 {
            at_expansion += 1;
            assert!(matches!(black_vct(&after), renju_rules::vct::Vct::Win { .. }), "{a}: proven lost without a VCT");
        }
    }
    assert!(visited > 150 && at_expansion > 100, "{visited} children visited, {at_expansion} proven at expansion");
    let lost: Vec<usize> = m.root_child_values().iter().filter(|c| c.2 == -1.0).map(|c| c.0).collect();
    let choices = m.root_choices();
    assert!(!choices.is_empty() && choices.iter().all(|c| !lost.contains(&c.0)), "the choice avoids proven losses");
    assert!(m.root_proven().is_none(), "some moves refute the VCT");
    // Without the VCT check no child is proven at its expansion (Black has no VCF).
    let off = vct_search(&g, 0, 0, 1_000);
    assert!(off.root_child_values().iter().all(|c| c.2 != -1.0 || c.1 > 1));
}

#[test]
fn the_vct_check_waits_for_its_visits() {
    // 150 playouts over about 200 children: no child reaches 4 visits, so with
    // `vct_visits = 4` the check never asks and nothing is proven; at expansion it proves many.
    let g = white_facing_a_vct();
    let proven = |m: &Mcts| m.root_child_values().iter().filter(|c| c.2 == -1.0).count();
    let waiting = vct_search(&g, 500, 4, 150);
    assert!(waiting.root_child_values().iter().all(|c| c.1 < 4));
    assert_eq!(proven(&waiting), 0);
    assert!(proven(&vct_search(&g, 500, 0, 150)) > 50);
}
