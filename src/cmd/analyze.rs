//! `renju-zero analyze`: the analysis engine on stdin/stdout (library:
//! `renju_arena::analysis`; the request and answer format is in docs/commands.md). Nothing but
//! answers goes to stdout.

use anyhow::Result;
use renju_arena::agent::{MctsAgent, SearchSettings};
use renju_arena::analysis::{serve, AgentFactory, AnalysisOptions, Engine, Output};
use renju_selfplay::eval::EvaluatorSpec;
use renju_selfplay::mcts::SearchConfig;
use renju_trainer::config::DeviceChoice;
use renju_trainer::model::{check_playable, evaluator_loader};

/// Arguments of `renju-zero analyze`.
#[derive(clap::Args)]
pub struct AnalyzeArgs {
    /// Model directory (a generation, or a models directory with LATEST), or `heuristic` /
    /// `uniform`. Without it the heuristic evaluator is used (said on stderr).
    #[arg(long)]
    pub model: Option<String>,
    /// Visits of a query that gives neither `visits` nor `seconds`.
    #[arg(long, default_value_t = AnalysisOptions::default().visits)]
    pub visits: u64,
    /// VCF solver run once per query before the search, for each colour: nodes, for a query
    /// that gives no `vcf` (0 = off).
    #[arg(long, default_value_t = AnalysisOptions::default().root_vcf_nodes)]
    pub root_vcf_nodes: u64,
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
}

/// Run the command; returns the process exit code.
pub fn run(args: AnalyzeArgs) -> Result<i32> {
    anyhow::ensure!(args.visits >= 1, "--visits must be at least 1");
    let model = match args.model {
        Some(m) => m,
        None => {
            renju_zero::pipeline::say("analyze: no --model given; using the heuristic evaluator");
            "heuristic".into()
        }
    };
    let spec = EvaluatorSpec::parse(&model)?;
    // A model that is not there fails now, not at the first query.
    if let EvaluatorSpec::Model(dir) = &spec {
        check_playable(dir)?;
    }
    let load_model = evaluator_loader(DeviceChoice::Auto);
    let config = SearchConfig { vcf_nodes: args.vcf_nodes, ..SearchConfig::default() };
    let batch = args.batch.max(1);
    let factory: AgentFactory = Box::new(move |size: usize| -> Result<MctsAgent> {
        let eval = spec.build(size, &load_model)?;
        Ok(MctsAgent::new(eval, SearchSettings { batch, config: config.clone(), ..Default::default() }))
    });
    anyhow::ensure!(args.max_tree_mb >= 1, "--max-tree-mb must be at least 1");
    let opts = AnalysisOptions {
        visits: args.visits,
        root_vcf_nodes: args.root_vcf_nodes,
        max_tree_bytes: args.max_tree_mb << 20,
        ..AnalysisOptions::default()
    };
    let mut engine = Engine::new(factory, opts, Output::new(std::io::stdout()));
    serve(&mut engine, std::io::stdin().lock())?;
    Ok(0)
}
