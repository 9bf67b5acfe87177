//! `renju-zero gomocup`: a Gomocup/Piskvork brain on stdin/stdout (library:
//! `renju_arena::gomocup`). Nothing but protocol lines goes to stdout.

use std::time::Duration;

use anyhow::{Context, Result};
use renju_arena::agent::{Agent, MctsAgent, SearchSettings};
use renju_arena::gomocup::{serve_interruptible, Brain, BrainOptions};
use renju_selfplay::eval::EvaluatorSpec;
use renju_selfplay::linepattern::shipped::SHIPPED_SIZE;
use renju_selfplay::mcts::{SearchAlgorithm, SearchConfig};
use renju_trainer::config::DeviceChoice;
use renju_trainer::model::{check_playable, evaluator_loader};

/// Arguments of `renju-zero gomocup`. The brain plays freestyle (five or more wins) until the
/// manager sends `INFO rule 4` (renju) or `INFO rule 1` (standard), as the protocol has it.
#[derive(clap::Args)]
pub struct GomocupArgs {
    /// Model directory (or a models directory with LATEST), `shipped` (the model built into this
    /// binary; it plays 15x15, other board sizes get the heuristic evaluator), `heuristic` or
    /// `uniform`.
    #[arg(long, default_value = "shipped")]
    pub model: String,
    /// Playouts at most per move (default: only the protocol's time and memory limits).
    #[arg(long)]
    pub playouts: Option<u64>,
    /// Seconds per move when the manager sends no time limits.
    #[arg(long, default_value_t = BrainOptions::default().default_turn.as_secs_f64())]
    pub time: f64,
    /// Leaves evaluated per batch.
    #[arg(long, default_value_t = SearchSettings::default().batch)]
    pub batch: usize,
    /// Search threads for a move (default: every core), each with its own evaluator; the
    /// manager's `INFO thread_num` can lower it.
    #[arg(long)]
    pub threads: Option<usize>,
    /// Root search: puct or gumbel (Gumbel root search, Danihelka et al. 2022).
    #[arg(long, default_value = "puct")]
    pub algorithm: String,
    /// VCF solver run once at the root before each move (play a found VCF, defend against the
    /// opponent's): solver nodes (0 = off).
    #[arg(long, default_value_t = BrainOptions::default().root_vcf_nodes)]
    pub root_vcf_nodes: u64,
    /// VCT solver (fours and threes) run at the root when the VCF settles nothing: play a found
    /// VCT, defend against the opponent's with a move proved to refute it; solver nodes for each
    /// question (0 = off).
    #[arg(long, default_value_t = BrainOptions::default().root_vct_nodes)]
    pub root_vct_nodes: u64,
    #[command(flatten)]
    pub search: crate::cmd::PlaySearchArgs,
    /// Start every move from an empty tree instead of keeping the subtree of the moves played
    /// (for measuring what tree reuse brings).
    #[arg(long)]
    pub no_tree_reuse: bool,
    /// Under a match clock, search every move for exactly its share of the time left instead of
    /// planning it (stopping early when the best move is settled, running on when it is not);
    /// for measuring what the plan brings.
    #[arg(long)]
    pub flat_clock: bool,
}

/// Run the command; returns the process exit code.
pub fn run(args: GomocupArgs) -> Result<i32> {
    anyhow::ensure!(
        args.time.is_finite() && args.time > 0.0,
        "--time {} must be a positive number of seconds",
        args.time
    );
    anyhow::ensure!(args.playouts != Some(0), "--playouts must be at least 1");
    let lcb = args.search.lcb()?;
    let algorithm: SearchAlgorithm = args.algorithm.parse().context("--algorithm")?;
    let config = SearchConfig { algorithm, ..args.search.config()? };
    let spec = EvaluatorSpec::parse(&args.model)?;
    // A model that is not there (or that this build cannot play) fails now, not at the
    // manager's START; the message is the loader's (the one `arena` and `openings` give).
    // Which model plays goes to stderr (a manager shows or logs it; stdout is the protocol's).
    let playing = match &spec {
        EvaluatorSpec::Model(dir) => check_playable(dir)?.0.display().to_string(),
        EvaluatorSpec::Shipped => crate::cmd::shipped_model_named(),
        other => other.to_string(),
    };
    renju_zero::pipeline::say(&format!("gomocup: model {playing}"));
    let load_model = evaluator_loader(DeviceChoice::Auto);
    let batch = args.batch.max(1);
    let reuse_tree = !args.no_tree_reuse;
    anyhow::ensure!(args.threads != Some(0), "--threads must be at least 1");
    let threads = args.threads.unwrap_or_else(crate::cmd::arena::default_threads);
    let factory = Box::new(move |size: usize| -> Result<Box<dyn Agent>> {
        let spec = match &spec {
            EvaluatorSpec::Shipped if size != SHIPPED_SIZE => {
                renju_zero::pipeline::say(&format!(
                    "gomocup: the shipped model plays {SHIPPED_SIZE}x{SHIPPED_SIZE}; this {size}x{size} game gets \
                     the heuristic evaluator"
                ));
                EvaluatorSpec::Heuristic
            }
            s => s.clone(),
        };
        let settings = SearchSettings { batch, config: config.clone(), reuse_tree, threads, lcb, ..Default::default() };
        Ok(Box::new(MctsAgent::per_thread(&spec, size, &load_model, settings)?))
    });
    let opts = BrainOptions {
        default_turn: Duration::from_secs_f64(args.time),
        max_playouts: args.playouts,
        root_vcf_nodes: args.root_vcf_nodes,
        root_vct_nodes: args.root_vct_nodes,
        max_threads: threads,
        plan_time: !args.flat_clock,
        ..Default::default()
    };
    let mut brain = Brain::new(factory, opts);
    // Commands are read while the brain thinks, so that YXSTOP reaches a search under way.
    serve_interruptible(&mut brain, std::io::BufReader::new(std::io::stdin()), std::io::stdout().lock())?;
    Ok(0)
}

/// The environment variable naming the model of a `pbrain-renju-zero` brain (a generation
/// directory, a `models/` directory with `LATEST`, or `shipped` / `heuristic` / `uniform`).
pub const MODEL_ENV: &str = "RENJU_ZERO_MODEL";

/// The model of a brain started as `pbrain-*` without arguments (as Piskvork and c-gomoku-cli
/// start brains): `$RENJU_ZERO_MODEL` if set; else `model/` or `models/` in the directory the
/// brain was started from (`argv[0]`'s, so a symlink finds the model next to the link); else
/// the shipped model (the reason said on stderr).
pub fn pbrain_model(argv0: &std::path::Path) -> String {
    if let Ok(m) = std::env::var(MODEL_ENV) {
        if !m.is_empty() {
            return m;
        }
    }
    let dir = match argv0.parent().filter(|p| !p.as_os_str().is_empty()) {
        Some(d) => d.to_path_buf(),
        None => std::env::current_exe().ok().and_then(|e| e.parent().map(|p| p.to_path_buf())).unwrap_or_default(),
    };
    for name in ["model", "models"] {
        let d = dir.join(name);
        if d.join("config.json").is_file() || d.join("LATEST").is_file() {
            return d.display().to_string();
        }
    }
    // Why only: the brain names the model it plays (with the shipped one's summary) once loaded.
    renju_zero::pipeline::say(&format!(
        "pbrain-renju-zero: no {MODEL_ENV} and no model/ or models/ in {}: falling back to the shipped model",
        dir.display()
    ));
    "shipped".into()
}
