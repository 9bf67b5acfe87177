//! The Gomocup brain under random and mutated command streams: it never panics,
//! never hangs (each session must end within a watchdog limit), answers every malformed command
//! with `ERROR` or `UNKNOWN` and carries on, and every move it sends is on the board, on an empty
//! point, and under renju never a forbidden black point (checked against the rules crate's
//! `Board::classify`, independently of the brain's own guard). Cases: 128 sessions of up to 40
//! commands, or `PROPTEST_CASES` (scripts/fuzz.sh runs more).

use proptest::prelude::*;
use renju_arena::agent::{Agent, MctsAgent, SearchSettings};
use renju_arena::gomocup::{Brain, BrainOptions};
use renju_rules::{Board, Color, Verdict};
use renju_selfplay::eval::{no_models, EvaluatorSpec};
use std::time::Duration;

fn brain() -> Brain {
    let factory = Box::new(|size: usize| -> anyhow::Result<Box<dyn Agent>> {
        let eval = EvaluatorSpec::parse("heuristic")?.build(size, &no_models)?;
        Ok(Box::new(MctsAgent::new(eval, SearchSettings::default())))
    });
    Brain::new(
        factory,
        BrainOptions { default_turn: Duration::from_millis(50), max_playouts: Some(12), ..Default::default() },
    )
}

/// A coordinate argument: mostly on a 15x15 board, sometimes off it or malformed.
fn coord() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => (0u8..15, 0u8..15).prop_map(|(x, y)| format!("{x},{y}")),
        1 => (-3i32..40, -3i32..40).prop_map(|(x, y)| format!("{x},{y}")),
        1 => "[0-9a-z,. -]{0,6}",
    ]
}

/// The stone lines of a BOARD-like block: `x,y,field`, fields mostly 1 or 2.
fn block() -> impl Strategy<Value = String> {
    let field = prop_oneof![4 => (1u8..=2).prop_map(|f| f.to_string()), 1 => "[0-9a-z]{0,2}"];
    proptest::collection::vec((coord(), field), 0..14)
        .prop_map(|stones| stones.into_iter().map(|(c, f)| format!("{c},{f}\n")).collect::<String>())
}

/// One command, possibly multi-line (BOARD / YXBOARD / SWAP2BOARD blocks end with DONE).
fn command() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => coord().prop_map(|c| format!("TURN {c}")),
        2 => Just("BEGIN".to_string()),
        2 => (prop_oneof![Just("BOARD"), Just("YXBOARD")], block()).prop_map(|(k, b)| format!("{k}\n{b}DONE")),
        1 => block().prop_map(|b| format!("SWAP2BOARD\n{b}DONE")),
        1 => prop_oneof![Just(15u32), Just(7), 0u32..30].prop_map(|n| format!("START {n}")),
        1 => Just("RESTART".to_string()),
        1 => coord().prop_map(|c| format!("TAKEBACK {c}")),
        2 => (prop_oneof![Just("rule"), Just("timeout_turn"), Just("timeout_match"), Just("time_left"), Just("max_memory"), Just("bogus")],
              prop_oneof![Just("4".to_string()), Just("0".to_string()), Just("1".to_string()), "[0-9]{1,12}", "[a-z-]{0,4}"])
            .prop_map(|(k, v)| format!("INFO {k} {v}")),
        1 => Just("YXSHOWFORBID".to_string()),
        1 => Just("ABOUT".to_string()),
        1 => "\\PC{0,12}",
    ]
}

/// Drives `brain` through `commands` line by line and checks every answer; returns a failure
/// description, if any.
fn session(commands: Vec<String>) -> Result<(), String> {
    let mut b = brain();
    let text = format!("START 15\nINFO rule 4\n{}\n", commands.join("\n"));
    let mut lines = text.lines().map(String::from).collect::<Vec<_>>().into_iter();
    while let Some(line) = lines.next() {
        let cmd = line.trim().split([' ', '\t']).next().unwrap_or("").to_ascii_uppercase();
        let answers = b.handle(&line, &mut lines);
        let Some(size) = b.size() else { continue };
        let is_move_command = ["TURN", "BEGIN", "BOARD"].contains(&cmd.as_str());
        for a in answers.iter().filter(|a| !a.starts_with("MESSAGE") && !a.starts_with("DEBUG")) {
            if !is_move_command || a.starts_with("ERROR") || a.starts_with("UNKNOWN") {
                continue;
            }
            let (x, y) = a.split_once(',').ok_or(format!("{cmd}: answer {a:?} is not x,y"))?;
            let x: usize = x.parse().map_err(|_| format!("bad x in {a:?}"))?;
            let y: usize = y.parse().map_err(|_| format!("bad y in {a:?}"))?;
            if x >= size || y >= size {
                return Err(format!("{cmd}: move {a} off the {size}x{size} board"));
            }
            let p = renju_arena::wire::from_wire(x as i64, y as i64, size).ok_or(format!("{a} is off the board"))?;
            let moves = b.moves();
            if moves.last() != Some(&p) {
                return Err(format!("{cmd}: answered {a} but the brain's position ends with {:?}", moves.last()));
            }
            // The position the move was played in, rebuilt from the brain's record.
            let prior = &moves[..moves.len() - 1];
            let mut board = Board::new(size, b.rule()).unwrap();
            for (i, &q) in prior.iter().enumerate() {
                board.place(q, if i % 2 == 0 { Color::Black } else { Color::White });
            }
            let color = if prior.len().is_multiple_of(2) { Color::Black } else { Color::White };
            match board.classify(p, color) {
                Verdict::Occupied => return Err(format!("{cmd}: move {a} on an occupied point")),
                Verdict::Forbidden(k) => return Err(format!("{cmd}: move {a} is a forbidden black point ({k:?})")),
                _ => {}
            }
        }
        if b.ended() {
            break;
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(128), ..ProptestConfig::default() })]

    #[test]
    fn random_command_streams_get_legal_moves_or_errors(commands in proptest::collection::vec(command(), 0..40)) {
        // Watchdog: a session of at most 40 commands at <= 12 playouts a move ends in seconds.
        let (tx, rx) = std::sync::mpsc::channel();
        let c = commands.clone();
        std::thread::spawn(move || { let _ = tx.send(session(c)); });
        match rx.recv_timeout(Duration::from_secs(60)) {
            Ok(r) => prop_assert!(r.is_ok(), "{}\ncommands: {commands:#?}", r.unwrap_err()),
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => prop_assert!(false, "the brain hung on {commands:#?}"),
            Err(e) => prop_assert!(false, "the session panicked ({e}) on {commands:#?}"),
        }
    }
}
