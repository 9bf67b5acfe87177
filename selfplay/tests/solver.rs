//! MCTS-solver (`SearchConfig::solver`): proven wins and losses propagate up the tree, a proven
//! root ends the search with its exact value, and the move chosen is a proven win or one not
//! proven lost.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use renju_rules::{Action, Game, Point, Rule};
use renju_selfplay::action::action_index;
use renju_selfplay::eval::{EvalOutput, Evaluator, HeuristicEvaluator};
use renju_selfplay::mcts::{pick_by_visits, search_with, Mcts, SearchConfig};

mod common;
use common::game_with;

/// The solver on; `shortcuts` off makes the search find the fives itself.
fn solver(shortcuts: bool) -> SearchConfig {
    SearchConfig { solver: true, shortcuts, ..SearchConfig::default() }
}

/// The heuristic evaluator's priors with value 0 everywhere: only exact results tell moves apart.
struct PriorsOnly(HeuristicEvaluator);

impl Evaluator for PriorsOnly {
    fn evaluate(&mut self, planes: &[f32], globals: &[f32], n: usize) -> anyhow::Result<EvalOutput> {
        let mut out = self.0.evaluate(planes, globals, n)?;
        out.wdl = [0.0, 1.0, 0.0].repeat(n);
        Ok(out)
    }
    fn board_size(&self) -> usize {
        self.0.board_size()
    }
}

/// Searches up to `visits` root visits with the heuristic evaluator (its priors only with
/// `flat_root`); returns the tree and the
/// chosen move (the most visited of [`Mcts::root_choices`]). With `flat_root`, root noise of
/// weight 1 and a high concentration makes the root priors near uniform, so every move is
/// tried.
fn search_flat(g: &Game, cfg: SearchConfig, visits: u32, flat_root: bool) -> (Mcts, usize) {
    let cfg =
        if flat_root { SearchConfig { dirichlet_alpha_total: 5000.0, dirichlet_epsilon: 1.0, ..cfg } } else { cfg };
    let mut m = Mcts::new(g, cfg);
    let mut ev: Box<dyn Evaluator> = if flat_root {
        Box::new(PriorsOnly(HeuristicEvaluator::new(15)))
    } else {
        Box::new(HeuristicEvaluator::new(15))
    };
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    if flat_root {
        m.add_root_noise(&mut rng);
    }
    search_with(&mut m, visits, 8, &mut rng, |p, gl, n| ev.evaluate(p, gl, n)).unwrap();
    let pick = pick_by_visits(&m.root_choices(), 0.0, &mut rng).expect("a move");
    (m, pick)
}

fn search(g: &Game, cfg: SearchConfig, visits: u32) -> (Mcts, usize) {
    search_flat(g, cfg, visits, false)
}

fn idx(x: u8, y: u8) -> usize {
    action_index(Action::Place(Point::new(x, y)), 15)
}

/// Black's four on row 7 closed by White at (2, 7): Black's only five is (7, 7).
const FOUR: [(u8, u8); 4] = [(3, 7), (4, 7), (5, 7), (6, 7)];
const FAR_WHITE: [(u8, u8); 4] = [(2, 7), (0, 0), (14, 0), (0, 14)];

#[test]
fn a_five_is_a_proven_win_played_at_once() {
    let g = game_with(Rule::Renju, &FOUR, &FAR_WHITE);
    for shortcuts in [true, false] {
        let (m, pick) = search(&g, solver(shortcuts), 64);
        assert_eq!(pick, idx(7, 7), "shortcuts {shortcuts}");
        assert_eq!(m.root_proven(), Some(1.0), "shortcuts {shortcuts}");
        assert_eq!(m.root_value(), 1.0, "a proven win is exactly +1");
        assert!(m.root_visits() < 64, "the search stops once the root is proven ({} visits)", m.root_visits());
        assert_eq!(m.root_choices().len(), 1, "only the proven win is a choice");
    }
    // Without the solver the same search runs its whole budget and the value is a mean.
    let (m, _) = search(&g, SearchConfig { shortcuts: false, ..SearchConfig::default() }, 64);
    assert_eq!(m.root_proven(), None);
    assert_eq!(m.root_visits(), 64);
}

#[test]
fn every_move_but_the_block_is_a_proven_loss() {
    // White to move against Black's four: every move but (7, 7) loses to the five. Values are
    // all 0 and the root priors flat, so only the solver's proofs single out the block.
    let white = [(2, 7), (0, 0), (14, 0)];
    let g = game_with(Rule::Renju, &FOUR, &white);
    let (m, pick) = search_flat(&g, solver(false), 3000, true);
    assert_eq!(pick, idx(7, 7));
    let values = m.root_child_values();
    let lost: Vec<&(usize, u32, f32)> = values.iter().filter(|c| c.2 == -1.0).collect();
    assert!(lost.len() >= 100, "moves proven lost: {}", lost.len());
    assert!(lost.iter().all(|c| c.0 != idx(7, 7)), "the block is not lost");
    let choices = m.root_choices();
    assert!(choices.iter().all(|c| !lost.iter().any(|l| l.0 == c.0)), "no proven loss is a choice");
    assert!(choices.iter().any(|c| c.0 == idx(7, 7)));
    assert_eq!(m.root_proven(), None, "the block leaves the game open");
}

#[test]
fn a_double_four_against_the_mover_is_a_proven_loss() {
    // Black fours on row 7 (five at (7, 7)) and column 10 (five at (10, 7)); White to move
    // cannot stop both.
    let black = [(3, 7), (4, 7), (5, 7), (6, 7), (10, 3), (10, 4), (10, 5), (10, 6)];
    let white = [(2, 7), (10, 2), (0, 0), (14, 0), (0, 14), (14, 14), (0, 10)];
    let g = game_with(Rule::Renju, &black, &white);
    for (shortcuts, budget) in [(true, 200), (false, 5000)] {
        let (m, pick) = search(&g, solver(shortcuts), budget);
        assert_eq!(m.root_proven(), Some(-1.0), "shortcuts {shortcuts}");
        assert_eq!(m.root_value(), -1.0, "a proven loss is exactly -1");
        assert!(m.root_visits() < budget, "stopped early: {} visits", m.root_visits());
        let values = m.root_child_values();
        assert!(values.iter().all(|c| c.2 == -1.0), "every move is proven lost: {values:?}");
        // Still a move to play, a legal one.
        assert!(values.iter().any(|c| c.0 == pick));
        if shortcuts {
            // The root's children are the two blocks.
            let mut kids: Vec<usize> = values.iter().map(|c| c.0).collect();
            kids.sort_unstable();
            assert_eq!(kids, vec![idx(7, 7), idx(10, 7)]);
        }
    }
}
