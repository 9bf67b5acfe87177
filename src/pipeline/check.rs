//! `renju-zero check-run`: the invariants a run directory keeps through any number of kills and
//! restarts (issue 13 §3), checked from the files alone. Used by `scripts/soak.sh` after its kill
//! loop and by the suite's shorter fault-injection test.
//!
//! Invariants: the published generations are `0..=n`, each once; every one loads (weights and
//! config through [`load_model`], the TorchScript file through `CModule::load`); `models/LATEST`
//! names generation `n`; every `selfplay/*.npz` reads (refused ones sit in `selfplay/rejected/`);
//! the trainer step never goes back (session start steps in `train.log` do not decrease, and each
//! generation was trained for more steps than the one before); `generations.jsonl` names
//! generations `1..=n` once each, in order.

use anyhow::{Context, Result};
use renju_selfplay::record::read_shard;
use renju_trainer::model::{list_generations, load_model, LATEST_FILE, TORCHSCRIPT_FILE};
use renju_trainer::RunDir;

/// What [`check_run`] found: counts, and every broken invariant as a sentence.
#[derive(Debug, Default)]
pub struct RunCheck {
    /// Published generations (`n + 1` when they are `0..=n`).
    pub generations: usize,
    /// Shards in `selfplay/` that read.
    pub shards: usize,
    /// Shards in `selfplay/rejected/`.
    pub rejected_shards: usize,
    /// Trainer sessions recorded in `train.log` (`trainer at step ...` lines).
    pub sessions: usize,
    /// Partial files (`*.tmp`, `.tmp-*`) still present; the next trainer start removes them.
    pub partial_files: usize,
    /// Broken invariants; empty when the run is consistent.
    pub problems: Vec<String>,
}

/// Checks the run directory `run` (read-only). Errors only when a directory cannot be listed;
/// broken invariants are reported in [`RunCheck::problems`].
pub fn check_run(run: &RunDir) -> Result<RunCheck> {
    let mut c = RunCheck::default();
    let gens = list_generations(&run.models())?;
    c.generations = gens.len();
    let expected: Vec<u64> = (0..gens.len() as u64).collect();
    if gens != expected {
        c.problems.push(format!("generations are not 0..={}, once each: {gens:?}", gens.len().saturating_sub(1)));
    }
    let mut last_steps: Option<(u64, u64)> = None;
    for &g in &gens {
        let dir = run.generation(g);
        match load_model(&dir, tch::Device::Cpu) {
            Ok(m) => {
                if let Some((pg, ps)) = last_steps {
                    if m.config.trained_steps <= ps && g > 0 {
                        c.problems.push(format!(
                            "generation {g} was trained for {} steps, generation {pg} for {ps}: the step went back",
                            m.config.trained_steps
                        ));
                    }
                }
                last_steps = Some((g, m.config.trained_steps));
            }
            Err(e) => c.problems.push(format!("generation {g} does not load: {e:#}")),
        }
        let pt = dir.join(TORCHSCRIPT_FILE);
        if let Err(e) = tch::CModule::load(&pt) {
            c.problems.push(format!("{} does not load: {e}", pt.display()));
        }
    }
    let latest = std::fs::read_to_string(run.models().join(LATEST_FILE)).unwrap_or_default();
    if let Some(&n) = gens.last() {
        let want = renju_trainer::model::generation_dir_name(n);
        if latest.trim() != want {
            c.problems.push(format!("models/LATEST names {:?}, the newest generation is {want}", latest.trim()));
        }
    }
    c.partial_files = count_partial(run)?;
    if run.selfplay().exists() {
        for e in std::fs::read_dir(run.selfplay()).with_context(|| format!("reading {}", run.selfplay().display()))? {
            let p = e?.path();
            if p.extension().is_some_and(|x| x == "npz") {
                match read_shard(&p) {
                    Ok(_) => c.shards += 1,
                    Err(e) => c.problems.push(format!("{e:#} (neither readable nor in selfplay/rejected/)")),
                }
            }
        }
        let rejected = run.selfplay().join("rejected");
        if rejected.exists() {
            c.rejected_shards =
                std::fs::read_dir(&rejected).with_context(|| format!("reading {}", rejected.display()))?.count();
        }
    }
    check_logs(run, &gens, &mut c);
    Ok(c)
}

/// `*.tmp` files and `.tmp-*` directories in the places a kill can leave them.
fn count_partial(run: &RunDir) -> Result<usize> {
    let mut n = 0;
    for dir in [run.selfplay(), run.models(), run.checkpoints()] {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.ends_with(".tmp") || name.starts_with(".tmp") {
                n += 1;
            }
        }
    }
    Ok(n)
}

/// The step sequence in `train.log` and the generation sequence in `generations.jsonl`.
fn check_logs(run: &RunDir, gens: &[u64], c: &mut RunCheck) {
    let log = std::fs::read_to_string(run.log()).unwrap_or_default();
    let starts: Vec<u64> = log
        .lines()
        .filter_map(|l| l.split("trainer at step ").nth(1))
        .filter_map(|r| r.split_whitespace().next()?.parse().ok())
        .collect();
    c.sessions = starts.len();
    if let Some(w) = starts.windows(2).find(|w| w[1] < w[0]) {
        c.problems
            .push(format!("a trainer session started at step {} after one at step {}: the step went back", w[1], w[0]));
    }
    let jsonl = std::fs::read_to_string(run.generations_log()).unwrap_or_default();
    let mut listed = Vec::new();
    for (i, l) in jsonl.lines().enumerate() {
        match serde_json::from_str::<serde_json::Value>(l) {
            Ok(v) => match v["generation"].as_u64() {
                Some(g) => listed.push(g),
                None => c.problems.push(format!("generations.jsonl line {}: no generation number", i + 1)),
            },
            Err(e) => c.problems.push(format!("generations.jsonl line {}: not JSON ({e})", i + 1)),
        }
    }
    let want: Vec<u64> = gens.iter().copied().filter(|&g| g > 0).collect();
    if listed != want {
        c.problems.push(format!("generations.jsonl lists generations {listed:?}, models/ holds {want:?} (besides 0)"));
    }
}
