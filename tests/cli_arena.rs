//! Runs `renju-zero arena` and `renju-zero openings` end to end with the network-free
//! evaluators on a small board (fast), including an external engine (the binary's own Gomocup
//! brain) as a player.
use std::process::Command;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_renju-zero"))
}

fn arena(out: &std::path::Path, threads: &str) -> std::process::Output {
    bin()
        .args(["arena", "--player", "h=heuristic,playouts=6", "--player", "u=uniform,playouts=6"])
        .args([
            "--games",
            "4",
            "--size",
            "9",
            "--rule",
            "renju",
            "--seed",
            "11",
            "--threads",
            threads,
            "--quiet",
            "--out",
        ])
        .arg(out)
        .output()
        .unwrap()
}

#[test]
fn arena_is_reproducible_and_writes_its_reports() {
    let d = tempfile::tempdir().unwrap();
    let (a, b) = (d.path().join("a"), d.path().join("b"));
    let oa = arena(&a, "2");
    assert!(oa.status.success(), "{}", String::from_utf8_lossy(&oa.stderr));
    let ob = arena(&b, "1");
    assert!(ob.status.success());
    let ga = std::fs::read_to_string(a.join("games.jsonl")).unwrap();
    let gb = std::fs::read_to_string(b.join("games.jsonl")).unwrap();
    assert_eq!(ga, gb, "same seed, same records");
    assert_eq!(ga.lines().count(), 4);
    for l in ga.lines() {
        let v: serde_json::Value = serde_json::from_str(l).unwrap();
        assert!(["black", "white", "draw"].contains(&v["result"].as_str().unwrap()));
        assert!(v["opening"].as_str().is_some(), "rif26 games start from a named opening: {l}");
    }
    let mut r = csv::Reader::from_path(a.join("results.csv")).unwrap();
    assert_eq!(r.records().count(), 4);
    let mut r = csv::Reader::from_path(a.join("ratings.csv")).unwrap();
    let rows: Vec<csv::StringRecord> = r.records().map(|x| x.unwrap()).collect();
    assert_eq!(rows.len(), 2);
    // Ratings are centred: the two Elo values sum to 0.
    let elo: f64 = rows.iter().map(|x| x[1].parse::<f64>().unwrap()).sum();
    assert!(elo.abs() < 1e-6, "{elo}");
    let report = String::from_utf8(oa.stdout).unwrap();
    assert!(report.contains("## Ratings") && report.contains("| h | u | 4 |"), "{report}");
}

