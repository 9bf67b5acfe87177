//! `renju-zero train` (the main job) and `renju-zero trainer` (its training half alone).

use super::progress::Bars;
use renju_trainer::store::is_remote;
use renju_zero::pipeline::{self, open_run, RunDir, Stop, StopWhen};
use std::path::{Path, PathBuf};

/// Options shared by `train` and `trainer`.
#[derive(clap::Args)]
pub struct RunArgs {
    /// Continue a run directory that was made with a different config.
    #[arg(long)]
    pub force: bool,
    /// Stop once this generation has been published.
    #[arg(long)]
    pub max_generations: Option<u64>,
    /// Stop after this many minutes.
    #[arg(long)]
    pub minutes: Option<f64>,
    /// Override one config key, `SECTION.KEY=VALUE` (TOML value), e.g. `--set
    /// training.net.blocks=2 --set selfplay.search.algorithm=gumbel` (repeat for several; the
    /// run directory keeps the overridden config).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub sets: Vec<String>,
}

impl RunArgs {
    fn stop_when(&self) -> StopWhen {
        StopWhen { generation: self.max_generations, minutes: self.minutes, games: None }
    }
}

/// Arguments of `renju-zero train`.
#[derive(clap::Args)]
pub struct TrainArgs {
    /// Run configuration (TOML: the keys it changes from configs/defaults.toml).
    #[arg(long, default_value = "configs/quick.toml")]
    pub config: PathBuf,
    /// Run directory holding everything of the run. Default: runs/<config file stem>.
    #[arg(long)]
    pub run: Option<PathBuf>,
    #[command(flatten)]
    pub common: RunArgs,
}

/// Arguments of `renju-zero trainer`.
#[derive(clap::Args)]
pub struct TrainerArgs {
    /// Run directory (made by `renju-zero train` or given a config with --config), or a run on
    /// object storage: `s3://bucket/prefix`, `gs://...`, `az://...`, `file:///dir` (credentials
    /// from the standard environment variables; see README "Training on many machines").
    #[arg(long)]
    pub run: String,
    /// Config for a new run directory (default: the run's own config.toml).
    #[arg(long)]
    pub config: Option<PathBuf>,
    #[command(flatten)]
    pub common: RunArgs,
}

/// Runs `renju-zero train`.
pub fn run(args: TrainArgs) -> anyhow::Result<i32> {
    let run_path = args.run.clone().unwrap_or_else(|| {
        let stem = args.config.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "run".into());
        PathBuf::from("runs").join(stem)
    });
    // A bad config or override is an error before the run directory is made.
    pipeline::check_config(&args.config, &args.common.sets)?;
    // Before anything is written: one trainer per run directory.
    let _lock = RunDir::new(&run_path).lock_trainer()?;
    let (dir, cfg) = open_run(&run_path.to_string_lossy(), Some(&args.config), &args.common.sets, args.common.force)?;
    pipeline::say(&format!(
        "run directory: {} (TensorBoard: tensorboard --logdir {})",
        dir.root.display(),
        dir.tensorboard().display()
    ));
    pipeline::train(&cfg, &dir, &args.common.stop_when(), &Stop::on_signals()?, &Bars::new())?;
    Ok(0)
}

/// Runs `renju-zero trainer`.
pub fn run_trainer(args: TrainerArgs) -> anyhow::Result<i32> {
    // One trainer per run: a local run is locked before anything is written; a remote run's
    // store is guarded by its lease, and its local cache is locked once `open_run` has made it.
    if let Some(config) = &args.config {
        pipeline::check_config(config, &args.common.sets)?;
    }
    let local_lock = if is_remote(&args.run) { None } else { Some(RunDir::new(Path::new(&args.run)).lock_trainer()?) };
    let (dir, cfg) = open_run(&args.run, args.config.as_deref(), &args.common.sets, args.common.force)?;
    let _lock = match local_lock {
        Some(lock) => lock,
        None => dir.lock_trainer()?,
    };
    pipeline::trainer_only(&cfg, &dir, &args.common.stop_when(), &Stop::on_signals()?, &Bars::new())?;
    Ok(0)
}

/// Arguments of `renju-zero check-run`.
#[derive(clap::Args)]
pub struct CheckRunArgs {
    /// Run directory to check (read only; a running trainer may keep writing it).
    #[arg(long)]
    pub run: PathBuf,
}

/// Runs `renju-zero check-run`: prints the counts and every broken invariant; exit status 1
/// when any invariant is broken.
pub fn run_check(args: CheckRunArgs) -> anyhow::Result<i32> {
    let c = pipeline::check::check_run(&RunDir::new(&args.run))?;
    println!(
        "{}: {} generations, {} readable shards, {} rejected shards, {} trainer sessions, {} partial files awaiting the next start",
        args.run.display(),
        c.generations,
        c.shards,
        c.rejected_shards,
        c.sessions,
        c.partial_files
    );
    for p in &c.problems {
        println!("problem: {p}");
    }
    Ok(if c.problems.is_empty() { 0 } else { 1 })
}
