//! Gating a candidate network on an arena match before it is published
//! ([`crate::pipeline::config::PipelineConfig::gate`]).

use super::config::RunConfig;
use anyhow::{Context, Result};
use renju_trainer::model::write_model_files;
use renju_trainer::{RunDir, Trainer};
use std::path::Path;

/// Plays the trainer's current network against generation `incumbent` (see
/// [`super::config::PipelineConfig::gate`]). The candidate is written to
/// `candidates/step-N/` (a model directory like a generation's) so the arena can load it.
pub(crate) fn gate_candidate(
    cfg: &RunConfig,
    run: &RunDir,
    trainer: &Trainer,
    incumbent: u64,
) -> Result<(bool, String)> {
    use renju_arena::gatekeeper::{gate, GateConfig};
    use renju_arena::spec::PlayerSpec;
    let candidates = run.candidates();
    let name = format!("step-{:09}", trainer.step());
    let dir = candidates.join(&name);
    let tmp = candidates.join(format!(".tmp-{name}-{}", std::process::id()));
    for old in [&dir, &tmp] {
        if old.exists() {
            std::fs::remove_dir_all(old).with_context(|| format!("removing {}", old.display()))?;
        }
    }
    std::fs::create_dir_all(&tmp).with_context(|| format!("creating {}", tmp.display()))?;
    let mc = trainer.model_config(incumbent + 1)?;
    // Written whole into a temporary directory, then renamed, as a generation is.
    let written = write_model_files(&tmp, trainer.var_store(), &mc).and_then(|_| renju_fs::publish_dir(&tmp, &dir));
    if let Err(e) = written {
        let _ = std::fs::remove_dir_all(&tmp);
        return Err(e.context(format!("writing the candidate {}", dir.display())));
    }
    let incumbent_dir = run.generation(incumbent);
    let spec = |name: &str, d: &Path| {
        PlayerSpec::parse(name, &format!("model:{},playouts={}", d.display(), cfg.pipeline.gate_playouts))
    };
    let gc = GateConfig {
        games: cfg.pipeline.gate_games,
        min_score: cfg.pipeline.gate_min_score,
        sprt: if cfg.pipeline.gate_sprt { GateConfig::default().sprt } else { None },
        arena: renju_arena::matches::ArenaConfig {
            size: cfg.game.size,
            rule: cfg.game.rule,
            stone_cap: cfg.game.stone_cap,
            seed: trainer.step(),
            threads: 1,
            ..Default::default()
        },
    };
    cfg.training.device.resolve()?; // a missing CUDA device is an error before the match
    let loader = renju_trainer::model::evaluator_loader(cfg.training.device);
    let decision = gate(&spec("candidate", &dir)?, &spec("incumbent", &incumbent_dir)?, &gc, &loader)?;
    std::fs::remove_dir_all(&dir).ok();
    Ok((decision.pass, decision.reason))
}
