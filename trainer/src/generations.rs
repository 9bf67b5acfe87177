//! The generation lifecycle of a run's `models/` directory: naming (`gen-NNNNNN`), listing,
//! publishing (a temporary directory renamed whole, then `LATEST`), the `LATEST` pointer, and
//! retention (pruning with [`generation_is_kept`]). What a generation directory holds is
//! [`crate::model`]'s; where `models/` is, [`crate::RunDir`]'s.
//!
//! Invariants: a generation directory appears whole or not at all and is never replaced;
//! `LATEST` holds the name of the newest generation and a newline, and is written after the
//! generation it names (a kill in between is repaired by [`repair_latest`]); a generation is
//! deleted only by [`prune_generations`], renamed out of the `gen-*` names first.

use anyhow::{ensure, Context, Result};
use renju_fs::{publish_dir, write_atomic};
use std::path::{Path, PathBuf};

/// Pointer file in the models directory naming the newest generation (`checkpoints/` has one
/// of the same name for the newest checkpoint).
pub const LATEST_FILE: &str = "LATEST";

/// Generations [`prune_generations`] never deletes: the newest this many (self-play workers,
/// the curve and matches may still be loading them).
pub const KEEP_NEWEST_GENERATIONS: u64 = 10;

/// Name of generation `g`'s directory: `gen-NNNNNN`.
pub fn generation_dir_name(g: u64) -> String {
    format!("gen-{g:06}")
}

/// The generation a directory name `gen-NNNNNN` names; `None` for any other name.
pub fn parse_generation_dir_name(name: &str) -> Option<u64> {
    name.strip_prefix("gen-").and_then(|n| n.parse().ok())
}

/// Generations present in `models_dir` (directories named `gen-NNNNNN`), ascending; none when
/// `models_dir` does not exist.
pub fn list_generations(models_dir: &Path) -> Result<Vec<u64>> {
    let mut gens = Vec::new();
    if !models_dir.exists() {
        return Ok(gens);
    }
    for e in std::fs::read_dir(models_dir).with_context(|| format!("reading {}", models_dir.display()))? {
        let e = e?;
        if let Some(n) = parse_generation_dir_name(&e.file_name().to_string_lossy()) {
            if e.path().is_dir() {
                gens.push(n);
            }
        }
    }
    gens.sort_unstable();
    Ok(gens)
}

/// The newest generation present in `models_dir`, if any.
pub fn newest_generation(models_dir: &Path) -> Result<Option<u64>> {
    Ok(list_generations(models_dir)?.last().copied())
}

/// The content of `LATEST` naming generation `g`: its directory name and a newline.
pub fn latest_record(g: u64) -> String {
    format!("{}\n", generation_dir_name(g))
}

/// The directory name `models_dir/LATEST` holds (trimmed), or `None` when there is no `LATEST`.
/// Errors: an unreadable file, or a name that is empty or not a plain name (a path, `..`).
pub fn read_latest(models_dir: &Path) -> Result<Option<String>> {
    let path = models_dir.join(LATEST_FILE);
    if !path.exists() {
        return Ok(None);
    }
    let name = std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    let name = name.trim();
    ensure!(!name.is_empty() && !name.contains('/') && name != "..", "{}: malformed pointer '{name}'", path.display());
    Ok(Some(name.to_string()))
}

/// Points `models_dir/LATEST` at generation `g` (temp file + rename).
pub fn write_latest(models_dir: &Path, g: u64) -> Result<()> {
    write_atomic(&models_dir.join(LATEST_FILE), latest_record(g).as_bytes())
}

/// A kill between publishing a generation and updating `LATEST` leaves `LATEST` naming an older
/// one: points it at the newest generation of `models_dir` if it does not already. Returns the
/// generation it now names when it had to repair it.
pub fn repair_latest(models_dir: &Path) -> Result<Option<u64>> {
    let Some(newest) = newest_generation(models_dir)? else { return Ok(None) };
    if read_latest(models_dir).ok().flatten() == Some(generation_dir_name(newest)) {
        return Ok(None);
    }
    write_latest(models_dir, newest)?;
    Ok(Some(newest))
}

/// Publishes generation `g` under `models_dir`: `write` fills a temporary directory
/// (`.tmp-gen-NNNNNN-<pid>`); every file in it (`model.safetensors` included) and the directory
/// are fsynced there ([`publish_dir`]) before it is renamed to `gen-NNNNNN` (refusing to replace
/// an existing one), then `LATEST` is pointed at it (temp file + rename). Returns the new directory. On an
/// error the temporary directory is removed and nothing is published.
pub fn publish_generation(models_dir: &Path, g: u64, write: impl FnOnce(&Path) -> Result<()>) -> Result<PathBuf> {
    std::fs::create_dir_all(models_dir).with_context(|| format!("creating {}", models_dir.display()))?;
    let name = generation_dir_name(g);
    let dest = models_dir.join(&name);
    ensure!(!dest.exists(), "generation {g} already published at {}; refusing to overwrite it", dest.display());
    let tmp = models_dir.join(format!(".tmp-{name}-{}", std::process::id()));
    if tmp.exists() {
        std::fs::remove_dir_all(&tmp).with_context(|| format!("removing stale {}", tmp.display()))?;
    }
    std::fs::create_dir(&tmp).with_context(|| format!("creating {}", tmp.display()))?;
    if let Err(e) = write(&tmp).and_then(|_| publish_dir(&tmp, &dest)) {
        let _ = std::fs::remove_dir_all(&tmp);
        return Err(e.context(format!("publishing generation {g}")));
    }
    write_latest(models_dir, g)?;
    Ok(dest)
}

