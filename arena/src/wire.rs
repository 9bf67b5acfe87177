//! The Gomocup (Piskvork) wire format, shared by the brain ([`crate::gomocup`]), the
//! external-engine client ([`crate::engine`]) and test harnesses (P. Laštovička, M. Petříček,
//! "Gomoku AI protocol", <https://plastovicka.github.io/protocl2en.htm>).
//!
//! - Coordinates: `x,y`, 0-based, `x` the column from the left and `y` the row from the **top**,
//!   so protocol `y` = `size - 1 - Point::y` (the rules crate counts rows from the bottom).
//! - `INFO rule`: a bitmask; 1 = exactly five (our `standard`), 4 = renju, 8 = caro (not
//!   supported); 0 = freestyle.
//! - Informational lines (`MESSAGE ...`, `DEBUG ...`) may come at any time and carry no answer;
//!   [`EngineProcess::next_line`] skips them.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::time::Duration;

use anyhow::{bail, Context, Result};
use renju_rules::{Point, Rule};

/// The `INFO rule` bit of renju.
pub const RULE_BIT_RENJU: u64 = 4;
/// The `INFO rule` bit of exactly five (the `standard` rule).
pub const RULE_BIT_EXACT_FIVE: u64 = 1;
/// The `INFO rule` bit of caro (not supported).
pub const RULE_BIT_CARO: u64 = 8;

/// The `INFO rule` bitmask for a rule: 4 renju, 1 exactly five, 0 freestyle.
pub fn rule_bits(rule: Rule) -> u64 {
    match rule {
        Rule::Renju => RULE_BIT_RENJU,
        Rule::Standard => RULE_BIT_EXACT_FIVE,
        Rule::Freestyle => 0,
    }
}

/// The rule an `INFO rule` bitmask asks for: renju when bit 4 is set, else standard when bit 1
/// is, else freestyle. Other bits (caro, 8) are ignored; the caller may report them.
pub fn rule_from_bits(bits: u64) -> Rule {
    if bits & RULE_BIT_RENJU != 0 {
        Rule::Renju
    } else if bits & RULE_BIT_EXACT_FIVE != 0 {
        Rule::Standard
    } else {
        Rule::Freestyle
    }
}

/// Protocol coordinates `(x, y)` (top-left origin) of a point on a board of side `size`.
pub fn to_wire(p: Point, size: usize) -> (usize, usize) {
    (p.x as usize, size - 1 - p.y as usize)
}

/// The point at protocol coordinates `(x, y)`, or `None` when off the board of side `size`.
pub fn from_wire(x: i64, y: i64, size: usize) -> Option<Point> {
    let s = size as i64;
    (0..s).contains(&x).then_some(())?;
    (0..s).contains(&y).then_some(())?;
    Some(Point::new(x as u8, (s - 1 - y) as u8))
}

/// `x,y` in protocol coordinates.
pub fn format_point(p: Point, size: usize) -> String {
    let (x, y) = to_wire(p, size);
    format!("{x},{y}")
}

/// The two integers of `x,y` (spaces around either allowed). Says nothing about the board: see
/// [`from_wire`]. Errors name the part that is wrong.
pub fn parse_xy(text: &str) -> Result<(i64, i64)> {
    let (x, y) = text.split_once(',').with_context(|| format!("expected x,y, got '{text}'"))?;
    let x: i64 = x.trim().parse().map_err(|_| anyhow::anyhow!("x '{}' is not a number in '{text}'", x.trim()))?;
    let y: i64 = y.trim().parse().map_err(|_| anyhow::anyhow!("y '{}' is not a number in '{text}'", y.trim()))?;
    Ok((x, y))
}

/// Whether `line` is informational (`MESSAGE`, `DEBUG`; case-insensitive) or blank: a line that
/// may come at any time and is no answer.
pub fn is_informational(line: &str) -> bool {
    let up = line.trim().to_ascii_uppercase();
    up.is_empty() || up.starts_with("MESSAGE") || up.starts_with("DEBUG")
}

/// A program speaking the protocol on its stdin/stdout, read line by line on a thread of its
/// own so every read can time out.
pub struct EngineProcess {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
    name: String,
}

