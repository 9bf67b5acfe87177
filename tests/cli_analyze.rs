//! Runs `renju-zero analyze` as a GUI would: JSON queries on stdin, JSON answers on stdout, with
//! the heuristic evaluator (`--model heuristic`; without `--model` the shipped model answers),
//! and with the shipped model where the heuristic's searches are too plain.
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::{Duration, Instant};

use renju_rules::notation::parse_point;
use renju_rules::{Board, Color, ForbiddenKind, Rule, Verdict};
use serde_json::Value;

struct Engine {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
}

impl Engine {
    fn start(extra: &[&str]) -> Engine {
        Engine::start_with("heuristic", extra)
    }
    fn start_with(model: &str, extra: &[&str]) -> Engine {
        let mut child = Command::new(env!("CARGO_BIN_EXE_renju-zero"))
            .args(["analyze", "--model", model])
            .args(extra)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for l in BufReader::new(stdout).lines().map_while(|l| l.ok()) {
                if tx.send(l).is_err() {
                    break;
                }
            }
        });
        Engine { child, stdin, lines }
    }
    fn send(&mut self, line: &str) {
        let w = self.stdin.as_mut().unwrap();
        writeln!(w, "{line}").unwrap();
        w.flush().unwrap();
    }
    /// The next answer, parsed.
    fn answer(&self) -> Value {
        let l = self.lines.recv_timeout(Duration::from_secs(60)).expect("no answer within 60 s");
        serde_json::from_str(&l).unwrap_or_else(|e| panic!("answer is not JSON ({e}): {l}"))
    }
    /// Closes stdin and checks the engine answers what is left and exits cleanly.
    fn close(mut self) -> Vec<Value> {
        self.stdin = None;
        let mut rest = Vec::new();
        while let Ok(l) = self.lines.recv_timeout(Duration::from_secs(60)) {
            rest.push(serde_json::from_str(&l).unwrap());
        }
        assert!(self.child.wait().unwrap().success());
        rest
    }
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array().unwrap().iter().map(|x| x.as_str().unwrap().to_string()).collect()
}

/// Black and White stone lists interleaved into a move list, Black first.
fn interleave(black: &str, white: &str) -> String {
    let (b, w): (Vec<&str>, Vec<&str>) = (black.split_whitespace().collect(), white.split_whitespace().collect());
    let mut out = Vec::new();
    for k in 0..b.len().max(w.len()) {
        out.extend(b.get(k).map(|s| format!("\"{s}\"")));
        out.extend(w.get(k).map(|s| format!("\"{s}\"")));
    }
    out.join(",")
}

