//! The Gomocup brain: the Piskvork protocol on a line stream (P. Laštovička, M. Petříček,
//! "Gomoku AI protocol", <https://plastovicka.github.io/protocl2en.htm>; SWAP2BOARD from the
//! Gomocup 2020 tournament rules; YXBOARD, YXSHOWFORBID, YXNBEST, YXBALANCEONE / YXBALANCETWO and
//! YXSHOWINFO from Yixin's extensions, answered as Rapfi answers them short of an opening database).
//!
//! [`Brain`] ([`brain`]) is a state machine over commands; it thinks through any
//! [`crate::agent::Agent`] (the CLI gives it the search agent [`crate::agent::MctsAgent`]) and
//! never sends a forbidden black move: the agent's answer is checked against the rules crate's
//! legal actions. The wire format (coordinates, the rule bitmask) is [`crate::wire`]'s. This
//! module parses the commands and dispatches them; the time budget of a move is [`time`]'s, the
//! tactics before the search [`tactics`]'.
//!
//! Commands (case-insensitive) and answers:
//! - `START n` → `OK`, or `ERROR` for sizes outside `renju_rules::board::SIZES` (7..=20) or the
//!   agent's sizes.
//!   `RECTSTART w,h` → as `START w` when `w == h`, else `ERROR`.
//! - `RESTART` → `OK` (empty board). `BEGIN` → our move on the empty board.
//! - `TURN x,y` → records the opponent's stone, answers our move.
//! - `BOARD` / lines `x,y,f` / `DONE` → our move. `f` = 1 our stone, 2 the opponent's. Stones are
//!   taken in the order given per side and interleaved Black, White, Black, … (the side to move,
//!   field 1, is Black when both have as many stones); under renju managers send move order,
//!   which this reproduces. `YXBOARD` … `DONE`: the same without an answer.
//! - `INFO key value`: `timeout_turn`, `timeout_match`, `time_left` (ms), `max_memory` (bytes),
//!   `rule` (bitmask: 4 renju, else 1 exactly five (standard), else freestyle), `thread_num`
//!   (search threads; at most as many as the brain was started with, `gomocup --threads`). No
//!   answer.
//!   Until `INFO rule` arrives the brain plays freestyle (the protocol's default) and says so in
//!   a `MESSAGE` before its first move after `START`.
//! - `TAKEBACK x,y` → `OK` when `x,y` is the last stone (removed), else `ERROR`.
//! - `YXHASHCLEAR` → no answer: the search tree kept between moves is dropped.
//! - `YXNBEST n` (`n` ≥ 1) → our move, recorded as a `TURN` answer is, after one line per
//!   candidate of its search, `n` root moves: the one played, then the most visited:
//!   `MESSAGE NBEST k x,y visits=V winrate=W pv=x,y x,y ...` (`k` from 1, `W` = (value + 1) / 2
//!   for us, the principal variation from the candidate). A move without a search (a VCF) has
//!   none.
//! - `YXBALANCEONE [b]` → after a search, the move after which our value is closest to the bias
//!   `b` (in `[-1, 1]`, default 0), recorded; `YXBALANCETWO [b]` → `x,y x,y`, our move and the
//!   opponent's reply after which our value is closest to `b`, not recorded. Candidates need at
//!   least 5% of the most visited sibling's visits (at least 1) and are never forbidden points;
//!   a `MESSAGE balance value V visits N bias B` line comes first.
//! - `YXSHOWINFO` → `MESSAGE` lines only: name and version, search threads, rule.
//! - `YXSEARCHDEFEND` → one line naming the moves that stop the opponent's threat, then our move
//!   as a `TURN` answer (recorded): `MESSAGE DEFEND VCF threat x,y ...: x,y x,y ...` (the
//!   opponent's VCF and exactly its refutations; with a VCT budget, those after which the
//!   opponent is proved to have a VCT follow as `MESSAGE DEFEND lose to a VCT: x,y ...`), else
//!   the same with `VCT` (the moves proved to refute its VCT), or `MESSAGE DEFEND VCF|VCT threat
//!   ...: no move refutes it`, `MESSAGE DEFEND no threat: ...`, `MESSAGE DEFEND unknown: ...` (a
//!   budget ran out). Budgets: the root VCF and VCT budgets and the move's time.
//! - `YXSTOP` (or `STOP`) → no answer of its own: the search under way stops and its command is
//!   answered with the move searched so far. It stops only a search of a command sent before
//!   it ([`serve_interruptible`], which the CLI runs: commands are read by a thread of their
//!   own while the brain thinks); with none under way it does nothing.
//! - `SWAP2BOARD` / stones / `DONE` (Swap2, RULES.md §5.11): 0 stones → three stones
//!   `x,y x,y x,y` (black, white, black); 3 stones → `SWAP` (we take Black), our white stone 4
//!   `x,y` (we stay White) or stones 4 and 5 `x,y x,y` (the opponent chooses the colour); 5
//!   stones → `SWAP` (we stay Black) or our white stone 6 `x,y` (we take White). The choice is
//!   searched in the Swap2 game ([`brain::Brain`]'s `swap2`).
//! - `YXSHOWFORBID` → `FORBID ` + `xxyy` (two digits each) per forbidden point + `.`.
//! - `ABOUT` → `name="renju-zero", ...`. `END` → stop.
//! - Unknown commands → `UNKNOWN ...`; malformed ones → `ERROR <what was wrong>`; the brain keeps
//!   going either way.
//!
//! Coordinates are 0-based `x` (column) and `y` (row from the **top**): protocol `y` is
//! `size - 1 - Point::y`.
//!
//! Tree reuse: the agent may keep its search tree between moves (the CLI's search agent does,
//! [`crate::agent::SearchSettings::reuse_tree`]): after our move and the opponent's answer the
//! search starts from the node of the new position with its visits. Every move answered by a
//! search says `MESSAGE playouts N reused R value V` first (`N` playouts of this move, `R` visits
//! the root kept, `V` the root value for us). `START`, `RESTART`, `TAKEBACK` and `YXHASHCLEAR`
//! drop the tree, and so does a `BOARD` or rule whose position does not follow from the last
//! searched one by the moves played.
//!
//! Time per move: from `timeout_turn`, `timeout_match` / `time_left` and `max_memory`
//! ([`time`]); with no time information, [`BrainOptions::default_turn`]. Under a match clock a
//! move's time is a plan, not a fixed share ([`crate::clock`]): a search whose best move cannot
//! change any more stops early, and an unsettled one runs on, up to three times the share but
//! never past a fifth of the time left or `timeout_turn`.
//!
//! Tactics before the search ([`tactics`], budgets [`BrainOptions::root_vcf_nodes`] and
//! [`BrainOptions::root_vct_nodes`], each question at most a quarter (VCF) or an eighth (VCT) of
//! the move's time, which the search then has less of): a VCF of the side to move is played at
//! once, announced as `MESSAGE VCF x,y x,y ...` (the whole line, protocol coordinates); when the
//! opponent has a VCF and its refutations are proved, the move is one of them, announced as
//! `MESSAGE VCF threat x,y ...: defending at x,y`. When the VCF settles nothing the same follows
//! for VCTs (`MESSAGE VCT ...`, `MESSAGE VCT threat ...: defending at x,y`; a VCT line is the
//! principal branch of its proof).

