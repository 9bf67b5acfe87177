//! Runs `renju-zero gomocup --model heuristic` as a Gomocup manager would: a scripted game over
//! stdin/stdout, malformed commands, and a renju position where the natural reply is forbidden.
use renju_arena::wire::{parse_xy, EngineProcess};
use std::process::Stdio;
use std::time::Duration;

/// The brain under test, through the same line reader as the engine client
/// ([`renju_arena::wire`]): MESSAGE / DEBUG lines (allowed anywhere) are skipped.
struct Brain {
    process: EngineProcess,
}

impl Brain {
    fn start() -> Brain {
        let command: Vec<String> =
            [env!("CARGO_BIN_EXE_renju-zero"), "gomocup", "--model", "heuristic", "--playouts", "24"]
                .map(String::from)
                .into();
        Brain { process: EngineProcess::spawn(&command, Stdio::inherit()).unwrap() }
    }
    fn send(&mut self, text: &str) {
        self.process.send(&format!("{text}\n")).unwrap();
    }
    /// The next answer line.
    fn answer(&mut self) -> String {
        self.process.next_line(Duration::from_secs(60)).expect("the brain did not answer within 60 s")
    }
    fn ask(&mut self, text: &str) -> String {
        self.send(text);
        self.answer()
    }
    /// Waits for the brain to exit (after END) and checks it exited cleanly.
    fn exits_cleanly(&mut self) {
        assert!(self.process.wait().unwrap().success());
    }
}

/// Parses `x,y` and checks it lies on a 15x15 board.
fn point(answer: &str) -> (i64, i64) {
    let p = parse_xy(answer).unwrap_or_else(|e| panic!("'{answer}': {e}"));
    assert!((0..15).contains(&p.0) && (0..15).contains(&p.1), "{answer} is off the board");
    p
}

#[test]
fn plays_a_scripted_game_and_survives_malformed_commands() {
    let mut b = Brain::start();
    assert_eq!(b.ask("START 15"), "OK");
    b.send("INFO timeout_turn 2000");
    b.send("INFO timeout_match 0");
    b.send("INFO rule 4");
    assert!(b.ask("ABOUT").starts_with("name=\"renju-zero\""));
    // We play Black: BEGIN on the empty board.
    let mut occupied = vec![point(&b.ask("BEGIN"))];
    // The opponent plays the first free point of (0,0), (2,0), (4,0), ... (never a five of its
    // own); every answer must be a new point on the board. Three answers: Black has 4 stones,
    // so the game cannot be over yet.
    let mut x = 0;
    for _ in 0..3 {
        while occupied.contains(&(x, 0)) {
            x += 2;
        }
        occupied.push((x, 0));
        let a = b.ask(&format!("TURN {x},0"));
        let p = point(&a);
        assert!(!occupied.contains(&p), "answered {a}, an occupied point");
        occupied.push(p);
    }
    // Malformed and unknown commands get ERROR / UNKNOWN and the brain keeps going.
    assert!(b.ask("TURN 99,99").starts_with("ERROR"));
    assert!(b.ask("TURN seven").starts_with("ERROR"));
    assert!(b.ask("START many").starts_with("ERROR"));
    assert!(b.ask("RECTSTART 15,19").starts_with("ERROR"));
    assert!(b.ask("FLY AWAY").starts_with("UNKNOWN"));
    let (fx, fy) = *occupied.last().unwrap();
    assert!(b.ask(&format!("TURN {fx},{fy}")).starts_with("ERROR"), "an occupied TURN is an error");
    while occupied.contains(&(x, 0)) {
        x += 2;
    }
    let a = b.ask(&format!("TURN {x},0"));
    point(&a);
    b.send("END");
    b.exits_cleanly();
}

