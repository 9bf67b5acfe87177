//! Runs the `renju-zero rules` binary end to end.
use std::io::Write;
use std::process::{Command, Stdio};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_renju-zero"))
}

/// Run the binary with `args`, `input` on stdin; its output once it exits.
fn pipe(args: &[&str], input: &str) -> std::process::Output {
    let mut child = bin().args(args).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    child.wait_with_output().unwrap()
}

#[test]
fn classify_reports_each_line_and_fails_on_a_malformed_one() {
    let input = concat!(
        r#"{"black":["f8","g8","h6","h7"],"white":["a1","a2"],"move":"h8"}"#,
        "\n",
        r#"{"black":["d8","e8","f8","g8"],"white":[],"move":"h8","color":"black"}"#,
        "\n",
        r#"{"black":["d8","e8","f8","g8","i8"],"white":[],"move":"h8"}"#,
        "\n",
        r#"{"black":[],"white":["d8","e8","f8","g8","i8"],"move":"h8","color":"white"}"#,
        "\n",
        r#"{"black":["h8"],"white":[],"move":"h8"}"#,
        "\n",
        r#"{"black":["z99"],"move":"h8"}"#,
        "\n",
        r#"{"black":["f8","g8","h6","h7"],"move":"h8"}"#,
        "\n",
    );
    let out = pipe(&["rules", "classify", "--rule", "renju", "--size", "15"], input);
    let lines: Vec<serde_json::Value> =
        String::from_utf8(out.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 7);
    assert_eq!(lines[0], serde_json::json!({"move":"h8","result":"double-three"}));
    assert_eq!(lines[1], serde_json::json!({"move":"h8","result":"five"}));
    assert_eq!(lines[2], serde_json::json!({"move":"h8","result":"overline"}));
    assert_eq!(lines[3], serde_json::json!({"move":"h8","result":"five"}), "White's overline wins");
    assert_eq!(lines[4], serde_json::json!({"move":"h8","result":"occupied"}));
    assert_eq!(lines[5]["line"], 6);
    assert!(lines[5]["error"].as_str().unwrap().contains("z99"));
    assert_eq!(lines[6], serde_json::json!({"move":"h8","result":"double-three"}));
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn classify_exits_zero_when_all_lines_are_good() {
    let input = "{\"black\":[\"d8\",\"e8\",\"f8\",\"g8\",\"i8\"],\"move\":\"h8\"}\n";
    let out = pipe(&["rules", "classify", "--rule", "standard"], input);
    assert_eq!(String::from_utf8(out.stdout).unwrap().trim(), r#"{"move":"h8","result":"legal"}"#);
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn show_marks_forbidden_points() {
    // Black f8 g8 h6 h7 (white far away): h8 is a double-three.
    let out = bin().args(["rules", "show", "f8 a1 g8 a2 h6 a3 h7 a4"]).output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let row8 = text.lines().find(|l| l.starts_with(" 8 ")).unwrap();
    // Columns: a at char 4, each column 2 chars wide; h is column 7.
    assert_eq!(row8.chars().nth(4 + 2 * 7), Some('3'), "{text}");
    assert!(text.contains("h8 double-three"), "{text}");
    let bad = bin().args(["rules", "show", "h8 p16"]).output().unwrap();
    assert!(!bad.status.success());
    assert!(String::from_utf8(bad.stderr).unwrap().contains("p16"));
}

#[test]
fn classify_numbers_lines_counting_blank_ones_and_names_bad_input() {
    // Line 2 is not JSON, line 3 is blank (skipped, no output), line 4 has an unknown colour,
    // line 5 lacks `move`; the good lines still get answers, in order.
    let input = "{\"black\":[\"h8\"],\"white\":[\"h9\"],\"move\":\"j10\"}\nnot json\n\n\
                 {\"move\":\"h8\",\"color\":\"red\"}\n{\"black\":[]}\n{\"white\":[\"h8\"],\"move\":\"H8\",\"color\":\"white\"}\n";
    let out = pipe(&["rules", "classify"], input);
    let lines: Vec<serde_json::Value> =
        String::from_utf8(out.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 5);
    assert_eq!(lines[0], serde_json::json!({"move":"j10","result":"legal"}));
    assert_eq!(lines[1]["line"], 2);
    assert!(lines[1]["error"].as_str().unwrap().contains("JSON"));
    assert_eq!(lines[2]["line"], 4);
    assert!(lines[2]["error"].as_str().unwrap().contains("red"));
    assert_eq!(lines[3]["line"], 5);
    assert!(lines[3]["error"].as_str().unwrap().contains("move"));
    assert_eq!(lines[4], serde_json::json!({"move":"H8","result":"occupied"}));
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn vcf_answers_win_none_unknown_and_reports_a_malformed_line() {
    // Line 1: Black's four fours (rules/tests/vcf_positions.rs); line 2: the same stones, White
    // to move (no VCF); line 3: the same with a budget of 1 node per position is `unknown`,
    // checked by a second run; line 4: a bad colour.
    let chain = r#""black":["k12","k13","k14","l10","l9","l8","n12","n13","n14"],"white":["k10","l7","n10"]"#;
    let input =
        format!("{{{chain},\"color\":\"black\"}}\n{{{chain},\"color\":\"white\"}}\n\n{{{chain},\"color\":\"red\"}}\n");
    let run = |nodes: &str| -> (Vec<String>, Option<i32>) {
        let out = pipe(&["rules", "vcf", "--rule", "renju", "--size", "15", "--nodes", nodes], &input);
        (String::from_utf8(out.stdout).unwrap().lines().map(String::from).collect(), out.status.code())
    };
    let (text, code) = run("100000");
    // The field order of the interface: result first.
    assert!(text[0].starts_with(r#"{"result":"win","line":["#), "{}", text[0]);
    let lines: Vec<serde_json::Value> = text.iter().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 3);
    assert_eq!(lines[0]["result"], "win");
    let line: Vec<&str> = lines[0]["line"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    assert_eq!(line.len(), 7);
    assert_eq!(line[6], "m11");
    assert_eq!(lines[1], serde_json::json!({"result":"none"}));
    assert_eq!(lines[2]["line"], 4);
    assert!(lines[2]["error"].as_str().unwrap().contains("red"));
    assert_eq!(code, Some(1));
    let (text, _) = run("1");
    assert_eq!(text[0], r#"{"result":"unknown"}"#);
}

#[test]
fn classify_and_vcf_refuse_unknown_keys_naming_them() {
    // `colour` is not a key: refused, never read as the default colour (Black, for whom h8 would
    // be a double-three).
    let out = pipe(
        &["rules", "classify"],
        "{\"black\":[\"f8\",\"g8\",\"h6\",\"h7\"],\"move\":\"h8\",\"colour\":\"white\"}\n",
    );
    let line: serde_json::Value = serde_json::from_str(String::from_utf8(out.stdout).unwrap().trim()).unwrap();
    assert_eq!(line["line"], 1);
    let e = line["error"].as_str().unwrap();
    assert!(e.contains("unknown field `colour`") && e.contains("`color`"), "{e}");
    assert_eq!(out.status.code(), Some(1));
    let out = pipe(&["rules", "vcf"], "{\"black\":[\"h8\"],\"attacker\":\"black\"}\n");
    assert!(String::from_utf8(out.stdout).unwrap().contains("unknown field `attacker`"));
    assert_eq!(out.status.code(), Some(1));
}

/// Row 8 of a `rules show` board (`a` at char 4, each column 2 chars wide).
fn row8(text: &str) -> String {
    text.lines().find(|l| l.starts_with(" 8 ")).unwrap().to_string()
}

#[test]
fn show_stops_at_a_five() {
    // Black d8 e8 f8 g8 h8 is a five on move 9.
    let out = bin().args(["rules", "show", "d8 a1 e8 a2 f8 a3 g8 a4 h8"]).output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.ends_with("Black h8 (move 9) makes five: Black wins\n"), "{text}");
    // Moves after the five: the board at the five, and an error naming the moves not played.
    let out = bin().args(["rules", "show", "d8 a1 e8 a2 f8 a3 g8 a4 h8 o15 n14"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("Black h8 (move 9) makes five: Black wins"), "{text}");
    assert!(!text.lines().any(|l| l.starts_with("15 ") && l.contains('O')), "o15 is not played: {text}");
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("the game ended at move 9; the 2 move(s) after it are not played: o15 n14"), "{err}");
    // White's overline wins under renju (and is no five under standard).
    let out = bin().args(["rules", "show", "a1 d8 a3 e8 a5 f8 a7 h8 a9 i8 a11 g8"]).output().unwrap();
    assert!(String::from_utf8(out.stdout).unwrap().contains("White g8 (move 12) makes five: White wins"));
    let out =
        bin().args(["rules", "show", "--rule", "standard", "a1 d8 a3 e8 a5 f8 a7 h8 a9 i8 a11 g8"]).output().unwrap();
    assert!(out.status.success());
    assert!(!String::from_utf8(out.stdout).unwrap().contains("wins"));
}

#[test]
fn show_stops_at_a_forbidden_black_move() {
    // Black f8 g8 h6 h7, then h8: a double-three (RULES.md §4), so Black loses; the stone is not
    // placed and the board shows the point's mark.
    let out = bin().args(["rules", "show", "f8 a1 g8 a2 h6 a3 h7 a4 h8"]).output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.ends_with("Black h8 (move 9) is forbidden (double-three): Black loses; the stone is not placed\n"),
        "{text}"
    );
    assert_eq!(row8(&text).chars().nth(4 + 2 * 7), Some('3'), "{text}");
    // Under freestyle the same move is an ordinary one.
    let out = bin().args(["rules", "show", "--rule", "freestyle", "f8 a1 g8 a2 h6 a3 h7 a4 h8 o15"]).output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(row8(&text).chars().nth(4 + 2 * 7), Some('X'), "{text}");
    assert!(!text.contains("forbidden ("), "{text}");
}

#[test]
fn openings_lists_the_26_with_their_stones() {
    let out = bin().args(["rules", "openings"]).output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let rows: Vec<Vec<&str>> = text.lines().skip(1).map(|l| l.split_whitespace().collect()).collect();
    assert_eq!(rows.len(), 26, "{text}");
    // index, code, name, black, white, black, Chinese name.
    assert_eq!(rows[0], ["0", "D1", "Kansei", "h8", "h9", "h10", "寒星"]);
    assert_eq!(rows[3], ["3", "D4", "Kagetsu", "h8", "h9", "i9", "花月"]);
    assert_eq!(rows[13], ["13", "I1", "Chosei", "h8", "i9", "j10", "长星"]);
    assert_eq!(rows[25], ["25", "I13", "Suisei", "h8", "i9", "f6", "彗星"]);
    // Around the centre of other sizes: D4 on 9x9 is e5 e6 f6.
    let out = bin().args(["rules", "openings", "--size", "9"]).output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.lines()
            .any(|l| l.split_whitespace().collect::<Vec<_>>() == ["3", "D4", "Kagetsu", "e5", "e6", "f6", "花月"]),
        "{text}"
    );
    // `rules show` takes points, and says where the openings are.
    let help = String::from_utf8(bin().args(["rules", "show", "--help"]).output().unwrap().stdout).unwrap();
    assert!(help.contains("rules openings"), "{help}");
}
