//! `renju-zero check-run`: the invariants a run directory keeps through any number of kills and
//! restarts, checked from the files alone. Used by `scripts/soak.sh` after its kill loop and by
//! the suite's shorter fault-injection test.
//!
//! Invariants: the published generations are `0..=n`, each once (with
//! `pipeline.keep_generations_every = M`: at least 0, the multiples of M and the newest 10 of
//! them); every one present loads (weights and
//! config through [`load_model`], the TorchScript file through `CModule::load`); `models/LATEST`
//! names generation `n`; every `selfplay/*.npz` reads (refused ones sit in `selfplay/rejected/`);
//! the trainer step never goes back (session start steps in `train.log` do not decrease, and each
//! generation was trained for more steps than the one before); `generations.jsonl` names
//! generations `1..=n` once each, in order (pruned ones included).

use super::config::RunConfig;
use anyhow::{Context, Result};
use renju_selfplay::record::read_shard;
use renju_trainer::generations::{
    generation_dir_name, generation_is_kept, list_generations, read_latest, KEEP_NEWEST_GENERATIONS,
};
use renju_trainer::model::{load_model, TORCHSCRIPT_FILE};
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
    /// Partial files (`*.tmp`, `.tmp-*`) still present; the next trainer start removes those
    /// whose writer is gone (`RunDir::sweep_partial_files`).
    pub partial_files: usize,
    /// Broken invariants; empty when the run is consistent.
    pub problems: Vec<String>,
}

/// Checks the run directory `run` (read-only). Errors when `run` is not a run directory (missing,
/// or without `config.toml`: [`RunDir::ensure_is_run`]) or a directory cannot be listed; broken
/// invariants are reported in [`RunCheck::problems`].
pub fn check_run(run: &RunDir) -> Result<RunCheck> {
    run.ensure_is_run()?;
    let mut c = RunCheck::default();
    let gens = list_generations(&run.models())?;
    c.generations = gens.len();
    // With `pipeline.keep_generations_every = M` (the run's config.toml; 1 when it has none) the
    // generations of 0..=n that must exist are 0, the multiples of M and the newest
    // KEEP_NEWEST_GENERATIONS; others may still be there (a kill between publishing and pruning).
    let every = RunConfig::load(&run.config()).map(|c| c.pipeline.keep_generations_every).unwrap_or(1).max(1);
    let newest = gens.last().copied().unwrap_or(0);
    let required: Vec<u64> = (0..=newest).filter(|&g| generation_is_kept(g, newest, every)).collect();
    let missing: Vec<u64> = required.iter().copied().filter(|g| gens.binary_search(g).is_err()).collect();
    if !missing.is_empty() {
        let kept = if every > 1 {
            format!(" (keep_generations_every = {every}: 0, the multiples of {every} and the newest {KEEP_NEWEST_GENERATIONS})")
        } else {
            String::new()
        };
        c.problems.push(format!("generations {missing:?} of 0..={newest} are missing{kept}: {gens:?}"));
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
    if let Some(&n) = gens.last() {
        let want = generation_dir_name(n);
        match read_latest(&run.models()) {
            Ok(Some(latest)) if latest == want => {}
            Ok(latest) => c
                .problems
                .push(format!("models/LATEST names {:?}, the newest generation is {want}", latest.unwrap_or_default())),
            Err(e) => c.problems.push(format!("{e:#}")),
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
    // Every published generation has its line, pruned ones included.
    let want: Vec<u64> = (1..=gens.last().copied().unwrap_or(0)).collect();
    if listed != want {
        c.problems.push(format!(
            "generations.jsonl lists generations {listed:?}, models/ holds {gens:?}: expected 1..={}",
            want.len()
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run directory with `config.toml` (`keep_generations_every = every`) and empty
    /// generation directories `gens` (they do not load: only the set is checked here).
    fn fake_run(every: u64, gens: &[u64]) -> (tempfile::TempDir, RunDir) {
        let d = tempfile::tempdir().unwrap();
        let run = RunDir::new(d.path());
        std::fs::write(run.config(), format!("[pipeline]\nkeep_generations_every = {every}\n")).unwrap();
        for &g in gens {
            std::fs::create_dir_all(run.generation(g)).unwrap();
        }
        (d, run)
    }

    fn missing(c: &RunCheck) -> Vec<&String> {
        c.problems.iter().filter(|p| p.contains("are missing")).collect()
    }

    #[test]
    fn pruned_generations_are_expected_and_a_missing_kept_one_is_named() {
        // keep every 3rd, newest 19: 0, 3, 6, 9, 12, 15, 18 and 10..=19 must be there.
        let mut gens: Vec<u64> = vec![0, 3, 6, 9];
        gens.extend(10..=19);
        let (_d, run) = fake_run(3, &gens);
        let c = check_run(&run).unwrap();
        assert!(missing(&c).is_empty(), "{:?}", c.problems);
        assert_eq!(c.generations, 14);
        // generations.jsonl must still list every generation 1..=19.
        assert!(c.problems.iter().any(|p| p.contains("expected 1..=19")), "{:?}", c.problems);
        std::fs::remove_dir(run.generation(6)).unwrap();
        std::fs::remove_dir(run.generation(14)).unwrap();
        let c = check_run(&run).unwrap();
        let m = missing(&c);
        assert_eq!(m.len(), 1, "{:?}", c.problems);
        assert!(m[0].starts_with("generations [6, 14] of 0..=19 are missing"), "{}", m[0]);
        // Keeping every generation (the default): a gap is a problem.
        let (_d, run) = fake_run(1, &[0, 1, 3]);
        let c = check_run(&run).unwrap();
        assert!(missing(&c)[0].starts_with("generations [2] of 0..=3 are missing"), "{:?}", c.problems);
    }
}
