//! One trainer per run directory: an exclusive OS file lock on `<run>/trainer.lock`, held for
//! the life of the `train` / `trainer` process.
//!
//! The lock is `flock(2)` through `std::fs::File::try_lock` (std ≥ 1.89): the kernel releases it
//! when the process ends in any way, SIGKILL included, so a stale lock file never blocks a new
//! trainer; the file's content ([`crate::process::lock_record`]: command, pid, host, start time)
//! only serves the refusal message.
//! Self-play processes take no lock. On a network filesystem `flock` is only as good as the
//! filesystem's lock support (NFSv4 and most cluster filesystems have it).

use anyhow::{bail, Context, Result};
use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;

/// The held lock; dropping it (or the process ending) releases it.
#[derive(Debug)]
pub struct RunLock {
    _file: File,
}

impl RunLock {
    /// Takes the lock at `path` (created if missing), or fails at once. Errors: another live
    /// process holds it (the message names its pid, host, start time and command, and the lock
    /// file), or the file cannot be created / written (named).
    pub fn acquire(path: &Path) -> Result<RunLock> {
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .with_context(|| format!("opening the lock file {}", path.display()))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                let mut holder = String::new();
                file.read_to_string(&mut holder).ok();
                let holder = holder.trim();
                let holder =
                    if holder.is_empty() { "another process (it has not written its name yet)" } else { holder };
                bail!(
                    "{} is in use by another trainer: {holder}. One trainer per run directory: stop that one first \
                     (self-play processes need no lock: renju-zero selfplay --run {})",
                    path.parent().unwrap_or(path).display(),
                    path.parent().unwrap_or(path).display()
                );
            }
            Err(TryLockError::Error(e)) => {
                return Err(e).with_context(|| format!("locking {}", path.display()));
            }
        }
        let me = crate::process::lock_record();
        file.set_len(0).with_context(|| format!("truncating {}", path.display()))?;
        file.seek(SeekFrom::Start(0)).with_context(|| format!("writing {}", path.display()))?;
        file.write_all(me.as_bytes()).with_context(|| format!("writing {}", path.display()))?;
        file.sync_all().with_context(|| format!("syncing {}", path.display()))?;
        Ok(RunLock { _file: file })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_is_refused_naming_the_holder_and_a_released_one_is_free() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("trainer.lock");
        let first = RunLock::acquire(&path).unwrap();
        // flock locks belong to the open file description: a second open in the same process
        // conflicts just as another process would.
        let err = format!("{:#}", RunLock::acquire(&path).unwrap_err());
        assert!(err.contains(&format!("pid {}", std::process::id())), "{err}");
        assert!(err.contains("in use by another trainer"), "{err}");
        drop(first);
        RunLock::acquire(&path).unwrap();
    }
}
