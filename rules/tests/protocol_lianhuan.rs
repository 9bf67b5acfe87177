//! Lianhuan (连换规则, seed 001; RULES.md §5.7): enumerate the protocol's decision sequences up
//! to the point where colours are fixed, and compare them with seed 001's table of 41 patterns
//! plus the two it omits (`A1 B2 A3+4 B5+6` with and without the final exchange) = 43.

use renju_rules::{Action, DecisionKind, Game, Player, Protocol, Rule};
use std::collections::BTreeMap;

/// Seed 001's table, written as in its 行棋 column with 甲 = A (First), 乙 = B (Second):
/// `A12` there is `A1+2` here, `乙换` is `BR`. The second field is who plays Black afterwards
/// (the seed's 黑 column).
const SEED_001: [(&str, &str); 41] = [
    ("A1 B2 A3 B4 A5 B6", "A"),
    ("A1 B2 A3 B4 A5+6 B7", "B"),
    ("A1 B2 A3 B4 A5+6 BR A7", "A"),
    ("A1 B2 A3 B4+5 A6", "B"),
    ("A1 B2 A3 B4+5 AR B6", "A"),
    ("A1 B2 A3+4 B5 A6", "B"),
    ("A1 B2 A3+4 BR A5 B6", "A"),
    ("A1 B2 A3+4 BR A5+6 B7", "B"),
    ("A1 B2 A3+4 BR A5+6 BR A7", "A"),
    ("A1 B2+3 A4 B5 A6", "B"),
    ("A1 B2+3 A4 B5+6 A7", "A"),
    ("A1 B2+3 A4 B5+6 AR B7", "B"),
    ("A1 B2+3 A4+5 B6", "A"),
    ("A1 B2+3 A4+5 BR A6", "B"),
    ("A1 B2+3 AR B4 A5 B6", "A"),
    ("A1 B2+3 AR B4 A5+6 B7", "B"),
    ("A1 B2+3 AR B4 A5+6 BR A7", "A"),
    ("A1 B2+3 AR B4+5 A6", "B"),
    ("A1 B2+3 AR B4+5 AR B6", "A"),
    ("A1+2 B3 A4 B5 A6", "B"),
    ("A1+2 B3 A4 B5+6 A7", "A"),
    ("A1+2 B3 A4 B5+6 AR B7", "B"),
    ("A1+2 B3 A4+5 B6", "A"),
    ("A1+2 B3 A4+5 BR A6", "B"),
    ("A1+2 B3+4 A5 B6", "A"),
    ("A1+2 B3+4 A5+6 B7", "B"),
    ("A1+2 B3+4 A5+6 BR A7", "A"),
    ("A1+2 B3+4 AR B5 A6", "B"),
    ("A1+2 B3+4 AR B5+6 A7", "A"),
    ("A1+2 B3+4 AR B5+6 AR B7", "B"),
    ("A1+2 BR A3 B4 A5 B6", "A"),
    ("A1+2 BR A3 B4 A5+6 B7", "B"),
    ("A1+2 BR A3 B4 A5+6 BR A7", "A"),
    ("A1+2 BR A3 B4+5 A6", "B"),
    ("A1+2 BR A3 B4+5 AR B6", "A"),
    ("A1+2 BR A3+4 B5 A6", "B"),
    ("A1+2 BR A3+4 B5+6 A7", "A"),
    ("A1+2 BR A3+4 B5+6 AR B7", "B"),
    ("A1+2 BR A3+4 BR A5 B6", "A"),
    ("A1+2 BR A3+4 BR A5+6 B7", "B"),
    ("A1+2 BR A3+4 BR A5+6 BR A7", "A"),
];

/// The two sequences RULES.md §5.7 says the seed omits.
const OMITTED: [(&str, &str); 2] = [("A1 B2 A3+4 B5+6 A7", "A"), ("A1 B2 A3+4 B5+6 AR B7", "B")];

fn letter(p: Player) -> &'static str {
    match p {
        Player::First => "A",
        Player::Second => "B",
    }
}

/// Write a settled game's history in the seed's notation.
fn notation(g: &Game) -> String {
    let h = g.history();
    let mut tokens = Vec::new();
    let (mut i, mut k) = (0, 0);
    while i < h.len() {
        let (who, a) = h[i];
        match a {
            Action::Place(_) => {
                k += 1;
                if h.get(i + 1).map(|x| x.1) == Some(Action::Double) {
                    assert!(
                        matches!(h[i + 2], (w, Action::Place(_)) if w == who),
                        "a double is two stones by one player"
                    );
                    tokens.push(format!("{}{}+{}", letter(who), k, k + 1));
                    k += 1;
                    i += 3;
                    continue;
                }
                tokens.push(format!("{}{}", letter(who), k));
            }
            Action::Swap => tokens.push(format!("{}R", letter(who))),
            Action::Single | Action::Keep => {}
            other => panic!("unexpected Lianhuan action {other:?}"),
        }
        i += 1;
    }
    // After a 5+6 double the seed also names who places stone 7.
    if matches!(h.last().map(|x| x.1), Some(Action::Keep | Action::Swap)) {
        assert_eq!(g.board().stone_count(), 6);
        tokens.push(format!("{}7", letter(g.to_decide())));
    }
    tokens.join(" ")
}