#[test]
fn never_sends_a_forbidden_black_move_under_renju() {
    let mut b = Brain::start();
    assert_eq!(b.ask("START 15"), "OK");
    b.send("INFO rule 4");
    // Black (us, field 1): f8 g8 h6 h7 m13; White (2): i9 j10 k11 l12 a1. White threatens the
    // five h8-i9-j10-k11-l12, and h8 is a double-three for Black (row f8 g8 h8, column h6 h7
    // h8), so the natural block is forbidden. Protocol coordinates: x = column, y = 14 - row.
    let board = "5,7,1\n8,6,2\n6,7,1\n9,5,2\n7,9,1\n10,4,2\n7,8,1\n11,3,2\n12,2,1\n0,14,2\n";
    b.send(&format!("YXBOARD\n{board}DONE"));
    let forbid = b.ask("YXSHOWFORBID");
    assert!(forbid.starts_with("FORBID ") && forbid.ends_with('.'), "{forbid}");
    assert!(forbid.contains("0707"), "h8 (7,7) must be listed: {forbid}");
    b.send(&format!("BOARD\n{board}DONE"));
    let a = b.answer();
    let p = point(&a);
    assert_ne!(p, (7, 7), "the brain played the forbidden h8");
    let taken = [(5, 7), (8, 6), (6, 7), (9, 5), (7, 9), (10, 4), (7, 8), (11, 3), (12, 2), (0, 14)];
    assert!(!taken.contains(&p), "{a} is occupied");
    b.send("END");
    b.exits_cleanly();
}

#[test]
fn swap2_answers_stones_or_swap() {
    let mut b = Brain::start();
    assert_eq!(b.ask("START 15"), "OK");
    b.send("INFO rule 1");
    let three = b.ask("SWAP2BOARD\nDONE");
    let stones: Vec<(i64, i64)> = three.split(' ').map(point).collect();
    assert_eq!(stones.len(), 3, "{three}");
    let a = b.ask("SWAP2BOARD\n7,7\n8,7\n9,9\nDONE");
    assert!(a == "SWAP" || point(&a) != (7, 7), "{a}");
    let a = b.ask("SWAP2BOARD\n7,7\n8,7\n9,9\n8,8\n8,6\nDONE");
    assert!(a == "SWAP" || !matches!(point(&a), (7, 7) | (8, 7) | (9, 9) | (8, 8) | (8, 6)), "{a}");
    b.send("END");
    b.exits_cleanly();
}

/// `pbrain-renju-zero` (a link to the binary, started without arguments as Piskvork and
/// c-gomoku-cli start brains) finds the model next to itself in `models/`, or takes
/// `$RENJU_ZERO_MODEL`.
#[test]
fn pbrain_launcher_finds_its_model_next_to_itself_or_in_the_environment() {
    use renju_trainer::model::{publish_model, ModelConfig};
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("pbrain-renju-zero");
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_renju-zero"), &link).unwrap();
    let cfg = ModelConfig::new(0, renju_rules::Rule::Renju, 15, renju_trainer::NetConfig::preset("tiny").unwrap());
    let vs = tch::nn::VarStore::new(tch::Device::Cpu);
    let _net = renju_trainer::Net::new(&vs.root(), &cfg.net, cfg.shape).unwrap();
    publish_model(&dir.path().join("models"), &vs, &cfg).unwrap();
    for env in [None, Some("heuristic")] {
        let mut cmd = std::process::Command::new(&link);
        cmd.env_remove("RENJU_ZERO_MODEL");
        if let Some(m) = env {
            cmd.env("RENJU_ZERO_MODEL", m);
        }
        let out = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .and_then(|mut c| {
                use std::io::Write;
                c.stdin.take().unwrap().write_all(b"START 15\nINFO timeout_turn 300\nINFO rule 4\nTURN 7,7\nEND\n")?;
                c.wait_with_output()
            })
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let answers: Vec<&str> = stdout.lines().filter(|l| !l.starts_with("MESSAGE")).collect();
        assert!(out.status.success(), "{env:?}: {}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(answers[0], "OK", "{env:?}: {stdout}");
        point(answers[1]);
        // Without the variable the model next to the link was used (no shipped-model fallback
        // notice), and stderr names the generation it resolved to.
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("falling back to the shipped model"), "{env:?}: {stderr}");
        let named = match env {
            None => format!("gomocup: model {}", dir.path().join("models").join("gen-000000").display()),
            Some(m) => format!("gomocup: model {m}"),
        };
        assert!(stderr.contains(&named), "{env:?}: {stderr}");
    }
}

