//! The documented defaults of a run config: `configs/defaults.toml`, every key with its default
//! value and a one-line comment, generated from the `Default` impls by [`defaults_toml`].
//!
//! A preset in `configs/` lists only the keys it changes; every key it leaves out takes the value
//! in `configs/defaults.toml`. A test compares the file with [`defaults_toml`] and fails with the
//! differing lines when a default changes; `RENJU_ZERO_WRITE_DEFAULTS=1 cargo test --release -p
//! renju-zero defaults_toml` writes the file anew. The comments are [`KEYS`]; the reference for
//! each key is the doc comment of its field.

use super::config::RunConfig;
use std::collections::BTreeMap;

/// Every key of a run config, `section.key` (nested sections dotted), in the order
/// `configs/defaults.toml` lists them, with its comment there.
pub const KEYS: &[(&str, &str)] = &[
    ("game.size", "board side, 7..=20 (RULES.md §1)"),
    ("game.rule", "renju | standard | freestyle (RULES.md §2)"),
    (
        "game.protocol",
        "opening protocol (RULES.md §5): free | free-centre | swap1 | rif | fifth-n[:N] | designated:D4[,swap][,offers=K] | black-sets | lianhuan | soosorv[:N] | taraguchi[:N] | swap2",
    ),
    ("game.stone_cap", "draw once this many stones are on the board; default: no cap (RULES.md §2)"),
    ("selfplay.playouts", "root visits of a full search; its position becomes a policy target"),
    ("selfplay.fast_playouts", "root visits of a fast search (not recorded): KataGo's playout-cap randomisation"),
    ("selfplay.full_search_fraction", "fraction of decisions given the full search"),
    (
        "selfplay.record_fast_positions",
        "also record fast-search positions with a zero policy target (value-head-only samples)",
    ),
    ("selfplay.threads", "worker threads"),
    ("selfplay.games_per_thread", "games interleaved per thread, so that evaluation requests stay full"),
    ("selfplay.leaves_per_game", "leaves gathered per game per evaluation request (virtual loss)"),
    ("selfplay.temperature_start", "move-selection temperature at the first decision (KataGo)"),
    ("selfplay.temperature_end", "temperature late in the game; 0 plays the most visited move"),
    ("selfplay.temperature_half_life", "decisions over which the excess temperature halves"),
    ("selfplay.resign_threshold", "resign when the root value (win - loss) stays below this"),
    ("selfplay.resign_consecutive", "... for this many consecutive own decisions"),
    (
        "selfplay.resign_disabled_fraction",
        "games played out without resignation, to count false resignations (1.0: never resign)",
    ),
    (
        "selfplay.proven_value_nodes",
        "exact value targets: a recorded position whose result the VCF solver proves gets it instead of the game's (node budget; 0 = off)",
    ),
    (
        "selfplay.short_value_horizon",
        "horizon in decisions of the short-horizon value recorded beside the result (TD(lambda) over the root values)",
    ),
    ("selfplay.seed", "seed of the workers' random generators"),
    ("selfplay.search.c_puct", "PUCT exploration constant"),
    (
        "selfplay.search.fpu_reduction",
        "first-play urgency: unvisited children start this far below the parent's value",
    ),
    ("selfplay.search.root_fpu_reduction", "the same at the root (KataGo uses 0 with noise)"),
    (
        "selfplay.search.dirichlet_alpha_total",
        "root noise concentration, divided by the number of legal actions (KataGo 10.83)",
    ),
    ("selfplay.search.dirichlet_epsilon", "root noise weight (AlphaZero)"),
    ("selfplay.search.shortcuts", "take an immediate five; answer the opponent's four"),
    (
        "selfplay.search.algorithm",
        "root search: puct | gumbel (Danihelka et al. 2022: sequential halving, improved-policy targets, no Dirichlet noise)",
    ),
    ("selfplay.search.gumbel_considered", "gumbel: most root actions considered (paper: 16)"),
    ("selfplay.search.gumbel_c_visit", "gumbel: c_visit of the value transform (paper: 50)"),
    ("selfplay.search.gumbel_c_scale", "gumbel: c_scale of the value transform (paper: 1)"),
    ("selfplay.search.vcf_nodes", "VCF check at node expansion: solver node budget per call (0 = off)"),
    ("selfplay.search.vct_nodes", "VCT check of the mover at a node with vct_visits visits: solver node budget per call (0 = off)"),
    ("selfplay.search.vct_visits", "visits a node has before the VCT check asks (0 = at its expansion)"),
    ("selfplay.search.solver", "MCTS-solver: proven wins and losses propagate up the tree"),
    (
        "selfplay.search.forced_playouts",
        "KataGo's forced playouts at a noised root, sqrt(k P N) each, pruned from the policy target (k, KataGo 2; 0 = off)",
    ),
    (
        "selfplay.search.policy_temperature",
        "the search's priors are the softmax of the policy logits divided by this (lc0's policy temperature; 1 = as they are)",
    ),
    ("server.max_batch", "largest evaluation batch, positions"),
    ("server.max_wait_us", "longest wait for a batch to fill, microseconds"),
    (
        "server.intra_op_threads",
        "libtorch intra-op threads of the inference thread; 0 = the library's default (all cores)",
    ),
    ("training.batch_size", "samples per training step"),
    ("training.l2", "L2 coefficient (AlphaZero)"),
    ("training.value_loss_weight", "value cross-entropy weight relative to the policy cross-entropy"),
    (
        "training.opponent_policy_weight",
        "opponent-policy cross-entropy weight (KataGo 0.15), when the net has that head (net.opponent_policy)",
    ),
    (
        "training.short_value_weight",
        "share of the short-horizon value in the value target (0 = the game's result alone)",
    ),
    ("training.grad_clip", "global gradient-norm clip; 0 = off"),
    (
        "training.samples_per_new_sample",
        "training samples per new self-play sample (KataGo ~4); the trainer waits for self-play beyond this",
    ),
    ("training.min_samples_to_train", "samples that must exist before the first step"),
    ("training.checkpoint_every", "write a checkpoint every N steps (and at every generation and stop)"),
    ("training.keep_checkpoints", "older checkpoints are deleted"),
    ("training.seed", "initial weights, sampling, symmetries"),
    ("training.device", "cpu | cuda | auto (CUDA when present)"),
    ("training.prefetch_batches", "batches the background loader prepares ahead"),
    ("training.augment_symmetry", "a random one of the 8 board symmetries per sample"),
    ("training.tensorboard", "event files in <run>/tensorboard/"),
    (
        "training.intra_op_threads",
        "libtorch intra-op threads of the training thread; 0 = the library's default (all cores)",
    ),
    (
        "training.encoder_version",
        "input planes of a residual net: 2 own/opponent stones | 1 black/white stones | 3 = 2 plus two VCF planes",
    ),
    ("training.vcf_plane_dropout", "encoder 3: probability that a training sample's VCF planes are zeroed"),
    ("training.stones_only_dropout", "probability that a sample keeps only what an engine knowing just the stones gives (ONNX export)"),
    ("training.net.kind", "resnet | linepattern"),
    ("training.net.blocks", "resnet: residual blocks"),
    ("training.net.channels", "resnet: tower channels"),
    ("training.net.pool_every", "resnet: every this many blocks, one carries a KataGo global-pooling bias"),
    ("training.net.pool_channels", "resnet: channels pooled in those blocks"),
    ("training.net.policy_channels", "resnet: policy-head 1x1 conv channels"),
    ("training.net.value_channels", "resnet: value-head 1x1 conv channels"),
    ("training.net.value_hidden", "value-head hidden width (both kinds)"),
    (
        "training.net.line_features",
        "linepattern: feature channels F of the line mapping and the head; the table is 2 x 66,430 x F f32",
    ),
    (
        "training.net.line_channels",
        "linepattern: channels of the five kernel-3 1-D convolutions along a line",
    ),
    (
        "training.net.policy_pointwise",
        "linepattern: outputs K of the dynamic pointwise policy stage (Rapfi's mix9 design); 0 = none",
    ),
    (
        "training.net.opponent_policy",
        "an auxiliary head predicting the opponent's reply (KataGo); training only, not exported",
    ),
    (
        "training.optimizer.kind",
        "sgd (Nesterov momentum) | adamw (keys beta1 0.9, beta2 0.999, eps 1e-8, weight_decay 0.01)",
    ),
    ("training.optimizer.momentum", "sgd: momentum (AlphaZero)"),
    ("training.schedule.lr", "peak learning rate"),
    ("training.schedule.warmup_steps", "linear warm-up steps"),
    ("training.schedule.milestones", "[[step, factor], ...]: multiply the rate by factor from step on"),
    ("training.window.min_samples", "KataGo's power-law replay window: everything until this many samples exist"),
    ("training.window.alpha", "exponent of the window's growth"),
    ("training.window.beta", "slope of the window's growth at min_samples"),
    ("training.window.max_samples", "upper bound on the window (memory)"),
    ("pipeline.steps_per_generation", "publish a new generation every N training steps"),
    ("pipeline.steps_per_round", "training steps between looks at the replay window"),
    ("pipeline.games_per_shard", "games per shard file"),
    ("pipeline.model_poll_ms", "how often self-play looks for a newly published generation"),
    (
        "pipeline.gate",
        "publish only candidates that pass an arena match against the newest generation (AlphaGo Zero's evaluator)",
    ),
    ("pipeline.gate_games", "games of the gate match at most (the 26 RIF openings, both colours)"),
    ("pipeline.gate_playouts", "root visits per move in gate games"),
    ("pipeline.gate_min_score", "score needed when the SPRT is undecided or off"),
    ("pipeline.gate_sprt", "stop the gate match early with Wald's SPRT (elo0 0, elo1 35, alpha = beta = 0.05)"),
    (
        "pipeline.keep_generations_every",
        "once 10 newer exist, delete generations whose number is not a multiple of this (1 keeps all)",
    ),
    (
        "pipeline.selfplay_waits_for_trainer",
        "train: self-play pauses while the trainer is over steps_per_round steps behind samples_per_new_sample",
    ),
];