/// Enumerate every decision sequence until colours are fixed; stones go on the first legal point.
fn enumerate(g: &Game, out: &mut BTreeMap<String, Player>) {
    if g.colours_settled() {
        assert_eq!(g.decision(), DecisionKind::PlaceStone(g.next_color()));
        assert_eq!(g.to_decide(), g.black_player(), "stone 7 is Black's");
        assert_eq!(g.board().stone_count(), 6);
        let prev = out.insert(notation(g), g.black_player());
        assert!(prev.is_none(), "sequence reached twice");
        return;
    }
    assert!(g.outcome().is_none());
    let acts = g.legal_actions();
    match g.decision() {
        DecisionKind::PlaceStone(_) => {
            let mut c = g.clone();
            c.apply(acts[0]).unwrap();
            enumerate(&c, out);
        }
        DecisionKind::SingleOrDouble | DecisionKind::ExchangeOrTake => {
            for a in acts {
                let mut c = g.clone();
                c.apply(a).unwrap();
                enumerate(&c, out);
            }
        }
        other => panic!("Lianhuan has no {other:?} decision"),
    }
}

#[test]
fn lianhuan_has_43_sequences_the_seeds_41_plus_two() {
    for (size, rule) in [(15, Rule::Renju), (9, Rule::Freestyle)] {
        let g = Game::new(size, rule, Protocol::Lianhuan, None).unwrap();
        let mut found = BTreeMap::new();
        enumerate(&g, &mut found);
        assert_eq!(found.len(), 43);
        let mut expected: BTreeMap<String, Player> = BTreeMap::new();
        for (seq, black) in SEED_001.iter().chain(OMITTED.iter()) {
            let b = if *black == "A" { Player::First } else { Player::Second };
            assert!(expected.insert(seq.to_string(), b).is_none(), "duplicate in the seed data: {seq}");
        }
        assert_eq!(expected.len(), 43);
        assert_eq!(found, expected);
        // The seed's 41 are exactly the 43 minus the two omitted ones.
        let seed: Vec<&str> = SEED_001.iter().map(|x| x.0).collect();
        let missing: Vec<&String> = found.keys().filter(|k| !seed.contains(&k.as_str())).collect();
        assert_eq!(missing, [OMITTED[0].0, OMITTED[1].0]);
    }
}

#[test]
fn lianhuan_decisions_step_by_step() {
    // Seed pattern 37: A1+2 BR A3+4 B5+6 A7 (A is Black).
    let mut g = Game::new(15, Rule::Renju, Protocol::Lianhuan, None).unwrap();
    let place = |g: &mut Game, who: Player| {
        assert_eq!(g.to_decide(), who);
        let a = g.legal_actions()[0];
        g.apply(a).unwrap();
    };
    place(&mut g, Player::First); // stone 1
    assert_eq!((g.to_decide(), g.decision()), (Player::First, DecisionKind::SingleOrDouble));
    g.apply(Action::Double).unwrap();
    assert_eq!(g.decision(), DecisionKind::PlaceStone(renju_rules::Color::White));
    place(&mut g, Player::First); // stone 2
    assert_eq!((g.to_decide(), g.decision()), (Player::Second, DecisionKind::ExchangeOrTake));
    // An action of the wrong kind is rejected and changes nothing.
    assert!(g.apply(Action::Single).is_err());
    assert_eq!(g.history().len(), 3);
    g.apply(Action::Swap).unwrap(); // B exchanges: A places stone 3 too
    place(&mut g, Player::First); // stone 3
    g.apply(Action::Double).unwrap();
    place(&mut g, Player::First); // stone 4
    g.apply(Action::Keep).unwrap(); // B takes stone 5
    place(&mut g, Player::Second);
    assert!(!g.colours_settled());
    g.apply(Action::Double).unwrap();
    place(&mut g, Player::Second); // stone 6
    assert_eq!((g.to_decide(), g.decision()), (Player::First, DecisionKind::ExchangeOrTake));
    g.apply(Action::Keep).unwrap(); // A takes stone 7: A is Black
    assert!(g.colours_settled());
    assert_eq!(g.black_player(), Player::First);
    assert_eq!(notation(&g), "A1+2 BR A3+4 B5+6 A7");
    place(&mut g, Player::First); // stone 7, black
    assert_eq!(g.to_decide(), Player::Second); // then plain alternation
    assert_eq!(g.decision(), DecisionKind::PlaceStone(renju_rules::Color::White));
}
