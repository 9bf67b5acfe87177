//! Playouts per move of the Gomocup brain at a fixed time per move, with and without tree
//! reuse: two brains with the heuristic evaluator play each other through the protocol from the
//! canonical renju openings, and every move's `MESSAGE playouts N reused R` is tallied.
//!
//! ```sh
//! cargo run --release -p renju-arena --example brain_playouts -- --time 0.2 --games 4 --moves 30
//! ```
//!
//! `--time` seconds per move, `--games` openings (each played once with and once without
//! reuse, alternating), `--moves` moves per brain and game at most.

use std::time::Duration;

use anyhow::{bail, Context, Result};
use renju_arena::agent::{Agent, MctsAgent, SearchSettings};
use renju_arena::gomocup::{Brain, BrainOptions};
use renju_arena::wire::format_point;
use renju_rules::Opening;
use renju_selfplay::eval::{no_models, EvaluatorSpec};

fn brain(time: Duration, reuse_tree: bool) -> Brain {
    let factory = Box::new(move |size: usize| -> Result<Box<dyn Agent>> {
        let eval = EvaluatorSpec::parse("heuristic")?.build(size, &no_models)?;
        Ok(Box::new(MctsAgent::new(eval, SearchSettings { reuse_tree, ..SearchSettings::default() })))
    });
    Brain::new(factory, BrainOptions { default_turn: time, ..BrainOptions::default() })
}

fn send(b: &mut Brain, script: &str) -> Vec<String> {
    let mut lines = script.lines().map(String::from).collect::<Vec<_>>().into_iter();
    let mut out = Vec::new();
    while let Some(l) = lines.next() {
        out.extend(b.handle(&l, &mut lines));
    }
    out
}

/// Per searched move: `(playouts, reused)`.
#[derive(Default)]
struct Tally {
    moves: Vec<(u64, u64)>,
}

impl Tally {
    /// The move of an answer (`None` when the game is over or the answer is an error), tallying
    /// its search.
    fn record(&mut self, out: &[String]) -> Option<String> {
        for l in out {
            if let Some(rest) = l.strip_prefix("MESSAGE playouts ") {
                let w: Vec<&str> = rest.split(' ').collect();
                if let (Some(p), Some(r)) = (w.first(), w.get(2)) {
                    if let (Ok(p), Ok(r)) = (p.parse(), r.parse()) {
                        if p > 0 {
                            self.moves.push((p, r));
                        }
                    }
                }
            }
        }
        out.last().filter(|l| !l.starts_with("ERROR") && !l.starts_with("MESSAGE")).cloned()
    }

    fn report(&self, what: &str) {
        let n = self.moves.len().max(1) as f64;
        let median = |f: &dyn Fn(&(u64, u64)) -> u64| {
            let mut v: Vec<u64> = self.moves.iter().map(f).collect();
            v.sort();
            v.get(v.len() / 2).copied().unwrap_or(0)
        };
        let mean = |f: &dyn Fn(&(u64, u64)) -> u64| self.moves.iter().map(f).sum::<u64>() as f64 / n;
        println!(
            "{what}: {} searched moves; playouts per move median {} (mean {:.0}); reused visits median {} (mean \
             {:.0}); root visits at the decision median {} (mean {:.0})",
            self.moves.len(),
            median(&|m| m.0),
            mean(&|m| m.0),
            median(&|m| m.1),
            mean(&|m| m.1),
            median(&|m| m.0 + m.1),
            mean(&|m| m.0 + m.1),
        );
    }
}

/// One game from `opening` between two brains of the same setting, `moves` moves each at most.
fn game(time: Duration, reuse: bool, opening: Opening, moves: usize, tally: &mut Tally) -> Result<()> {
    let size = 15;
    let (mut a, mut b) = (brain(time, reuse), brain(time, reuse));
    for br in [&mut a, &mut b] {
        send(br, "START 15\nINFO rule 4\n");
    }
    let [b1, w2, b3] = opening.stones(size);
    let f = |p| format_point(p, size);
    // A plays White's fourth stone, B Black's fifth; then TURNs.
    let out = send(&mut a, &format!("BOARD\n{},1\n{},2\n{},2\nDONE", f(w2), f(b1), f(b3)));
    let mut last = tally.record(&out).context("A's first move")?;
    let out = send(&mut b, &format!("BOARD\n{},1\n{},2\n{},1\n{last},2\nDONE", f(b1), f(w2), f(b3)));
    last = tally.record(&out).context("B's first move")?;
    for _ in 1..moves {
        let Some(m) = tally.record(&send(&mut a, &format!("TURN {last}"))) else { break };
        let Some(m) = tally.record(&send(&mut b, &format!("TURN {m}"))) else { break };
        last = m;
    }
    Ok(())
}

fn main() -> Result<()> {
    let (mut time, mut games, mut moves) = (0.2f64, 4usize, 30usize);
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut it = args.iter();
    while let Some(k) = it.next() {
        let v = it.next().with_context(|| format!("{k} needs a value"))?;
        match k.as_str() {
            "--time" => time = v.parse().with_context(|| format!("--time {v}"))?,
            "--games" => games = v.parse().with_context(|| format!("--games {v}"))?,
            "--moves" => moves = v.parse().with_context(|| format!("--moves {v}"))?,
            other => bail!("unknown option {other} (--time SECONDS, --games N, --moves N)"),
        }
    }
    anyhow::ensure!(time > 0.0 && time.is_finite(), "--time {time} must be a positive number of seconds");
    let time = Duration::from_secs_f64(time);
    let (mut with, mut without) = (Tally::default(), Tally::default());
    for (k, &o) in Opening::all().iter().cycle().take(games).enumerate() {
        // Alternate which setting plays first, so machine load falls on both alike.
        for reuse in if k % 2 == 0 { [true, false] } else { [false, true] } {
            game(time, reuse, o, moves, if reuse { &mut with } else { &mut without })?;
        }
    }
    with.report("with tree reuse");
    without.report("without tree reuse");
    Ok(())
}