pub mod brain;
pub mod tactics;
pub mod time;

use std::io::{BufRead, Write};

use anyhow::Result;

pub use brain::{AgentFactory, Brain, BrainOptions, FREESTYLE_UNTIL_TOLD};

/// Error answer: `ERROR <message>` on one line.
fn error(msg: impl std::fmt::Display) -> Vec<String> {
    vec![format!("ERROR {}", msg.to_string().replace(['\n', '\r'], " "))]
}

impl Brain {
    /// Handles one command line; multi-line commands (BOARD, YXBOARD, SWAP2BOARD) read their
    /// lines from `more` up to `DONE`. Returns the answer lines (possibly none).
    pub fn handle(&mut self, line: &str, more: &mut dyn Iterator<Item = String>) -> Vec<String> {
        let line = line.trim();
        if line.is_empty() {
            return Vec::new();
        }
        let (cmd, arg) = match line.split_once(char::is_whitespace) {
            Some((c, a)) => (c.to_ascii_uppercase(), a.trim()),
            None => (line.to_ascii_uppercase(), ""),
        };
        match cmd.as_str() {
            "START" => match arg.parse::<usize>() {
                Ok(n) => self.start(n),
                Err(_) => error(format!("START needs a board size, got '{arg}'")),
            },
            "RECTSTART" => {
                let parsed = arg
                    .split_once(',')
                    .and_then(|(w, h)| Some((w.trim().parse::<usize>().ok()?, h.trim().parse::<usize>().ok()?)));
                match parsed {
                    Some((w, h)) if w == h => self.start(w),
                    Some((w, h)) => {
                        error(format!("rectangular boards are not supported ({w}x{h}); use a square board"))
                    }
                    None => error(format!("RECTSTART needs width,height, got '{arg}'")),
                }
            }
            "RESTART" => match self.restart() {
                Ok(()) => vec!["OK".into()],
                Err(e) => error(e),
            },
            "BEGIN" => {
                if let Err(e) = self.need_board() {
                    return error(e);
                }
                if !self.moves().is_empty() {
                    return error("BEGIN on a board that already has stones (send RESTART first)");
                }
                self.think()
            }
            "TURN" => match self.turn(arg) {
                Ok(()) => self.think(),
                Err(e) => error(format!("{e:#}")),
            },
            "BOARD" | "YXBOARD" => {
                let lines = read_until_done(more);
                match self.board(&lines) {
                    Ok(()) if cmd == "BOARD" => self.think(),
                    Ok(()) => Vec::new(),
                    Err(e) => error(format!("{cmd}: {e:#}")),
                }
            }
            "INFO" => match self.info(arg) {
                Ok(msg) => msg,
                Err(e) => error(format!("{e:#}")),
            },
            "TAKEBACK" => match self.takeback(arg) {
                Ok(()) => vec!["OK".into()],
                Err(e) => error(format!("{e:#}")),
            },
            "SWAP2BOARD" => {
                let lines = read_until_done(more);
                match self.swap2(&lines) {
                    Ok(v) => v,
                    Err(e) => error(format!("SWAP2BOARD: {e:#}")),
                }
            }
            "YXSHOWFORBID" => match self.show_forbid() {
                Ok(s) => vec![s],
                Err(e) => error(format!("{e:#}")),
            },
            "YXNBEST" => match arg.parse::<usize>() {
                Ok(n) if n > 0 => self.think_nbest(n),
                _ => error(format!("YXNBEST needs a number of candidates (at least 1), got '{arg}'")),
            },
            "YXBALANCEONE" | "YXBALANCETWO" => {
                let bias = if arg.is_empty() { Ok(0.0) } else { arg.parse::<f32>() };
                match bias {
                    Ok(b) if (-1.0..=1.0).contains(&b) => match self.balance(b, cmd == "YXBALANCETWO") {
                        Ok(v) => v,
                        Err(e) => error(format!("{cmd}: {e:#}")),
                    },
                    _ => error(format!("{cmd} needs a bias between -1 and 1 (a value for us), got '{arg}'")),
                }
            }
            "YXSHOWINFO" => self.show_info(),
            "YXSEARCHDEFEND" => self.search_defend(),
            // Read by [`serve_interruptible`]'s reader as it arrives; here, with no search under
            // way, nothing to do.
            "YXSTOP" | "STOP" => Vec::new(),
            "YXHASHCLEAR" => {
                self.forget();
                Vec::new()
            }
            "ABOUT" => vec![self.about()],
            "END" => {
                self.end();
                Vec::new()
            }
            _ => vec![format!("UNKNOWN command '{cmd}'")],
        }
    }
}

