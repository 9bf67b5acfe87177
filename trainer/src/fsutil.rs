//! Crash-safe file writing: every file goes to a temporary name first and is renamed into place,
//! so a reader never sees a half-written file.

use anyhow::{Context, Result};
use std::io::Write;
use std::path::{Path, PathBuf};

/// `<path>.tmp` (same directory, so the rename is atomic).
pub fn tmp_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().map(|n| n.to_os_string()).unwrap_or_default();
    name.push(".tmp");
    path.with_file_name(name)
}

/// Writes `bytes` to `path` through `<path>.tmp` + fsync + rename. Errors name the file.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let tmp = tmp_path(path);
    {
        let mut f = std::fs::File::create(&tmp).with_context(|| format!("creating {}", tmp.display()))?;
        f.write_all(bytes).with_context(|| format!("writing {}", tmp.display()))?;
        f.sync_all().with_context(|| format!("syncing {}", tmp.display()))?;
    }
    std::fs::rename(&tmp, path).with_context(|| format!("renaming {} to {}", tmp.display(), path.display()))
}

/// Produces `path` by letting `write` fill `<path>.tmp`, then renaming. Errors name the file.
pub fn write_atomic_with(path: &Path, write: impl FnOnce(&Path) -> Result<()>) -> Result<()> {
    let tmp = tmp_path(path);
    write(&tmp).with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("renaming {} to {}", tmp.display(), path.display()))
}

/// Renames the fully written directory `tmp` to `dest`, refusing to replace an existing `dest`.
pub fn rename_dir_no_replace(tmp: &Path, dest: &Path) -> Result<()> {
    anyhow::ensure!(!dest.exists(), "{} already exists; refusing to overwrite it", dest.display());
    std::fs::rename(tmp, dest).with_context(|| format!("renaming {} to {}", tmp.display(), dest.display()))
}

/// Appends `line` and a newline to `path` (created if missing). Errors name the file.
pub fn append_line(path: &Path, line: &str) -> Result<()> {
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .with_context(|| format!("opening {}", path.display()))?;
    writeln!(f, "{line}").with_context(|| format!("writing {}", path.display()))
}