/// Keys without a default value, with the example value `configs/defaults.toml` shows
/// (commented out) for each.
pub const UNSET_EXAMPLES: &[(&str, &str)] = &[("game.stone_cap", "120")];

/// Column at which the comments of `configs/defaults.toml` start.
const COMMENT_COLUMN: usize = 28;

/// The text of `configs/defaults.toml`: every key of [`KEYS`] with its value in
/// [`RunConfig::default`] (a key without a default, commented out with its example), grouped
/// by section. Panics when a default is missing from [`KEYS`] (the test of this module says
/// which).
pub fn defaults_toml() -> String {
    let values = RunConfig::default().flatten();
    let mut out = String::from(
        "# configs/defaults.toml: every key of a run config with its default value, generated from the\n\
         # code (a test fails when the two differ; `RENJU_ZERO_WRITE_DEFAULTS=1 cargo test --release\n\
         # -p renju-zero defaults_toml` writes this file anew). A preset (configs/*.toml) lists only the\n\
         # keys it changes; every key it leaves out takes the value here. An unknown key is an error\n\
         # that names it. Sections: [game] what is played, [selfplay] the workers and the search,\n\
         # [server] batching of network evaluations (a residual net; a line-pattern net is evaluated\n\
         # in the workers), [training] the network, optimiser and replay window, [pipeline] how\n\
         # self-play and training are interleaved.\n",
    );
    let mut section = "";
    for (key, doc) in KEYS {
        let (sec, name) = key.rsplit_once('.').expect("KEYS are section.key");
        if sec != section {
            out.push_str(&format!("\n[{sec}]\n"));
            section = sec;
        }
        let line = match (values.get(*key), unset_example(key)) {
            (Some(v), _) => format!("{name} = {}", render(v)),
            (None, Some(example)) => format!("# {name} = {example}"),
            (None, None) => panic!("{key} has no default and no entry in UNSET_EXAMPLES"),
        };
        out.push_str(&format!("{line:<width$} # {doc}\n", width = COMMENT_COLUMN - 1));
    }
    out
}

