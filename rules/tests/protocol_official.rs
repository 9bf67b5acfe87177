//! The opening rules in official use (RULES.md §5.9–5.11: Soosõrv-N, Taraguchi-N, Swap2):
//! each decision step by step, every branch of the protocol decisions enumerated and counted,
//! the placements and counts the rules forbid refused, and swaps counted.

use renju_rules::{Action, Color, DecisionKind, Game, GameError, Opening, Player, Protocol, Rule};
use std::collections::BTreeMap;

mod common;
use common::{at, game, points, pt as p, pt_on, step};

fn swaps(g: &Game) -> usize {
    g.history().iter().filter(|(_, a)| *a == Action::Swap).count()
}

fn illegal(g: &Game, a: Action) -> String {
    let mut h = g.clone();
    let e = h.apply(a).unwrap_err();
    assert!(matches!(e, GameError::Illegal { .. }), "{a}: {e:?}");
    assert_eq!(h.history().len(), g.history().len(), "a refused action changes nothing");
    e.to_string()
}

const W: DecisionKind = DecisionKind::PlaceStone(Color::White);
const B: DecisionKind = DecisionKind::PlaceStone(Color::Black);
const F: Player = Player::First;
const S: Player = Player::Second;

/// What the enumeration of one protocol found: the branches up to settled colours.
#[derive(Debug, Default, PartialEq)]
struct Tree {
    /// Branches (protocol decision sequences) until colours are settled.
    leaves: usize,
    /// Decisions summed over all branches (placements included).
    decisions: usize,
    /// Branches by the number of swaps taken on them.
    by_swaps: BTreeMap<usize, usize>,
    /// Branches that end with Second holding Black.
    second_black: usize,
}

/// Every branch of the protocol decisions (keep/swap, double, the number of offers) from `g`
/// until colours are settled; each placement (stone, offer, pick) is the first legal point.
fn enumerate(g: &Game, tree: &mut Tree) {
    assert!(!g.is_over());
    if g.colours_settled() {
        tree.leaves += 1;
        tree.decisions += g.history().len();
        *tree.by_swaps.entry(swaps(g)).or_default() += 1;
        tree.second_black += (g.black_player() == S) as usize;
        return;
    }
    let legal = g.legal_actions();
    let branches: Vec<Action> = match g.decision() {
        DecisionKind::PlaceStone(_) | DecisionKind::PlaceOffer { .. } | DecisionKind::PickOffer => vec![legal[0]],
        _ => legal,
    };
    for a in branches {
        let mut next = g.clone();
        next.apply(a).unwrap();
        enumerate(&next, tree);
    }
}

fn tree(size: usize, protocol: &str) -> Tree {
    let mut t = Tree::default();
    enumerate(&Game::new(size, Rule::Renju, protocol.parse().unwrap(), None).unwrap(), &mut t);
    t
}

#[test]
fn soosorv_branches_counted() {
    // Swap, N = 1..=3, swap: 2 * 3 * 2 = 12 branches. Decisions on a branch: stone 2, stone 3
    // (the opening; stone 1 is automatic), swap, stone 4, N, swap, then N = 1: settled (4 + 2);
    // N = 2, 3: the offers and the pick (9, 10). 4 * (6 + 9 + 10) = 100.
    let t = tree(15, "soosorv:3");
    assert_eq!(t.leaves, 12);
    assert_eq!(t.decisions, 100);
    assert_eq!(t.by_swaps, BTreeMap::from([(0, 3), (1, 6), (2, 3)]));
    assert_eq!(t.second_black, 6);
    // With the opening fixed: the two opening decisions go, 100 - 2 * 12 = 76.
    let t = tree(15, "soosorv:3,D4");
    assert_eq!((t.leaves, t.decisions), (12, 76));
    // Soosõrv-8: 2 * 8 * 2 branches.
    assert_eq!(tree(15, "soosorv:8,I1").leaves, 32);
}

