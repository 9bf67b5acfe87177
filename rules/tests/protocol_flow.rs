//! Each opening protocol (RULES.md §5) step by step: who decides, what kind, the legal actions,
//! swaps, offers, and errors that must change nothing.

use renju_rules::{
    Action, Color, DecisionKind, Game, GameError, Opening, OutcomeReason, Player, Point, Protocol, Rule, Verdict,
};

mod common;
use common::{at, game, points, pt as p, step};

const KS: [Action; 2] = [Action::Keep, Action::Swap];

#[test]
fn free_and_free_centre() {
    let g = game("free-centre");
    assert_eq!(points(&g), [p("h8")]);
    assert!(g.colours_settled());
    let g = game("free");
    assert_eq!(g.legal_actions().len(), 225);
    let mut g = game("free");
    step(&mut g, Player::First, at("a1"), (Player::Second, DecisionKind::PlaceStone(Color::White)));
    step(&mut g, Player::Second, at("o15"), (Player::First, DecisionKind::PlaceStone(Color::Black)));
    assert_eq!(g.black_player(), Player::First);
}

#[test]
fn swap1_swap_changes_black_player() {
    let mut g = game("swap1");
    assert_eq!(g.legal_actions().len(), 225);
    step(&mut g, Player::First, at("c3"), (Player::Second, DecisionKind::SwapOrKeep));
    assert_eq!(g.legal_actions(), KS);
    assert!(!g.colours_settled());
    let mut kept = g.clone();
    step(&mut g, Player::Second, Action::Swap, (Player::First, DecisionKind::PlaceStone(Color::White)));
    assert_eq!(g.black_player(), Player::Second);
    assert_eq!(g.color_of(Player::First), Color::White);
    assert!(g.colours_settled());
    step(&mut kept, Player::Second, Action::Keep, (Player::Second, DecisionKind::PlaceStone(Color::White)));
    assert_eq!(kept.black_player(), Player::First);
}

#[test]
fn rif_regions_swap_offers_and_pick() {
    let mut g = game("rif");
    assert_eq!(points(&g), [p("h8")]);
    assert_eq!(
        g.apply(at("a1")).unwrap_err().to_string(),
        "action a1 is not legal here (expected a black stone on the centre h8)"
    );
    step(&mut g, Player::First, at("h8"), (Player::Second, DecisionKind::PlaceStone(Color::White)));
    assert_eq!(points(&g).len(), 8); // central 3x3 minus h8
    assert!(matches!(g.apply(at("h10")), Err(GameError::Illegal { .. })));
    step(&mut g, Player::Second, at("h9"), (Player::First, DecisionKind::PlaceStone(Color::Black)));
    assert_eq!(points(&g).len(), 23); // central 5x5 minus two stones
    assert!(matches!(g.apply(at("h11")), Err(GameError::Illegal { .. })));
    step(&mut g, Player::First, at("h10"), (Player::Second, DecisionKind::SwapOrKeep));
    assert_eq!(g.opening(), Some(Opening::Direct(1)));
    assert_eq!(g.legal_actions(), KS);
    step(&mut g, Player::Second, Action::Swap, (Player::First, DecisionKind::PlaceStone(Color::White)));
    assert_eq!(g.black_player(), Player::Second);
    assert_eq!(g.legal_actions().len(), 222); // stone 4 anywhere
    assert!(!g.colours_settled());
    // h8 h9 h10 h7 all on column h: the position is symmetric about that column.
    step(&mut g, Player::First, at("h7"), (Player::Second, DecisionKind::PlaceOffer { index: 0, total: 2 }));
    step(&mut g, Player::Second, at("g10"), (Player::Second, DecisionKind::PlaceOffer { index: 1, total: 2 }));
    assert_eq!(g.pending_offers(), [p("g10")]);
    assert!(g.board().get(p("g10")).is_none(), "offers are not on the board");
    // i10 is g10 mirrored: rejected, and not among the legal actions.
    let e = g.apply(at("i10")).unwrap_err();
    assert!(e.to_string().contains("i10 is symmetric to the offer g10"), "{e}");
    let e = g.apply(at("g10")).unwrap_err();
    assert!(e.to_string().contains("g10 is already an offer"), "{e}");
    let pts = points(&g);
    assert!(!pts.contains(&p("i10")) && !pts.contains(&p("g10")) && pts.contains(&p("j10")));
    assert_eq!(pts.len(), 219); // 221 empty points minus g10 and i10
    assert_eq!(g.pending_offers(), [p("g10")]);
    step(&mut g, Player::Second, at("j9"), (Player::First, DecisionKind::PickOffer));
    assert_eq!(points(&g), [p("j9"), p("g10")]);
    assert!(matches!(g.apply(at("a1")), Err(GameError::Illegal { .. })));
    // White keeps g10: it becomes black stone 5, j9 is removed, White plays stone 6.
    step(&mut g, Player::First, at("g10"), (Player::First, DecisionKind::PlaceStone(Color::White)));
    assert_eq!(g.board().get(p("g10")), Some(Color::Black));
    assert_eq!(g.board().get(p("j9")), None);
    assert!(g.pending_offers().is_empty());
    assert!(g.colours_settled());
    assert_eq!(g.board().stone_count(), 5);
    step(&mut g, Player::First, at("a1"), (Player::Second, DecisionKind::PlaceStone(Color::Black)));
}

