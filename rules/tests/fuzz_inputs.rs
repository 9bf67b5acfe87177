//! Text inputs of the rules crate under bad input: move notation and the `rules classify` and
//! `rules vcf` JSON query lines ([`renju_rules::query`]), from arbitrary strings and from mutated
//! valid inputs. Never a panic; every accepted point is on the board and prints back to itself;
//! a query line gets a result or an error (a `vcf` win line is odd-length and on the board).
//! Cases per property: proptest's default 256, or `PROPTEST_CASES` (scripts/fuzz.sh runs more).

use proptest::prelude::*;
use renju_rules::notation::{format_moves, format_point, parse_moves, parse_point};
use renju_rules::query::{classify_line, vcf_line};
use renju_rules::Rule;

fn rule() -> impl Strategy<Value = Rule> {
    prop_oneof![Just(Rule::Renju), Just(Rule::Standard), Just(Rule::Freestyle)]
}

/// Point-like tokens: a letter (any case, sometimes not a letter) and digits, sometimes padded.
fn token() -> impl Strategy<Value = String> {
    prop_oneof!["[a-zA-Z][0-9]{1,3}", "[ \t]?[a-uA-U][0-9]{1,2}[ \t]?", "\\PC{0,4}", "[a-z]{0,2}[0-9-+]{0,3}"]
}

/// 1 to 5 input lines: arbitrary text, JSON objects of point-like tokens, and a valid line with a
/// few characters cut out or replaced.
fn query_lines() -> impl Strategy<Value = Vec<String>> {
    proptest::collection::vec(
        prop_oneof![
            "\\PC{0,40}",
            (
                proptest::collection::vec(token(), 0..12),
                proptest::collection::vec(token(), 0..12),
                token(),
                proptest::option::of("[a-zA-Z]{0,6}")
            )
                .prop_map(|(b, w, m, c)| {
                    let mut v = serde_json::json!({"black": b, "white": w, "move": m});
                    if let Some(c) = c {
                        v["color"] = c.into();
                    }
                    v.to_string()
                }),
            // A valid line with a few characters cut out or replaced.
            (any::<prop::sample::Index>(), "\\PC{0,3}").prop_map(|(i, s)| {
                let base = r#"{"black":["h8","i9"],"white":["h9"],"move":"j10","color":"black"}"#;
                let at = i.index(base.len());
                let mut t = base[..at].to_string();
                t.push_str(&s);
                t.push_str(&base[(at + 1).min(base.len())..]);
                t
            }),
        ],
        1..6,
    )
}

proptest! {
    #[test]
    fn notation_never_panics_and_accepted_points_round_trip(size in 7usize..=20, text in "\\PC{0,12}", tok in token()) {
        for t in [&text, &tok] {
            if let Ok(p) = parse_point(t, size) {
                prop_assert!((p.x as usize) < size && (p.y as usize) < size);
                prop_assert_eq!(parse_point(&format_point(p), size).unwrap(), p);
            }
        }
        let game = format!("{text} {tok}");
        if let Ok(moves) = parse_moves(&game, size) {
            prop_assert_eq!(parse_moves(&format_moves(&moves), size).unwrap(), moves);
        }
    }

    #[test]
    fn classify_answers_every_line(
        size in 7usize..=20,
        rule in rule(),
        lines in query_lines(),
    ) {
        for line in &lines {
            // A verdict or an error, never a panic; an answered move parses on this board.
            if let Ok((mv, _)) = classify_line(line, rule, size) {
                prop_assert!(parse_point(&mv, size).is_ok(), "{line}");
            }
        }
    }

    #[test]
    fn vcf_answers_every_line(size in 7usize..=20, rule in rule(), lines in query_lines(), nodes in 0u64..2000) {
        for line in &lines {
            // A vcf query has no `move` key: drop it from the generated objects so that they
            // reach the solver.
            let line = match serde_json::from_str::<serde_json::Value>(line) {
                Ok(serde_json::Value::Object(mut m)) => {
                    m.remove("move");
                    serde_json::Value::Object(m).to_string()
                }
                _ => line.clone(),
            };
            let Ok(reply) = vcf_line(&line, rule, size, nodes) else { continue };
            match reply.result {
                "win" => {
                    // A win line is non-empty, odd (it ends on the attacker's move) and on the board.
                    let win = reply.line.as_ref().unwrap();
                    prop_assert!(win.len() % 2 == 1, "{line}: {win:?}");
                    for p in win {
                        prop_assert!(parse_point(p, size).is_ok(), "{line}: {win:?}");
                    }
                }
                r => prop_assert!((r == "none" || r == "unknown") && reply.line.is_none(), "{line}: {reply:?}"),
            }
        }
    }
}