/// A `pbrain-renju-zero` with no model beside it and no `$RENJU_ZERO_MODEL` plays the shipped
/// model (and says so on stderr), under the command stream c-gomoku-cli sends: the match's
/// INFO lines, the rule, a BOARD with the opening, then TURNs.
#[test]
fn pbrain_without_a_model_plays_the_shipped_one_under_a_match_managers_stream() {
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("pbrain-renju-zero");
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_renju-zero"), &link).unwrap();
    let out = std::process::Command::new(&link)
        .env_remove("RENJU_ZERO_MODEL")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            use std::io::Write;
            c.stdin.take().unwrap().write_all(
                b"START 15\nINFO timeout_turn 200\nINFO timeout_match 30000\nINFO time_left 30000\n\
                  INFO max_memory 350000000\nINFO game_type 1\nINFO rule 4\nINFO thread_num 1\n\
                  BOARD\n7,7,2\n8,7,1\n8,8,2\nDONE\nTURN 6,9\nEND\n",
            )?;
            c.wait_with_output()
        })
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    // Why (no model found), then which model plays, its summary once.
    assert!(stderr.contains("no RENJU_ZERO_MODEL and no model/ or models/ in"), "{stderr}");
    assert!(stderr.contains("falling back to the shipped model"), "{stderr}");
    assert!(stderr.contains("gomocup: model the shipped model ("), "{stderr}");
    assert_eq!(stderr.matches("the shipped model (").count(), 1, "{stderr}");
    let answers: Vec<&str> = stdout.lines().filter(|l| !l.starts_with("MESSAGE")).collect();
    assert_eq!(answers[0], "OK", "{stdout}");
    let taken = [(7, 7), (8, 7), (8, 8), (6, 9)];
    for a in &answers[1..3] {
        let p = point(a);
        assert!((0..15).contains(&p.0) && (0..15).contains(&p.1) && !taken.contains(&p), "{a}: {stdout}");
    }
    assert_ne!(answers[1], answers[2], "{stdout}");
}