#[test]
fn arena_against_an_external_gomocup_engine() {
    let me = env!("CARGO_BIN_EXE_renju-zero");
    let engine = format!("e=engine:\"{me} gomocup --model heuristic --playouts 6\",time=5");
    let out = bin()
        .args(["arena", "--player", "h=heuristic,playouts=6", "--player", &engine])
        .args(["--games", "2", "--size", "9", "--threads", "2", "--quiet"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let report = String::from_utf8(out.stdout).unwrap();
    assert!(report.contains("| h | e | 2 |"), "{report}");
}

#[test]
fn engine_budgets_reach_the_engine_as_info_lines() {
    let d = tempfile::tempdir().unwrap();
    let log = d.path().join("engine-input.log");
    let me = env!("CARGO_BIN_EXE_renju-zero");
    // The binary's own brain behind `tee`, which logs what the arena sends.
    let engine = format!(
        "e=engine:\"sh -c 'tee -a {} | {me} gomocup --model heuristic --playouts 6'\",nodes=500,depth=3",
        log.display()
    );
    let out = bin()
        .args(["arena", "--player", "h=heuristic,playouts=6", "--player", &engine])
        .args(["--games", "2", "--size", "9", "--threads", "1", "--quiet"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8(out.stdout).unwrap().contains("| h | e | 2 |"));
    let sent = std::fs::read_to_string(&log).unwrap();
    // One engine process plays both games: the budget comes with every game's START.
    assert_eq!(sent.matches("START 9\n").count(), 2, "{sent}");
    assert_eq!(sent.matches("INFO max_node 500\n").count(), 2, "{sent}");
    assert_eq!(sent.matches("INFO max_depth 3\n").count(), 2, "{sent}");
    assert_eq!(sent.matches("INFO timeout_turn 60000\n").count(), 2, "a node budget makes time a 60 s guard: {sent}");
}

#[test]
fn bad_arguments_are_named() {
    let out = bin().args(["arena", "--player", "x=magic", "--player", "y=uniform"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown player kind 'magic'"));
    let out = bin()
        .args(["arena", "--player", "x=uniform", "--player", "y=uniform", "--sprt", "0,10,0.05"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("4 numbers"));
    for (spec, want) in [
        ("y=engine:pbrain-x,nodes=0", "nodes=0 must be at least 1"),
        ("y=engine:pbrain-x,nodes=many", "nodes='many' is not a whole number"),
        ("y=engine:pbrain-x,depth=2.5", "depth='2.5' is not a whole number"),
    ] {
        let out = bin().args(["arena", "--player", "x=uniform", "--player", spec]).output().unwrap();
        assert!(!out.status.success(), "{spec} was accepted");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains(want),
            "{spec}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // The in-search VCF budget is `vcf_nodes=N` in a player spec, as in configs and flags.
    let out = bin().args(["arena", "--player", "x=uniform,vcf=300", "--player", "y=uniform"]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("unknown option 'vcf'") && err.contains("vcf_nodes"), "{err}");
}

/// A model directory that is not there: `arena` and `gomocup` say the same.
#[test]
fn a_missing_model_is_named_the_same_by_arena_and_gomocup() {
    let out = bin()
        .args(["arena", "--player", "x=model:/no/such/model", "--player", "y=uniform", "--games", "2", "--quiet"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("model directory /no/such/model does not exist"), "{err}");
    for model in ["/no/such/model", "model:/no/such/model"] {
        let out = bin().args(["gomocup", "--model", model]).stdin(std::process::Stdio::null()).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{model}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("model directory /no/such/model does not exist"), "{model}: {err}");
        assert!(out.stdout.is_empty(), "nothing but protocol lines on stdout");
    }
    // A misspelt evaluator is not a path.
    let out = bin().args(["gomocup", "--model", "heurstic"]).output().unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown evaluator 'heurstic'"));
}

#[test]
fn opening_study_with_the_heuristic_has_26_rows() {
    let d = tempfile::tempdir().unwrap();
    let out = bin()
        .args(["openings", "--model", "heuristic", "--rule", "renju", "--protocol", "rif", "--games", "1"])
        .args(["--playouts", "4", "--size", "9", "--stone-cap", "30", "--threads", "2", "--out"])
        .arg(d.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let mut r = csv::Reader::from_path(d.path().join("openings.csv")).unwrap();
    let header = r.headers().unwrap().clone();
    assert_eq!(&header[0], "code");
    let rows: Vec<csv::StringRecord> = r.records().map(|x| x.unwrap()).collect();
    assert_eq!(rows.len(), 26);
    let codes: Vec<&str> = rows.iter().map(|x| &x[0]).collect();
    assert_eq!(codes[0], "D1");
    assert_eq!(codes[25], "I13");
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    for row in &rows {
        assert_eq!(row.len(), header.len());
        assert_eq!(&row[col("games")], "1");
        let s: f64 = row[col("black_score")].parse().unwrap();
        assert!([0.0, 0.5, 1.0].contains(&s));
        // RIF after the opening: White decides the swap in every game.
        let swap: f64 = row[col("swap_rate")].parse().unwrap();
        assert!(swap == 0.0 || swap == 1.0);
    }
    assert_eq!(&rows[2][col("published")], "about equal, slightly White");
    let svg = std::fs::read_to_string(d.path().join("openings.svg")).unwrap();
    assert!(svg.starts_with("<svg") && svg.matches("<rect").count() == 26);
    let report = String::from_utf8(out.stdout).unwrap();
    assert!(report.contains("Spearman rank correlation"), "{report}");
}