fn unset_example(key: &str) -> Option<&'static str> {
    UNSET_EXAMPLES.iter().find(|(k, _)| *k == key).map(|(_, v)| *v)
}

/// A flattened value as TOML: a float that is an `f32` field widened is written as the `f32`
/// (`0.8`, not `0.800000011920929`).
fn render(value: &str) -> String {
    match value.parse::<f64>() {
        Ok(f) if value.contains('.') || value.contains('e') => {
            if (f as f32) as f64 == f {
                format!("{:?}", f as f32)
            } else {
                format!("{f:?}")
            }
        }
        _ => value.to_string(),
    }
}

/// The keys of [`RunConfig::flatten`] of the defaults that [`KEYS`] lacks, and the entries of
/// [`KEYS`] that are neither defaults nor [`UNSET_EXAMPLES`].
pub fn undocumented_and_unknown_keys() -> (Vec<String>, Vec<String>) {
    let values: BTreeMap<String, String> = RunConfig::default().flatten();
    let undocumented = values.keys().filter(|k| !KEYS.iter().any(|(d, _)| d == k)).cloned().collect();
    let unknown = KEYS
        .iter()
        .map(|(k, _)| *k)
        .filter(|k| !values.contains_key(*k) && unset_example(k).is_none())
        .map(String::from)
        .collect();
    (undocumented, unknown)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::config::apply_overrides;
    use std::path::Path;

    #[test]
    fn every_default_is_documented_once() {
        let (undocumented, unknown) = undocumented_and_unknown_keys();
        assert!(undocumented.is_empty(), "keys missing from defaults::KEYS: {undocumented:?}");
        assert!(unknown.is_empty(), "defaults::KEYS names keys that are not config keys: {unknown:?}");
        let mut keys: Vec<&str> = KEYS.iter().map(|(k, _)| *k).collect();
        keys.sort();
        keys.dedup();
        assert_eq!(keys.len(), KEYS.len(), "a key listed twice in defaults::KEYS");
    }

    #[test]
    fn unset_examples_are_valid_values_of_their_keys() {
        for (key, example) in UNSET_EXAMPLES {
            let text = apply_overrides("", &[format!("{key}={example}")]).unwrap();
            let c = RunConfig::parse(&text, key).unwrap();
            assert_eq!(c.flatten().get(*key).map(String::as_str), Some(*example), "{key}");
        }
    }

    #[test]
    fn defaults_toml_parses_to_the_defaults() {
        let c = RunConfig::parse(&defaults_toml(), "defaults.toml").unwrap();
        assert_eq!(c, RunConfig::default());
        assert_eq!(RunConfig::parse("", "empty").unwrap(), RunConfig::default());
    }

    /// `configs/defaults.toml` is what [`defaults_toml`] generates; with
    /// `RENJU_ZERO_WRITE_DEFAULTS=1` the test writes it instead.
    #[test]
    fn defaults_toml_matches_the_code() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("configs/defaults.toml");
        let wanted = defaults_toml();
        if std::env::var_os("RENJU_ZERO_WRITE_DEFAULTS").is_some() {
            std::fs::write(&path, &wanted).unwrap();
        }
        let found = std::fs::read_to_string(&path).unwrap_or_default();
        let diff: Vec<String> = found
            .lines()
            .map(Some)
            .chain(std::iter::repeat(None))
            .zip(wanted.lines().map(Some).chain(std::iter::repeat(None)))
            .take_while(|(a, b)| a.is_some() || b.is_some())
            .enumerate()
            .filter(|(_, (a, b))| a != b)
            .map(|(i, (a, b))| format!("line {}:\n  file: {}\n  code: {}", i + 1, a.unwrap_or("-"), b.unwrap_or("-")))
            .collect();
        assert!(
            diff.is_empty(),
            "configs/defaults.toml differs from the defaults in the code; regenerate it with \
             `RENJU_ZERO_WRITE_DEFAULTS=1 cargo test --release -p renju-zero defaults_toml`:\n{}",
            diff.join("\n")
        );
    }
}
