//! Whole searches over an evaluator ([`search_with`], [`search_until`]: gather a batch of leaves,
//! evaluate, deliver, until the budget is spent) and the move choice from the root's visit counts
//! ([`pick_by_visits`]).

use super::Mcts;
use rand::Rng;

/// The most playouts one [`Mcts::gather`] call of the drivers runs. A playout that ends at a
/// terminal or proven node is backed up inside the call without an evaluation, so where most of
/// them do (a board about to fill, a stone cap about to be reached: draws prove nothing), a call
/// bounded only by the remaining budget would run far past the deadline, and in
/// [`search_parallel`] hold the tree's lock from the other threads all that time. Between calls
/// the drivers check the deadline.
const GATHER_PLAYOUTS: usize = 1024;

/// Run a whole search on one tree with a synchronous evaluator call per batch: playouts until
/// the root has `visits` visits, leaves evaluated `batch` at a time by `eval`
/// (`planes, globals, n -> (logits, wdl)`). Used by tests, benches and single-game play.
pub fn search_with<R: Rng, F>(mcts: &mut Mcts, visits: u32, batch: usize, rng: &mut R, eval: F) -> anyhow::Result<()>
where
    F: FnMut(&[f32], &[f32], usize) -> anyhow::Result<crate::eval::EvalOutput>,
{
    search_until(mcts, visits, batch, None, rng, eval)
}

/// [`search_with`], stopping early (after the current batch) once `deadline` has passed, or
/// once the solver ([`crate::mcts::SearchConfig::solver`]) proved the root. A Gumbel search
/// ([`Mcts::start_gumbel`]) runs until its budget is spent (`visits` is ignored).
pub fn search_until<R: Rng, F>(
    mcts: &mut Mcts,
    visits: u32,
    batch: usize,
    deadline: Option<std::time::Instant>,
    rng: &mut R,
    mut eval: F,
) -> anyhow::Result<()>
where
    F: FnMut(&[f32], &[f32], usize) -> anyhow::Result<crate::eval::EvalOutput>,
{
    let mut planes = Vec::new();
    let mut globals = Vec::new();
    let mut stalls = 0;
    while mcts.search_remaining(visits) > 0 && mcts.root_proven().is_none() {
        if deadline.is_some_and(|d| std::time::Instant::now() >= d) {
            break;
        }
        planes.clear();
        globals.clear();
        let before = mcts.root_visits();
        let want = mcts.search_remaining(visits) as usize;
        let k = mcts.gather(batch.min(want).max(1), want.clamp(1, GATHER_PLAYOUTS), &mut planes, &mut globals);
        if k > 0 {
            let out = eval(&planes, &globals, k)?;
            mcts.deliver(&out.policy_logits, &out.wdl, rng);
        }
        if mcts.root_visits() == before {
            stalls += 1;
            anyhow::ensure!(stalls < 1000, "search made no progress (root visits stuck at {before})");
        } else {
            stalls = 0;
        }
    }
    Ok(())
}

/// The tree and what the threads of [`search_parallel`] share under its lock.
struct Shared<'a, R> {
    mcts: &'a mut Mcts,
    rng: &'a mut R,
    /// A thread's evaluation failed: the others stop.
    failed: bool,
    /// Consecutive gathers without progress while nothing was in flight.
    stalls: u32,
    /// The slowest evaluation so far: no batch starts unless it still fits before the deadline.
    slowest: std::time::Duration,
}

