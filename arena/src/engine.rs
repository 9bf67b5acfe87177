//! An external engine as an arena player, driven through the Gomocup (Piskvork) protocol
//! (P. Laštovička, M. Petříček, "Gomoku AI protocol", <https://plastovicka.github.io/protocl2en.htm>).
//!
//! Per game the engine gets `START size`, then `INFO timeout_turn`, `INFO timeout_match` (0
//! unless the spec has a match clock),
//! `INFO rule` (1 = exactly five, 4 = renju, 0 = freestyle) and, when its [`EngineSpec`] has
//! them, `INFO max_node N` and `INFO max_depth D` (Yixin-Board extensions of the protocol, which
//! Rapfi honours: at most N nodes searched, at most D plies deep, per move) and `INFO thread_num T`
//! (search threads); per move, with a
//! match clock, `INFO time_left` (the clock's remaining milliseconds), then `BEGIN`
//! on an empty board, otherwise the whole position as `BOARD` … `DONE` (stones in move order, field 1 = the
//! engine's own, 2 = the opponent's). The answer is the first line of the form `x,y`;
//! `MESSAGE`, `DEBUG` and other informational lines are skipped. Coordinates and the rule bitmask
//! are [`crate::wire`]'s.
//!
//! An engine only places stones: a game with protocol decisions (swap, offers, ...) must start
//! after them (the arena's `rif26` openings do). Running out of `2 * time + 3 s` for an answer,
//! `ERROR`, or an unparsable answer is an error (the arena scores it as a loss and starts the
//! engine afresh for its next game). With a match
//! clock, the time from sending a position to its answer is charged to the engine's clock for the
//! game, and an engine whose clock runs out loses the game on time (an error naming the time
//! used). Answers slower than `timeout_turn` are counted and reported on stderr when the engine
//! ends. A move that comes after its game ended is skipped while the next `START` waits for `OK`.
//!
//! A command goes out no sooner than [`SETTLE`] after the engine's last answer, and output
//! nobody asked for is discarded before each `START` and each position. Rapfi prints its move
//! before it marks itself idle and silently drops the commands that arrive in between, so a
//! position sent at once can be lost (its stone lines then read as unknown commands) when the
//! engine's thread is preempted on a loaded machine.

use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use renju_rules::{Action, DecisionKind, Game, Rule};

use crate::agent::{Agent, Choice};
use crate::wire::{from_wire, parse_xy, rule_bits, to_wire, EngineProcess};

/// An engine player: the program and its budget per move.
#[derive(Clone, Debug, PartialEq)]
pub struct EngineSpec {
    /// Program and arguments.
    pub command: Vec<String>,
    /// Time per move (`INFO timeout_turn`).
    pub time: Duration,
    /// Nodes per move (`INFO max_node`), when limited.
    pub nodes: Option<u64>,
    /// Search depth per move (`INFO max_depth`), when limited.
    pub depth: Option<u64>,
    /// Time for the whole game (`INFO timeout_match`, with `INFO time_left` before each move),
    /// when the engine plays on a match clock.
    pub match_time: Option<Duration>,
    /// Search threads (`INFO thread_num`), when set; otherwise the engine's own default.
    pub threads: Option<u64>,
}

impl EngineSpec {
    /// The time per move when the spec gives none: 5 s, or 60 s with a node or depth budget (a
    /// guard, so that the nodes or the depth decide).
    pub fn default_time(nodes: Option<u64>, depth: Option<u64>) -> Duration {
        Duration::from_secs(if nodes.is_some() || depth.is_some() { 60 } else { 5 })
    }

    /// The budget as `key=value` words in spec order, e.g. `nodes=16000 time=60`.
    pub fn budget(&self) -> String {
        let mut words = Vec::new();
        if let Some(n) = self.nodes {
            words.push(format!("nodes={n}"));
        }
        if let Some(d) = self.depth {
            words.push(format!("depth={d}"));
        }
        words.push(format!("time={}", self.time.as_secs_f64()));
        if let Some(m) = self.match_time {
            words.push(format!("match={}", m.as_secs_f64()));
        }
        if let Some(t) = self.threads {
            words.push(format!("threads={t}"));
        }
        words.join(" ")
    }

    /// The `INFO` lines sent at the start of every game.
    pub fn info_lines(&self, rule: Rule) -> String {
        let mut s = format!(
            "INFO timeout_turn {}\nINFO timeout_match {}\nINFO rule {}\n",
            self.time.as_millis(),
            self.match_time.map_or(0, |m| m.as_millis()),
            rule_bits(rule)
        );
        if let Some(n) = self.nodes {
            s += &format!("INFO max_node {n}\n");
        }
        if let Some(d) = self.depth {
            s += &format!("INFO max_depth {d}\n");
        }
        if let Some(t) = self.threads {
            s += &format!("INFO thread_num {t}\n");
        }
        s
    }
}

