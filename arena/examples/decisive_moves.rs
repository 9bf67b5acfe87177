//! Where a player's lost games were decided, by the threat solvers: for every 15x15 renju game of
//! a match (`games.jsonl` of `renju-zero arena`) that `--player` lost, the first of its moves
//! after which the opponent has a VCF (`--vcf-nodes`, default 1,000,000) or a VCT (the largest
//! of `--vct-nodes`), and what the defence question said just before that move, at each VCT
//! budget (the question the Gomocup brain asks at the root,
//! [`renju_arena::gomocup::tactics::defence`]):
//!
//! - `VCF|VCT threat, the move one of N refutations, S of them safe`: the opponent threatened a
//!   VCF (or VCT), N moves were proved to stop it and the player's move was one of them, yet
//!   the opponent then had a VCF or VCT; after S of the N it has neither;
//! - `... threat, the move not a refutation`: the player's move did not stop the threat;
//! - `... threat, lost`: no move stops it (the game was lost a move earlier, by a plan the
//!   solvers did not see there);
//! - `no threat` / `unknown`: the question saw no threat, or ran out of budget.
//!
//! ```sh
//! cargo run --release -p renju-arena --example decisive_moves -- \
//!     --games runs/t02/base1/games.jsonl --player rz --vct-nodes 20000,200000
//! ```
//!
//! Games without such a move (lost past the solvers' reach, or on time) are counted apart.

use anyhow::{bail, Context, Result};
use renju_arena::gomocup::tactics::{defence, Defence};
use renju_rules::notation::{format_point, parse_moves};
use renju_rules::vcf::{vcf, Limits, Vcf};
use renju_rules::vct::{vct, Vct};
use renju_rules::{Board, Color, Point, Rule};

/// The defence question before a move, in the example's classes. Where the move was one of the
/// refutations, also after how many of them the opponent has neither a VCF nor a VCT (`safe`).
fn class(d: &Defence, played: Point, safe: &mut impl FnMut(Point) -> bool) -> String {
    match d {
        Defence::Refuted { refutations, by, .. } if refutations.contains(&played) => {
            let safe = refutations.iter().filter(|&&r| safe(r)).count();
            format!("{by} threat, the move one of {} refutations, {safe} of them safe", refutations.len())
        }
        Defence::Refuted { by, .. } => format!("{by} threat, the move not a refutation"),
        Defence::Lost { by, .. } => format!("{by} threat, lost"),
        Defence::NoThreat => "no threat".into(),
        Defence::Unknown => "unknown".into(),
    }
}

/// Whether `attacker` (to move on `board`) has a VCF or VCT within the budgets.
fn has_win(board: &Board, attacker: Color, vcf_nodes: u64, vct_nodes: u64) -> bool {
    matches!(vcf(board, attacker, &Limits::nodes(vcf_nodes)), Vcf::Win { .. })
        || matches!(vct(board, attacker, &Limits::nodes(vct_nodes)), Vct::Win { .. })
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (mut games, mut player, mut budgets, mut vcf_nodes) = (None, None, vec![20_000u64, 200_000], 1_000_000u64);
    let mut it = args.iter();
    while let Some(k) = it.next() {
        let v = it.next().with_context(|| format!("{k} needs a value"))?;
        match k.as_str() {
            "--games" => games = Some(v.clone()),
            "--player" => player = Some(v.clone()),
            "--vct-nodes" => {
                budgets = v
                    .split(',')
                    .map(|x| x.parse().with_context(|| format!("--vct-nodes {x}")))
                    .collect::<Result<_>>()?
            }
            "--vcf-nodes" => vcf_nodes = v.parse().with_context(|| format!("--vcf-nodes {v}"))?,
            _ => bail!("unknown option {k} (options: --games FILE --player NAME --vct-nodes N[,N..] --vcf-nodes N)"),
        }
    }
    let (Some(games), Some(player)) = (games, player) else { bail!("--games FILE and --player NAME are required") };
    anyhow::ensure!(!budgets.is_empty(), "--vct-nodes needs at least one budget");
    let text = std::fs::read_to_string(&games).with_context(|| format!("reading {games}"))?;
    let big = *budgets.iter().max().expect("a budget");
    let mut tally: std::collections::BTreeMap<String, usize> = Default::default();
    let (mut lost, mut undecided) = (0, 0);
    for (n, line) in text.lines().enumerate() {
        let g: serde_json::Value = serde_json::from_str(line).with_context(|| format!("{games}:{}", n + 1))?;
        if g["winner"].as_str().is_none_or(|w| w == player) {
            continue;
        }
        lost += 1;
        let moves = parse_moves(g["moves"].as_str().context("a game without moves")?, 15)
            .with_context(|| format!("{games}:{}: moves", n + 1))?;
        let ours = if g["black"].as_str() == Some(player.as_str()) { Color::Black } else { Color::White };
        let mut board = Board::new(15, Rule::Renju)?;
        let mut found = None;
        for (k, &p) in moves.iter().enumerate() {
            let c = if k % 2 == 0 { Color::Black } else { Color::White };
            if k >= 3 && c == ours {
                let mut after = board.clone();
                after.place(p, c);
                if has_win(&after, c.opponent(), vcf_nodes, big) {
                    // Whether a refutation is safe does not depend on the budget asked: each
                    // is solved once.
                    let mut known = std::collections::HashMap::new();
                    let mut safe = |r: Point| {
                        *known.entry(r).or_insert_with(|| {
                            let mut b = board.clone();
                            b.place(r, c);
                            !has_win(&b, c.opponent(), vcf_nodes, big)
                        })
                    };
                    let classes: Vec<String> = budgets
                        .iter()
                        .map(|&b| {
                            let d = defence(&board, c, &Limits::nodes(vcf_nodes), &Limits::nodes(b));
                            class(&d, p, &mut safe)
                        })
                        .collect();
                    found = Some((k, classes));
                    break;
                }
            }
            board.place(p, c);
        }
        match found {
            Some((k, classes)) => {
                println!(
                    "game {}: move {} of {} ({}): {}",
                    g["index"],
                    k + 1,
                    moves.len(),
                    format_point(moves[k]),
                    classes.join(" / ")
                );
                *tally.entry(classes.join(" / ")).or_default() += 1;
            }
            None => {
                println!("game {}: no move of {player} let a VCF or VCT in ({} moves)", g["index"], moves.len());
                undecided += 1;
            }
        }
    }
    let names: Vec<String> = budgets.iter().map(|b| format!("VCT {b} nodes")).collect();
    println!("\n{lost} games lost by {player}; the defence question before the decisive move ({}):", names.join(" / "));
    for (k, v) in &tally {
        println!("  {v:3}  {k}");
    }
    println!("  {undecided:3}  no decisive move found");
    Ok(())
}