#[test]
fn taraguchi_branches_counted() {
    // Swaps after stones 1, 2, 3 (8 ways), then choice 1 (swap after 4, swap after 5: 4 ways)
    // or choice 2 (no further swap): 8 * 5 = 40 branches. Decisions: 7 up to stone 4 and the
    // choice; choice 1 adds swap, stone 5, swap (11); choice 2 adds 3 offers and the pick (12).
    // 8 * (4 * 11 + 12) = 448.
    let t = tree(15, "taraguchi:3");
    assert_eq!(t.leaves, 40);
    assert_eq!(t.decisions, 448);
    // Choice 1: binomial(5, k) over 32 branches; choice 2: binomial(3, k) over 8.
    assert_eq!(t.by_swaps, BTreeMap::from([(0, 2), (1, 8), (2, 13), (3, 11), (4, 5), (5, 1)]));
    assert_eq!(t.second_black, 20);
    // From a fixed opening: the swap after stone 3, then as above: 2 * 5 = 10 branches.
    assert_eq!(tree(15, "taraguchi:10,D1").leaves, 10);
    // The same counts on a 7x7 board (the 9x9 square is the whole board there).
    assert_eq!(tree(7, "taraguchi:3").leaves, 40);
}

#[test]
fn swap2_branches_counted() {
    // Swap (3 stones + 1), keep (3 + 1), double then keep or swap (3 + 1 + 2 + 1 each): 4
    // branches, 4 + 4 + 7 + 7 = 22 decisions.
    let t = tree(15, "swap2");
    assert_eq!(t.leaves, 4);
    assert_eq!(t.decisions, 22);
    assert_eq!(t.by_swaps, BTreeMap::from([(0, 2), (1, 2)]));
    assert_eq!(t.second_black, 2);
    assert_eq!(tree(7, "swap2"), t);
    // From a fixed opening the three placements go: 22 - 3 * 4 = 10 decisions.
    let t = tree(15, "swap2:I5");
    assert_eq!((t.leaves, t.decisions), (4, 10));
    let g = game("swap2:I5");
    assert_eq!((g.to_decide(), g.decision()), (S, DecisionKind::SwapKeepOrDouble));
    assert_eq!(g.opening(), Some(Opening::Indirect(5)));
}

#[test]
fn soosorv_step_by_step() {
    let mut g = game("soosorv:8");
    assert_eq!(g.board().stone_count(), 1, "stone 1 is on the centre from the start");
    assert_eq!(points(&g), [p("h9"), p("i9")]);
    step(&mut g, F, at("h9"), (F, B));
    step(&mut g, F, at("i9"), (S, DecisionKind::SwapOrKeep));
    assert_eq!(g.opening(), Some(Opening::Direct(4)));
    step(&mut g, S, Action::Swap, (F, W));
    assert_eq!(g.black_player(), S);
    assert_eq!(g.legal_actions().len(), 222, "stone 4 goes anywhere");
    step(&mut g, F, at("a1"), (F, DecisionKind::ChooseN));
    assert_eq!(g.legal_actions(), (1..=8).map(Action::ChooseN).collect::<Vec<_>>());
    assert!(illegal(&g, Action::ChooseN(9)).contains("choose-n:1..=8"));
    assert!(!g.is_legal(Action::ChooseN(0)));
    step(&mut g, F, Action::ChooseN(3), (S, DecisionKind::SwapOrKeep));
    assert!(!g.colours_settled());
    step(&mut g, S, Action::Swap, (F, DecisionKind::PlaceOffer { index: 0, total: 3 }));
    assert_eq!(swaps(&g), 2);
    assert_eq!(g.black_player(), F);
    step(&mut g, F, at("j10"), (F, DecisionKind::PlaceOffer { index: 1, total: 3 }));
    step(&mut g, F, at("g7"), (F, DecisionKind::PlaceOffer { index: 2, total: 3 }));
    step(&mut g, F, at("k11"), (S, DecisionKind::PickOffer));
    step(&mut g, S, at("g7"), (S, W));
    assert!(g.colours_settled());
    assert_eq!(g.board().stone_count(), 5);
    assert!(g.pending_offers().is_empty());
}

