//! Runs a tiny `renju-zero arena` match (heuristic against uniform, 9x9, the RIF openings) and
//! exports its games with `renju-zero games export`: one file per game, each SGF parsing back
//! to the record's moves, each `.psq` holding the same stones; bad input named.
use std::path::Path;
use std::process::{Command, Output};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_renju-zero"))
}

fn run(args: &[&str], paths: &[&Path]) -> Output {
    let mut c = bin();
    c.args(args);
    for p in paths {
        c.arg(p);
    }
    c.output().unwrap()
}

/// The nodes of a one-variation SGF game tree: each node's `(property, value)` pairs, values
/// unescaped (`\x` is `x`).
fn parse_sgf(text: &str) -> Vec<Vec<(String, String)>> {
    let body = text.trim().strip_prefix('(').and_then(|t| t.strip_suffix(')')).expect("one game tree");
    let mut nodes: Vec<Vec<(String, String)>> = Vec::new();
    let mut ident = String::new();
    let mut chars = body.chars();
    while let Some(c) = chars.next() {
        match c {
            ';' => nodes.push(Vec::new()),
            '[' => {
                let mut value = String::new();
                while let Some(v) = chars.next() {
                    match v {
                        '\\' => value.push(chars.next().expect("escape at the end")),
                        ']' => break,
                        _ => value.push(v),
                    }
                }
                nodes.last_mut().expect("a property before the first node").push((ident.clone(), value));
            }
            c if c.is_ascii_uppercase() => {
                // A property identifier (a value list after it keeps it).
                ident.clear();
                ident.push(c);
                while let Some(&n) = chars.as_str().as_bytes().first() {
                    if !(n as char).is_ascii_uppercase() {
                        break;
                    }
                    ident.push(n as char);
                    chars.next();
                }
            }
            c if c.is_whitespace() => {}
            c => panic!("unexpected {c:?} in {text}"),
        }
    }
    nodes
}

/// SGF point (column from the left, row from the top) to notation on a `size` board.
fn sgf_to_notation(v: &str, size: usize) -> String {
    let b = v.as_bytes();
    assert_eq!(b.len(), 2, "{v}");
    let row_from_top = (b[1] - b'a') as usize;
    format!("{}{}", b[0] as char, size - row_from_top)
}