/// The retention rule of [`prune_generations`]: generation `g`, when `newest` is the newest
/// published one, stays if it is among the newest [`KEEP_NEWEST_GENERATIONS`] or a multiple of
/// `every` (generation 0 always; `every <= 1` keeps all). `check-run` checks a run against it.
pub fn generation_is_kept(g: u64, newest: u64, every: u64) -> bool {
    every <= 1 || g + KEEP_NEWEST_GENERATIONS > newest || g.is_multiple_of(every)
}

/// Local retention of published generations: deletes every generation directory of
/// `models_dir` that has at least [`KEEP_NEWEST_GENERATIONS`] newer ones and whose number is not
/// a multiple of `every` (generation 0 always stays). Each is renamed to a `.tmp-pruned-*` name
/// first, so a half-deleted directory never looks like a generation. `every <= 1` deletes
/// nothing. Returns the deleted generations, ascending. Errors name the directory that could not
/// be removed.
pub fn prune_generations(models_dir: &Path, every: u64) -> Result<Vec<u64>> {
    if every <= 1 {
        return Ok(Vec::new());
    }
    let gens = list_generations(models_dir)?;
    let Some(&newest) = gens.last() else { return Ok(Vec::new()) };
    let mut pruned = Vec::new();
    for g in gens {
        if generation_is_kept(g, newest, every) {
            continue;
        }
        let dir = models_dir.join(generation_dir_name(g));
        let doomed = models_dir.join(format!(".tmp-pruned-{}-{}", generation_dir_name(g), std::process::id()));
        std::fs::rename(&dir, &doomed).with_context(|| format!("pruning {}", dir.display()))?;
        std::fs::remove_dir_all(&doomed).with_context(|| format!("removing {}", doomed.display()))?;
        pruned.push(g);
    }
    Ok(pruned)
}

#[cfg(test)]
mod tests {
    use super::*;
    use anyhow::bail;

    #[test]
    fn names_read_back_and_latest_follows_publishing() {
        assert_eq!(generation_dir_name(12), "gen-000012");
        assert_eq!(parse_generation_dir_name(&generation_dir_name(1_234_567)), Some(1_234_567));
        assert_eq!(parse_generation_dir_name(".tmp-gen-000001-42"), None);
        let d = tempfile::tempdir().unwrap();
        let models = d.path().join("models");
        assert_eq!(list_generations(&models).unwrap(), Vec::<u64>::new());
        assert_eq!(read_latest(&models).unwrap(), None);
        for g in [0, 1] {
            publish_generation(&models, g, |tmp| Ok(std::fs::write(tmp.join("f"), b"x")?)).unwrap();
        }
        assert_eq!(list_generations(&models).unwrap(), vec![0, 1]);
        assert_eq!(std::fs::read_to_string(models.join(LATEST_FILE)).unwrap(), "gen-000001\n");
        let again = publish_generation(&models, 1, |_| Ok(())).unwrap_err();
        assert!(format!("{again:#}").contains("refusing to overwrite"), "{again:#}");
        // A failed write publishes nothing and leaves no temporary directory.
        let failed = publish_generation(&models, 2, |_| bail!("disk full")).unwrap_err();
        assert!(format!("{failed:#}").contains("publishing generation 2: disk full"), "{failed:#}");
        assert_eq!(std::fs::read_dir(&models).unwrap().count(), 3, "gen-000000, gen-000001, LATEST");
        // LATEST left behind by a kill is repaired to the newest generation.
        write_latest(&models, 0).unwrap();
        assert_eq!(repair_latest(&models).unwrap(), Some(1));
        assert_eq!(repair_latest(&models).unwrap(), None);
        assert_eq!(read_latest(&models).unwrap().as_deref(), Some("gen-000001"));
        std::fs::write(models.join(LATEST_FILE), "../x\n").unwrap();
        assert!(format!("{:#}", read_latest(&models).unwrap_err()).contains("malformed pointer '../x'"));
    }

    #[test]
    fn kept_generations_are_the_newest_and_the_multiples() {
        // newest 30, every 7: 0, 7, 14, 21, 28 and 21..=30.
        let kept: Vec<u64> = (0..=30).filter(|&g| generation_is_kept(g, 30, 7)).collect();
        assert_eq!(kept, vec![0, 7, 14, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30]);
        assert!((0..=30).all(|g| generation_is_kept(g, 30, 1)));
    }
}