/// [`search_until`] with one thread per evaluator in `evals` (module docs of
/// [`crate::mcts`], "Threads"): playouts until the root has `visits` visits (leaves in flight
/// count towards it, so it ends exactly at the target), stopping early once the solver proved the
/// root or when a batch as slow as the slowest so far would no longer end before `deadline`. With one evaluator, or for a Gumbel
/// search (its phases need every evaluation back), it is [`search_until`] with `evals[0]`:
/// the same search, bit for bit. On an error the tree may keep virtual losses: drop it.
pub fn search_parallel<R, F>(
    mcts: &mut Mcts,
    visits: u32,
    batch: usize,
    deadline: Option<std::time::Instant>,
    rng: &mut R,
    evals: &mut [F],
) -> anyhow::Result<()>
where
    R: Rng + Send,
    F: FnMut(&[f32], &[f32], usize) -> anyhow::Result<crate::eval::EvalOutput> + Send,
{
    anyhow::ensure!(!evals.is_empty(), "search_parallel needs at least one evaluator");
    let gumbel = mcts.gumbel.is_some() || mcts.gumbel_wanted.is_some();
    if evals.len() == 1 || gumbel {
        return search_until(mcts, visits, batch, deadline, rng, &mut evals[0]);
    }
    let shared =
        std::sync::Mutex::new(Shared { mcts, rng, failed: false, stalls: 0, slowest: std::time::Duration::ZERO });
    let delivered = std::sync::Condvar::new();
    let results: Vec<anyhow::Result<()>> = std::thread::scope(|s| {
        let workers: Vec<_> = evals
            .iter_mut()
            .map(|eval| {
                let (shared, delivered) = (&shared, &delivered);
                s.spawn(move || {
                    let r = search_thread(shared, delivered, visits, batch, deadline, eval);
                    if let Ok(mut g) = shared.lock() {
                        // Failed, or done: either way a thread waiting for a delivery must look
                        // again.
                        g.failed |= r.is_err();
                        delivered.notify_all();
                    }
                    r
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| w.join().unwrap_or_else(|_| Err(anyhow::anyhow!("a search thread panicked"))))
            .collect()
    });
    results.into_iter().collect()
}

/// One thread of [`search_parallel`]: under the lock, deliver the last batch and gather the
/// next; evaluate without it, and set the priors and order of the leaves' children
/// ([`super::LeafBatch::prepare`]) without it too. A thread whose playouts all end at leaves in other threads'
/// batches waits for a delivery.
fn search_thread<R, F>(
    shared: &std::sync::Mutex<Shared<'_, R>>,
    delivered: &std::sync::Condvar,
    visits: u32,
    batch: usize,
    deadline: Option<std::time::Instant>,
    eval: &mut F,
) -> anyhow::Result<()>
where
    R: Rng + Send,
    F: FnMut(&[f32], &[f32], usize) -> anyhow::Result<crate::eval::EvalOutput> + Send,
{
    let lock = || shared.lock().map_err(|_| anyhow::anyhow!("a search thread panicked"));
    let mut planes = Vec::new();
    let mut globals = Vec::new();
    let mut held: Option<(super::LeafBatch, crate::eval::EvalOutput)> = None;
    let mut g = lock()?;
    loop {
        let sh = &mut *g;
        if let Some((b, out)) = held.take() {
            sh.mcts.deliver_batch(b, &out.policy_logits, &out.wdl, &mut *sh.rng);
            delivered.notify_all();
        }
        let late = deadline.is_some_and(|d| std::time::Instant::now() + sh.slowest >= d);
        if sh.failed || sh.mcts.root_proven().is_some() || late {
            return Ok(());
        }
        let want = (sh.mcts.search_remaining(visits) as usize).saturating_sub(sh.mcts.in_flight);
        if want == 0 {
            return Ok(());
        }
        planes.clear();
        globals.clear();
        let before = sh.mcts.root_visits();
        let k = sh.mcts.gather(batch.min(want).max(1), want.min(GATHER_PLAYOUTS), &mut planes, &mut globals);
        if k == 0 {
            if sh.mcts.in_flight > 0 {
                // Every leaf reached is in another thread's batch: wait for a delivery.
                g = delivered.wait(g).map_err(|_| anyhow::anyhow!("a search thread panicked"))?;
            } else if sh.mcts.root_visits() == before {
                sh.stalls += 1;
                anyhow::ensure!(sh.stalls < 1000, "search made no progress (root visits stuck at {before})");
            }
            continue;
        }
        sh.stalls = 0;
        let mut b = sh.mcts.take_batch();
        drop(g);
        let t = std::time::Instant::now();
        let out = eval(&planes, &globals, k)?;
        b.prepare(&out.policy_logits);
        let took = t.elapsed();
        held = Some((b, out));
        g = lock()?;
        g.slowest = g.slowest.max(took);
    }
}

/// Picks a root action from `(action index, visits, prior)` children (as
/// [`Mcts::root_children`] gives them), the one move-choice rule of self-play and the arena:
/// with `temperature` below 0.01, or no visits at all, the most visited child (ties: the higher
/// prior, then the later child); otherwise a child sampled in proportion to `N^(1/T)` (AlphaZero's
/// move temperature). `None` when there are no children.
pub fn pick_by_visits<R: Rng>(children: &[(usize, u32, f32)], temperature: f32, rng: &mut R) -> Option<usize> {
    let best = children
        .iter()
        .max_by(|a, b| a.1.cmp(&b.1).then(a.2.partial_cmp(&b.2).unwrap_or(std::cmp::Ordering::Equal)))?;
    if temperature < 0.01 || best.1 == 0 {
        return Some(best.0);
    }
    let mx = best.1 as f64;
    let w: Vec<f64> = children.iter().map(|c| (c.1 as f64 / mx).powf(1.0 / temperature as f64)).collect();
    let total: f64 = w.iter().sum();
    let mut r = rng.gen::<f64>() * total;
    for (c, wi) in children.iter().zip(&w) {
        if r < *wi {
            return Some(c.0);
        }
        r -= wi;
    }
    Some(best.0)
}

/// The visits a root child needs, as a share of the most visited child's, to be chosen by
/// [`pick_by_lcb`] (Leela Zero's `lcb_min_visit_ratio`).
pub const LCB_MIN_VISIT_SHARE: f64 = 0.1;

/// Picks a root action by the lower confidence bound of its value: from `(action index, visits,
/// Q)` children (as [`Mcts::root_child_values`] gives them, Q from the chooser's view), the child
/// with the largest `Q - z * sqrt((1 - Q^2) / N)` among those with at least
/// [`LCB_MIN_VISIT_SHARE`] of the most visited child's visits. `1 - Q^2` is the largest variance
/// a value in [-1, 1] with mean Q can have (that of results that are only wins and losses), so
/// it bounds the spread of the backed-up values (nodes keep no variance); a proven child (Q
/// exactly +-1) has none. Ties go to the more visited child. `z` = 0 picks the best Q among the
/// well-visited children; a large `z` (almost always) the most visited. `None` when no child has
/// a visit.
pub fn pick_by_lcb(children: &[(usize, u32, f32)], z: f32) -> Option<usize> {
    let most = children.iter().map(|c| c.1).max().filter(|&n| n > 0)?;
    let floor = (most as f64 * LCB_MIN_VISIT_SHARE).max(1.0);
    let lcb = |&(_, n, q): &(usize, u32, f32)| lower_confidence_bound(q, n, z);
    children
        .iter()
        .filter(|c| c.1 as f64 >= floor)
        .max_by(|a, b| lcb(a).partial_cmp(&lcb(b)).unwrap_or(std::cmp::Ordering::Equal).then(a.1.cmp(&b.1)))
        .map(|c| c.0)
}

/// The lower confidence bound [`pick_by_lcb`] ranks by: `Q - z * sqrt((1 - Q^2) / N)` for a child
/// of `visits` N > 0 and value Q in [-1, 1] (minus infinity at no visits).
pub fn lower_confidence_bound(q: f32, visits: u32, z: f32) -> f64 {
    if visits == 0 {
        return f64::NEG_INFINITY;
    }
    let q = q as f64;
    q - z as f64 * ((1.0 - q * q).max(0.0) / visits as f64).sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn pick_by_visits_argmax_ties_and_temperature() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        assert_eq!(pick_by_visits(&[], 1.0, &mut rng), None);
        // Most visited; equal visits go to the higher prior.
        let ch = [(3, 10, 0.1), (5, 12, 0.2), (7, 12, 0.5), (9, 0, 0.9)];
        assert_eq!(pick_by_visits(&ch, 0.0, &mut rng), Some(7));
        // No visits at all: the highest prior.
        assert_eq!(pick_by_visits(&[(1, 0, 0.2), (2, 0, 0.7)], 1.0, &mut rng), Some(2));
        // Temperature 1 samples in proportion to the visits: unvisited children never.
        let mut counts = [0usize; 10];
        for _ in 0..2000 {
            counts[pick_by_visits(&ch, 1.0, &mut rng).unwrap()] += 1;
        }
        assert_eq!(counts[9], 0);
        let share = counts[3] as f64 / 2000.0;
        assert!((share - 10.0 / 34.0).abs() < 0.04, "{counts:?}");
    }

    #[test]
    fn pick_by_lcb_weighs_the_value_against_its_uncertainty() {
        assert_eq!(pick_by_lcb(&[], 1.0), None);
        assert_eq!(pick_by_lcb(&[(1, 0, 0.0), (2, 0, 0.5)], 1.0), None);
        // Bounds at z = 1, 2, 3: 1000 visits at Q 0.20: 0.169, 0.138, 0.107; 400 at 0.25:
        // 0.202, 0.153, 0.105; 100 at 0.30: 0.205, 0.109, 0.014.
        let ch = [(3, 1000, 0.20), (5, 400, 0.25), (7, 100, 0.30)];
        for (q, n, z, bound) in [(0.20, 1000, 1.0, 0.169), (0.25, 400, 2.0, 0.153), (0.30, 100, 3.0, 0.014)] {
            assert!((lower_confidence_bound(q, n, z) - bound).abs() < 0.0005, "{q} {n} {z}");
        }
        assert_eq!(lower_confidence_bound(1.0, 5, 2.0), 1.0);
        assert_eq!(lower_confidence_bound(0.5, 0, 2.0), f64::NEG_INFINITY);
        assert_eq!(pick_by_lcb(&ch, 1.0), Some(7));
        assert_eq!(pick_by_lcb(&ch, 2.0), Some(5));
        assert_eq!(pick_by_lcb(&ch, 3.0), Some(3));
        // z = 0: the best Q among the well-visited; 99 visits are under a tenth of 1000.
        assert_eq!(pick_by_lcb(&[(3, 1000, 0.2), (7, 99, 0.9)], 0.0), Some(3));
        assert_eq!(pick_by_lcb(&[(3, 1000, 0.2), (7, 100, 0.9)], 0.0), Some(7));
        // A large z: the most visited.
        assert_eq!(pick_by_lcb(&ch, 100.0), Some(3));
        // A proven win (Q = 1) has no spread; equal bounds go to the more visited.
        assert_eq!(pick_by_lcb(&[(3, 1000, 0.99), (7, 150, 1.0)], 2.0), Some(7));
        assert_eq!(pick_by_lcb(&[(3, 300, 0.5), (7, 500, 0.5)], 1.0), Some(7));
    }
}
