//! `renju-zero rules`: rules utilities (the rules themselves are `renju_rules`; a query line is
//! answered by `renju_rules::query`).
//!
//! - `renju-zero rules show [--rule renju] [--size 15] "h8 h9 j10 ..."`: the board after the
//!   moves (alternating Black, White) with Black's forbidden points marked `3`/`4`/`6`.
//! - `renju-zero rules classify [--rule renju|standard|freestyle] [--size 15]`: JSON lines on
//!   stdin, one verdict per line on stdout; exit code 1 if any line was malformed.
//! - `renju-zero rules vcf [--rule ...] [--size 15] [--nodes N]`: JSON lines
//!   `{"black":[..],"white":[..],"color":"black"}` on stdin (`color` the attacker, to move), one
//!   VCF verdict per line on stdout (`win` with the line, `none`, `unknown`); exit code as classify.

use std::io::{BufRead, Write};

use anyhow::Result;
use clap::{Args, Subcommand};
use renju_rules::notation::{board_to_ascii, parse_moves};
use renju_rules::query::{classify_line, vcf_line, QueryError};
use renju_rules::{Board, Color, Rule};

/// Arguments of `renju-zero rules`.
#[derive(Args)]
pub struct RulesArgs {
    #[command(subcommand)]
    command: RulesCommand,
}

#[derive(Subcommand)]
enum RulesCommand {
    /// Print the board after a move list, with Black's forbidden points (3 double-three,
    /// 4 double-four, 6 overline).
    Show {
        /// Rule variant: renju, standard or freestyle.
        #[arg(long, default_value = "renju")]
        rule: Rule,
        /// Board side (7..=20).
        #[arg(long, default_value_t = 15)]
        size: usize,
        /// Moves, alternating Black and White from the first, e.g. "h8 h9 j10".
        moves: Vec<String>,
    },
    /// Classify moves given as JSON lines on stdin:
    /// {"black":["h8"],"white":["h9"],"move":"j10","color":"black"} -> {"move":"j10","result":R}
    /// with R in five, double-three, double-four, overline, legal, occupied. Other keys are
    /// refused.
    Classify {
        /// Rule variant: renju, standard or freestyle.
        #[arg(long, default_value = "renju")]
        rule: Rule,
        /// Board side (7..=20).
        #[arg(long, default_value_t = 15)]
        size: usize,
    },
    /// Solve VCF (victory by continuous fours) for positions given as JSON lines on stdin:
    /// {"black":[..],"white":[..],"color":"black"} (color = the attacker, to move) ->
    /// {"result":"win","line":["h8","h9",..]}, {"result":"none"} or {"result":"unknown"}.
    /// Other keys are refused.
    Vcf {
        /// Rule variant: renju, standard or freestyle.
        #[arg(long, default_value = "renju")]
        rule: Rule,
        /// Board side (7..=20).
        #[arg(long, default_value_t = 15)]
        size: usize,
        /// Node budget per position (attacker moves tried); past it the answer is `unknown`.
        #[arg(long, default_value_t = 1_000_000)]
        nodes: u64,
    },
}

/// Run the command; returns the process exit code (classify, vcf: 1 if any input line failed).
pub fn run(args: RulesArgs) -> Result<i32> {
    match args.command {
        RulesCommand::Show { rule, size, moves } => {
            print!("{}", show(rule, size, &moves.join(" "))?);
            Ok(0)
        }
        RulesCommand::Classify { rule, size } => {
            Board::new(size, rule)?;
            let ok = jsonl(std::io::stdin().lock(), std::io::stdout().lock(), |line| {
                let (mv, v) = classify_line(line, rule, size)?;
                Ok(serde_json::json!({"move": mv, "result": v.to_string()}))
            })?;
            Ok(if ok { 0 } else { 1 })
        }
        RulesCommand::Vcf { rule, size, nodes } => {
            Board::new(size, rule)?;
            let ok =
                jsonl(std::io::stdin().lock(), std::io::stdout().lock(), |line| vcf_line(line, rule, size, nodes))?;
            Ok(if ok { 0 } else { 1 })
        }
    }
}

/// The board after `moves_text` (alternating Black, White from the first move) as ASCII, with
/// Black's forbidden points marked (`3`/`4`/`6`, renju only) and listed.
/// Errors: bad size, bad/repeated/empty move list (messages name the token).
fn show(rule: Rule, size: usize, moves_text: &str) -> Result<String> {
    let mut board = Board::new(size, rule)?;
    let moves = parse_moves(moves_text, size)?;
    for (i, p) in moves.into_iter().enumerate() {
        board.place(p, if i % 2 == 0 { Color::Black } else { Color::White });
    }
    Ok(board_to_ascii(&board, rule == Rule::Renju))
}

/// Run `answer` on each non-blank JSON line of `reader` and write its JSON reply as one line to
/// `writer`; a line for which `answer` fails gets `{"line":N,"error":..}` (N 1-based, blank
/// lines counted). Returns `Ok(true)` when every line was well formed; I/O errors are returned.
fn jsonl<R: BufRead, W: Write, T: serde::Serialize>(
    reader: R,
    mut writer: W,
    mut answer: impl FnMut(&str) -> Result<T, QueryError>,
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