#[test]
fn rif_offers_on_an_asymmetric_position_may_be_mirror_points() {
    let mut g = game("rif");
    for a in [at("h8"), at("h9"), at("h10"), Action::Keep, at("i5")] {
        g.apply(a).unwrap();
    }
    assert_eq!(g.to_decide(), Player::First); // no swap: First is still Black
    g.apply(at("g10")).unwrap();
    assert!(g.is_legal(at("i10")));
    g.apply(at("i10")).unwrap();
    assert_eq!(g.decision(), DecisionKind::PickOffer);
    assert_eq!(g.to_decide(), Player::Second);
}

#[test]
fn fifth_n_chosen_by_tentative_black() {
    let mut g = game("fifth-n");
    for a in [at("h8"), at("i9"), at("j8")] {
        g.apply(a).unwrap();
    }
    assert_eq!(g.opening(), Some(Opening::Indirect(3)));
    assert_eq!((g.to_decide(), g.decision()), (Player::First, DecisionKind::ChooseN));
    assert_eq!(g.legal_actions(), (1..=10).map(Action::ChooseN).collect::<Vec<_>>());
    assert!(g.apply(Action::ChooseN(0)).is_err());
    assert!(g.apply(Action::ChooseN(11)).is_err());
    assert!(g.apply(Action::Swap).is_err());
    step(&mut g, Player::First, Action::ChooseN(3), (Player::Second, DecisionKind::SwapOrKeep));
    step(&mut g, Player::Second, Action::Keep, (Player::Second, DecisionKind::PlaceStone(Color::White)));
    step(&mut g, Player::Second, at("a1"), (Player::First, DecisionKind::PlaceOffer { index: 0, total: 3 }));
    g.apply(at("b2")).unwrap();
    g.apply(at("c3")).unwrap();
    step(&mut g, Player::First, at("d4"), (Player::Second, DecisionKind::PickOffer));
    assert_eq!(g.legal_actions().len(), 3);
    step(&mut g, Player::Second, at("c3"), (Player::Second, DecisionKind::PlaceStone(Color::White)));
}

#[test]
fn fifth_n_with_one_offer_is_a_plain_stone_five() {
    let mut g = game("fifth-n:1");
    for a in [at("h8"), at("i9"), at("j8"), Action::Keep, at("a1")] {
        g.apply(a).unwrap();
    }
    assert_eq!((g.to_decide(), g.decision()), (Player::First, DecisionKind::PlaceStone(Color::Black)));
    assert!(g.colours_settled());
}