#[test]
fn a_four_forces_the_five_and_a_vcf_is_named_with_its_line() {
    // Black to move with a four h8 i8 j8 k8 (g8 white): the five l8 is the only candidate.
    let mut e = Engine::start(&[]);
    let moves = interleave("h8 i8 j8 k8", "g8 a1 a3 o15");
    e.send(&format!(r#"{{"id":"four","moves":[{moves}],"visits":50}}"#));
    let a = e.answer();
    assert_eq!(a["id"], "four", "{a}");
    assert_eq!((a["player"].as_str(), a["color"].as_str()), (Some("first"), Some("black")), "{a}");
    let c = a["candidates"].as_array().unwrap();
    assert_eq!(c.len(), 1, "{a}");
    assert_eq!(c[0]["action"], "l8");
    assert_eq!(c[0]["value"], 1.0);
    assert_eq!(c[0]["wdl"], serde_json::json!([1.0, 0.0, 0.0]));
    assert_eq!(a["vcf"]["black"]["result"], "win");
    assert_eq!(strings(&a["vcf"]["black"]["line"]), ["l8"]);
    assert_eq!(a["vcf"]["white"]["result"], "none");
    e.close();

    // The VCF of four fours (rules/tests/vcf_positions.rs): columns k, l and n each make a simple
    // four (k11, l11, n11, blocked at k15, l12, n15), then m11 makes a straight four. With the
    // search's VCF check the winning move is the root's only child.
    let mut e = Engine::start(&["--vcf-nodes", "100000"]);
    let moves = interleave("k12 k13 k14 l10 l9 l8 n12 n13 n14", "k10 l7 n10 a1 d1 g1 a4 d4 g4");
    e.send(&format!(r#"{{"id":"vcf","initialStones":[{moves}],"visits":100}}"#));
    let a = e.answer();
    assert_eq!(a["vcf"]["black"]["result"], "win", "{a}");
    let line = strings(&a["vcf"]["black"]["line"]);
    assert_eq!(line.len(), 7, "{line:?}");
    assert!(["k11", "l11", "n11"].contains(&line[0].as_str()), "{line:?}");
    assert_eq!(line[6], "m11");
    let c = a["candidates"].as_array().unwrap();
    assert_eq!(c.len(), 1, "{a}");
    assert_eq!(c[0]["action"].as_str(), Some(line[0].as_str()));
    assert!(c[0]["value"].as_f64().unwrap() > 0.9, "{a}");
    assert_eq!(c[0]["pv"][0].as_str(), Some(line[0].as_str()));
    e.close();
}

#[test]
fn black_forbidden_points_of_known_positions() {
    // RULES.md §4.5: f8 g8 h6 h7 make h8 a double-three; d8 f8 h8 j8 make g8 a double-four.
    // White's stones are corners and edges far away.
    let mut e = Engine::start(&["--root-vcf-nodes", "0"]);
    let cases = [
        ("f8 g8 h6 h7", "a1 a3 o1 o3", "h8", "double-three", ForbiddenKind::DoubleThree),
        ("d8 f8 h8 j8", "a1 a3 o1 o3", "g8", "double-four", ForbiddenKind::DoubleFour),
    ];
    for (k, (black, white, point, kind, fk)) in cases.iter().enumerate() {
        e.send(&format!(r#"{{"id":{k},"moves":[{}],"visits":20}}"#, interleave(black, white)));
        let a = e.answer();
        assert_eq!(a["id"], k, "{a}");
        let f = a["forbidden"].as_array().unwrap();
        assert!(f.iter().any(|x| x["point"] == *point && x["kind"] == *kind), "{a}");
        // Every point listed is forbidden by the rules crate, of the kind given.
        let stones: Vec<_> = black
            .split_whitespace()
            .map(|s| (parse_point(s, 15).unwrap(), Color::Black))
            .chain(white.split_whitespace().map(|s| (parse_point(s, 15).unwrap(), Color::White)))
            .collect();
        let board = Board::with_stones(15, Rule::Renju, &stones).unwrap();
        for x in f {
            let p = parse_point(x["point"].as_str().unwrap(), 15).unwrap();
            let Verdict::Forbidden(got) = board.classify(p, Color::Black) else { panic!("{x} is not forbidden") };
            assert_eq!(got.to_string(), x["kind"].as_str().unwrap());
        }
        assert_eq!(board.classify(parse_point(point, 15).unwrap(), Color::Black), Verdict::Forbidden(*fk));
        // The forbidden point is never a candidate.
        assert!(a["candidates"].as_array().unwrap().iter().all(|c| c["action"] != *point), "{a}");
    }
    // Under freestyle nothing is forbidden.
    e.send(&format!(
        r#"{{"id":"free","rule":"freestyle","moves":[{}],"visits":20}}"#,
        interleave(cases[0].0, cases[0].1)
    ));
    assert_eq!(e.answer()["forbidden"], serde_json::json!([]));
    e.close();
}

#[test]
fn malformed_lines_get_errors_and_the_engine_keeps_going() {
    let mut e = Engine::start(&[]);
    let bad = [
        ("this is not json", Value::Null, "bad JSON"),
        (r#"{"id":"k","moves":["h8"],"colour":"black"}"#, "k".into(), "unknown field `colour`"),
        (r#"{"id":"r","rule":"gomoku"}"#, "r".into(), "unknown rule 'gomoku'"),
        (r#"{"id":"o","moves":["h8","i9","h8"]}"#, "o".into(), "moves[2] h8: point h8 is occupied"),
        (r#"{"id":"i","protocol":"rif","moves":["a1"]}"#, "i".into(), "moves[0] a1"),
        (
            r#"{"id":"f","moves":["f8","a1","g8","a3","h6","o1","h7","o3","h8"]}"#,
            "f".into(),
            "moves[8] h8: a forbidden point for Black (double-three)",
        ),
        (
            r#"{"id":"g","moves":["a1","b1","a2","b2","a3","b3","a4","b4","a5"]}"#,
            "g".into(),
            "the game is already over (a five: Black wins)",
        ),
    ];
    for (line, id, msg) in &bad {
        e.send(line);
        let a = e.answer();
        assert_eq!(&a["id"], id, "{a}");
        let err = a["error"].as_str().unwrap_or_else(|| panic!("no error for {line}: {a}"));
        assert!(err.contains(msg), "{line}: {err}");
    }
    e.send(r#"{"id":"good","moves":["h8","i9"],"visits":30,"top":3}"#);
    let a = e.answer();
    assert_eq!(a["id"], "good", "{a}");
    assert_eq!(a["isDuringSearch"], false);
    assert_eq!(a["candidates"].as_array().unwrap().len(), 3, "{a}");
    assert!(a["visits"].as_u64().unwrap() >= 30);
    e.close();
}

#[test]
fn reports_during_the_search_then_the_final_answer() {
    let mut e = Engine::start(&["--root-vcf-nodes", "0"]);
    e.send(r#"{"id":"r","moves":["h8","h9"],"seconds":1.5,"reportEvery":0.2,"top":2}"#);
    let mut partial = Vec::new();
    let last = loop {
        let a = e.answer();
        assert_eq!(a["id"], "r", "{a}");
        if a["isDuringSearch"] == true {
            partial.push(a["visits"].as_u64().unwrap());
        } else {
            break a;
        }
    };
    assert!(!partial.is_empty(), "no partial answer before the final one");
    assert!(partial.windows(2).all(|w| w[0] <= w[1]), "visits grow: {partial:?}");
    assert!(last["visits"].as_u64().unwrap() >= *partial.last().unwrap());
    assert!(last.get("terminated").is_none());
    let pv = strings(&last["candidates"][0]["pv"]);
    assert!(pv.len() >= 2, "{last}");
    assert_eq!(pv[0], last["candidates"][0]["action"].as_str().unwrap());
    e.close();
}

#[test]
fn a_timed_search_runs_its_time_out_however_often_it_reports() {
    // Reports every millisecond cut the search into slices too short for a batch of several
    // threads: a slice without a playout is not the end of a search whose tree can still grow.
    let mut e = Engine::start(&["--root-vcf-nodes", "0", "--threads", "4"]);
    let t0 = Instant::now();
    e.send(r#"{"id":"t","moves":["h8","h9"],"seconds":1.0,"reportEvery":0.001,"top":1}"#);
    let last = loop {
        let a = e.answer();
        if a["isDuringSearch"] == false {
            break a;
        }
    };
    assert!(t0.elapsed() >= Duration::from_millis(950), "ended after {:?}: {last}", t0.elapsed());
    assert!(last.get("terminated").is_none(), "{last}");
    e.close();
}

#[test]
fn terminate_stops_a_long_search_and_queries_run_concurrently() {
    let mut e = Engine::start(&["--root-vcf-nodes", "0"]);
    e.send(r#"{"id":"long","moves":["h8","h9"],"seconds":600,"reportEvery":0.2,"top":1}"#);
    // The long search is running (it reports) ...
    let a = e.answer();
    assert_eq!((&a["id"], &a["isDuringSearch"]), (&Value::from("long"), &Value::from(true)), "{a}");
    // ... while a short query on another position is answered in full.
    e.send(r#"{"id":"short","protocol":"rif","moves":["h8","h9","j10"],"visits":40}"#);
    let t0 = Instant::now();
    let short = loop {
        let a = e.answer();
        if a["id"] == "short" {
            break a;
        }
        assert_eq!(a["isDuringSearch"], true, "the long search ended by itself: {a}");
    };
    assert_eq!(short["isDuringSearch"], false);
    // RIF after three stones: White (the tentative second player) decides swap or keep.
    assert_eq!(short["decision"], "swap-or-keep", "{short}");
    for c in short["candidates"].as_array().unwrap() {
        assert!(c["action"] == "keep" || c["action"] == "swap", "{short}");
    }
    e.send(r#"{"action":"terminate","id":"long"}"#);
    let fin = loop {
        let a = e.answer();
        assert_eq!(a["id"], "long", "{a}");
        if a["isDuringSearch"] == false {
            break a;
        }
    };
    assert_eq!(fin["terminated"], true, "{fin}");
    let ack = e.answer();
    assert_eq!((&ack["action"], &ack["id"], &ack["terminated"]), (&"terminate".into(), &"long".into(), &1.into()));
    assert!(t0.elapsed() < Duration::from_secs(60), "terminated long before its 600 s");
    // Terminating what is not running is acknowledged with 0.
    e.send(r#"{"action":"terminate","id":"nothing"}"#);
    assert_eq!(e.answer()["terminated"], 0);
    assert!(e.close().is_empty());
}

#[test]
fn a_query_keeps_the_visits_of_the_last_tree_it_follows_from() {
    let mut e = Engine::start(&["--root-vcf-nodes", "0"]);
    let q = |id: &str, moves: &str, visits: u64| format!(r#"{{"id":"{id}","moves":[{moves}],"visits":{visits}}}"#);
    e.send(&q("first", r#""h8","h9","i8""#, 300));
    let a = e.answer();
    assert_eq!(a["visits"], 300, "{a}");
    // The same position again: the 300 visits are there, more than the 1 asked for.
    e.send(&q("again", r#""h8","h9","i8""#, 1));
    assert_eq!(e.answer()["visits"], 300);
    // Two moves on along the principal variation: the search starts with that node's visits.
    let pv = strings(&a["candidates"][0]["pv"]);
    assert!(pv.len() >= 2, "{a}");
    e.send(&q("on", &format!(r#""h8","h9","i8","{}","{}""#, pv[0], pv[1]), 1));
    let on = e.answer();
    assert!(on["visits"].as_u64().unwrap() > 1, "{on}");
    // Another position starts afresh.
    e.send(&q("other", r#""a1","o15""#, 1));
    assert_eq!(e.answer()["visits"], 1);
    e.close();
}

#[test]
fn a_search_stops_when_its_tree_is_full() {
    let mut e = Engine::start(&["--root-vcf-nodes", "0", "--max-tree-mb", "1"]);
    e.send(r#"{"id":"m","moves":["h8","h9"],"seconds":600}"#);
    let a = e.answer();
    assert_eq!((&a["id"], &a["isDuringSearch"]), (&Value::from("m"), &Value::from(false)), "{a}");
    assert!(a.get("terminated").is_none());
    // 1 MiB is 32,768 nodes of 32 bytes, and every evaluated visit adds a node's children
    // (dozens): a few thousand visits at most, where 600 s would give millions.
    let v = a["visits"].as_u64().unwrap();
    assert!((10..=5000).contains(&v), "{v} visits");
    e.close();
}

#[test]
fn the_first_candidate_is_the_move_the_brain_plays() {
    let positions = [
        r#""h8""#,
        r#""h8","h9""#,
        r#""h8","i9","j8""#,
        r#""h8","h9","i8","g8""#,
        r#""h8","i9","g7","i7","i8""#,
        r#""h8","j9","g9","i10","h10","h9""#,
    ];
    let q = |i: usize, moves: &str| format!(r#"{{"id":"p{i}","moves":[{moves}],"visits":400,"top":225}}"#);
    let num = |c: &Value, k: &str| c[k].as_f64().unwrap_or_else(|| panic!("no {k}: {c}"));
    // The shipped model (the heuristic's searches rank values as they rank visits). By the bound
    // at z = 0 (the best value among the moves with a tenth of the most visits): that move
    // first, each candidate's `lcb` its value, the others by visits.
    let mut e = Engine::start_with("shipped", &["--root-vcf-nodes", "0", "--threads", "1", "--lcb", "0"]);
    let mut not_most_visited = 0;
    for (i, moves) in positions.iter().enumerate() {
        e.send(&q(i, moves));
        let a = e.answer();
        let cs = a["candidates"].as_array().unwrap();
        let most = cs.iter().map(|c| num(c, "visits")).fold(0.0, f64::max);
        let floor = (most * 0.1).max(1.0);
        let first = &cs[0];
        assert!(num(first, "visits") >= floor, "{a}");
        for c in cs.iter().filter(|c| num(c, "visits") > 0.0) {
            assert!((num(c, "lcb") - num(c, "value")).abs() < 1e-4, "{c}");
            if num(c, "visits") >= floor {
                assert!(num(first, "lcb") >= num(c, "lcb") - 1e-4, "{} before {}: {a}", first["action"], c["action"]);
            }
        }
        assert!(cs[1..].windows(2).all(|w| num(&w[0], "visits") >= num(&w[1], "visits")), "{a}");
        not_most_visited += usize::from(num(first, "visits") < most);
    }
    e.close();
    assert!(not_most_visited > 0, "the bound chose the most visited move in every position");
    // --most-visited: the most visited first, and no bound.
    let mut e = Engine::start_with("shipped", &["--root-vcf-nodes", "0", "--threads", "1", "--most-visited"]);
    for (i, moves) in positions.iter().enumerate() {
        e.send(&q(i, moves));
        let a = e.answer();
        let cs = a["candidates"].as_array().unwrap();
        assert!(cs.windows(2).all(|w| num(&w[0], "visits") >= num(&w[1], "visits")), "{a}");
        assert!(cs.iter().all(|c| c.get("lcb").is_none()), "{a}");
    }
    e.close();
    // A negative z is refused, naming the flag.
    let out = Command::new(env!("CARGO_BIN_EXE_renju-zero"))
        .args(["analyze", "--model", "heuristic", "--lcb=-1"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--lcb -1 must be a number of standard errors"), "{err}");
}
