//! `renju-zero analyze`: the analysis engine on stdin/stdout (library:
//! `renju_arena::analysis`; the request and answer format is in docs/commands.md). Nothing but
//! answers goes to stdout.

use anyhow::Result;
use renju_arena::agent::{MctsAgent, SearchSettings};
use renju_arena::analysis::{serve, AgentFactory, AnalysisOptions, Engine, Output};
use renju_selfplay::eval::EvaluatorSpec;
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
    #[command(flatten)]
    pub search: crate::cmd::PlaySearchArgs,
}

/// Arguments of `renju-zero analyze`.
#[derive(clap::Args)]
pub struct AnalyzeArgs {
    #[command(flatten)]
    pub engine: EngineArgs,
}

impl EngineArgs {
    /// The evaluator spec (`shipped` when no model is given, said on stderr by `command` when
    /// there is one: [`crate::cmd::model_or_shipped`]), checked to be playable now rather than
    /// at the first query.
    pub fn spec(&self, command: Option<&str>) -> Result<EvaluatorSpec> {
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
        let config = self.search.config()?;
        let lcb = self.search.lcb()?;
        let threads = self.threads.unwrap_or_else(crate::cmd::arena::default_threads);
        let load_model = evaluator_loader(DeviceChoice::Auto);
        let batch = self.batch.max(1);
        let factory: AgentFactory = Box::new(move |size: usize| -> Result<MctsAgent> {
            let settings = SearchSettings { batch, config: config.clone(), threads, lcb, ..Default::default() };
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
    let spec = args.engine.spec(Some("analyze"))?;
    let mut engine = args.engine.engine(spec, Output::new(std::io::stdout()))?;
    serve(&mut engine, std::io::stdin().lock())?;
    Ok(0)
}
