//! `renju-zero analyze`: the analysis engine on stdin/stdout (library:
//! `renju_arena::analysis`; the request and answer format is in docs/commands.md). Nothing but
//! answers goes to stdout.

use anyhow::Result;
use renju_arena::agent::{MctsAgent, SearchSettings};
use renju_arena::analysis::{serve, AgentFactory, AnalysisOptions, Engine, Output};
use renju_selfplay::eval::EvaluatorSpec;
use renju_selfplay::mcts::{SearchConfig, PLAY_POLICY_TEMPERATURE};
use renju_trainer::config::DeviceChoice;
use renju_trainer::model::{check_playable, evaluator_loader};

/// The search options `analyze` and `serve` share.
#[derive(clap::Args)]
pub struct EngineArgs {
    /// Model directory (a generation, or a models directory with LATEST), `shipped` (the model
    /// built into this binary, 15x15), `heuristic` or `uniform`. Without it the shipped model is
    /// used (said on stderr).
    #[arg(long)]
    pub model: Option<String>,
    /// Visits of a query that gives neither `visits` nor `seconds`.
    #[arg(long, default_value_t = AnalysisOptions::default().visits)]
    pub visits: u64,
    /// VCF solver run once per query before the search, for each colour: nodes, for a query
    /// that gives no `vcf` (0 = off).
    #[arg(long, default_value_t = AnalysisOptions::default().root_vcf_nodes)]
    pub root_vcf_nodes: u64,
    /// Search threads of each query (default: every core).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Leaves evaluated per batch.
    #[arg(long, default_value_t = SearchSettings::default().batch)]
    pub batch: usize,
    /// A query's search stops when its tree reaches this many MiB (32 bytes a node; each
    /// running query, and each kept for tree reuse, holds one tree).
    #[arg(long, default_value_t = AnalysisOptions::default().max_tree_bytes >> 20)]
    pub max_tree_mb: u64,
    /// VCF check at each node expansion of the search: solver nodes per call (0 = off).
    #[arg(long, default_value_t = SearchConfig::default().vcf_nodes)]
    pub vcf_nodes: u64,
    /// VCT check (fours and threes) in the search: the mover's VCT is asked once at each node
    /// that reaches --vct-visits visits; solver nodes per call (0 = off).
    #[arg(long, default_value_t = SearchConfig::default().vct_nodes)]
    pub vct_nodes: u64,
    /// Visits a node has before the VCT check asks (0: at its expansion).
    #[arg(long, default_value_t = SearchConfig::default().vct_visits)]
    pub vct_visits: u32,
    /// The search's priors are the softmax of the policy logits divided by this (1: as they are;
    /// above 1 the search looks wider than the policy head alone would send it).
    #[arg(long, default_value_t = PLAY_POLICY_TEMPERATURE)]
    pub policy_temperature: f32,
}

/// Arguments of `renju-zero analyze`.
#[derive(clap::Args)]
pub struct AnalyzeArgs {
    #[command(flatten)]
    pub engine: EngineArgs,
}

impl EngineArgs {
    /// The evaluator spec (`shipped` when no model is given, said on stderr by `command`),
    /// checked to be playable now rather than at the first query.
    pub fn spec(&self, command: &str) -> Result<EvaluatorSpec> {
        let model = crate::cmd::model_or_shipped(self.model.as_deref(), command);
        let spec = EvaluatorSpec::parse(&model)?;
        if let EvaluatorSpec::Model(dir) = &spec {
            check_playable(dir)?;
        }
        Ok(spec)
    }

    /// The analysis engine answering to `out`, searching with `spec`'s evaluator.
    pub fn engine(&self, spec: EvaluatorSpec, out: Output) -> Result<Engine> {
        anyhow::ensure!(self.visits >= 1, "--visits must be at least 1");
        anyhow::ensure!(self.max_tree_mb >= 1, "--max-tree-mb must be at least 1");
        anyhow::ensure!(self.threads != Some(0), "--threads must be at least 1");
        anyhow::ensure!(
            self.policy_temperature.is_finite() && self.policy_temperature > 0.0,
            "--policy-temperature {} must be a positive number",
            self.policy_temperature
        );
        let threads = self.threads.unwrap_or_else(crate::cmd::arena::default_threads);
        let load_model = evaluator_loader(DeviceChoice::Auto);
        let config = SearchConfig {
            vcf_nodes: self.vcf_nodes,
            vct_nodes: self.vct_nodes,
            vct_visits: self.vct_visits,
            policy_temperature: self.policy_temperature,
            ..SearchConfig::default()
        };
        let batch = self.batch.max(1);
        let factory: AgentFactory = Box::new(move |size: usize| -> Result<MctsAgent> {
            let settings = SearchSettings { batch, config: config.clone(), threads, ..Default::default() };
            MctsAgent::per_thread(&spec, size, &load_model, settings)
        });
        let opts = AnalysisOptions {
            visits: self.visits,
            root_vcf_nodes: self.root_vcf_nodes,
            max_tree_bytes: self.max_tree_mb << 20,
            ..AnalysisOptions::default()
        };
        Ok(Engine::new(factory, opts, out))
    }
}

/// Run the command; returns the process exit code.
pub fn run(args: AnalyzeArgs) -> Result<i32> {
    let spec = args.engine.spec("analyze")?;
    let mut engine = args.engine.engine(spec, Output::new(std::io::stdout()))?;
    serve(&mut engine, std::io::stdin().lock())?;
    Ok(0)
}