/// The two VCF budgets have one name each: `--root-vcf-nodes` (the solver once at the root
/// before each move) and `--vcf-nodes` (the check at node expansion, as in `openings` and the
/// config's `vcf_nodes`); the help says the brain plays freestyle until told the rule.
#[test]
fn vcf_budget_flags_and_the_rule_in_the_help() {
    let run = |args: &[&str]| {
        let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_renju-zero"));
        c.args(["gomocup", "--model", "heuristic", "--playouts", "8"]).args(args);
        c.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut child = c.spawn().unwrap();
        use std::io::Write;
        child.stdin.take().unwrap().write_all(b"START 15\nBEGIN\nTURN 8,8\nEND\n").unwrap();
        child.wait_with_output().unwrap()
    };
    let out = run(&["--root-vcf-nodes", "0", "--vcf-nodes", "50"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8(out.stdout).unwrap();
    let answers: Vec<&str> = stdout.lines().filter(|l| !l.starts_with("MESSAGE")).collect();
    assert_eq!(answers[..2], ["OK", "7,7"], "{stdout}");
    point(answers[2]);
    // Without INFO rule the brain says it plays freestyle.
    assert!(stdout.lines().any(|l| l.starts_with("MESSAGE rule: freestyle")), "{stdout}");
    let out = run(&["--search-vcf-nodes", "50"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unexpected argument '--search-vcf-nodes'"));
    let help =
        std::process::Command::new(env!("CARGO_BIN_EXE_renju-zero")).args(["gomocup", "--help"]).output().unwrap();
    let help = String::from_utf8(help.stdout).unwrap();
    assert!(help.contains("freestyle") && help.contains("INFO rule 4"), "{help}");
    assert!(help.contains("--root-vcf-nodes") && help.contains("--vcf-nodes"), "{help}");
}

/// `--threads N` searches with N threads (answers as one thread does, a legal move), takes the
/// manager's `INFO thread_num`, and refuses 0 threads (and a policy temperature of 0, a negative
/// `--lcb`) naming the flag; `--lcb 0` and `--most-visited` answer legal moves too.
#[test]
fn threads_flag_and_info_thread_num() {
    let run = |args: &[&str], script: &[u8]| {
        let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_renju-zero"));
        c.args(["gomocup", "--model", "heuristic", "--playouts", "64"]).args(args);
        c.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut child = c.spawn().unwrap();
        use std::io::Write;
        child.stdin.take().unwrap().write_all(script).unwrap();
        child.wait_with_output().unwrap()
    };
    for (args, script) in [
        (&["--threads", "2"][..], &b"START 15\nINFO rule 4\nBEGIN\nTURN 8,8\nTURN 0,0\nEND\n"[..]),
        (&["--threads", "3"][..], &b"START 15\nINFO thread_num 2\nINFO rule 4\nBEGIN\nTURN 8,8\nEND\n"[..]),
        (&["--lcb", "0"][..], &b"START 15\nINFO rule 4\nBEGIN\nTURN 8,8\nTURN 0,0\nEND\n"[..]),
        (&["--most-visited"][..], &b"START 15\nINFO rule 4\nBEGIN\nTURN 8,8\nTURN 0,0\nEND\n"[..]),
    ] {
        let out = run(args, script);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let stdout = String::from_utf8(out.stdout).unwrap();
        let answers: Vec<&str> = stdout.lines().filter(|l| !l.starts_with("MESSAGE")).collect();
        assert_eq!(answers[..2], ["OK", "7,7"], "{stdout}");
        for a in &answers[2..] {
            let p = point(a);
            assert!(p != (7, 7) && p != (8, 8) && p != (0, 0), "{stdout}");
        }
    }
    let out = run(&["--threads", "0"], b"END\n");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--threads must be at least 1"));
    let out = run(&["--policy-temperature", "0"], b"END\n");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--policy-temperature 0 must be a positive number"));
    let out = run(&["--lcb=-1"], b"END\n");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--lcb -1 must be a number of standard errors, 0 or more"));
    let out = run(&["--lcb", "1", "--most-visited"], b"END\n");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot be used with"), "{out:?}");
}

/// Yixin-Board's extensions through the CLI (the candidate lines are MESSAGEs, which the reader
/// skips; the brain's module tests check them): `YXNBEST 3` plays a recorded move, the balance
/// commands answer one and two empty points, malformed counts get ERROR, and `YXSHOWINFO`
/// answers nothing but MESSAGEs (the next answer is the following command's).
#[test]
fn yixin_nbest_balance_and_showinfo() {
    let mut b = Brain::start();
    assert_eq!(b.ask("START 15"), "OK");
    b.send("INFO rule 4");
    b.send("YXBOARD\n7,7,2\n8,8,1\n7,8,2\nDONE");
    let mv = b.ask("YXNBEST 3");
    let p = point(&mv);
    assert!(![(7, 7), (8, 8), (7, 8)].contains(&p), "{mv} is occupied");
    assert!(b.ask(&format!("TURN {mv}")).starts_with("ERROR"), "YXNBEST's move is recorded");
    assert!(b.ask("YXNBEST x").starts_with("ERROR"));
    assert!(b.ask("YXNBEST 0").starts_with("ERROR"));
    b.send("YXSHOWINFO");
    let one = b.ask("YXBALANCEONE 0");
    let q = point(&one);
    assert!(![(7, 7), (8, 8), (7, 8), p].contains(&q), "{one} is occupied");
    let two: Vec<(i64, i64)> = b.ask("YXBALANCETWO").split(' ').map(point).collect();
    assert_eq!(two.len(), 2);
    assert_ne!(two[0], two[1]);
    assert!(two.iter().all(|t| ![(7, 7), (8, 8), (7, 8), p, q].contains(t)), "{two:?}");
    b.send("END");
    b.exits_cleanly();
}