#[test]
fn designated_fixed_opening() {
    let g = game("designated:D4");
    assert_eq!(g.board().stone_count(), 3);
    assert!(g.history().is_empty());
    assert_eq!(g.opening(), Some(Opening::Direct(4)));
    assert_eq!((g.to_decide(), g.decision()), (Player::Second, DecisionKind::PlaceStone(Color::White)));
    assert!(g.colours_settled());
    let mut g = game("designated:Kagetsu,swap,offers=2");
    assert_eq!((g.to_decide(), g.decision()), (Player::Second, DecisionKind::SwapOrKeep));
    step(&mut g, Player::Second, Action::Swap, (Player::First, DecisionKind::PlaceStone(Color::White)));
    step(&mut g, Player::First, at("a1"), (Player::Second, DecisionKind::PlaceOffer { index: 0, total: 2 }));
}

#[test]
fn designated_any_first_player_chooses_the_opening() {
    let mut g = game("designated:any,swap");
    assert_eq!(g.board().stone_count(), 1);
    assert_eq!((g.to_decide(), g.decision()), (Player::First, DecisionKind::PlaceStone(Color::White)));
    assert_eq!(points(&g), [p("h9"), p("i9")]);
    g.apply(at("i9")).unwrap();
    assert_eq!((g.to_decide(), g.decision()), (Player::First, DecisionKind::PlaceStone(Color::Black)));
    let pts = points(&g);
    assert_eq!(pts.len(), 13);
    let named: Vec<Opening> = pts.iter().map(|&q| Opening::recognise(p("h8"), p("i9"), q, 15).unwrap().0).collect();
    assert_eq!(named, {
        let mut v: Vec<Opening> = (1..=13).map(Opening::Indirect).collect();
        v.sort_by_key(|o| o.stones(15)[2].index(15));
        v
    });
    g.apply(at("g6")).unwrap();
    assert_eq!(g.opening(), Some(Opening::Indirect(12)));
    assert_eq!((g.to_decide(), g.decision()), (Player::Second, DecisionKind::SwapOrKeep));
}

#[test]
fn black_sets_then_second_chooses_colour() {
    let mut g = game("black-sets");
    step(&mut g, Player::First, at("a1"), (Player::First, DecisionKind::PlaceStone(Color::White)));
    step(&mut g, Player::First, at("b1"), (Player::First, DecisionKind::PlaceStone(Color::Black)));
    step(&mut g, Player::First, at("c1"), (Player::Second, DecisionKind::SwapOrKeep));
    assert_eq!(g.board().get(p("b1")), Some(Color::White));
    step(&mut g, Player::Second, Action::Swap, (Player::First, DecisionKind::PlaceStone(Color::White)));
    assert_eq!(g.black_player(), Player::Second);
    assert!(g.colours_settled());
}

#[test]
fn errors_name_the_problem_and_change_nothing() {
    let mut g = game("free");
    g.apply(at("h8")).unwrap();
    let before = (g.history().len(), g.board().stone_count(), g.to_decide());
    assert_eq!(g.apply(at("h8")), Err(GameError::Occupied(Point::new(7, 7))));
    assert_eq!(g.apply(at("h8")).unwrap_err().to_string(), "point h8 is occupied");
    assert_eq!(g.apply(Action::Place(Point::new(15, 3))), Err(GameError::OffBoard("p4".into())));
    let e = g.apply(Action::Swap).unwrap_err();
    assert_eq!(e.to_string(), "action swap is not legal here (expected a white stone on an empty point)");
    assert_eq!(before, (g.history().len(), g.board().stone_count(), g.to_decide()));
    let mut s = game("swap1");
    s.apply(at("h8")).unwrap();
    assert!(matches!(s.apply(at("h9")), Err(GameError::Illegal { .. })));
    assert!(!s.is_legal(at("h9")));
    assert!(matches!(
        Game::new(15, Rule::Renju, Protocol::FifthN { n: Some(0) }, None),
        Err(GameError::InvalidProtocol { .. })
    ));
    assert!(matches!(Game::new(6, Rule::Renju, Protocol::Rif, None), Err(GameError::Size(_))));
}

