//! The `renju-zero rules ...` commands as library functions (the binary only wires clap).
//!
//! - [`show`]: a game as an ASCII board with Black's forbidden points marked by kind.
//! - [`classify_jsonl`]: JSON lines in, one verdict per line out. Input line:
//!   `{"black":["h8",...],"white":["h9",...],"move":"j10","color":"black"}` (`color` optional,
//!   default black). Output: `{"move":"j10","result":R}` with R one of `five`, `double-three`,
//!   `double-four`, `overline`, `legal`, `occupied` (`five` = the move wins; under renju that
//!   includes White's overline), or `{"line":N,"error":"..."}` (N 1-based) for a malformed line.
//! - [`vcf_jsonl`]: JSON lines `{"black":[..],"white":[..],"color":"black"}` (`color` = the
//!   attacker, to move; default black) in, one VCF verdict per line out:
//!   `{"result":"win","line":["h8","h9",..]}`, `{"result":"none"}` (no VCF: the search was
//!   exhaustive), `{"result":"unknown"}` (node budget spent); malformed lines as above.

use crate::board::{Board, Color, ForbiddenKind, Point, Rule, Verdict};
use crate::notation::{board_to_ascii, format_point, parse_moves, parse_point};
use crate::vcf::{vcf, Limits, Vcf};
use std::io::{BufRead, Write};

/// Errors of [`show`].
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    #[error(transparent)]
    Size(#[from] crate::board::SizeError),
    #[error(transparent)]
    Notation(#[from] crate::notation::NotationError),
}

/// The board after `moves_text` (alternating Black, White from the first move) as ASCII, with
/// Black's forbidden points marked (`3`/`4`/`6`, renju only) and listed.
/// Errors: bad size, bad/repeated/empty move list (messages name the token).
pub fn show(rule: Rule, size: usize, moves_text: &str) -> Result<String, CliError> {
    let mut board = Board::new(size, rule)?;
    let moves = parse_moves(moves_text, size)?;
    for (i, p) in moves.into_iter().enumerate() {
        board.place(p, if i % 2 == 0 { Color::Black } else { Color::White });
    }
    Ok(board_to_ascii(&board, rule == Rule::Renju))
}

/// The result word of a verdict, as printed by `rules classify`.
pub fn verdict_word(v: Verdict) -> &'static str {
    match v {
        Verdict::Five => "five",
        Verdict::Forbidden(ForbiddenKind::DoubleThree) => "double-three",
        Verdict::Forbidden(ForbiddenKind::DoubleFour) => "double-four",
        Verdict::Forbidden(ForbiddenKind::Overline) => "overline",
        Verdict::Legal => "legal",
        Verdict::Occupied => "occupied",
    }
}

#[derive(serde::Deserialize)]
struct Query {
    #[serde(default)]
    black: Vec<String>,
    #[serde(default)]
    white: Vec<String>,
    #[serde(rename = "move")]
    mv: Option<String>,
    color: Option<String>,
}

