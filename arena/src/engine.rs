//! An external engine as an arena player, driven through the Gomocup (Piskvork) protocol
//! (P. Laštovička, M. Petříček, "Gomoku AI protocol", <https://plastovicka.github.io/protocl2en.htm>).
//!
//! Per game the engine gets `START size`, then `INFO timeout_turn`, `INFO timeout_match 0`,
//! `INFO rule` (1 = exactly five, 4 = renju, 0 = freestyle); per move `BEGIN` on an empty board,
//! otherwise the whole position as `BOARD` … `DONE` (stones in move order, field 1 = the
//! engine's own, 2 = the opponent's). The answer is the first line of the form `x,y`;
//! `MESSAGE`, `DEBUG` and other informational lines are skipped. Coordinates are 0-based from the
//! top-left, so protocol `y` = `size - 1 -` the rules crate's row.
//!
//! An engine only places stones: a game with protocol decisions (swap, offers, ...) must start
//! after them (the arena's `rif26` openings do). Running out of `2 * time + 3 s` for an answer,
//! `ERROR`, or an unparsable answer is an error (the arena scores it as a loss).

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use renju_rules::{Action, DecisionKind, Game, Point, Rule};

use crate::agent::{Agent, Choice};

/// The protocol's rule bitmask for a rules-crate rule: 4 renju, 1 exactly five, 0 freestyle.
pub fn rule_bits(rule: Rule) -> u32 {
    match rule {
        Rule::Renju => 4,
        Rule::Standard => 1,
        Rule::Freestyle => 0,
    }
}

/// Protocol coordinates `x,y` (top-left origin) of a point on a board of side `size`.
pub fn to_protocol(p: Point, size: usize) -> (usize, usize) {
    (p.x as usize, size - 1 - p.y as usize)
}

/// The point at protocol coordinates `(x, y)`, or `None` when off the board.
pub fn from_protocol(x: i64, y: i64, size: usize) -> Option<Point> {
    let s = size as i64;
    (0..s).contains(&x).then_some(())?;
    (0..s).contains(&y).then_some(())?;
    Some(Point::new(x as u8, (s - 1 - y) as u8))
}

/// A running engine process.
pub struct EngineAgent {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
    size: usize,
    rule: Rule,
    time: Duration,
    name: String,
}

impl EngineAgent {
    /// Starts `command` (program and arguments) for `size` x `size` games under `rule` with a
    /// per-move limit of `time`.
    pub fn spawn(command: &[String], size: usize, rule: Rule, time: Duration) -> Result<EngineAgent> {
        let (prog, args) = command.split_first().context("empty engine command")?;
        let mut child = Command::new(prog)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .with_context(|| format!("cannot start engine '{prog}'"))?;
        let stdin = child.stdin.take().context("engine stdin")?;
        let stdout = child.stdout.take().context("engine stdout")?;
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Ok(EngineAgent { child, stdin, lines: rx, size, rule, time, name: prog.clone() })
    }

    fn send(&mut self, text: &str) -> Result<()> {
        self.stdin
            .write_all(text.as_bytes())
            .and_then(|_| self.stdin.flush())
            .with_context(|| format!("engine {} closed its input", self.name))
    }

    /// Next meaningful line (informational lines skipped) within `wait`.
    fn answer(&mut self, wait: Duration) -> Result<String> {
        let deadline = Instant::now() + wait;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(l) => {
                    let t = l.trim();
                    let up = t.to_ascii_uppercase();
                    if t.is_empty() || ["MESSAGE", "DEBUG", "SUGGEST", "INFO", "UNKNOWN"].iter().any(|k| up.starts_with(k)) {
                        continue;
                    }
                    if up.starts_with("ERROR") {
                        bail!("engine {} answered '{t}'", self.name);
                    }
                    return Ok(t.to_string());
                }
                Err(RecvTimeoutError::Timeout) => bail!("engine {} did not answer within {:.1} s", self.name, wait.as_secs_f64()),
                Err(RecvTimeoutError::Disconnected) => bail!("engine {} exited", self.name),
            }
        }
    }

    fn wait_time(&self) -> Duration {
        self.time * 2 + Duration::from_secs(3)
    }
}

impl Agent for EngineAgent {
    fn new_game(&mut self, _seed: u64) -> Result<()> {
        self.send(&format!("START {}\n", self.size))?;
        let a = self.answer(Duration::from_secs(30))?;
        if !a.eq_ignore_ascii_case("OK") {
            bail!("engine {} answered '{a}' to START {}", self.name, self.size);
        }
        let info = format!(
            "INFO timeout_turn {}\nINFO timeout_match 0\nINFO rule {}\n",
            self.time.as_millis(),
            rule_bits(self.rule)
        );
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
                let (x, y) = to_protocol(p, self.size);
                s += &format!("{x},{y},{}\n", if c == me { 1 } else { 2 });
            }
            s + "DONE\n"
        };
        self.send(&cmd)?;
        let a = self.answer(self.wait_time())?;
        let parsed = a.split_once(',').and_then(|(x, y)| Some((x.trim().parse::<i64>().ok()?, y.trim().parse::<i64>().ok()?)));
        let Some((x, y)) = parsed else {
            bail!("engine {} answered '{a}' instead of a move x,y", self.name);
        };
        let p = from_protocol(x, y, self.size).with_context(|| format!("engine {} played {x},{y}, off the board", self.name))?;
        Ok(Choice { action: Action::Place(p), value: None, playouts: 0 })
    }
}

impl Drop for EngineAgent {
    fn drop(&mut self) {
        let _ = self.send("END\n");
        let deadline = Instant::now() + Duration::from_millis(500);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coordinates_flip_rows() {
        assert_eq!(to_protocol(Point::new(0, 0), 15), (0, 14));
        assert_eq!(to_protocol(Point::new(7, 7), 15), (7, 7));
        assert_eq!(from_protocol(0, 14, 15), Some(Point::new(0, 0)));
        assert_eq!(from_protocol(3, 0, 15), Some(Point::new(3, 14)));
        assert_eq!(from_protocol(15, 0, 15), None);
        assert_eq!(from_protocol(-1, 0, 15), None);
    }
}