/// Lines up to (not including) `DONE`; blank lines skipped.
fn read_until_done(more: &mut dyn Iterator<Item = String>) -> Vec<String> {
    let mut v = Vec::new();
    for l in more {
        let t = l.trim();
        if t.eq_ignore_ascii_case("DONE") {
            break;
        }
        if !t.is_empty() {
            v.push(t.to_string());
        }
    }
    v
}

/// [`serve`] with `input` read by a thread of its own, so that `YXSTOP` / `STOP` reach a search
/// under way: a stop line ends the search of a command read before it, if that search is still
/// running, and of no later command. Returns at `END` or the end of input (the reader thread is
/// left blocked on its input: the process is about to end).
pub fn serve_interruptible<R: BufRead + Send + 'static>(brain: &mut Brain, input: R, output: impl Write) -> Result<()> {
    use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
    use std::sync::Arc;
    // Line numbers from 1: the last stop line read, and the command being handled.
    let last_stop = Arc::new(AtomicU64::new(0));
    let current = Arc::new(AtomicU64::new(0));
    {
        let (stop, cur) = (last_stop.clone(), current.clone());
        brain.set_interrupt(Arc::new(move || stop.load(SeqCst) > cur.load(SeqCst)));
    }
    let (tx, rx) = std::sync::mpsc::channel::<(u64, String)>();
    let stops = last_stop.clone();
    std::thread::spawn(move || {
        for (i, line) in input.lines().map_while(|l| l.ok()).enumerate() {
            let t = line.trim();
            if t.eq_ignore_ascii_case("YXSTOP") || t.eq_ignore_ascii_case("STOP") {
                stops.store(i as u64 + 1, SeqCst);
            }
            if tx.send((i as u64 + 1, line)).is_err() {
                break;
            }
        }
    });
    command_loop(brain, rx.iter(), output, |n| current.store(n, SeqCst))
}

/// Runs `brain` on `input` until `END` or the end of input, writing and flushing every answer.
pub fn serve(brain: &mut Brain, input: impl BufRead, output: impl Write) -> Result<()> {
    let lines = input.lines().map_while(|l| l.ok()).zip(1..).map(|(l, n)| (n, l));
    command_loop(brain, lines, output, |_| {})
}