/// The least time between an engine's answer and the next command to it (module docs).
pub const SETTLE: Duration = Duration::from_millis(50);

/// A running engine process.
pub struct EngineAgent {
    process: EngineProcess,
    size: usize,
    rule: Rule,
    spec: EngineSpec,
    name: String,
    /// When the last answer arrived.
    answered: Option<Instant>,
    /// Time charged to the engine's match clock in this game.
    used: Duration,
    /// Answers slower than `timeout_turn`, and the slowest answer.
    slow_answers: u64,
    slowest: Duration,
}

impl EngineAgent {
    /// Starts the engine of `spec` for `size` x `size` games under `rule`.
    pub fn spawn(spec: &EngineSpec, size: usize, rule: Rule) -> Result<EngineAgent> {
        let process = EngineProcess::spawn(&spec.command, Stdio::null())?;
        let name = process.name().to_string();
        Ok(EngineAgent {
            process,
            size,
            rule,
            spec: spec.clone(),
            name,
            answered: None,
            used: Duration::ZERO,
            slow_answers: 0,
            slowest: Duration::ZERO,
        })
    }

    /// Sends `text` once [`SETTLE`] has passed since the last answer.
    fn send(&mut self, text: &str) -> Result<()> {
        if let Some(t) = self.answered {
            std::thread::sleep(SETTLE.saturating_sub(t.elapsed()));
        }
        self.process.send(text)
    }

    /// Next meaningful line within `wait`: informational lines and `SUGGEST`, `INFO`, `UNKNOWN`
    /// are skipped, `ERROR` is an error.
    fn answer(&mut self, wait: Duration) -> Result<String> {
        let skip = |l: &str| {
            let up = l.to_ascii_uppercase();
            ["SUGGEST", "INFO", "UNKNOWN"].iter().any(|k| up.starts_with(k))
        };
        let t = self.process.next_line_except(wait, skip)?;
        self.answered = Some(Instant::now());
        if t.to_ascii_uppercase().starts_with("ERROR") {
            bail!("engine {} answered '{t}'", self.name);
        }
        Ok(t)
    }

    fn wait_time(&self) -> Duration {
        self.spec.time * 2 + Duration::from_secs(3)
    }
}

impl Agent for EngineAgent {
    fn new_game(&mut self, _seed: u64) -> Result<()> {
        self.used = Duration::ZERO;
        self.process.discard_pending();
        self.send(&format!("START {}\n", self.size))?;
        // A move of the last game that comes after it ended (the engine overran its time) is
        // not the answer to START.
        let a = loop {
            let a = self.answer(Duration::from_secs(30))?;
            if parse_xy(&a).is_err() {
                break a;
            }
        };
        if !a.eq_ignore_ascii_case("OK") {
            bail!("engine {} answered '{a}' to START {}", self.name, self.size);
        }
        let info = self.spec.info_lines(self.rule);
        self.send(&info)
    }

    fn choose(&mut self, game: &Game) -> Result<Choice> {
        let DecisionKind::PlaceStone(me) = game.decision() else {
            bail!(
                "engine {} can only place stones, not decide {:?} (protocol {})",
                self.name,
                game.decision(),
                game.protocol()
            );
        };
        let stones = game.board().stones();
        let cmd = if stones.is_empty() {
            "BEGIN\n".to_string()
        } else {
            let mut s = String::from("BOARD\n");
            for &(p, c) in stones {
                let (x, y) = to_wire(p, self.size);
                s += &format!("{x},{y},{}\n", if c == me { 1 } else { 2 });
            }
            s + "DONE\n"
        };
        self.process.discard_pending();
        let mut wait = self.wait_time();
        let cmd = match self.spec.match_time {
            Some(m) => {
                let left = m.saturating_sub(self.used);
                wait = wait.min(left + Duration::from_secs(1));
                format!("INFO time_left {}\n{cmd}", left.as_millis())
            }
            None => cmd,
        };
        self.send(&cmd)?;
        let sent = Instant::now();
        let a = self.answer(wait);
        let took = sent.elapsed();
        self.used += took;
        if took > self.spec.time {
            self.slow_answers += 1;
        }
        self.slowest = self.slowest.max(took);
        if let Some(m) = self.spec.match_time.filter(|&m| self.used > m) {
            bail!(
                "engine {} lost on time: {:.3} s used of a {} s match clock",
                self.name,
                self.used.as_secs_f64(),
                m.as_secs_f64()
            );
        }
        let a = a?;
        let Ok((x, y)) = parse_xy(&a) else {
            bail!("engine {} answered '{a}' instead of a move x,y", self.name);
        };
        let p = from_wire(x, y, self.size)
            .with_context(|| format!("engine {} played {x},{y}, off the board", self.name))?;
        Ok(Choice { action: Action::Place(p), value: None, playouts: 0, reused: 0 })
    }
}

