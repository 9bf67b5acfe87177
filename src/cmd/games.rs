//! `renju-zero games export`: game records as SGF or Piskvork `.psq` files, one file per game
//! (library: `renju_arena::records`, where both formats are described).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{bail, ensure, Context, Result};
use renju_arena::records::{game_sources, GameSource, PortableGame};
use renju_rules::Rule;

/// Arguments of `renju-zero games`.
#[derive(clap::Args)]
pub struct GamesArgs {
    #[command(subcommand)]
    pub command: GamesCommand,
}

/// The `games` subcommands.
#[derive(clap::Subcommand)]
pub enum GamesCommand {
    /// Write games as SGF or Piskvork .psq files, one file per game, named
    /// `<source>-game-<index>.<format>`.
    Export(ExportArgs),
}

/// A game record format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// SGF (GM[4], gomoku/renju), protocol decisions in the root comment.
    Sgf,
    /// Piskvork's saved-position format: the stones only.
    Psq,
}

impl Format {
    fn extension(self) -> &'static str {
        match self {
            Format::Sgf => "sgf",
            Format::Psq => "psq",
        }
    }

    fn write(self, game: &PortableGame) -> String {
        match self {
            Format::Sgf => game.to_sgf(),
            Format::Psq => game.to_psq(),
        }
    }
}

/// Arguments of `renju-zero games export`.
#[derive(clap::Args)]
pub struct ExportArgs {
    /// An `arena` / `curve` games.jsonl, a self-play shard (.npz), or a directory searched for
    /// both (subdirectories included, `rejected/` shard directories skipped).
    #[arg(long)]
    pub from: PathBuf,
    #[arg(long, value_enum)]
    pub format: Format,
    /// Directory for the files (created if missing; files of the same name are replaced).
    #[arg(long)]
    pub out: PathBuf,
    /// Only the game with this index (its `index` in games.jsonl, its position in a shard).
    #[arg(long)]
    pub game: Option<usize>,
    /// Board side of the games.jsonl games (the records do not hold it; shards do).
    #[arg(long, default_value_t = 15)]
    pub size: usize,
    /// Rule of the games.jsonl games (renju, standard or freestyle; shards hold theirs).
    #[arg(long, default_value_t = Rule::Renju)]
    pub rule: Rule,
}

/// Run the command; returns the process exit code.
pub fn run(args: GamesArgs) -> Result<i32> {
    match args.command {
        GamesCommand::Export(a) => export(a),
    }
}

fn export(args: ExportArgs) -> Result<i32> {
    let from = &args.from;
    ensure!(from.exists(), "{} does not exist", from.display());
    let sources = if from.is_dir() {
        let v = game_sources(from)?;
        ensure!(!v.is_empty(), "no games.jsonl or self-play shard (.npz) under {}", from.display());
        v
    } else {
        vec![GameSource::of_file(from)?]
    };
    let mut labels: BTreeMap<String, &Path> = BTreeMap::new();
    for s in &sources {
        if let Some(other) = labels.insert(s.label(), s.path()) {
            bail!(
                "{} and {} would both be exported as {}-game-*: export them one at a time",
                other.display(),
                s.path().display(),
                s.label()
            );
        }
    }
    std::fs::create_dir_all(&args.out).with_context(|| format!("creating {}", args.out.display()))?;
    let ext = args.format.extension();
    let mut written = 0;
    for s in &sources {
        let label = s.label();
        for (index, game) in s.games(args.size, args.rule)? {
            if args.game.is_some_and(|n| n != index) {
                continue;
            }
            let path = args.out.join(format!("{label}-game-{index:04}.{ext}"));
            renju_fs::write_atomic(&path, args.format.write(&game).as_bytes())?;
            written += 1;
        }
    }
    if let Some(n) = args.game {
        ensure!(written > 0, "no game with index {n} in {}", from.display());
    }
    println!("wrote {written} {ext} file(s) to {}", args.out.display());
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn files_are_named_after_their_source() {
        let j = GameSource::of_file(Path::new("runs/curve/matches/gen-000002-vs-uniform/games.jsonl")).unwrap();
        assert_eq!(j.label(), "gen-000002-vs-uniform");
        let s = GameSource::of_file(Path::new("runs/quick/selfplay/sp-p7-1700000000000-000001.npz")).unwrap();
        assert_eq!(s.label(), "sp-p7-1700000000000-000001");
        assert_eq!(GameSource::of_file(Path::new("mine.jsonl")).unwrap().label(), "mine");
        let e = GameSource::of_file(Path::new("notes.txt")).unwrap_err().to_string();
        assert!(e.starts_with("notes.txt: not a game source"), "{e}");
    }
}
