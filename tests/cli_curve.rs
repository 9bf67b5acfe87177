//! `renju-zero curve` on a tiny run: generation 0 published by `renju-zero trainer` (no
//! training), a copy of it as generation 2 and a generation 1 to skip with
//! `--every-generations 2`; the CSV must hold one row per (generation, opponent) with the
//! documented columns (no generation against itself), the plot must exist, and a second call must only add missing points.
use std::path::Path;
use std::process::Command;

const CONFIG: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/e2e.toml");

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_renju-zero"))
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
    }
}

fn curve(run: &Path, opponents: &[&str]) -> std::process::Output {
    let mut c = bin();
    c.args(["curve", "--run"]).arg(run).args([
        "--every-generations",
        "2",
        "--games",
        "2",
        "--playouts",
        "4",
        "--threads",
        "2",
    ]);
    for o in opponents {
        c.args(["--opponent", o]);
    }
    c.output().unwrap()
}

/// A run in `dir/run` with generation 0 published by `renju-zero trainer` (no training).
fn generation_zero(dir: &Path) -> std::path::PathBuf {
    let run = dir.join("run");
    let o = bin()
        .args(["trainer", "--config", CONFIG, "--run"])
        .arg(&run)
        .args(["--max-generations", "0"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    run
}

#[test]
fn curve_writes_one_row_per_generation_and_opponent_and_a_plot() {
    let d = tempfile::tempdir().unwrap();
    let run = generation_zero(d.path());
    copy_dir(&run.join("models/gen-000000"), &run.join("models/gen-000001"));
    copy_dir(&run.join("models/gen-000000"), &run.join("models/gen-000002"));
    let o = curve(&run, &["heuristic"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = curve(&run, &["heuristic", "gen:0"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = run.join("curve");
    let mut r = csv::Reader::from_path(out.join("curve.csv")).unwrap();
    let header: Vec<String> = r.headers().unwrap().iter().map(String::from).collect();
    assert_eq!(
        header,
        [
            "generation",
            "step",
            "minutes",
            "selfplay_games",
            "opponent",
            "games",
            "wins",
            "draws",
            "losses",
            "score",
            "score_low95",
            "score_high95",
            "budget",
            "opponent_budget",
            "start"
        ]
    );
    let rows: Vec<csv::StringRecord> = r.records().map(|x| x.unwrap()).collect();
    let keys: Vec<(String, String)> = rows.iter().map(|r| (r[0].to_string(), r[4].to_string())).collect();
    // Generation 0 against gen0 (itself) is skipped.
    let want = [("2", "gen0"), ("0", "heuristic"), ("2", "heuristic")];
    assert_eq!(keys, want.map(|(g, o)| (g.to_string(), o.to_string())));
    for r in &rows {
        assert_eq!(&r[5], "2", "games per point");
        let (w, dr, l): (u32, u32, u32) = (r[6].parse().unwrap(), r[7].parse().unwrap(), r[8].parse().unwrap());
        assert_eq!(w + dr + l, 2);
        let (s, lo, hi): (f64, f64, f64) = (r[9].parse().unwrap(), r[10].parse().unwrap(), r[11].parse().unwrap());
        assert!((s - (w as f64 + 0.5 * dr as f64) / 2.0).abs() < 1e-9 && lo <= s && s <= hi, "{r:?}");
        assert_eq!(&r[3], "0", "no self-play in this run");
        assert_eq!((&r[12], &r[13], &r[14]), ("playouts=4", "playouts=4", "whole-game:rif"), "{r:?}");
    }
    let svg = std::fs::read_to_string(out.join("curve.svg")).unwrap();
    assert!(svg.starts_with("<svg") && svg.matches("<polyline").count() == 2, "{svg}");
    // Whole games under the run's protocol (rif): the records of a match say so.
    let games = std::fs::read_to_string(out.join("matches/gen-000002-vs-heuristic/games.jsonl")).unwrap();
    assert!(games.lines().all(|l| l.contains("\"protocol\":\"rif\"")), "{games}");

    // `--set` changes the curve's search, not the run; a curve directory keeps its settings.
    let config_before = std::fs::read_to_string(run.join("config.toml")).unwrap();
    let with_vcf = |out: &Path| {
        let mut c = bin();
        c.args(["curve", "--run"]).arg(&run).args(["--every-generations", "2", "--games", "2", "--playouts", "4"]);
        c.args(["--threads", "2", "--opponent", "heuristic", "--set", "selfplay.search.vcf_nodes=50", "--out"]);
        c.arg(out).output().unwrap()
    };
    let o = with_vcf(&d.path().join("curve-vcf"));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let settings = std::fs::read_to_string(d.path().join("curve-vcf/curve-settings.json")).unwrap();
    assert!(settings.contains("\"vcf_nodes\": 50"), "{settings}");
    assert_eq!(std::fs::read_to_string(run.join("config.toml")).unwrap(), config_before, "the run's config changed");
    let o = with_vcf(&out);
    assert!(!o.status.success(), "a curve directory accepted other settings");
    assert!(String::from_utf8_lossy(&o.stderr).contains("other match settings"));
}

#[test]
fn curve_against_an_engine_plays_rif_openings_with_both_colours_and_states_the_budgets() {
    let d = tempfile::tempdir().unwrap();
    let run = generation_zero(d.path());
    let log = d.path().join("engine-input.log");
    let me = env!("CARGO_BIN_EXE_renju-zero");
    // The binary's own Gomocup brain as the engine, behind `tee` to log what it is sent.
    let engine =
        format!("engine:\"sh -c 'tee -a {} | {me} gomocup --model heuristic --playouts 4'\",nodes=300", log.display());
    let out = d.path().join("curve-engine");
    let o = bin()
        .args(["curve", "--run"])
        .arg(&run)
        .args(["--opponent", &engine, "--engine-games", "4", "--seconds", "0.02", "--threads", "2", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    assert!(
        stderr.contains("makes no swap or offer decisions") && stderr.contains("start after the opening"),
        "{stderr}"
    );
    let mut r = csv::Reader::from_path(out.join("curve.csv")).unwrap();
    let header = r.headers().unwrap().clone();
    let rows: Vec<csv::StringRecord> = r.records().map(|x| x.unwrap()).collect();
    assert_eq!(rows.len(), 1, "generation 0 against the engine");
    let col = |name: &str| &rows[0][header.iter().position(|h| h == name).unwrap()];
    assert_eq!(col("opponent"), "sh-nodes300");
    assert_eq!(col("games"), "4", "2 openings x 2 colours");
    assert_eq!(col("budget"), "time=0.02");
    assert_eq!(col("opponent_budget"), "nodes=300 time=60");
    assert_eq!(col("start"), "after-opening:rif26");
    let games = std::fs::read_to_string(out.join("matches/gen-000000-vs-sh-nodes300/games.jsonl")).unwrap();
    let records: Vec<serde_json::Value> = games.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(records.len(), 4);
    for pair in records.chunks(2) {
        assert_eq!(pair[0]["opening"], pair[1]["opening"], "one opening per pair of games");
        assert_ne!(pair[0]["black"], pair[1]["black"], "each opening with both colours");
        for g in pair {
            assert!(g["protocol"].as_str().unwrap().starts_with("designated"), "{g}");
            assert!(!g["reason"].as_str().unwrap().starts_with("forfeit"), "{g}");
        }
    }
    assert_ne!(records[0]["opening"], records[2]["opening"], "two openings");
    let sent = std::fs::read_to_string(&log).unwrap();
    assert_eq!(sent.matches("INFO max_node 300\n").count(), 4, "once per game: {sent}");
}
