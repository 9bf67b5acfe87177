//! `renju-zero rules`: rules utilities (the rules themselves are `renju_rules`; a query line is
//! answered by `renju_rules::query`).
//!
//! - `renju-zero rules show [--rule renju] [--size 15] "h8 h9 j10 ..."`: the board after the
//!   moves (alternating Black, White) with Black's forbidden points marked `3`/`4`/`6`. Play
//!   stops at the end of the game: a five, a forbidden black move (not placed; Black loses,
//!   RULES.md §2) or a full board; moves after it are an error.
//! - `renju-zero rules classify [--rule renju|standard|freestyle] [--size 15]`: JSON lines on
//!   stdin, one verdict per line on stdout; exit code 1 if any line was malformed.
//! - `renju-zero rules vcf [--rule ...] [--size 15] [--nodes N]`: JSON lines
//!   `{"black":[..],"white":[..],"color":"black"}` on stdin (`color` the attacker, to move), one
//!   VCF verdict per line on stdout (`win` with the line, `none`, `unknown`); exit code as classify.
//! - `renju-zero rules openings [--size 15]`: the 26 canonical openings (RULES.md §5) with their
//!   three stones.

use std::io::{BufRead, Write};

use anyhow::{bail, Result};
use clap::{Args, Subcommand};
use renju_rules::notation::{board_to_ascii, format_moves, format_point, parse_moves};
use renju_rules::query::{classify_line, vcf_line, QueryError};
use renju_rules::{Board, Color, Opening, Rule, Verdict};

/// Arguments of `renju-zero rules`.
#[derive(Args)]
pub struct RulesArgs {
    #[command(subcommand)]
    command: RulesCommand,
}

#[derive(Subcommand)]
enum RulesCommand {
    /// Print the board after a move list, with Black's forbidden points (3 double-three,
    /// 4 double-four, 6 overline). Play stops at a five or at a forbidden black move (reported;
    /// the forbidden stone is not placed); moves after the end of the game are an error.
    Show {
        /// Rule variant: renju, standard or freestyle.
        #[arg(long, default_value = "renju")]
        rule: Rule,
        /// Board side (7..=20).
        #[arg(long, default_value_t = 15)]
        size: usize,
        /// Moves as points, alternating Black and White from the first, e.g. "h8 h9 j10" (an
        /// opening code such as D4 is the point d4; `rules openings` lists the openings' stones).
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
    /// List the 26 canonical renju openings (D1..D13 direct, I1..I13 indirect): index (the
    /// order `arena --openings rif26` plays them in), code, name, the three stones (black,
    /// white, black) in canonical orientation, Chinese name.
    Openings {
        /// Board side (7..=20); the stones are placed around its centre.
        #[arg(long, default_value_t = 15)]
        size: usize,
    },
}

/// Run the command; returns the process exit code (classify, vcf: 1 if any input line failed).
pub fn run(args: RulesArgs) -> Result<i32> {
    match args.command {
        RulesCommand::Show { rule, size, moves } => {
            let shown = show(rule, size, &moves.join(" "))?;
            print!("{}", shown.text);
            if let Some(e) = shown.after_end {
                bail!(e);
            }
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
        RulesCommand::Openings { size } => {
            Board::new(size, Rule::Renju)?;
            print!("{}", openings_table(size));
            Ok(0)
        }
    }
}

/// What `rules show` prints, and the error for moves given after the end of the game.
struct Shown {
    text: String,
    after_end: Option<String>,
}

fn color_name(c: Color) -> &'static str {
    match c {
        Color::Black => "Black",
        Color::White => "White",
    }
}

/// The board after `moves_text` (alternating Black, White from the first move) as ASCII, with
/// Black's forbidden points marked (`3`/`4`/`6`, renju only) and listed. Play stops at the end
/// of the game, said in a last line: a move that makes a five (placed; its colour wins), a black
/// move on a forbidden point (not placed, so the board shows the point's mark; Black loses,
/// RULES.md §2), or a full board (draw). Errors: bad size, bad/repeated/empty move list
/// (messages name the token).
fn show(rule: Rule, size: usize, moves_text: &str) -> Result<Shown> {
    let mut board = Board::new(size, rule)?;
    let moves = parse_moves(moves_text, size)?;
    let mut end = None;
    for (i, &p) in moves.iter().enumerate() {
        let c = if i % 2 == 0 { Color::Black } else { Color::White };
        let (who, at, n) = (color_name(c), format_point(p), i + 1);
        match board.classify(p, c) {
            Verdict::Forbidden(k) => {
                end = Some((
                    i,
                    format!("{who} {at} (move {n}) is forbidden ({k}): Black loses; the stone is not placed"),
                ));
            }
            Verdict::Five => {
                board.place(p, c);
                end = Some((i, format!("{who} {at} (move {n}) makes five: {who} wins")));
            }
            _ => {
                board.place(p, c);
                if board.is_full() {
                    end = Some((i, format!("the board is full after move {n}: draw")));
                }
            }
        }
        if end.is_some() {
            break;
        }
    }
    let mut text = board_to_ascii(&board, rule == Rule::Renju);
    let mut after_end = None;
    if let Some((i, what)) = end {
        text.push_str(&what);
        text.push('\n');
        if i + 1 < moves.len() {
            after_end = Some(format!(
                "the game ended at move {}; the {} move(s) after it are not played: {}",
                i + 1,
                moves.len() - i - 1,
                format_moves(&moves[i + 1..])
            ));
        }
    }
    Ok(Shown { text, after_end })
}

/// The `rules openings` table: one line per opening of `Opening::all()` order.
fn openings_table(size: usize) -> String {
    let mut s = String::from("index  code  name        stones (black white black)  chinese\n");
    for (i, o) in Opening::all().into_iter().enumerate() {
        let stones = format_moves(&o.stones(size));
        s.push_str(&format!("{i:>5}  {:<4}  {:<10}  {stones:<26}  {}\n", o.code(), o.name(), o.chinese_name()));
    }
    s
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
