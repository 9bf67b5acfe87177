//! How far below the root the search's evaluated leaves lie, at self-play's and the brain's
//! budgets, with the shipped model: the number of stones an evaluator kept incrementally from the
//! root's position would have to add for each leaf (an NNUE-style accumulator updated along the
//! descent instead of the line patterns summed afresh per leaf).
//!
//! Positions: `--games` games from a centre stone (free renju, 15x15) played by the shipped
//! model with 128-playout searches, the first 8 moves sampled in proportion to the visits, then
//! the most visited; every position before the end. Each position is searched afresh with the
//! default search settings and 8 leaves a batch at every budget of `--playouts`.
//!
//! ```sh
//! cargo run --release -p renju-selfplay --example leaf_depth -- --games 8 --playouts 32,128,13000
//! ```

use anyhow::{bail, Context, Result};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use renju_rules::{Action, Game, Point, Protocol, Rule};
use renju_selfplay::action::action_from_index;
use renju_selfplay::eval::Evaluator;
use renju_selfplay::linepattern::shipped::shipped_net;
use renju_selfplay::mcts::{pick_by_visits, search_with, Mcts, SearchConfig};

fn main() -> Result<()> {
    let (mut games, mut budgets) = (8usize, vec![32u32, 128, 13_000]);
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut it = args.iter();
    while let Some(k) = it.next() {
        let v = it.next().with_context(|| format!("{k} needs a value"))?;
        match k.as_str() {
            "--games" => games = v.parse().with_context(|| format!("--games {v}"))?,
            "--playouts" => {
                budgets = v
                    .split(',')
                    .map(|t| t.trim().parse())
                    .collect::<Result<_, _>>()
                    .with_context(|| format!("--playouts {v}"))?
            }
            other => bail!("unknown option {other} (--games N, --playouts 32,128,...)"),
        }
    }
    anyhow::ensure!(budgets.iter().all(|&b| b >= 1), "--playouts: every budget must be at least 1");
    let net = shipped_net()?;
    let mut eval = net.evaluator();
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let mut positions = Vec::new();
    for _ in 0..games {
        let mut g = Game::new(15, Rule::Renju, Protocol::Free { centre: true }, None)?;
        g.apply(Action::Place(Point::new(7, 7)))?;
        while !g.is_over() {
            positions.push(g.clone());
            let mut m = Mcts::new(&g, SearchConfig::default());
            search_with(&mut m, 128, 8, &mut rng, |p, gl, n| eval.evaluate(p, gl, n))?;
            let temperature = if g.history().len() < 8 { 1.0 } else { 0.0 };
            let pick = pick_by_visits(&m.root_children(), temperature, &mut rng).context("no root child")?;
            let action = action_from_index(pick, 15).context("not an action")?;
            g.apply(action)?;
        }
    }
    println!("{} positions from {games} games", positions.len());
    for &budget in &budgets {
        let (mut leaves, mut depth) = (0u64, 0u64);
        for g in &positions {
            let mut m = Mcts::new(g, SearchConfig::default());
            search_with(&mut m, budget, 8, &mut rng, |p, gl, n| eval.evaluate(p, gl, n))?;
            let st = m.take_stats();
            leaves += st.evaluations;
            depth += st.leaf_depth;
        }
        println!(
            "{budget} playouts: {leaves} leaves evaluated, mean depth below the root {:.2}",
            depth as f64 / leaves.max(1) as f64
        );
    }
    Ok(())
}
