//! `renju-zero selfplay` end to end: writes readable shards; bad arguments fail clearly.

use std::process::Command;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_renju-zero"))
}

#[test]
fn selfplay_writes_shards() {
    let dir = tempfile::tempdir().unwrap();
    let out = bin()
        .args([
            "selfplay",
            "--evaluator",
            "uniform",
            "--games",
            "2",
            "--size",
            "11",
            "--playouts",
            "8",
            "--fast-playouts",
            "4",
            "--protocol",
            "rif",
            "--quiet",
            "--out",
        ])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.starts_with("2 games"), "{stdout}");
    let shards = renju_selfplay::record::list_shards(dir.path()).unwrap();
    assert_eq!(shards.len(), 1);
    let s = renju_selfplay::record::read_shard(&shards[0]).unwrap();
    assert_eq!(s.meta.games.len(), 2);
}

#[test]
fn unknown_evaluator_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let out =
        bin().args(["selfplay", "--evaluator", "oracle", "--games", "1", "--out"]).arg(dir.path()).output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown evaluator 'oracle'"));
}

#[test]
fn game_flags_are_refused_with_run() {
    // The run's config decides the game and the search; a flag that would be ignored is an error.
    let dir = tempfile::tempdir().unwrap();
    for flag in [["--playouts", "8"], ["--rule", "standard"], ["--threads", "4"]] {
        let out = bin().args(["selfplay", "--run"]).arg(dir.path()).args(flag).output().unwrap();
        assert!(!out.status.success(), "{flag:?} was accepted");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("cannot be used with") && err.contains(flag[0]), "{flag:?}: {err}");
    }
}
