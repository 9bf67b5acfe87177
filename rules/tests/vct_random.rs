//! The VCT solver against the simple reference checkers on random positions (RULES.md §2–4):
//! - every `Win` line must replay by `reference::check_vct_line`, and a win whose proof needs
//!   at most two threats must pass the whole-tree `reference::check_vct_win`;
//! - with the same threat depth and no VCF shortcut, the solver and `reference::has_vct` must
//!   agree exactly (a win found by either is found by both; `NoWin` only where the reference
//!   finds none).
//!
//! The suite runs about 300 solver calls in a debug build; set `VCT_CASES` for more
//! (`VCT_CASES=2000 cargo test --release -p renju-rules --test vct_random -- --nocapture`).

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use renju_rules::notation::format_moves;
use renju_rules::vcf::Limits;
use renju_rules::vct::{vct_with_options, Options, Vct};
use renju_rules::{reference, Board, Color, Rule};

mod common;
use common::random_game_position;

/// `VCT_DEPTH` sets the threat depth of the agreement tests for every position.
fn depth_override() -> Option<u32> {
    std::env::var("VCT_DEPTH").ok().and_then(|v| v.parse().ok())
}

fn cases(default: usize) -> usize {
    std::env::var("VCT_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

#[derive(Default, Debug)]
struct Tally {
    positions: usize,
    wins: usize,
    deep_wins: usize,
    tree_checked: usize,
    none: usize,
    unknown: usize,
}

#[test]
fn every_win_replays_and_shallow_wins_pass_the_tree_check() {
    let n = cases(80);
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let mut tally = Tally::default();
    let options = Options::default();
    for k in 0..n {
        let rule = [Rule::Renju, Rule::Renju, Rule::Renju, Rule::Freestyle, Rule::Standard][k % 5];
        let (b, to_move) = random_game_position(&mut rng, rule, 20, 40);
        for attacker in [to_move, to_move.opponent()] {
            let (v, st) = vct_with_options(&b, attacker, &Limits::nodes(5_000), &options);
            tally.positions += 1;
            match &v {
                Vct::Win { line } => {
                    tally.wins += 1;
                    tally.deep_wins += (st.depth >= 3) as usize;
                    if let Err(e) = reference::check_vct_line(15, rule, b.stones(), attacker, line) {
                        panic!(
                            "bad line {} for {attacker:?} under {rule:?}: {e}\nstones {:?}",
                            format_moves(line),
                            b.stones()
                        );
                    }
                    if st.depth <= 2 {
                        tally.tree_checked += 1;
                        assert!(
                            reference::check_vct_win(15, rule, b.stones(), attacker, line[0], st.depth),
                            "{} (depth {}) for {attacker:?} under {rule:?} fails the tree check\nstones {:?}",
                            format_moves(line),
                            st.depth,
                            b.stones()
                        );
                    }
                }
                Vct::NoWin => tally.none += 1,
                Vct::Unknown => tally.unknown += 1,
            }
        }
    }
    eprintln!("vct_random (default options): {tally:?}");
    assert!(tally.wins >= tally.positions / 10, "{tally:?}");
    assert!(tally.deep_wins >= 1, "{tally:?}");
    assert!(tally.none >= 1, "{tally:?}");
}

/// Solver and reference on the same threat game (`depth` threats, no VCF shortcut).
fn agree(b: &Board, attacker: Color, depth: u32, tally: &mut Tally) {
    let rule = b.rule();
    let options = Options { max_depth: depth, vcf_nodes: 0 };
    let limits = Limits::nodes(10_000_000);
    let (v, st) = vct_with_options(b, attacker, &limits, &options);
    assert!(st.nodes < limits.nodes, "budget spent");
    let reference = reference::has_vct(15, rule, b.stones(), attacker, depth);
    tally.positions += 1;
    let msg = || {
        format!(
            "{v:?} vs reference {reference} at depth {depth} for {attacker:?} under {rule:?}\nstones {:?}",
            b.stones()
        )
    };
    match &v {
        Vct::Win { line } => {
            tally.wins += 1;
            assert!(reference, "{}", msg());
            assert!(reference::check_vct_win(15, rule, b.stones(), attacker, line[0], depth), "{}", msg());
            reference::check_vct_line(15, rule, b.stones(), attacker, line).unwrap();
        }
        // A depth cut, never a budget: the reference must find no win within the depth.
        Vct::Unknown => {
            tally.unknown += 1;
            assert!(!reference, "{}", msg());
        }
        Vct::NoWin => {
            tally.none += 1;
            assert!(!reference, "{}", msg());
        }
    }
}

#[test]
fn solver_and_reference_agree_at_small_depth() {
    let n = cases(60);
    let mut rng = ChaCha8Rng::seed_from_u64(2026);
    let mut tally = Tally::default();
    for k in 0..n {
        let rule = [Rule::Renju, Rule::Renju, Rule::Freestyle, Rule::Standard][k % 4];
        let (b, to_move) = random_game_position(&mut rng, rule, 20, 40);
        // Depth 2 on a tenth of the positions (the reference is slow in a debug build).
        let depth = depth_override().unwrap_or(if k % 10 == 0 { 2 } else { 1 });
        agree(&b, to_move, depth, &mut tally);
        agree(&b, to_move.opponent(), depth, &mut tally);
    }
    eprintln!("vct_random (solver vs reference): {tally:?}");
    assert!(tally.wins >= tally.positions / 20, "{tally:?}");
    assert!(tally.none + tally.unknown >= tally.positions / 10, "{tally:?}");
}

#[test]
fn solver_and_reference_agree_on_dense_black_clusters() {
    // Black-heavy clusters (the generator of the forbidden-move tests) under renju, where
    // forbidden straight-four points, forbidden defence points and fake threes are common.
    let n = cases(60) / 2;
    let mut rng = ChaCha8Rng::seed_from_u64(99);
    let mut tally = Tally::default();
    let mut k = 0;
    while tally.positions < 2 * n {
        let stones = common::realistic_position(&mut rng, 15);
        let b = Board::with_stones(15, Rule::Renju, &stones).unwrap();
        if stones.len() > 60 || b.stones().iter().any(|&(p, _)| b.is_win_at(p)) {
            continue;
        }
        let depth = depth_override().unwrap_or(if k % 10 == 0 { 2 } else { 1 });
        k += 1;
        agree(&b, Color::Black, depth, &mut tally);
        agree(&b, Color::White, depth, &mut tally);
    }
    eprintln!("vct_random (dense clusters): {tally:?}");
    assert!(tally.wins >= 1 && tally.none + tally.unknown >= 1, "{tally:?}");
}
