//! `renju-zero rules`: rules utilities (logic in `renju_rules::cli`).
//!
//! - `renju-zero rules show [--rule renju] [--size 15] "h8 h9 j10 ..."`: the board after the
//!   moves (alternating Black, White) with Black's forbidden points marked `3`/`4`/`6`.
//! - `renju-zero rules classify [--rule renju|standard|freestyle] [--size 15]`: JSON lines on
//!   stdin, one verdict per line on stdout; exit code 1 if any line was malformed.
//! - `renju-zero rules vcf [--rule ...] [--size 15] [--nodes N]`: JSON lines
//!   `{"black":[..],"white":[..],"color":"black"}` on stdin (`color` the attacker, to move), one
//!   VCF verdict per line on stdout (`win` with the line, `none`, `unknown`); exit code as classify.

use clap::{Args, Subcommand};
use renju_rules::Rule;

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
    /// with R in five, double-three, double-four, overline, legal, occupied.
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
pub fn run(args: RulesArgs) -> anyhow::Result<i32> {
    match args.command {
        RulesCommand::Show { rule, size, moves } => {
            let text = renju_rules::cli::show(rule, size, &moves.join(" "))?;
            print!("{text}");
            Ok(0)
        }
        RulesCommand::Classify { rule, size } => {
            renju_rules::Board::new(size, rule)?;
            let stdin = std::io::stdin();
            let stdout = std::io::stdout();
            let ok = renju_rules::cli::classify_jsonl(stdin.lock(), stdout.lock(), rule, size)?;
            Ok(if ok { 0 } else { 1 })
        }
        RulesCommand::Vcf { rule, size, nodes } => {
            renju_rules::Board::new(size, rule)?;
            let stdin = std::io::stdin();
            let stdout = std::io::stdout();
            let ok = renju_rules::cli::vcf_jsonl(stdin.lock(), stdout.lock(), rule, size, nodes)?;
            Ok(if ok { 0 } else { 1 })
        }
    }
}