#[test]
fn soosorv_one_offer_is_a_plain_stone_5() {
    let mut g = game("soosorv:8,D4");
    step(&mut g, S, Action::Keep, (S, W));
    step(&mut g, S, at("g9"), (S, DecisionKind::ChooseN));
    step(&mut g, S, Action::ChooseN(1), (F, DecisionKind::SwapOrKeep));
    step(&mut g, F, Action::Keep, (F, B));
    assert!(g.colours_settled());
    assert_eq!(swaps(&g), 0);
}

#[test]
fn soosorv_offers_may_not_be_symmetric() {
    // D1 (h8 h9 h10) and stone 4 on h7: the position is symmetric about column h.
    let mut g = game("soosorv:8,D1");
    g.apply(Action::Keep).unwrap();
    g.apply(at("h7")).unwrap();
    g.apply(Action::ChooseN(2)).unwrap();
    g.apply(Action::Keep).unwrap();
    g.apply(at("g9")).unwrap();
    let e = illegal(&g, at("i9"));
    assert!(e.contains("i9 is symmetric to the offer g9"), "{e}");
    assert!(!g.legal_actions().contains(&at("i9")));
    assert!(illegal(&g, at("g9")).contains("g9 is already an offer"));
    g.apply(at("j10")).unwrap();
    assert_eq!(g.decision(), DecisionKind::PickOffer);
}

#[test]
fn taraguchi_step_by_step() {
    let mut g = game("taraguchi:10");
    assert_eq!(points(&g), [p("h8")]);
    step(&mut g, F, at("h8"), (S, DecisionKind::SwapOrKeep));
    step(&mut g, S, Action::Swap, (F, W));
    // Stone 2 in the central 3x3: 8 points.
    assert_eq!(points(&g).len(), 8);
    assert!(illegal(&g, at("h10")).contains("central 3x3"));
    step(&mut g, F, at("i9"), (S, DecisionKind::SwapOrKeep));
    step(&mut g, S, Action::Keep, (S, B));
    // Stone 3 in the central 5x5: 23 empty points.
    assert_eq!(points(&g).len(), 23);
    assert!(illegal(&g, at("h11")).contains("central 5x5"));
    step(&mut g, S, at("j10"), (F, DecisionKind::SwapOrKeep));
    step(&mut g, F, Action::Keep, (F, W));
    // Stone 4 in the central 7x7: 46 empty points; one step further out is refused.
    assert_eq!(points(&g).len(), 46);
    let e = illegal(&g, at("h12"));
    assert!(e.contains("central 7x7 around h8"), "{e}");
    assert!(illegal(&g, at("l8")).contains("central 7x7"));
    // After stone 4 Black chooses: choice 1 (swap offered, then stone 5) or choice 2.
    step(&mut g, F, at("k11"), (S, DecisionKind::ChooseN));
    assert_eq!(g.legal_actions(), [Action::ChooseN(1), Action::ChooseN(10)]);
    assert!(illegal(&g, Action::ChooseN(5)).contains("choose-n:1 (one stone 5 in the central 9x9) or choose-n:10"));
    assert_eq!(swaps(&g), 1);

    // Choice 1: swap offered, stone 5 in the central 9x9, swap offered again.
    let mut one = g.clone();
    step(&mut one, S, Action::ChooseN(1), (S, DecisionKind::SwapOrKeep));
    step(&mut one, S, Action::Swap, (F, B));
    assert_eq!(points(&one).len(), 81 - 4);
    assert!(illegal(&one, at("m8")).contains("central 9x9"));
    step(&mut one, F, at("l12"), (S, DecisionKind::SwapOrKeep));
    assert!(!one.colours_settled());
    step(&mut one, S, Action::Swap, (F, W));
    assert!(one.colours_settled());
    assert_eq!((swaps(&one), one.black_player()), (3, S));

    // Choice 2: ten offers anywhere, White keeps one.
    let mut two = g;
    step(&mut two, S, Action::ChooseN(10), (S, DecisionKind::PlaceOffer { index: 0, total: 10 }));
    for (i, q) in ["a1", "a2", "a3", "a4", "a5", "a6", "a7", "a8", "a9"].iter().enumerate() {
        step(&mut two, S, at(q), (S, DecisionKind::PlaceOffer { index: i as u8 + 1, total: 10 }));
    }
    step(&mut two, S, at("o15"), (F, DecisionKind::PickOffer));
    step(&mut two, F, at("o15"), (F, W));
    assert!(two.colours_settled());
    assert_eq!(two.board().get(p("o15")), Some(Color::Black));
}