impl EngineProcess {
    /// Starts `command` (program and arguments) with piped stdin/stdout and `stderr` as given.
    /// Errors: an empty command, or a program that cannot be started (named).
    pub fn spawn(command: &[String], stderr: Stdio) -> Result<EngineProcess> {
        let (prog, args) = command.split_first().context("empty engine command")?;
        let mut child = Command::new(prog)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr)
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
        Ok(EngineProcess { child, stdin, lines: rx, name: prog.clone() })
    }

    /// The program's name (for messages).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Writes `text` as given (include the newlines) and flushes.
    pub fn send(&mut self, text: &str) -> Result<()> {
        self.stdin
            .write_all(text.as_bytes())
            .and_then(|_| self.stdin.flush())
            .with_context(|| format!("engine {} closed its input", self.name))
    }

    /// The next line that is not [informational](is_informational), trimmed, within `wait`.
    /// Errors: no such line in time, or the program closed its output.
    pub fn next_line(&mut self, wait: Duration) -> Result<String> {
        self.next_line_except(wait, |_| false)
    }

    /// As [`Self::next_line`], also skipping the lines for which `skip` (given the trimmed line)
    /// holds.
    pub fn next_line_except(&mut self, wait: Duration, skip: impl Fn(&str) -> bool) -> Result<String> {
        let deadline = std::time::Instant::now() + wait;
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(l) if is_informational(&l) || skip(l.trim()) => continue,
                Ok(l) => return Ok(l.trim().to_string()),
                Err(RecvTimeoutError::Timeout) => {
                    bail!("engine {} did not answer within {:.1} s", self.name, wait.as_secs_f64())
                }
                Err(RecvTimeoutError::Disconnected) => bail!("engine {} exited", self.name),
            }
        }
    }

    /// Discards the lines that have arrived and not been read (returns how many): output that
    /// answers nothing the caller asked, e.g. errors about lines the program took for commands.
    pub fn discard_pending(&mut self) -> usize {
        let mut n = 0;
        while self.lines.try_recv().is_ok() {
            n += 1;
        }
        n
    }

    /// Waits for the program to exit (after `END`).
    pub fn wait(&mut self) -> Result<ExitStatus> {
        self.child.wait().with_context(|| format!("waiting for engine {}", self.name))
    }

    /// Sends `END`, gives the program `grace` to exit, then kills it.
    pub fn end(&mut self, grace: Duration) {
        let _ = self.send("END\n");
        let deadline = std::time::Instant::now() + grace;
        while std::time::Instant::now() < deadline {
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
        assert_eq!(to_wire(Point::new(0, 0), 15), (0, 14));
        assert_eq!(to_wire(Point::new(7, 7), 15), (7, 7));
        assert_eq!(from_wire(0, 14, 15), Some(Point::new(0, 0)));
        assert_eq!(from_wire(3, 0, 15), Some(Point::new(3, 14)));
        assert_eq!(from_wire(15, 0, 15), None);
        assert_eq!(from_wire(-1, 0, 15), None);
        assert_eq!(format_point(Point::new(3, 14), 15), "3,0");
        assert_eq!(parse_xy(" 3, 0").unwrap(), (3, 0));
        assert!(parse_xy("3;0").unwrap_err().to_string().contains("expected x,y"));
        assert!(parse_xy("3,b").unwrap_err().to_string().contains("y 'b'"));
    }

    #[test]
    fn rule_bits_round_trip() {
        for rule in [Rule::Renju, Rule::Standard, Rule::Freestyle] {
            assert_eq!(rule_from_bits(rule_bits(rule)), rule);
        }
        assert_eq!(rule_from_bits(5), Rule::Renju, "renju wins over exactly five");
        assert_eq!(rule_from_bits(8), Rule::Freestyle, "caro alone is not supported");
    }

    #[test]
    fn informational_lines() {
        assert!(is_informational("MESSAGE hello"));
        assert!(is_informational("debug x"));
        assert!(is_informational("  "));
        assert!(!is_informational("7,7"));
        assert!(!is_informational("ERROR bad"));
    }
}
