//! An external engine as an arena player, driven through the Gomocup (Piskvork) protocol
//! (P. Laštovička, M. Petříček, "Gomoku AI protocol", <https://plastovicka.github.io/protocl2en.htm>).
//!
//! Per game the engine gets `START size`, then `INFO timeout_turn`, `INFO timeout_match 0`,
//! `INFO rule` (1 = exactly five, 4 = renju, 0 = freestyle); per move `BEGIN` on an empty board,
//! otherwise the whole position as `BOARD` … `DONE` (stones in move order, field 1 = the
//! engine's own, 2 = the opponent's). The answer is the first line of the form `x,y`;
//! `MESSAGE`, `DEBUG` and other informational lines are skipped. Coordinates and the rule bitmask
//! are [`crate::wire`]'s.
//!
//! An engine only places stones: a game with protocol decisions (swap, offers, ...) must start
//! after them (the arena's `rif26` openings do). Running out of `2 * time + 3 s` for an answer,
//! `ERROR`, or an unparsable answer is an error (the arena scores it as a loss).

use std::process::Stdio;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use renju_rules::{Action, DecisionKind, Game, Rule};

use crate::agent::{Agent, Choice};
use crate::wire::{from_wire, parse_xy, rule_bits, to_wire, EngineProcess};

/// A running engine process.
pub struct EngineAgent {
    process: EngineProcess,
    size: usize,
    rule: Rule,
    time: Duration,
    name: String,
}

impl EngineAgent {
    /// Starts `command` (program and arguments) for `size` x `size` games under `rule` with a
    /// per-move limit of `time`.
    pub fn spawn(command: &[String], size: usize, rule: Rule, time: Duration) -> Result<EngineAgent> {
        let process = EngineProcess::spawn(command, Stdio::null())?;
        let name = process.name().to_string();
        Ok(EngineAgent { process, size, rule, time, name })
    }

    fn send(&mut self, text: &str) -> Result<()> {
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
        if t.to_ascii_uppercase().starts_with("ERROR") {
            bail!("engine {} answered '{t}'", self.name);
        }
        Ok(t)
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
                let (x, y) = to_wire(p, self.size);
                s += &format!("{x},{y},{}\n", if c == me { 1 } else { 2 });
            }
            s + "DONE\n"
        };
        self.send(&cmd)?;
        let a = self.answer(self.wait_time())?;
        let Ok((x, y)) = parse_xy(&a) else {
            bail!("engine {} answered '{a}' instead of a move x,y", self.name);
        };
        let p = from_wire(x, y, self.size)
            .with_context(|| format!("engine {} played {x},{y}, off the board", self.name))?;
        Ok(Choice { action: Action::Place(p), value: None, playouts: 0 })
    }
}

impl Drop for EngineAgent {
    fn drop(&mut self) {
        self.process.end(Duration::from_millis(500));
    }
}
