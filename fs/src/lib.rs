//! `renju-fs`: the project's one crash-safe file layer. Everything that must survive a kill or a
//! power loss whole or not at all goes through it: self-play shards, checkpoints, published
//! models, arena and opening-study outputs, the run directory's config copy and logs.
//!
//! The recipe for a file (the usual POSIX one, as in SQLite's and LMDB's notes on atomic
//! commit): create the parent directories, write `<path>.tmp` in the same directory, fsync it,
//! rename it over `path` (atomic on one file system), fsync the directory so the rename itself
//! is durable. A reader sees the old file or the new one, never half of one; a kill leaves at
//! most a `*.tmp` file, which readers ignore and the run directory sweeps.
//!
//! Directories (a checkpoint, a published generation) are filled under a temporary name and
//! published with [`publish_dir`]: every file in them (subdirectories included) is fsynced, then
//! each directory after its contents, then it is renamed (never over an existing one) and the
//! parent fsynced.
//!
//! Errors name the file or directory concerned.

use anyhow::{ensure, Context, Result};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

/// `<path>.tmp` (same directory, so the rename is atomic).
pub fn tmp_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().map(|n| n.to_os_string()).unwrap_or_default();
    name.push(".tmp");
    path.with_file_name(name)
}

/// Creates `path`'s parent directories (if it has any that are missing).
fn create_parent(path: &Path) -> Result<()> {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => {
            std::fs::create_dir_all(dir).with_context(|| format!("creating directory {}", dir.display()))
        }
        _ => Ok(()),
    }
}

/// Fsyncs the directory `dir`, making renames and creations in it durable.
pub fn sync_dir(dir: &Path) -> Result<()> {
    File::open(dir).and_then(|d| d.sync_all()).with_context(|| format!("syncing directory {}", dir.display()))
}

/// Fsyncs the parent directory of `path` (the current directory for a bare name).
fn sync_parent(path: &Path) -> Result<()> {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => sync_dir(dir),
        _ => sync_dir(Path::new(".")),
    }
}

/// Fsyncs the file `path`.
fn sync_file(path: &Path) -> Result<()> {
    File::open(path).and_then(|f| f.sync_all()).with_context(|| format!("syncing {}", path.display()))
}

/// Renames `tmp` to `path` and fsyncs the directory.
fn commit(tmp: &Path, path: &Path) -> Result<()> {
    std::fs::rename(tmp, path).with_context(|| format!("renaming {} to {}", tmp.display(), path.display()))?;
    sync_parent(path)
}

/// Writes `bytes` to `path` crash-safely (module docs): parent directories created, `<path>.tmp`
/// written and fsynced, renamed over `path`, directory fsynced.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    write_atomic_with(path, |tmp| {
        let mut f = File::create(tmp).with_context(|| format!("creating {}", tmp.display()))?;
        f.write_all(bytes).with_context(|| format!("writing {}", tmp.display()))
    })
}

/// Produces `path` crash-safely by letting `write` fill the file at the path it is given
/// (`<path>.tmp`), then fsync, rename and directory fsync as [`write_atomic`]. On an error the
/// temporary file is removed and `path` is untouched.
pub fn write_atomic_with(path: &Path, write: impl FnOnce(&Path) -> Result<()>) -> Result<()> {
    create_parent(path)?;
    let tmp = tmp_path(path);
    let written = write(&tmp).with_context(|| format!("writing {}", tmp.display())).and_then(|_| sync_file(&tmp));
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    commit(&tmp, path)
}

/// Publishes the fully written directory `tmp` as `dest`: fsyncs every file in it (model
/// weights, optimizer state, every file of subdirectories) and every directory of it, each
/// directory after its contents, all before the rename; then renames it (refusing to replace an
/// existing `dest`) and fsyncs the parent. A crash at any point leaves either no `dest` or a
/// `dest` whose files are complete on disk.
pub fn publish_dir(tmp: &Path, dest: &Path) -> Result<()> {
    publish_dir_with(tmp, dest, &mut sync_file)
}

/// [`publish_dir`] with the fsync of a file or directory done by `sync`.
fn publish_dir_with(tmp: &Path, dest: &Path, sync: &mut dyn FnMut(&Path) -> Result<()>) -> Result<()> {
    ensure!(!dest.exists(), "{} already exists; refusing to overwrite it", dest.display());
    sync_tree(tmp, sync)?;
    commit(tmp, dest)
}

