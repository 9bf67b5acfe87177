//! Playouts per second of the brain's search ([`MctsAgent`], the driver of the Gomocup brain) at
//! several thread counts, with the heuristic evaluator and the line-pattern table evaluator
//! (random weights of the `quick` preset's shape: F = 32), on 15x15 renju midgames at a fixed
//! time per move, a fresh tree per move. It also prints the share of a one-thread search spent
//! inside the evaluator (the part that runs in parallel; the tree work is serial).
//!
//! ```sh
//! cargo run --release -p renju-arena --example search_threads -- --time 1 --positions 4 --threads 1,2 --repeat 3
//! ```
//!
//! `--batch N` sets the leaves a thread gathers per batch (the brain's default otherwise).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use renju_arena::agent::{Agent, MctsAgent, SearchLimit, SearchSettings};
use renju_rules::{Action, Game, Point, Protocol, Rule};
use renju_selfplay::eval::{EvalOutput, Evaluator, HeuristicEvaluator};
use renju_selfplay::linepattern::table::random_weights;
use renju_selfplay::linepattern::LinePatternNet;
use renju_selfplay::mcts::{search_with, Mcts, SearchConfig};

/// Makes one evaluator (one per search thread).
type Maker = Box<dyn Fn() -> Box<dyn Evaluator>>;

/// An evaluator that adds the time spent in it to a shared counter (nanoseconds).
struct Timed {
    inner: Box<dyn Evaluator>,
    spent: Arc<AtomicU64>,
}

impl Evaluator for Timed {
    fn evaluate(&mut self, planes: &[f32], globals: &[f32], n: usize) -> Result<EvalOutput> {
        let t = Instant::now();
        let out = self.inner.evaluate(planes, globals, n);
        self.spent.fetch_add(t.elapsed().as_nanos() as u64, Ordering::Relaxed);
        out
    }
    fn board_size(&self) -> usize {
        self.inner.board_size()
    }
}

/// Midgames: 16 stones played at random near the centre (seeded), renju, where neither side has
/// a four (the search is not forced).
fn midgames(n: usize) -> Result<Vec<Game>> {
    let mut out = Vec::new();
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    while out.len() < n {
        let mut g = Game::new(15, Rule::Renju, Protocol::Free { centre: true }, None).unwrap();
        g.apply(Action::Place(Point::new(7, 7))).unwrap();
        while g.board().stone_count() < 16 && !g.is_over() {
            let legal: Vec<Action> = g
                .legal_actions()
                .into_iter()
                .filter(|a| matches!(a, Action::Place(p) if (p.x as i32 - 7).abs() <= 4 && (p.y as i32 - 7).abs() <= 4))
                .collect();
            if legal.is_empty() {
                break;
            }
            g.apply(legal[rng.gen_range(0..legal.len())]).unwrap();
        }
        if g.is_over() || g.board().stone_count() != 16 {
            continue;
        }
        // A five point of either side makes the root's children the five points alone.
        let mut m = Mcts::new(&g, SearchConfig::default());
        let mut ev = HeuristicEvaluator::new(15);
        search_with(&mut m, 1, 1, &mut rng, |p, gl, n| ev.evaluate(p, gl, n))?;
        if m.root_children().len() > 2 {
            out.push(g);
        }
    }
    Ok(out)
}

/// `(playouts per second, share of the time in the evaluator)` of one pass over `games`.
fn measure(
    games: &[Game],
    threads: usize,
    time: Duration,
    batch: usize,
    make: &dyn Fn() -> Box<dyn Evaluator>,
) -> Result<(f64, f64)> {
    let spent = Arc::new(AtomicU64::new(0));
    let evals: Vec<Box<dyn Evaluator>> =
        (0..threads).map(|_| Box::new(Timed { inner: make(), spent: spent.clone() }) as Box<dyn Evaluator>).collect();
    let settings = SearchSettings { threads, batch, ..SearchSettings::default() };
    let mut agent = MctsAgent::with_evaluators(evals, settings);
    let limit = SearchLimit { playouts: None, time: Some(time) };
    let (mut playouts, mut elapsed) = (0u64, Duration::ZERO);
    for g in games {
        agent.forget();
        let t = Instant::now();
        let c = agent.choose_within(g, &limit)?;
        elapsed += t.elapsed();
        playouts += c.playouts;
    }
    let secs = elapsed.as_secs_f64();
    Ok((playouts as f64 / secs, spent.load(Ordering::Relaxed) as f64 * 1e-9 / (secs * threads as f64)))
}

fn main() -> Result<()> {
    let (mut time, mut positions, mut repeat) = (1.0f64, 4usize, 3usize);
    let mut batch = SearchSettings::default().batch;
    let mut thread_counts = vec![1usize, 2];
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut it = args.iter();
    while let Some(k) = it.next() {
        let v = it.next().with_context(|| format!("{k} needs a value"))?;
        match k.as_str() {
            "--time" => time = v.parse().with_context(|| format!("--time {v}"))?,
            "--positions" => positions = v.parse().with_context(|| format!("--positions {v}"))?,
            "--repeat" => repeat = v.parse().with_context(|| format!("--repeat {v}"))?,
            "--batch" => batch = v.parse().with_context(|| format!("--batch {v}"))?,
            "--threads" => {
                thread_counts = v
                    .split(',')
                    .map(|t| t.trim().parse())
                    .collect::<Result<_, _>>()
                    .with_context(|| format!("--threads {v}"))?
            }
            other => bail!(
                "unknown option {other} (--time SECONDS, --positions N, --repeat N, --batch N, --threads 1,2,...)"
            ),
        }
    }
    anyhow::ensure!(time > 0.0 && time.is_finite(), "--time {time} must be a positive number of seconds");
    anyhow::ensure!(thread_counts.iter().all(|&t| t >= 1), "--threads: every count must be at least 1");
    anyhow::ensure!(batch >= 1, "--batch {batch} must be at least 1");
    let time = Duration::from_secs_f64(time);
    let games = midgames(positions.max(1))?;
    let net = LinePatternNet::new(random_weights(15, 32, 32, 1))?;
    let makers: Vec<(&str, Maker)> = vec![
        ("heuristic", Box::new(|| Box::new(HeuristicEvaluator::new(15)) as Box<dyn Evaluator>)),
        ("line-pattern table (F = 32)", Box::new(move || Box::new(net.evaluator()) as Box<dyn Evaluator>)),
    ];
    for (name, make) in &makers {
        let mut one = 0.0f64;
        for &threads in &thread_counts {
            // Alternating runs would mix loads; the best of `repeat` passes is the machine's
            // speed with the least interference from other processes.
            let mut runs = Vec::new();
            for _ in 0..repeat.max(1) {
                runs.push(measure(&games, threads, time, batch, make.as_ref())?);
            }
            let best = runs.iter().cloned().fold((0.0, 0.0), |b, r| if r.0 > b.0 { r } else { b });
            if threads == 1 {
                one = best.0;
            }
            let all: Vec<String> = runs.iter().map(|r| format!("{:.0}", r.0)).collect();
            println!(
                "{name}: {threads} thread(s): {:.0} playouts/s (best of [{}]), {:.0}% of thread time in the evaluator{}",
                best.0,
                all.join(", "),
                100.0 * best.1,
                if threads > 1 && one > 0.0 { format!(", {:.2}x one thread", best.0 / one) } else { String::new() }
            );
        }
    }
    Ok(())
}