/// The command loop of [`serve`] and [`serve_interruptible`] over numbered lines (from 1):
/// `on_command` hears each command's number before it is handled (a multi-line command reads
/// its further lines from the same stream); every answer is written and flushed.
fn command_loop(
    brain: &mut Brain,
    mut lines: impl Iterator<Item = (u64, String)>,
    mut output: impl Write,
    mut on_command: impl FnMut(u64),
) -> Result<()> {
    while let Some((n, line)) = lines.next() {
        on_command(n);
        let mut more = lines.by_ref().map(|(_, l)| l);
        for answer in brain.handle(&line, &mut more) {
            writeln!(output, "{answer}")?;
        }
        output.flush()?;
        if brain.ended() {
            break;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::{Agent, Candidate, Choice};
    use crate::wire::{format_point, from_wire, parse_xy};
    use renju_rules::vcf::{vcf, Limits, Vcf};
    use renju_rules::{Action, Color, Game, Point, Rule};
    use std::time::Duration;

    /// Returns the first forbidden black point if there is one (to prove the brain refuses it),
    /// else the empty point nearest the centre.
    struct Naughty;
    impl Agent for Naughty {
        fn new_game(&mut self, _seed: u64) -> Result<()> {
            Ok(())
        }
        fn choose(&mut self, game: &Game) -> Result<Choice> {
            let b = game.board();
            let n = b.size();
            let action =
                if let Some((p, _)) = b.forbidden_points().first().filter(|_| game.next_color() == Color::Black) {
                    Action::Place(*p)
                } else {
                    let c = (n / 2) as i32;
                    let mut pts: Vec<Point> =
                        (0..n * n).map(|i| Point::from_index(i, n)).filter(|&p| b.get(p).is_none()).collect();
                    pts.sort_by_key(|p| ((p.x as i32 - c).abs().max((p.y as i32 - c).abs()), p.index(n)));
                    Action::Place(pts[0])
                };
            Ok(Choice { action, value: Some(0.5), playouts: 1, reused: 0 })
        }
        fn value(&mut self, game: &Game) -> Result<Option<f32>> {
            Ok(Some(if game.board().stones()[2].0.y > game.board().stones()[0].0.y { 0.1 } else { 0.5 }))
        }
    }

    /// Answers every protocol decision with `self.0`, stones as [`Naughty`].
    struct Decides(Action);
    impl Agent for Decides {
        fn new_game(&mut self, _seed: u64) -> Result<()> {
            Ok(())
        }
        fn choose(&mut self, game: &Game) -> Result<Choice> {
            if matches!(game.decision(), renju_rules::DecisionKind::PlaceStone(_)) {
                return Naughty.choose(game);
            }
            Ok(Choice { action: self.0, value: Some(0.25), playouts: 1, reused: 0 })
        }
    }

    fn brain_deciding(a: Action) -> Brain {
        Brain::new(Box::new(move |_| Ok(Box::new(Decides(a)) as Box<dyn Agent>)), BrainOptions::default())
    }

    #[test]
    fn swap2_choices_searched_in_the_swap2_game() {
        let three = "START 15\nINFO rule 4\nSWAP2BOARD\n7,7\n7,6\n8,6\nDONE\n";
        // Tentative White takes Black.
        assert_eq!(run(&mut brain_deciding(Action::Swap), three)[1], "SWAP");
        // Stays White: one white stone, the empty point nearest the centre.
        assert_eq!(run(&mut brain_deciding(Action::Keep), three)[1], "6,8");
        // Places stones 4 and 5.
        let out = run(&mut brain_deciding(Action::Double), three);
        assert_eq!(out[1], "6,8 7,8");
        let all = run_all(&mut brain_deciding(Action::Double), three);
        assert!(all.iter().any(|l| l == "MESSAGE swap2 choice double (value +0.250 for the decider)"), "{all:?}");

        let five = "START 15\nINFO rule 4\nSWAP2BOARD\n7,7\n7,6\n8,6\n6,8\n7,8\nDONE\n";
        // Tentative Black keeps Black: the opponent places stone 6.
        assert_eq!(run(&mut brain_deciding(Action::Keep), five)[1], "SWAP");
        // Takes White and places stone 6.
        assert_eq!(run(&mut brain_deciding(Action::Swap), five)[1], "8,8");
        // Double is no answer to the colour choice: the value decides (Naughty: 0.5 for White,
        // so take White and play).
        assert_eq!(run(&mut brain(), five)[1], "8,8");
        // A repeated stone is an error naming it.
        let bad = run(&mut brain(), "START 15\nSWAP2BOARD\n7,7\n7,7\n8,6\nDONE\n");
        assert!(bad[1].starts_with("ERROR") && bad[1].contains("stone 2"), "{bad:?}");
    }

    fn brain() -> Brain {
        Brain::new(Box::new(|_| Ok(Box::new(Naughty) as Box<dyn Agent>)), BrainOptions::default())
    }

    fn run(b: &mut Brain, script: &str) -> Vec<String> {
        let mut out = Vec::new();
        serve(b, script.as_bytes(), &mut out).unwrap();
        String::from_utf8(out).unwrap().lines().filter(|l| !l.starts_with("MESSAGE")).map(String::from).collect()
    }

    #[test]
    fn start_begin_turn_and_errors() {
        let mut b = brain();
        let out = run(
            &mut b,
            "BEGIN\nSTART 40\nSTART 15\nRECTSTART 15,20\nBEGIN\nTURN 0,0\nTURN 0,0\nTURN 7\nTURN a,b\nFOO\nABOUT\nEND\nTURN 1,1\n",
        );
        assert!(out[0].starts_with("ERROR") && out[0].contains("START first"), "{out:?}");
        assert!(out[1].starts_with("ERROR unsupported size 40"));
        assert_eq!(out[2], "OK");
        assert!(out[3].starts_with("ERROR rectangular"));
        assert_eq!(out[4], "7,7", "BEGIN: centre");
        assert_eq!(out[5], "6,8", "nearest the centre, lowest rules index: g7 = protocol 6,8");
        assert!(out[6].contains("occupied"), "{}", out[6]);
        assert!(out[7].starts_with("ERROR") && out[7].contains("x,y"));
        assert!(out[8].starts_with("ERROR") && out[8].contains("'a'"));
        assert!(out[9].starts_with("UNKNOWN"));
        assert!(out[10].starts_with("name=\"renju-zero\""));
        assert_eq!(out.len(), 11, "END stops the brain: {out:?}");
    }

    #[test]
    fn never_plays_a_forbidden_black_point_and_shows_them() {
        let mut b = brain();
        // Renju. Black (us, to move: 4 own + 4 opponent stones) has stones making h8 (7,7 in
        // protocol terms) a double-three: f8 g8 (row), h6 h7 (column); white stones far away.
        // Protocol coordinates: column x, row from the top: h8 = 7,7; f8 = 5,7; g8 = 6,7;
        // h7 = 7,8; h6 = 7,9.
        let script = "START 15\nINFO rule 4\nYXBOARD\n5,7,1\n0,0,2\n6,7,1\n14,0,2\n7,9,1\n0,14,2\n7,8,1\n14,14,2\nDONE\nYXSHOWFORBID\nBOARD\n5,7,1\n0,0,2\n6,7,1\n14,0,2\n7,9,1\n0,14,2\n7,8,1\n14,14,2\nDONE\n";
        let out = run(&mut b, script);
        assert_eq!(out[0], "OK");
        assert_eq!(out[1], "FORBID 0707.");
        assert_ne!(out[2], "7,7", "the agent proposed the forbidden h8; the brain must refuse it");
        assert!(!out[2].starts_with("ERROR"), "{out:?}");
        assert_eq!(b.rule(), Rule::Renju);
        // Under freestyle the same point is fine and nothing is forbidden.
        let mut b = brain();
        let out = run(&mut b, &script.replace("INFO rule 4", "INFO rule 0"));
        assert_eq!(out[1], "FORBID .");
    }

    #[test]
    fn board_errors_and_takeback() {
        let mut b = brain();
        let out = run(&mut b, "START 15\nBOARD\n1,1,1\n2,2,1\nDONE\nBOARD\n1,1,3\nDONE\nBOARD\n1,1,1\n2,2,2\nDONE\nTAKEBACK 3,3\nTAKEBACK 7,7\nINFO timeout_turn abc\n");
        assert!(out[1].contains("2 own and 0 opponent"), "{out:?}");
        assert!(out[2].contains("field '3'"), "{out:?}");
        assert_eq!(out[3], "7,7");
        assert!(out[4].starts_with("ERROR") && out[4].contains("not the last stone"));
        assert_eq!(out[5], "OK");
        assert!(out[6].starts_with("ERROR") && out[6].contains("'abc'"));
    }

    #[test]
    fn swap2_steps() {
        let mut b = brain();
        let out = run(&mut b, "START 15\nSWAP2BOARD\nDONE\nSWAP2BOARD\n7,7\n7,6\n8,6\nDONE\nSWAP2BOARD\n7,7\nDONE\n");
        // Three stones: black, white, black, of an opening whose value is smallest (the fake
        // agent gives 0.1 when stone 3 is above stone 1 in rules rows, i.e. lower protocol y).
        let st: Vec<&str> = out[1].split(' ').collect();
        assert_eq!(st.len(), 3);
        assert_eq!(st[0], "7,7");
        let y3: i64 = st[2].split(',').nth(1).unwrap().parse().unwrap();
        assert!(y3 < 7, "{out:?}");
        // Value 0.5 for White (from the agent's choice): keep White and play a stone.
        assert!(out[2].contains(','), "{out:?}");
        assert!(out[3].starts_with("ERROR") && out[3].contains("0, 3 or 5"));
    }

    /// All lines, MESSAGE included.
    fn run_all(b: &mut Brain, script: &str) -> Vec<String> {
        let mut out = Vec::new();
        serve(b, script.as_bytes(), &mut out).unwrap();
        String::from_utf8(out).unwrap().lines().map(String::from).collect()
    }

    /// A BOARD command with our stones (field 1) and the opponent's (field 2), rules notation.
    fn board_cmd(own: &str, opp: &str) -> String {
        let mut s = String::from("BOARD\n");
        for (list, f) in [(own, 1), (opp, 2)] {
            for t in list.split_whitespace() {
                s += &format!("{},{f}\n", format_point(renju_rules::notation::parse_point(t, 15).unwrap(), 15));
            }
        }
        s + "DONE\n"
    }

    #[test]
    fn plays_a_vcf_at_once_and_says_so() {
        // Black (us) has the four-four VCF of rules/tests/vcf_positions.rs; White has 9 stones
        // (3 caps, 6 quiet ones far away) so Black is to move. The naughty agent would play
        // elsewhere.
        let own = "k12 k13 k14 l10 l9 l8 n12 n13 n14";
        let opp = "k10 l7 n10 a1 d1 g1 a4 d4 g4";
        let mut b = brain();
        let out = run_all(&mut b, &format!("START 15\nINFO rule 4\n{}", board_cmd(own, opp)));
        let msg = out.iter().find(|l| l.starts_with("MESSAGE VCF ")).unwrap_or_else(|| panic!("{out:?}"));
        let line: Vec<&str> = msg["MESSAGE VCF ".len()..].split(' ').collect();
        assert_eq!(line.len(), 7, "{msg}");
        assert_eq!(out.last().unwrap(), line[0], "the move is the line's first: {out:?}");
        // Off: the agent's move.
        let mut b = Brain::new(
            Box::new(|_| Ok(Box::new(Naughty) as Box<dyn Agent>)),
            BrainOptions { root_vcf_nodes: 0, root_vct_nodes: 0, ..BrainOptions::default() },
        );
        let out = run_all(&mut b, &format!("START 15\nINFO rule 4\n{}", board_cmd(own, opp)));
        assert!(!out.iter().any(|l| l.starts_with("MESSAGE VCF")), "{out:?}");
    }

    #[test]
    fn defends_against_an_opponent_vcf() {
        // White (us, to move: one stone fewer) faces Black's four-three threat f10
        // (rules/tests/vcf_positions.rs); the naughty agent plays near the centre, which does not
        // defend.
        let own = "b10 a1 d1 g1 a4";
        let opp = "c10 d10 e10 f11 f12 g14";
        let mut b = brain();
        let out = run_all(&mut b, &format!("START 15\nINFO rule 4\n{}", board_cmd(own, opp)));
        let msg = out.iter().find(|l| l.starts_with("MESSAGE VCF threat")).unwrap_or_else(|| panic!("{out:?}"));
        let mv = out.last().unwrap();
        assert!(msg.ends_with(&format!("defending at {mv}")), "{out:?}");
        let (x, y) = parse_xy(mv).unwrap();
        let p = from_wire(x, y, 15).unwrap();
        let game = b.game_of(&b.moves()[..b.moves().len() - 1]).unwrap();
        assert_eq!(game.next_color(), Color::White);
        let mut board = game.board().clone();
        board.place(p, Color::White);
        assert_eq!(vcf(&board, Color::Black, &Limits::nodes(1_000_000)), Vcf::NoWin, "{mv} must refute");
    }

    // Shape (a) of rules/tests/vct_positions.rs: White's column three h5 h6 h7 (capped by h8),
    // e4 and the pair d6 e5 win by f4 (a three) and then the four-three h4; White has no VCF.
    const VCT_SHAPE: &str = "h5 h6 h7 e4 d6 e5";
    const VCT_CAPS: &str = "h8 i7 g6";
    /// Black stones no five-cell window holds two of: no fours, no counter-fours.
    const QUIET: &str = "a15 f15 l15";

    #[test]
    fn plays_a_vct_at_once_and_says_so() {
        // White (us, to move: one stone fewer than Black) holds the shape; Black's quiet stones
        // far away make the counts right.
        let own = VCT_SHAPE;
        let opp = &format!("{VCT_CAPS} {QUIET} a1");
        let mut b = brain();
        let out = run_all(&mut b, &format!("START 15\nINFO rule 4\n{}", board_cmd(own, opp)));
        assert!(!out.iter().any(|l| l.starts_with("MESSAGE VCF")), "no VCF here: {out:?}");
        let msg = out.iter().find(|l| l.starts_with("MESSAGE VCT ")).unwrap_or_else(|| panic!("{out:?}"));
        let line: Vec<&str> = msg["MESSAGE VCT ".len()..].split(' ').collect();
        assert!(line.len() >= 3 && line.len() % 2 == 1, "{msg}");
        assert_eq!(out.last().unwrap(), line[0], "the move is the line's first: {out:?}");
        // Off: the agent's move, which is not the line's.
        let mut b = Brain::new(
            Box::new(|_| Ok(Box::new(Naughty) as Box<dyn Agent>)),
            BrainOptions { root_vct_nodes: 0, ..BrainOptions::default() },
        );
        let off = run_all(&mut b, &format!("START 15\nINFO rule 4\n{}", board_cmd(own, opp)));
        assert!(!off.iter().any(|l| l.starts_with("MESSAGE VCT")), "{off:?}");
        assert_ne!(off.last(), out.last(), "{off:?}");
    }

    #[test]
    fn search_defend_names_the_vcf_refutations_that_lose_to_a_vct() {
        // The position of the tactics' test (Black, us, to move): White's VCF is stopped exactly
        // by d11 and h7, and after d11 White still wins by a VCT.
        let split: Vec<&str> = tactics::VCF_REFUTATION_LOSING_TO_A_VCT.split(' ').collect();
        let side = |k: usize| split.iter().skip(k).step_by(2).copied().collect::<Vec<_>>().join(" ");
        let at = |t: &str| format_point(renju_rules::notation::parse_point(t, 15).unwrap(), 15);
        let ask = |vct_nodes: u64| {
            let mut b = Brain::new(
                Box::new(|_| Ok(Box::new(Naughty) as Box<dyn Agent>)),
                BrainOptions {
                    root_vct_nodes: vct_nodes,
                    default_turn: std::time::Duration::from_secs(600),
                    ..BrainOptions::default()
                },
            );
            run_all(&mut b, &format!("START 15\nINFO rule 4\nYX{}YXSEARCHDEFEND\n", board_cmd(&side(0), &side(1))))
        };
        let out = ask(20_000);
        let vcf = out.iter().find(|l| l.starts_with("MESSAGE DEFEND VCF threat")).unwrap_or_else(|| panic!("{out:?}"));
        let mut named: Vec<&str> = vcf.split(": ").nth(1).unwrap().split(' ').collect();
        named.sort();
        let mut both = [at("d11"), at("h7")];
        both.sort();
        assert_eq!(named, both, "{out:?}");
        assert!(out.contains(&format!("MESSAGE DEFEND lose to a VCT: {}", at("d11"))), "{out:?}");
        // Without a VCT budget the refutations alone.
        let out = ask(0);
        assert!(out.iter().any(|l| l.starts_with("MESSAGE DEFEND VCF threat")), "{out:?}");
        assert!(!out.iter().any(|l| l.starts_with("MESSAGE DEFEND lose")), "{out:?}");
    }

    #[test]
    fn defends_against_an_opponent_vct_and_names_the_defences() {
        use renju_rules::vct::{vct, Vct};
        // Black (us, to move) faces the shape's VCT; the naughty agent plays near the centre.
        let own = &format!("{VCT_CAPS} {QUIET}");
        let opp = VCT_SHAPE;
        // Every legal move is searched: the question needs a budget of its own, and a turn long
        // enough that the node budget, not the machine's load, bounds each solver call.
        let deep = || {
            Brain::new(
                Box::new(|_| Ok(Box::new(Naughty) as Box<dyn Agent>)),
                BrainOptions {
                    root_vct_nodes: 5_000_000,
                    default_turn: std::time::Duration::from_secs(600),
                    ..BrainOptions::default()
                },
            )
        };
        let position = format!("START 15\nINFO rule 4\n{}", board_cmd(own, opp));
        let mut b = deep();
        let out = run_all(&mut b, &position);
        let msg = out.iter().find(|l| l.starts_with("MESSAGE VCT threat")).unwrap_or_else(|| panic!("{out:?}"));
        let mv = out.last().unwrap();
        assert!(msg.ends_with(&format!("defending at {mv}")), "{out:?}");
        let after = |b: &Brain, mv: &str| {
            let (x, y) = parse_xy(mv).unwrap();
            let game = b.game_of(&b.moves()[..b.moves().len() - 1]).unwrap();
            assert_eq!(game.next_color(), Color::Black);
            let mut board = game.board().clone();
            board.place(from_wire(x, y, 15).unwrap(), Color::Black);
            vct(&board, Color::White, &Limits::nodes(1_000_000))
        };
        assert_eq!(after(&b, mv), Vct::NoWin, "{mv} must refute");
        // Without the VCT budget the agent's move stands, and it does not refute.
        let mut off = Brain::new(
            Box::new(|_| Ok(Box::new(Naughty) as Box<dyn Agent>)),
            BrainOptions { root_vct_nodes: 0, ..BrainOptions::default() },
        );
        let out_off = run_all(&mut off, &position);
        assert!(matches!(after(&off, out_off.last().unwrap()), Vct::Win { .. }), "{out_off:?}");
        // YXSEARCHDEFEND names the refutations, each of which refutes, then plays one.
        let mut b = deep();
        let out = run_all(&mut b, &format!("START 15\nINFO rule 4\nYX{}YXSEARCHDEFEND\n", board_cmd(own, opp)));
        let msg = out.iter().find(|l| l.starts_with("MESSAGE DEFEND VCT threat")).unwrap_or_else(|| panic!("{out:?}"));
        let moves: Vec<&str> = msg.split(": ").nth(1).unwrap().split(' ').collect();
        assert!(!moves.is_empty() && moves.len() < 20, "{msg}");
        assert!(moves.contains(&out.last().unwrap().as_str()), "{out:?}");
        for m in moves {
            let mut probe = brain();
            run_all(&mut probe, &format!("START 15\nINFO rule 4\nYX{}", board_cmd(own, opp)));
            let game = probe.game_of(probe.moves()).unwrap();
            let (x, y) = parse_xy(m).unwrap();
            let mut board = game.board().clone();
            board.place(from_wire(x, y, 15).unwrap(), Color::Black);
            assert_eq!(vct(&board, Color::White, &Limits::nodes(1_000_000)), Vct::NoWin, "{m} is named but loses");
        }
        // A quiet position: no threat.
        let mut b = deep();
        let out = run_all(&mut b, "START 15\nINFO rule 4\nYXBOARD\n7,7,2\nDONE\nYXSEARCHDEFEND\n");
        assert!(out.iter().any(|l| l.starts_with("MESSAGE DEFEND no threat")), "{out:?}");
    }

    /// `INFO thread_num` reaches the agent, before `START` (applied to the agent it makes) and
    /// after it (applied at once); a value that is not a number is an error.
    #[test]
    fn thread_num_reaches_the_agent() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        use std::sync::Arc;
        struct Threads(Arc<AtomicUsize>);
        impl Agent for Threads {
            fn new_game(&mut self, _seed: u64) -> Result<()> {
                Ok(())
            }
            fn choose(&mut self, game: &Game) -> Result<Choice> {
                Naughty.choose(game)
            }
            fn set_threads(&mut self, threads: usize) {
                self.0.store(threads, Ordering::SeqCst);
            }
        }
        let seen = Arc::new(AtomicUsize::new(0));
        let s = seen.clone();
        let mut b =
            Brain::new(Box::new(move |_| Ok(Box::new(Threads(s.clone())) as Box<dyn Agent>)), BrainOptions::default());
        run(&mut b, "INFO thread_num 3\nSTART 15\n");
        assert_eq!(seen.load(Ordering::SeqCst), 3);
        run(&mut b, "INFO thread_num 2\n");
        assert_eq!(seen.load(Ordering::SeqCst), 2);
        run(&mut b, "INFO thread_num 0\n");
        assert_eq!(seen.load(Ordering::SeqCst), 1, "at least one thread");
        let out = run(&mut b, "INFO thread_num many\n");
        assert!(out.iter().any(|l| l.starts_with("ERROR") && l.contains("thread_num")), "{out:?}");
    }

    #[test]
    fn time_budget() {
        let mut b = brain();
        run(&mut b, "START 15\nINFO timeout_turn 1000\nINFO timeout_match 100000\nINFO time_left 8000\nINFO max_memory 8000000\n");
        let l = b.limit(200);
        // min(1000, 8000 / max(8, 20)) = 400 ms -> 0.9 * 400 - 10 = 350 ms.
        assert_eq!(l.time, Some(Duration::from_millis(350)));
        // 8e6 / 2 / (40 * 200) = 500 playouts.
        assert_eq!(l.playouts, Some(500));
    }

    #[test]
    fn says_it_plays_freestyle_until_told_the_rule() {
        // No INFO rule: the first move after START says so, once.
        let mut b = brain();
        let out = run_all(&mut b, "START 15\nBEGIN\nTURN 0,0\n");
        let told: Vec<&String> = out.iter().filter(|l| l.contains("INFO rule")).collect();
        assert_eq!(told, [&format!("MESSAGE {FREESTYLE_UNTIL_TOLD}")], "{out:?}");
        assert_eq!(out[1], format!("MESSAGE {FREESTYLE_UNTIL_TOLD}"), "before the first move: {out:?}");
        assert_eq!(out[2], "7,7");
        assert_eq!(b.rule(), Rule::Freestyle);
        // Again after the next START.
        let out = run_all(&mut b, "START 15\nBEGIN\n");
        assert!(out.contains(&format!("MESSAGE {FREESTYLE_UNTIL_TOLD}")), "{out:?}");
        // With INFO rule (any value, freestyle included) nothing is said.
        for rule in ["4", "0"] {
            let mut b = brain();
            let out = run_all(&mut b, &format!("START 15\nINFO rule {rule}\nBEGIN\nTURN 0,0\n"));
            assert!(!out.iter().any(|l| l.contains("INFO rule")), "{out:?}");
        }
    }

    /// Places the centre-nearest point and reports fixed candidates (protocol coordinates,
    /// visits, value, replies) for the balance commands.
    struct Balanced;
    type Listed = (&'static str, u64, f32, &'static [(&'static str, u64, f32)]);
    const LISTED: [Listed; 4] = [
        // The forbidden point, exactly even, with an exactly even reply: never chosen.
        ("7,7", 100, 0.0, &[("8,8", 100, 0.0)]),
        // Occupied 0,0 and the 1-visit 3,5 (under 5% of 50) are even but never chosen.
        ("3,3", 100, 0.3, &[("0,0", 50, 0.0), ("3,4", 50, 0.2), ("3,5", 1, 0.0), ("4,4", 40, -0.6)]),
        // Under 5% of 100 visits.
        ("10,10", 3, 0.0, &[]),
        ("11,3", 60, -0.5, &[("11,4", 10, 0.25)]),
    ];
    impl Agent for Balanced {
        fn new_game(&mut self, _seed: u64) -> Result<()> {
            Ok(())
        }
        fn choose(&mut self, game: &Game) -> Result<Choice> {
            Naughty.choose(game)
        }
        fn candidates(&self, game: &Game, _pv_length: usize) -> Vec<Candidate> {
            let n = game.board().size();
            let at = |t: &str| {
                let (x, y) = parse_xy(t).unwrap();
                Action::Place(from_wire(x, y, n).unwrap())
            };
            LISTED
                .iter()
                .map(|&(p, visits, value, replies)| Candidate {
                    action: at(p),
                    visits,
                    value,
                    pv: vec![at(p)],
                    replies: replies.iter().map(|&(r, n, v)| (at(r), n, v)).collect(),
                })
                .collect()
        }
    }

    /// Plays `self.0` and lists [`Balanced`]'s candidates.
    struct Plays(&'static str);
    impl Agent for Plays {
        fn new_game(&mut self, _seed: u64) -> Result<()> {
            Ok(())
        }
        fn choose(&mut self, game: &Game) -> Result<Choice> {
            let (x, y) = parse_xy(self.0).unwrap();
            let action = Action::Place(from_wire(x, y, game.board().size()).unwrap());
            Ok(Choice { action, value: Some(-0.5), playouts: 10, reused: 0 })
        }
        fn candidates(&self, game: &Game, pv_length: usize) -> Vec<Candidate> {
            Balanced.candidates(game, pv_length)
        }
    }

    /// `YXNBEST n` lists the move played first (here the third most visited), then the most
    /// visited (ties: the better value), `n` lines, and plays and records the move.
    #[test]
    fn nbest_lists_the_move_played_first() {
        let setup = "START 15\nINFO rule 4\nYXBOARD\n0,1,1\n14,14,2\nDONE\n";
        let mut b = Brain::new(
            Box::new(|_| Ok(Box::new(Plays("11,3")) as Box<dyn Agent>)),
            BrainOptions { root_vcf_nodes: 0, root_vct_nodes: 0, ..BrainOptions::default() },
        );
        let out = run_all(&mut b, &format!("{setup}YXNBEST 3\n"));
        assert_eq!(
            out,
            [
                "OK",
                "MESSAGE NBEST 1 11,3 visits=60 winrate=0.250 pv=11,3",
                "MESSAGE NBEST 2 3,3 visits=100 winrate=0.650 pv=3,3",
                "MESSAGE NBEST 3 7,7 visits=100 winrate=0.500 pv=7,7",
                "MESSAGE playouts 10 reused 0 value -0.500",
                "11,3",
            ]
        );
        assert_eq!(b.moves().last(), Some(&from_wire(11, 3, 15).unwrap()));
    }

    /// The balance commands choose the candidate (pair) closest to the bias among the legal ones
    /// with enough visits: never the forbidden h8 (7,7), an occupied reply, or a move with under
    /// 5% of the top visits, however even. The one move is recorded, the pair is not.
    #[test]
    fn balance_skips_forbidden_occupied_and_rarely_visited_candidates() {
        // Black (us) to move with a double-three on 7,7 (forbid_test's position).
        let setup =
            "START 15\nINFO rule 4\nYXBOARD\n5,7,1\n0,0,2\n6,7,1\n14,0,2\n7,9,1\n0,14,2\n7,8,1\n14,14,2\nDONE\n";
        let brain = || Brain::new(Box::new(|_| Ok(Box::new(Balanced) as Box<dyn Agent>)), BrainOptions::default());
        for (cmd, want) in [
            ("YXBALANCEONE", "3,3"),
            ("YXBALANCEONE -0.4", "11,3"),
            ("YXBALANCETWO", "3,3 3,4"),
            ("YXBALANCETWO 0.3", "11,3 11,4"),
        ] {
            let mut b = brain();
            let out = run(&mut b, &format!("{setup}YXSHOWFORBID\n{cmd}\n"));
            assert_eq!(out, ["OK", "FORBID 0707.", want], "{cmd}");
            let (x, y) = parse_xy(want.split(' ').next().unwrap()).unwrap();
            let first = from_wire(x, y, 15).unwrap();
            let recorded = b.moves().last() == Some(&first);
            assert_eq!(recorded, cmd.starts_with("YXBALANCEONE"), "{cmd}: {:?}", b.moves());
        }
        // No candidates (an agent without a search) and malformed biases: ERROR, and on.
        let mut b = brain_deciding(Action::Swap);
        let out = run(&mut b, &format!("{setup}YXBALANCEONE\nYXBALANCETWO 1.5\nYXBALANCEONE even\nYXSHOWFORBID\n"));
        assert_eq!(out.len(), 5, "{out:?}");
        assert!(out[1..4].iter().all(|l| l.starts_with("ERROR")), "{out:?}");
        assert_eq!(out[4], "FORBID 0707.");
    }
}
