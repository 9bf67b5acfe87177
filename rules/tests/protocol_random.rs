//! Every protocol plays complete random games to a result without panics, and the legal actions
//! never offer Black a forbidden point (checked against `Board::classify`).

use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use renju_rules::{Action, Color, DecisionKind, Game, OutcomeReason, Protocol, Rule, Verdict};
use std::collections::HashMap;

const PROTOCOLS: [&str; 17] = [
    "free",
    "free-centre",
    "swap1",
    "rif",
    "fifth-n",
    "fifth-n:3",
    "designated:D4",
    "designated:I5,swap,offers=3",
    "designated:any,swap,offers=2",
    "black-sets",
    "lianhuan",
    "yamaguchi:10",
    "soosorv:8",
    "soosorv:2,I7",
    "taraguchi:10",
    "taraguchi:3,D2",
    "swap2",
];

/// Play one random game, checking the invariants at every decision. Returns the outcome reason.
fn play(size: usize, rule: Rule, protocol: &Protocol, rng: &mut ChaCha8Rng) -> OutcomeReason {
    let mut g = Game::new(size, rule, protocol.clone(), None).unwrap();
    let mut buf = Vec::new();
    let limit = 3 * size * size + 40;
    for _ in 0..limit {
        if let Some(o) = g.outcome() {
            check_end(&g, o.reason, o.winner_color);
            return o.reason;
        }
        g.legal_actions_into(&mut buf);
        assert!(!buf.is_empty(), "{protocol}: no legal action but the game is not over");
        assert_eq!(buf, g.legal_actions());
        let kind = g.decision();
        if let DecisionKind::PlaceStone(Color::Black) | DecisionKind::PlaceOffer { .. } = kind {
            if rule == Rule::Renju {
                for a in &buf {
                    let Action::Place(p) = *a else { panic!("{protocol}: {a} in a {kind:?} decision") };
                    assert!(
                        !matches!(g.board().classify(p, Color::Black), Verdict::Forbidden(_)),
                        "{protocol}: forbidden point {a} offered to Black"
                    );
                }
            }
        }
        if let DecisionKind::PlaceStone(_) = kind {
            let empty = size * size - g.board().stone_count();
            let forbidden = if g.next_color() == Color::Black { g.board().forbidden_points().len() } else { 0 };
            assert!(buf.len() <= empty - forbidden);
        }
        let a = *buf.choose(rng).unwrap();
        assert!(g.is_legal(a), "{protocol}: {a} listed but not is_legal");
        let before = g.clone();
        g.apply(a).unwrap_or_else(|e| panic!("{protocol}: legal {a} rejected: {e}"));
        assert_eq!(g.history().len(), before.history().len() + 1);
        assert_eq!(*g.history().last().unwrap(), (before.to_decide(), a));
    }
    panic!("{protocol}: no result after {limit} decisions");
}

fn check_end(g: &Game, reason: OutcomeReason, winner_color: Option<Color>) {
    let stones = g.board().stones();
    let &(last, c) = stones.last().unwrap();
    match reason {
        OutcomeReason::Five => {
            assert!(g.board().is_win_at(last));
            assert_eq!(winner_color, Some(c));
            // The winner is the player holding the colour of the five.
            assert_eq!(g.color_of(g.outcome().unwrap().winner.unwrap()), c);
        }
        OutcomeReason::BoardFull => assert!(g.board().is_full()),
        OutcomeReason::NoLegalMove => assert!(g.board().legal_mask(Color::Black).is_empty()),
        OutcomeReason::ForbiddenMove => panic!("random play only chooses legal actions"),
        OutcomeReason::StoneCap => panic!("no cap was set"),
    }
    assert!(g.legal_actions().is_empty());
}

fn run(size: usize, rule: Rule, games: usize, seed: u64) -> HashMap<OutcomeReason, usize> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut counts = HashMap::new();
    for s in PROTOCOLS {
        let protocol: Protocol = s.parse().unwrap();
        for _ in 0..games {
            *counts.entry(play(size, rule, &protocol, &mut rng)).or_insert(0) += 1;
        }
    }
    eprintln!("size {size} {rule:?}: {counts:?}");
    counts
}

#[test]
fn fifty_random_renju_games_per_protocol_on_15x15() {
    let counts = run(15, Rule::Renju, 50, 1);
    assert_eq!(counts.values().sum::<usize>(), 50 * PROTOCOLS.len());
    assert!(counts[&OutcomeReason::Five] > 0);
}

#[test]
fn random_freestyle_and_small_board_games() {
    let counts = run(15, Rule::Freestyle, 10, 2);
    assert!(counts[&OutcomeReason::Five] > 0);
    let counts = run(9, Rule::Renju, 20, 3);
    assert_eq!(counts.values().sum::<usize>(), 20 * PROTOCOLS.len());
    let counts = run(7, Rule::Standard, 20, 4);
    assert_eq!(counts.values().sum::<usize>(), 20 * PROTOCOLS.len());
}