#[test]
fn an_arena_match_exports_as_sgf_and_psq() {
    let d = tempfile::tempdir().unwrap();
    let arena = d.path().join("arena");
    let o = run(
        &[
            "arena",
            "--player",
            "h=heuristic,playouts=6",
            "--player",
            "u=uniform,playouts=6",
            "--games",
            "2",
            "--size",
            "9",
            "--seed",
            "3",
            "--threads",
            "1",
            "--quiet",
            "--out",
        ],
        &[&arena],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let records: Vec<serde_json::Value> = std::fs::read_to_string(arena.join("games.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(records.len(), 2);

    let sgf_dir = d.path().join("sgf");
    let o = run(&["games", "export", "--format", "sgf", "--size", "9", "--from"], &[&arena.join("games.jsonl")]);
    assert!(!o.status.success(), "--out is required");
    let o =
        run(&["games", "export", "--format", "sgf", "--size", "9", "--from"], &[&arena, Path::new("--out"), &sgf_dir]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let mut files: Vec<String> =
        std::fs::read_dir(&sgf_dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().to_string()).collect();
    files.sort();
    assert_eq!(files, ["arena-game-0000.sgf", "arena-game-0001.sgf"]);
    for rec in &records {
        let index = rec["index"].as_u64().unwrap();
        let text = std::fs::read_to_string(sgf_dir.join(format!("arena-game-{index:04}.sgf"))).unwrap();
        let nodes = parse_sgf(&text);
        let root = &nodes[0];
        let prop = |k: &str| root.iter().find(|(p, _)| p == k).map(|(_, v)| v.as_str());
        assert_eq!((prop("GM"), prop("SZ"), prop("RU")), (Some("4"), Some("9"), Some("renju")), "{text}");
        assert_eq!(prop("PB"), rec["black"].as_str());
        assert_eq!(prop("PW"), rec["white"].as_str());
        let want_re = match rec["result"].as_str().unwrap() {
            "black" => "B+",
            "white" => "W+",
            _ => "0",
        };
        assert_eq!(prop("RE"), Some(want_re), "{text}");
        let comment = prop("C").unwrap();
        let decisions: Vec<&str> = rec["decisions"].as_array().unwrap().iter().map(|d| d.as_str().unwrap()).collect();
        assert!(comment.contains(&format!("decisions: {}", decisions.join(" "))), "{comment}");
        // Every other node is one stone, Black first, alternating.
        let mut moves = Vec::new();
        for (k, node) in nodes[1..].iter().enumerate() {
            assert_eq!(node.len(), 1, "{node:?}");
            let (colour, point) = &node[0];
            assert_eq!(colour, if k % 2 == 0 { "B" } else { "W" }, "{text}");
            moves.push(sgf_to_notation(point, 9));
        }
        assert_eq!(moves.join(" "), rec["moves"].as_str().unwrap(), "{text}");
    }

    // The same games as .psq, one of them alone with --game.
    let psq_dir = d.path().join("psq");
    let games = arena.join("games.jsonl");
    let o = run(
        &["games", "export", "--format", "psq", "--size", "9", "--game", "1", "--from"],
        &[&games, Path::new("--out"), &psq_dir],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let files: Vec<_> = std::fs::read_dir(&psq_dir).unwrap().collect();
    assert_eq!(files.len(), 1);
    let text = std::fs::read_to_string(psq_dir.join("arena-game-0001.psq")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "Piskvorky 9x9, 11:11, 0");
    let rec = records.iter().find(|r| r["index"] == 1).unwrap();
    let stones: Vec<&str> = rec["moves"].as_str().unwrap().split_whitespace().collect();
    assert_eq!(lines.len(), 1 + stones.len() + 3, "{text}");
    for (line, stone) in lines[1..].iter().zip(&stones) {
        let f: Vec<usize> = line.split(',').map(|x| x.parse().unwrap()).collect();
        let notation = format!("{}{}", (b'a' + f[0] as u8 - 1) as char, 9 + 1 - f[1]);
        assert_eq!((notation.as_str(), f[2]), (*stone, 0), "{text}");
    }
    assert_eq!(&lines[lines.len() - 3..], [rec["black"].as_str().unwrap(), rec["white"].as_str().unwrap(), "-1"]);

    // Bad input is named.
    let err = |o: &Output| String::from_utf8_lossy(&o.stderr).to_string();
    let o = run(
        &["games", "export", "--format", "psq", "--size", "9", "--game", "5", "--from"],
        &[&games, Path::new("--out"), &psq_dir],
    );
    assert!(!o.status.success() && err(&o).contains("no game with index 5"), "{}", err(&o));
    let o = run(&["games", "export", "--format", "pgn", "--from"], &[&games, Path::new("--out"), &psq_dir]);
    assert!(!o.status.success() && err(&o).contains("invalid value 'pgn'"), "{}", err(&o));
    let missing = d.path().join("nothing.jsonl");
    let o = run(&["games", "export", "--format", "sgf", "--from"], &[&missing, Path::new("--out"), &psq_dir]);
    assert!(!o.status.success() && err(&o).contains("nothing.jsonl does not exist"), "{}", err(&o));
    let bad = d.path().join("bad").join("games.jsonl");
    std::fs::create_dir_all(bad.parent().unwrap()).unwrap();
    let first = std::fs::read_to_string(&games).unwrap().lines().next().unwrap().to_string();
    std::fs::write(&bad, format!("{first}\n{{oops\n")).unwrap();
    let o =
        run(&["games", "export", "--format", "sgf", "--size", "9", "--from"], &[&bad, Path::new("--out"), &psq_dir]);
    assert!(!o.status.success() && err(&o).contains(&format!("{} line 2", bad.display())), "{}", err(&o));
    // 9x9 games read as 15x15 do not replay: the RIF centre stone is elsewhere.
    let o = run(&["games", "export", "--format", "sgf", "--from"], &[&games, Path::new("--out"), &psq_dir]);
    assert!(!o.status.success() && err(&o).contains("were its games played on 15x15"), "{}", err(&o));
}