/// Fsyncs with `sync` every file under `dir` and every directory, each directory after what it
/// holds.
fn sync_tree(dir: &Path, sync: &mut dyn FnMut(&Path) -> Result<()>) -> Result<()> {
    for e in std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))? {
        let e = e.with_context(|| format!("reading {}", dir.display()))?;
        let kind = e.file_type().with_context(|| format!("reading {}", e.path().display()))?;
        if kind.is_dir() {
            sync_tree(&e.path(), sync)?;
        } else if kind.is_file() {
            sync(&e.path())?;
        }
    }
    sync(dir)
}

/// Appends `line` and a newline to `path` (parent directories and the file created if missing)
/// and fsyncs the data, so a logged line survives a crash that follows it.
pub fn append_line(path: &Path, line: &str) -> Result<()> {
    create_parent(path)?;
    let mut f = OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .with_context(|| format!("opening {}", path.display()))?;
    writeln!(f, "{line}").with_context(|| format!("writing {}", path.display()))?;
    f.sync_data().with_context(|| format!("syncing {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_write_creates_parents_replaces_and_leaves_no_temp() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("a/b/f.txt");
        write_atomic(&p, b"one").unwrap();
        write_atomic(&p, b"two").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"two");
        assert!(!tmp_path(&p).exists());
    }

    #[test]
    fn a_failed_write_keeps_the_old_file_and_removes_the_temp() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("f.txt");
        write_atomic(&p, b"old").unwrap();
        let e = write_atomic_with(&p, |tmp| {
            std::fs::write(tmp, b"half")?;
            anyhow::bail!("disk full")
        })
        .unwrap_err();
        assert!(format!("{e:#}").contains("f.txt.tmp") && format!("{e:#}").contains("disk full"), "{e:#}");
        assert_eq!(std::fs::read(&p).unwrap(), b"old");
        assert!(!tmp_path(&p).exists());
    }

    #[test]
    fn publish_dir_refuses_to_replace() {
        let d = tempfile::tempdir().unwrap();
        let (tmp, dest) = (d.path().join(".tmp-x"), d.path().join("x"));
        std::fs::create_dir(&tmp).unwrap();
        std::fs::write(tmp.join("f"), b"1").unwrap();
        publish_dir(&tmp, &dest).unwrap();
        assert_eq!(std::fs::read(dest.join("f")).unwrap(), b"1");
        std::fs::create_dir(&tmp).unwrap();
        let e = publish_dir(&tmp, &dest).unwrap_err();
        assert!(e.to_string().contains("refusing to overwrite"), "{e}");
    }

    #[test]
    fn publish_dir_syncs_every_file_and_directory_before_the_rename() {
        let d = tempfile::tempdir().unwrap();
        let (tmp, dest) = (d.path().join(".tmp-gen"), d.path().join("gen"));
        std::fs::create_dir_all(tmp.join("sub")).unwrap();
        let files = [("model.safetensors", vec![7u8; 100_000]), ("config.json", b"{}".to_vec())];
        for (name, bytes) in &files {
            std::fs::write(tmp.join(name), bytes).unwrap();
        }
        std::fs::write(tmp.join("sub/table.bin"), b"t").unwrap();
        let mut synced = Vec::new();
        publish_dir_with(&tmp, &dest, &mut |p| {
            assert!(!dest.exists(), "{} synced after the rename", p.display());
            synced.push(p.strip_prefix(&tmp).unwrap().to_path_buf());
            sync_file(p)
        })
        .unwrap();
        let pos = |p: &str| {
            synced.iter().position(|s| s == Path::new(p)).unwrap_or_else(|| panic!("{p} not synced: {synced:?}"))
        };
        for p in ["model.safetensors", "config.json", "sub/table.bin", "sub"] {
            assert!(pos(p) < pos(""), "{p} synced after its directory: {synced:?}");
        }
        assert!(pos("sub/table.bin") < pos("sub"), "{synced:?}");
        assert_eq!(synced.len(), 5, "{synced:?}");
        for (name, bytes) in &files {
            assert_eq!(&std::fs::read(dest.join(name)).unwrap(), bytes);
        }
        assert_eq!(std::fs::read(dest.join("sub/table.bin")).unwrap(), b"t");
        assert!(!tmp.exists());
    }

    #[test]
    fn append_line_appends() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("logs/train.log");
        append_line(&p, "a").unwrap();
        append_line(&p, "b").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "a\nb\n");
    }
}