#[test]
fn five_wins_and_forbidden_black_stone_loses() {
    // Black h8 i8 j9 j10 against scattered White: j8 is a double-three (h8-i8-j8, j8-j9-j10).
    let mut g = game("free");
    for m in ["h8", "a15", "i8", "d15", "j9", "g15", "j10", "k15"] {
        g.apply(at(m)).unwrap();
    }
    assert!(matches!(g.board().classify(p("j8"), Color::Black), Verdict::Forbidden(_)));
    assert!(!points(&g).contains(&p("j8")));
    assert!(!g.is_legal(at("j8")));
    let mut lost = g.clone();
    lost.apply(at("j8")).unwrap();
    let o = lost.outcome().unwrap();
    assert_eq!(
        (o.winner, o.winner_color, o.reason),
        (Some(Player::Second), Some(Color::White), OutcomeReason::ForbiddenMove)
    );
    assert_eq!(lost.apply(at("a1")), Err(GameError::GameOver));
    assert!(lost.legal_actions().is_empty());
    // Black a8..e8 is a five: First wins.
    let mut g = game("free");
    for m in ["a8", "a1", "b8", "a3", "c8", "a5", "d8", "a7"] {
        g.apply(at(m)).unwrap();
    }
    g.apply(at("e8")).unwrap();
    let o = g.outcome().unwrap();
    assert_eq!((o.winner, o.winner_color, o.reason), (Some(Player::First), Some(Color::Black), OutcomeReason::Five));
}

#[test]
fn stone_cap_draws() {
    let mut g = Game::new(15, Rule::Renju, Protocol::Free { centre: true }, Some(3)).unwrap();
    for m in ["h8", "a1", "o15"] {
        g.apply(at(m)).unwrap();
    }
    let o = g.outcome().unwrap();
    assert_eq!((o.winner, o.reason), (None, OutcomeReason::StoneCap));
}

#[test]
fn a_position_is_taken_as_it_stands() {
    // Black f8 g8 h6 h7 h8: h8 forms a double-three (row f8-g8-h8, column h6-h7-h8), so the
    // stones could not be replayed under renju, but as a position they stand. Four white stones:
    // White to move.
    let moves: Vec<Point> = ["f8", "a1", "g8", "o1", "h6", "a15", "h7", "o15", "h8"].iter().map(|s| p(s)).collect();
    let mut replay = Game::new(15, Rule::Renju, Protocol::Free { centre: false }, None).unwrap();
    for &m in &moves {
        replay.apply(Action::Place(m)).unwrap();
    }
    assert_eq!(replay.outcome().map(|o| o.reason), Some(OutcomeReason::ForbiddenMove), "replayed, h8 loses");
    let g = Game::from_position(15, Rule::Renju, &moves).unwrap();
    assert!(!g.is_over());
    assert_eq!(g.next_color(), Color::White);
    assert_eq!(g.to_decide(), Player::Second);
    assert_eq!(g.board().stone_count(), 9);
    // A five on the board ends it; a point twice or off the board is an error.
    let five: Vec<Point> = ["a1", "a15", "b1", "b15", "c1", "c15", "d1", "d15", "e1"].iter().map(|s| p(s)).collect();
    let g = Game::from_position(15, Rule::Renju, &five).unwrap();
    assert_eq!(g.outcome().map(|o| (o.reason, o.winner_color)), Some((OutcomeReason::Five, Some(Color::Black))));
    assert!(matches!(Game::from_position(15, Rule::Renju, &[p("h8"), p("h8")]), Err(GameError::Occupied(_))));
    assert!(matches!(Game::from_position(15, Rule::Renju, &[Point::new(15, 0)]), Err(GameError::OffBoard(_))));
}
