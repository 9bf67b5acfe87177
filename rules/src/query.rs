//! Position queries as JSON objects (one per line in `renju-zero rules classify` and
//! `renju-zero rules vcf`): a position given by its stone lists, and the answer to one query.
//!
//! - [`classify_line`] answers
//!   `{"black":["h8",...],"white":["h9",...],"move":"j10","color":"black"}` (`color`
//!   optional, default black) with the move as written and its [`Verdict`] (printed as
//!   `five`, `double-three`, `double-four`, `overline`, `legal` or `occupied`; `five` = the move
//!   wins, under renju that includes White's overline).
//! - [`vcf_line`] answers `{"black":[..],"white":[..],"color":"black"}` (`color` = the
//!   attacker, to move; default black) with a [`VcfReply`]: `{"result":"win","line":["h8","h9",..]}`,
//!   `{"result":"none"}` (no VCF: the search was exhaustive) or `{"result":"unknown"}` (node
//!   budget spent).
//!
//! Keys other than the listed ones are refused, naming the key, so a misspelt key (`colour`)
//! never falls back to a default silently.

use crate::board::{Board, Color, Point, Rule, Verdict};
use crate::notation::{format_point, parse_point};
use crate::vcf::{vcf, Limits, Vcf};

/// A `rules classify` query.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct ClassifyQuery {
    #[serde(default)]
    black: Vec<String>,
    #[serde(default)]
    white: Vec<String>,
    #[serde(rename = "move")]
    mv: Option<String>,
    color: Option<String>,
}

/// A `rules vcf` query.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct VcfQuery {
    #[serde(default)]
    black: Vec<String>,
    #[serde(default)]
    white: Vec<String>,
    color: Option<String>,
}

/// What is wrong with a query line.
#[derive(Debug, thiserror::Error)]
pub enum QueryError {
    /// Not a JSON object of the expected shape (an unknown key is named by serde:
    /// "unknown field `colour`, expected one of ...").
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

/// The position and colour of a query: the `black` and `white` stone lists (on the board, no
/// point twice) and `color` (default black).
fn parse_position(
    black: &[String],
    white: &[String],
    color: Option<&str>,
    rule: Rule,
    size: usize,
) -> Result<(Board, Color), QueryError> {
    let color = match color.map(|c| c.to_ascii_lowercase()) {
        None => Color::Black,
        Some(c) if c == "black" => Color::Black,
        Some(c) if c == "white" => Color::White,
        Some(c) => return Err(QueryError::UnknownColor(c)),
    };
    let mut board = Board::new(size, rule)?;
    let mut seen: Vec<(Point, &'static str)> = Vec::new();
    for (list, c) in [(black, Color::Black), (white, Color::White)] {
        let field = if c == Color::Black { "black" } else { "white" };
        for tok in list {
            let p = parse_point(tok, size).map_err(|source| QueryError::BadPoint { field, source })?;
            if let Some(&(_, first)) = seen.iter().find(|(s, _)| *s == p) {
                return Err(QueryError::Twice { field, token: tok.clone(), first });
            }
            seen.push((p, field));
            board.place(p, c);
        }
    }
    Ok((board, color))
}

/// Classify one JSON query line: the move as written and its verdict.
pub fn classify_line(line: &str, rule: Rule, size: usize) -> Result<(String, Verdict), QueryError> {
    let q: ClassifyQuery = serde_json::from_str(line)?;
    let mv = q.mv.clone().ok_or(QueryError::MissingMove)?;
    let (board, color) = parse_position(&q.black, &q.white, q.color.as_deref(), rule, size)?;
    let p = parse_point(&mv, size).map_err(|source| QueryError::BadPoint { field: "move", source })?;
    Ok((mv, board.classify(p, color)))
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

/// Solve one `rules vcf` JSON query line (`color` is the attacker, to move) within `nodes`
/// solver nodes.
pub fn vcf_line(line: &str, rule: Rule, size: usize, nodes: u64) -> Result<VcfReply, QueryError> {
    let q: VcfQuery = serde_json::from_str(line)?;
    let (board, color) = parse_position(&q.black, &q.white, q.color.as_deref(), rule, size)?;
    Ok(VcfReply::from(&vcf(&board, color, &Limits::nodes(nodes))))
}

impl From<&Vcf> for VcfReply {
    /// The solver's verdict as answered: `win` with the line in notation, `none` or `unknown`.
    fn from(v: &Vcf) -> VcfReply {
        match v {
            Vcf::Win { line } => {
                VcfReply { result: "win", line: Some(line.iter().map(|&p| format_point(p)).collect()) }
            }
            Vcf::NoWin => VcfReply { result: "none", line: None },
            Vcf::Unknown => VcfReply { result: "unknown", line: None },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::ForbiddenKind;

    #[test]
    fn classifies_a_double_three_and_a_white_move() {
        let line = r#"{"black":["f8","g8","h6","h7"],"white":["a1"],"move":"h8"}"#;
        let (mv, v) = classify_line(line, Rule::Renju, 15).unwrap();
        assert_eq!((mv.as_str(), v), ("h8", Verdict::Forbidden(ForbiddenKind::DoubleThree)));
        // The same point for White is an ordinary move.
        let line = r#"{"black":["f8","g8","h6","h7"],"white":["a1"],"move":"h8","color":"white"}"#;
        assert_eq!(classify_line(line, Rule::Renju, 15).unwrap().1, Verdict::Legal);
    }

    #[test]
    fn refuses_unknown_keys_naming_them() {
        // `colour` is not `color`: refused rather than read as Black's move.
        let line = r#"{"black":["f8","g8","h6","h7"],"move":"h8","colour":"white"}"#;
        let e = classify_line(line, Rule::Renju, 15).unwrap_err().to_string();
        assert!(e.contains("unknown field `colour`"), "{e}");
        assert!(e.contains("`color`"), "the message lists the accepted keys: {e}");
        // A vcf query has no move.
        let e = vcf_line(r#"{"black":["h8"],"move":"h9"}"#, Rule::Renju, 15, 100).unwrap_err().to_string();
        assert!(e.contains("unknown field `move`"), "{e}");
    }

    #[test]
    fn names_bad_points_and_repeated_points() {
        let e = classify_line(r#"{"black":["h8"],"white":["h8"],"move":"j10"}"#, Rule::Renju, 15).unwrap_err();
        assert_eq!(e.to_string(), "white: point `h8` is listed twice (also in black)");
        let e = classify_line(r#"{"black":["z99"],"move":"h8"}"#, Rule::Renju, 15).unwrap_err();
        assert!(e.to_string().starts_with("black: ") && e.to_string().contains("z99"), "{e}");
        let e = classify_line(r#"{"black":[]}"#, Rule::Renju, 15).unwrap_err();
        assert_eq!(e.to_string(), "missing field `move`");
    }

    #[test]
    fn vcf_answers() {
        // Black's VCF of rules/tests/vcf_positions.rs (four fours, the last at m11).
        let chain = r#""black":["k12","k13","k14","l10","l9","l8","n12","n13","n14"],"white":["k10","l7","n10"]"#;
        let win = vcf_line(&format!("{{{chain}}}"), Rule::Renju, 15, 100_000).unwrap();
        assert_eq!(win.result, "win");
        assert_eq!(win.line.as_ref().unwrap().last().map(String::as_str), Some("m11"));
        let none = vcf_line(&format!("{{{chain},\"color\":\"white\"}}"), Rule::Renju, 15, 100_000).unwrap();
        assert_eq!(none, VcfReply { result: "none", line: None });
        assert_eq!(serde_json::to_string(&none).unwrap(), r#"{"result":"none"}"#);
    }
}