/// What is wrong with a `rules classify` or `rules vcf` line (the message goes into its `error`
/// field).
#[derive(Debug, thiserror::Error)]
pub enum ClassifyError {
    /// Not a JSON object of the expected shape.
    #[error("bad JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// No `move` field.
    #[error("missing field `move`")]
    MissingMove,
    /// `color` is neither black nor white.
    #[error("unknown color `{0}` (expected black or white)")]
    UnknownColor(String),
    /// Unsupported board size.
    #[error(transparent)]
    Size(#[from] crate::board::SizeError),
    /// A point of the `black` / `white` list or the `move` does not parse.
    #[error("{field}: {source}")]
    BadPoint { field: &'static str, source: crate::notation::NotationError },
    /// A point listed twice.
    #[error("{field}: point `{token}` is listed twice (also in {first})")]
    Twice { field: &'static str, token: String, first: &'static str },
}

/// The position and colour of a query line: the `black` and `white` stone lists (on the board,
/// no point twice) and `color` (default black).
fn parse_position(q: &Query, rule: Rule, size: usize) -> Result<(Board, Color), ClassifyError> {
    let color = match q.color.as_deref().map(|c| c.to_ascii_lowercase()) {
        None => Color::Black,
        Some(c) if c == "black" => Color::Black,
        Some(c) if c == "white" => Color::White,
        Some(c) => return Err(ClassifyError::UnknownColor(c)),
    };
    let mut board = Board::new(size, rule)?;
    let mut seen: Vec<(Point, &'static str)> = Vec::new();
    for (list, c) in [(&q.black, Color::Black), (&q.white, Color::White)] {
        let field = if c == Color::Black { "black" } else { "white" };
        for tok in list {
            let p = parse_point(tok, size).map_err(|source| ClassifyError::BadPoint { field, source })?;
            if let Some(&(_, first)) = seen.iter().find(|(s, _)| *s == p) {
                return Err(ClassifyError::Twice { field, token: tok.clone(), first });
            }
            seen.push((p, field));
            board.place(p, c);
        }
    }
    Ok((board, color))
}

/// Classify one JSON line: the move as written and its verdict.
pub fn classify_line(line: &str, rule: Rule, size: usize) -> Result<(String, Verdict), ClassifyError> {
    let q: Query = serde_json::from_str(line)?;
    let mv = q.mv.clone().ok_or(ClassifyError::MissingMove)?;
    let (board, color) = parse_position(&q, rule, size)?;
    let p = parse_point(&mv, size).map_err(|source| ClassifyError::BadPoint { field: "move", source })?;
    Ok((mv, board.classify(p, color)))
}

/// Run `answer` on each non-blank JSON line of `reader` and write its JSON reply as one line to
/// `writer`; a line for which `answer` fails gets `{"line":N,"error":..}` (N 1-based). Returns
/// `Ok(true)` when every line was well formed; I/O errors are returned.
fn jsonl<R: BufRead, W: Write, T: serde::Serialize>(
    reader: R,
    mut writer: W,
    mut answer: impl FnMut(&str) -> Result<T, ClassifyError>,
) -> std::io::Result<bool> {
    let mut all_ok = true;
    for (i, line) in reader.lines().enumerate() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let out = match answer(&line) {
            Ok(reply) => serde_json::to_string(&reply).map_err(std::io::Error::other)?,
            Err(e) => {
                all_ok = false;
                serde_json::json!({"line": i + 1, "error": e.to_string()}).to_string()
            }
        };
        writeln!(writer, "{out}")?;
    }
    writer.flush()?;
    Ok(all_ok)
}

/// `rules classify`: read JSON lines from `reader`, write one JSON line per non-blank input line
/// to `writer`. Returns `Ok(true)` when every line was well formed; I/O errors are returned.
pub fn classify_jsonl<R: BufRead, W: Write>(reader: R, writer: W, rule: Rule, size: usize) -> std::io::Result<bool> {
    jsonl(reader, writer, |line| {
        let (mv, v) = classify_line(line, rule, size)?;
        Ok(serde_json::json!({"move": mv, "result": verdict_word(v)}))
    })
}

/// One `rules vcf` answer, serialised in this field order: `{"result":"win","line":[..]}`,
/// `{"result":"none"}` or `{"result":"unknown"}`.
#[derive(Debug, PartialEq, Eq, serde::Serialize)]
pub struct VcfReply {
    /// `win`, `none` (no VCF: the search was exhaustive) or `unknown` (budget spent).
    pub result: &'static str,
    /// For a win: the attacker's moves and the defender's forced replies, alternating.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<Vec<String>>,
}

/// Solve one `rules vcf` JSON line (`color` is the attacker, to move) within `nodes` solver
/// nodes.
pub fn vcf_line(line: &str, rule: Rule, size: usize, nodes: u64) -> Result<VcfReply, ClassifyError> {
    let q: Query = serde_json::from_str(line)?;
    let (board, color) = parse_position(&q, rule, size)?;
    Ok(match vcf(&board, color, &Limits::nodes(nodes)) {
        Vcf::Win { line } => VcfReply { result: "win", line: Some(line.iter().map(|&p| format_point(p)).collect()) },
        Vcf::NoWin => VcfReply { result: "none", line: None },
        Vcf::Unknown => VcfReply { result: "unknown", line: None },
    })
}

/// `rules vcf`: read JSON lines from `reader`, write one reply line per non-blank input line to
/// `writer` (see [`vcf_line`]; a malformed line as in [`classify_jsonl`]). Returns `Ok(true)`
/// when every line was well formed; I/O errors are returned.
pub fn vcf_jsonl<R: BufRead, W: Write>(
    reader: R,
    writer: W,
    rule: Rule,
    size: usize,
    nodes: u64,
) -> std::io::Result<bool> {
    jsonl(reader, writer, |line| vcf_line(line, rule, size, nodes))
}