#[test]
fn taraguchi_from_an_opening_starts_with_the_swap_after_stone_3() {
    let mut g = game("taraguchi:10,I13");
    assert_eq!(g.board().stone_count(), 3);
    assert_eq!(g.opening(), Some(Opening::Indirect(13)));
    step(&mut g, S, Action::Swap, (F, W));
    assert_eq!(points(&g).len(), 46);
}

#[test]
fn taraguchi_regions_on_a_small_board() {
    // 9x9: centre e5; the 7x7 square is b2..h8, the 9x9 square the whole board.
    let mut g = Game::new(9, Rule::Renju, "taraguchi:2".parse().unwrap(), None).unwrap();
    let q = |s: &str| Action::Place(pt_on(s, 9));
    for a in [q("e5"), Action::Keep, q("e6"), Action::Keep, q("f6"), Action::Keep] {
        g.apply(a).unwrap();
    }
    assert_eq!(points(&g).len(), 49 - 3);
    assert!(!g.is_legal(q("a1")));
    g.apply(q("b2")).unwrap();
    g.apply(Action::ChooseN(1)).unwrap();
    g.apply(Action::Keep).unwrap();
    assert!(g.is_legal(q("a1")));
}

#[test]
fn swap2_step_by_step() {
    let mut g = game("swap2");
    assert_eq!(g.legal_actions().len(), 225);
    step(&mut g, F, at("a1"), (F, W));
    step(&mut g, F, at("b2"), (F, B));
    step(&mut g, F, at("c3"), (S, DecisionKind::SwapKeepOrDouble));
    assert_eq!(g.legal_actions(), [Action::Keep, Action::Swap, Action::Double]);
    assert!(illegal(&g, at("d4")).contains("double (place stones 4 and 5)"));
    assert!(!g.colours_settled());

    let mut take_black = g.clone();
    step(&mut take_black, S, Action::Swap, (F, W));
    assert!(take_black.colours_settled());
    assert_eq!(take_black.black_player(), S);

    let mut stay_white = g.clone();
    step(&mut stay_white, S, Action::Keep, (S, W));
    assert!(stay_white.colours_settled());
    assert_eq!(stay_white.black_player(), F);

    step(&mut g, S, Action::Double, (S, W));
    assert!(!g.colours_settled());
    step(&mut g, S, at("d4"), (S, B));
    step(&mut g, S, at("e5"), (F, DecisionKind::SwapOrKeep));
    assert_eq!(g.legal_actions(), [Action::Keep, Action::Swap]);
    let mut kept = g.clone();
    step(&mut kept, F, Action::Keep, (S, W));
    assert_eq!(kept.black_player(), F);
    step(&mut g, F, Action::Swap, (F, W));
    assert!(g.colours_settled());
    assert_eq!((g.black_player(), swaps(&g)), (S, 1));
}

#[test]
fn swap2_under_freestyle_and_the_fives_it_allows() {
    // Freestyle Swap2: First may put the three stones anywhere, even in a line.
    let mut g = Game::new(15, Rule::Freestyle, Protocol::Swap2 { opening: None }, None).unwrap();
    for a in [at("a1"), at("o15"), at("a2"), Action::Double, at("n15"), at("a3"), Action::Keep] {
        g.apply(a).unwrap();
    }
    assert_eq!((g.to_decide(), g.decision()), (S, W));
    assert_eq!(g.board().stone_count(), 5);
}
