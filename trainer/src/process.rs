//! The identity of this process as a run directory records it: host, pid and subcommand. It is
//! written into `train.log` and `generations.jsonl` ([`process_tag`]), into `trainer.lock`
//! ([`lock_record`]), into a remote run's trainer lease ([`lease_owner`]) and into shard names
//! (the [`host_tag`] part of the writer id); [`is_running`] tells whether a process of this host
//! still runs, which decides whether its partial files may be removed.

use std::path::Path;

/// This machine's host name (`/proc/sys/kernel/hostname`, else `$HOSTNAME`), trimmed; empty when
/// neither is available.
pub fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_default()
        .trim()
        .to_string()
}

/// This machine's host name reduced to `[A-Za-z0-9]` (at most 24 characters; `local` when
/// unknown): part of shard names, which must stay unique when self-play processes on several
/// machines share one run directory, and of [`process_tag`].
pub fn host_tag() -> String {
    let tag: String = hostname().chars().filter(|c| c.is_ascii_alphanumeric()).take(24).collect();
    if tag.is_empty() {
        "local".into()
    } else {
        tag
    }
}

/// The subcommand this process runs (the CLI's first argument), or `renju-zero` when there is
/// none.
pub fn command() -> String {
    std::env::args().nth(1).filter(|a| !a.starts_with('-')).unwrap_or_else(|| "renju-zero".into())
}

/// The writing process as the run directory's logs name it: `<command> pid <pid>@<host>`, e.g.
/// `train pid 4242@node1`.
pub fn process_tag() -> String {
    format!("{} pid {}@{}", command(), std::process::id(), host_tag())
}

/// The content of a lock file this process holds: its [`process_tag`] and when it took the lock
/// (`<tag>, started <RFC 3339 UTC time>`), shown to a process the lock refuses.
pub fn lock_record() -> String {
    format!("{}, started {}\n", process_tag(), humantime::format_rfc3339_seconds(std::time::SystemTime::now()))
}

/// This process as the owner of a remote run's trainer lease: `<host name>:<pid>`.
pub fn lease_owner() -> String {
    format!("{}:{}", hostname(), std::process::id())
}

/// Whether process `pid` of this host runs: `Some(true)` or `Some(false)` read from `/proc`,
/// `None` where there is no `/proc` to read it from.
pub fn is_running(pid: u32) -> Option<bool> {
    Path::new("/proc/self").exists().then(|| Path::new(&format!("/proc/{pid}")).exists())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tag_names_this_process_and_host_and_a_finished_process_is_not_running() {
        let tag = process_tag();
        assert!(tag.ends_with(&format!(" pid {}@{}", std::process::id(), host_tag())), "{tag}");
        assert!(host_tag().chars().all(|c| c.is_ascii_alphanumeric()) && !host_tag().is_empty());
        assert!(lock_record().starts_with(&format!("{tag}, started ")));
        assert!(lease_owner().ends_with(&format!(":{}", std::process::id())));
        if is_running(std::process::id()).is_some() {
            assert_eq!(is_running(std::process::id()), Some(true));
            let mut child = std::process::Command::new("true").spawn().unwrap();
            let dead = child.id();
            child.wait().unwrap();
            assert_eq!(is_running(dead), Some(false));
        }
    }
}