impl Drop for EngineAgent {
    fn drop(&mut self) {
        if self.slow_answers > 0 {
            eprintln!(
                "engine {}: {} answers took longer than timeout_turn {} ms (the slowest {} ms)",
                self.name,
                self.slow_answers,
                self.spec.time.as_millis(),
                self.slowest.as_millis()
            );
        }
        self.process.end(Duration::from_millis(500));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budgets_reach_the_engine_as_info_lines() {
        let d = tempfile::tempdir().unwrap();
        let log = d.path().join("input.log");
        // A fake engine: answers START with OK and logs every line it gets until END.
        let script = format!(
            "echo OK; while read -r l; do echo \"$l\" >> '{}'; [ \"$l\" = END ] && exit 0; done",
            log.display()
        );
        let spec = EngineSpec {
            command: vec!["sh".into(), "-c".into(), script],
            time: Duration::from_millis(1500),
            nodes: Some(16000),
            depth: Some(9),
            match_time: None,
            threads: Some(2),
        };
        let mut agent = EngineAgent::spawn(&spec, 15, Rule::Renju).unwrap();
        agent.new_game(0).unwrap();
        drop(agent);
        let got = std::fs::read_to_string(&log).unwrap();
        assert_eq!(
            got,
            "START 15\nINFO timeout_turn 1500\nINFO timeout_match 0\nINFO rule 4\nINFO max_node 16000\nINFO max_depth 9\nINFO thread_num 2\nEND\n"
        );
        assert_eq!(spec.budget(), "nodes=16000 depth=9 time=1.5 threads=2");
        let plain = EngineSpec { nodes: None, depth: None, threads: None, time: Duration::from_secs(5), ..spec };
        assert!(!plain.info_lines(Rule::Standard).contains("max_"), "no budget, no max_ lines");
        assert!(!plain.info_lines(Rule::Standard).contains("thread_num"), "the engine's own thread count");
        assert!(plain.info_lines(Rule::Standard).contains("INFO rule 1\n"));
    }

    #[test]
    fn a_match_clock_is_sent_charged_and_lost_on() {
        let d = tempfile::tempdir().unwrap();
        let log = d.path().join("input.log");
        // A fake engine that takes 0.4 s for every move and logs what it gets.
        let script = format!(
            "while read -r l; do echo \"$l\" >> '{}'; case \"$l\" in START*) echo OK;; BEGIN) sleep 0.4; echo 7,7;; END) exit 0;; esac; done",
            log.display()
        );
        let spec = EngineSpec {
            command: vec!["sh".into(), "-c".into(), script],
            time: Duration::from_secs(5),
            nodes: None,
            depth: None,
            match_time: Some(Duration::from_secs(1)),
            threads: None,
        };
        assert_eq!(spec.budget(), "time=5 match=1");
        let g = Game::new(15, Rule::Renju, renju_rules::Protocol::Free { centre: false }, None).unwrap();
        let mut agent = EngineAgent::spawn(&spec, 15, Rule::Renju).unwrap();
        agent.new_game(0).unwrap();
        agent.choose(&g).unwrap();
        agent.choose(&g).unwrap();
        // 1.2 s or more of a 1 s clock.
        let e = agent.choose(&g).unwrap_err().to_string();
        assert!(e.contains("lost on time") && e.contains("of a 1 s match clock"), "{e}");
        drop(agent);
        let got = std::fs::read_to_string(&log).unwrap();
        assert!(got.contains("INFO timeout_turn 5000\nINFO timeout_match 1000\n"), "{got}");
        let left: Vec<u64> = got.lines().filter_map(|l| l.strip_prefix("INFO time_left ")?.parse().ok()).collect();
        assert_eq!(left.len(), 3, "{got}");
        assert_eq!(left[0], 1000);
        assert!(left[1] <= 600 && left[2] <= 200, "each move charged at least 0.4 s: {left:?}");
    }

    #[test]
    fn a_late_move_of_the_last_game_is_not_the_answer_to_start() {
        let engine = |start_answer: &str| {
            let script =
                format!("while read -r l; do case \"$l\" in START*) {start_answer};; END) exit 0;; esac; done");
            let spec = EngineSpec {
                command: vec!["sh".into(), "-c".into(), script],
                time: Duration::from_secs(1),
                nodes: None,
                depth: None,
                match_time: None,
                threads: None,
            };
            EngineAgent::spawn(&spec, 15, Rule::Renju).unwrap()
        };
        engine("echo 9,7; echo OK").new_game(0).unwrap();
        let e = engine("echo 9,7; echo HELLO").new_game(0).unwrap_err().to_string();
        assert!(e.contains("answered 'HELLO' to START 15"), "{e}");
    }
}
