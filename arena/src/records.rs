//! Game records in the formats renju tools read (`renju-zero games export`): SGF and Piskvork
//! `.psq`, from `arena` / `curve` games (`games.jsonl`, one [`GameRecord`] a line) and from the
//! games of a self-play shard (its [`ShardMeta`]).
//!
//! Both sources are replayed decision by decision through [`Game`] under the record's protocol,
//! so an exported game is a legal game and its stones are exactly the board's stones in the
//! order they were placed (fifth-move offers that were not kept are not stones). Stone `k`
//! (1-based) is black when `k` is odd, under every protocol.
//!
//! # SGF (gomoku / renju convention)
//! `(;GM[4]FF[4]CA[UTF-8]SZ[15]RU[renju]PB[black]PW[white]RE[B+]C[...];B[hh];W[hi]...)`:
//! one root node with the game information, then one node per stone. Sources: the SGF FF[4]
//! standard (red-bean.com/sgf: `GM[4]` is "Gomoku + Renju"; `RE` is `B+`/`W+` with `R` for a
//! resignation and `F` for a forfeit, `0` for a draw; text values escape `]` and `\` with `\`),
//! and the point convention that gomoku/renju programs writing SGF share with Go: two lowercase
//! letters, the column from the left then the row from the TOP, `a` first. The project's
//! [`Point`] counts rows from the bottom (DESIGN.md "Points and the board"), so `Point { x, y }`
//! is written `[a+x][a+(size-1-y)]`: `h8` is `hh` and `a1` is `ao` on 15x15. `RU` holds the rule
//! by its name (`renju`, `standard`, `freestyle`). Protocol decisions (swaps, fifth-move offers,
//! Lianhuan choices) are not moves: the root comment `C` lists the protocol, the opening, every
//! decision as `player:action` and how the game ended.
//!
//! # Piskvork `.psq`
//! The layout Piskvork's `savePsq` writes for a finished engine game (and reads back in
//! `openPsq`):
//! ```text
//! Piskvorky 15x15, 11:11, 0
//! 8,8,0
//! 8,7,0
//! ...
//! <Black's name>
//! <White's name>
//! -1
//! ```
//! The header names the board (`Piskvorky WxH`; Piskvork recognises a `.psq` by this word), the
//! two players' levels (`11:11`: computer players, as in tournament records) and which of the
//! two name lines moved first (`0`: the first, Black). One line per stone follows, `x,y,time`
//! with 1-based coordinates from the TOP-LEFT corner (the Gomocup protocol's `[0,0]` corner plus
//! one, so `a1` is `1,15` and `h8` is `8,8` on 15x15) and the thinking time in milliseconds
//! (`0`: not recorded). Then the players' names, first mover first, and Piskvork's error code
//! line (`-1`: none recorded). Protocol decisions are not written: a `.psq` holds stones only.

use std::path::{Path, PathBuf};

use anyhow::{bail, ensure, Context, Result};
use renju_rules::notation::{format_moves, parse_moves};
use renju_rules::{Action, Color, Game, Opening, Player, Point, Protocol, Rule};
use renju_selfplay::record::{read_shard_meta, ShardMeta};

use crate::matches::GameRecord;

/// A finished game as the export formats see it: the board, who played Black and White, the
/// stones in order, the result, and the protocol decisions behind them.
#[derive(Clone, Debug, PartialEq)]
pub struct PortableGame {
    pub size: usize,
    pub rule: Rule,
    /// Names of the players who made the first and the second decision.
    pub first: String,
    pub second: String,
    /// Names of the players who held Black and White at the end.
    pub black: String,
    pub white: String,
    pub protocol: Protocol,
    /// The canonical opening formed by the first three stones, if any.
    pub opening: Option<Opening>,
    /// Every decision in order (placing a stone is one too).
    pub decisions: Vec<(Player, Action)>,
    /// The stones in the order they were placed, Black's first.
    pub moves: Vec<Point>,
    /// The winning colour, `None` for a draw.
    pub winner: Option<Color>,
    /// How the game ended: `five`, `forbidden-move`, `no-legal-move`, `board-full`, `stone-cap`,
    /// `resignation`, `move-limit`, or `forfeit: <why>`.
    pub reason: String,
}

/// The SGF letter of coordinate `i` (0 = `a`).
fn sgf_letter(i: usize) -> char {
    (b'a' + i as u8) as char
}

/// A point in SGF: column from the left, then row from the top (module docs): `h8` -> `hh`,
/// `a1` -> `ao` on 15x15.
pub fn sgf_point(p: Point, size: usize) -> String {
    format!("{}{}", sgf_letter(p.x as usize), sgf_letter(size - 1 - p.y as usize))
}

/// A point in a `.psq` file: `x,y`, 1-based from the top-left (module docs): `a1` -> `1,15` on
/// 15x15.
pub fn psq_point(p: Point, size: usize) -> String {
    format!("{},{}", p.x as usize + 1, size - p.y as usize)
}

/// SGF text value: `\` and `]` escaped with `\`.
fn sgf_text(s: &str) -> String {
    s.replace('\\', "\\\\").replace(']', "\\]")
}

/// SGF simple text (names): as [`sgf_text`], line breaks as spaces.
fn sgf_simple_text(s: &str) -> String {
    sgf_text(&s.replace(['\r', '\n'], " "))
}

impl PortableGame {
    /// The SGF `RE` value: `B+` / `W+` (`B+R` by resignation, `B+F` by forfeit), `0` for a draw.
    pub fn sgf_result(&self) -> String {
        let Some(c) = self.winner else { return "0".to_string() };
        let by = if self.reason == "resignation" {
            "R"
        } else if self.reason.starts_with("forfeit") {
            "F"
        } else {
            ""
        };
        format!("{}+{by}", if c == Color::Black { "B" } else { "W" })
    }

    /// The root comment: protocol, opening, decisions, players by decision order, the ending.
    pub fn comment(&self) -> String {
        let decisions: Vec<String> = self.decisions.iter().map(|(p, a)| format!("{p}:{a}")).collect();
        let opening = self.opening.map_or("none".to_string(), |o| o.code().to_string());
        let result = match self.winner {
            Some(Color::Black) => "Black wins",
            Some(Color::White) => "White wins",
            None => "draw",
        };
        format!(
            "protocol: {}\nopening: {opening}\nfirst player: {}\nsecond player: {}\ndecisions: {}\nresult: {result} ({})",
            self.protocol,
            self.first,
            self.second,
            decisions.join(" "),
            self.reason
        )
    }

    /// The game as SGF text (module docs), ending with a newline.
    pub fn to_sgf(&self) -> String {
        let mut s = format!(
            "(;GM[4]FF[4]CA[UTF-8]SZ[{}]RU[{}]PB[{}]PW[{}]RE[{}]C[{}]",
            self.size,
            self.rule,
            sgf_simple_text(&self.black),
            sgf_simple_text(&self.white),
            self.sgf_result(),
            sgf_text(&self.comment())
        );
        for (k, &p) in self.moves.iter().enumerate() {
            s += &format!(";{}[{}]", if k % 2 == 0 { "B" } else { "W" }, sgf_point(p, self.size));
        }
        s += ")\n";
        s
    }

    /// The game as a Piskvork `.psq` file (module docs).
    pub fn to_psq(&self) -> String {
        let mut s = format!("Piskvorky {0}x{0}, 11:11, 0\n", self.size);
        for &p in &self.moves {
            s += &format!("{},0\n", psq_point(p, self.size));
        }
        let name = |n: &str| n.replace(['\r', '\n'], " ");
        s += &format!("{}\n{}\n-1\n", name(&self.black), name(&self.white));
        s
    }
}

/// Reads a decision as `games.jsonl` writes it: `first:h8`, `second:swap`, ...
pub fn parse_decision(text: &str, size: usize) -> Result<(Player, Action)> {
    let (who, action) =
        text.split_once(':').with_context(|| format!("decision `{text}`: expected PLAYER:ACTION (`first:h8`)"))?;
    let player = match who {
        "first" => Player::First,
        "second" => Player::Second,
        _ => bail!("decision `{text}`: the player must be `first` or `second`"),
    };
    let action = Action::parse(action, size).with_context(|| format!("decision `{text}`"))?;
    Ok((player, action))
}

/// Replays `decisions` from the start of a game under `protocol`; errors name the decision
/// (1-based) that is not legal there, or that was made by the player not to decide.
fn replay(size: usize, rule: Rule, protocol: &Protocol, decisions: &[(Player, Action)]) -> Result<Game> {
    let mut game = Game::new(size, rule, protocol.clone(), None)
        .with_context(|| format!("a {size}x{size} {rule} game under protocol {protocol}"))?;
    for (k, &(who, action)) in decisions.iter().enumerate() {
        ensure!(
            game.to_decide() == who,
            "decision {} `{who}:{action}`: {} was to decide, not {who}",
            k + 1,
            game.to_decide()
        );
        game.apply(action).with_context(|| format!("decision {} `{who}:{action}`", k + 1))?;
    }
    Ok(game)
}

/// The stones of a replayed game in the order they were placed.
fn stones(game: &Game) -> Vec<Point> {
    game.board().stones().iter().map(|&(p, _)| p).collect()
}

/// An `arena` / `curve` record as a [`PortableGame`] on a `size` x `size` board under `rule`
/// (the record does not hold them: they are the match's). The decisions are replayed and must
/// give the record's stones. Errors say which decision or field is wrong.
pub fn from_arena_record(rec: &GameRecord, size: usize, rule: Rule) -> Result<PortableGame> {
    let protocol: Protocol = rec.protocol.parse()?;
    let decisions: Vec<(Player, Action)> =
        rec.decisions.iter().map(|d| parse_decision(d, size)).collect::<Result<_>>()?;
    let game = replay(size, rule, &protocol, &decisions).with_context(|| {
        format!("replaying game {} (were its games played on {size}x{size} under {rule}?)", rec.index)
    })?;
    let moves = stones(&game);
    let recorded = if rec.moves.trim().is_empty() { Vec::new() } else { parse_moves(&rec.moves, size)? };
    ensure!(
        moves == recorded,
        "game {}: its decisions give the stones `{}` but its moves are `{}` (were its games played on \
         {size}x{size} under {rule}?)",
        rec.index,
        format_moves(&moves),
        rec.moves
    );
    let winner = match rec.result.as_str() {
        "black" => Some(Color::Black),
        "white" => Some(Color::White),
        "draw" => None,
        other => bail!("game {}: result `{other}` is none of black, white, draw", rec.index),
    };
    Ok(PortableGame {
        size,
        rule,
        first: rec.first.clone(),
        second: rec.second.clone(),
        black: rec.black.clone(),
        white: rec.white.clone(),
        protocol,
        opening: game.opening(),
        decisions,
        moves,
        winner,
        reason: rec.reason.clone(),
    })
}

/// The name of a self-play player: the generation that played (`gen-000003`, or
/// `gen-000003..gen-000004` when a new generation was published mid-game).
fn generation_name(first: i64, last: i64) -> String {
    if first == last {
        format!("gen-{first:06}")
    } else {
        format!("gen-{first:06}..gen-{last:06}")
    }
}

/// Game `index` of a self-play shard as a [`PortableGame`] (both players are the generation
/// that played it). Errors: no such game, or its decisions do not replay.
pub fn from_shard_game(meta: &ShardMeta, index: usize) -> Result<PortableGame> {
    let g = meta.games.get(index).with_context(|| format!("no game {index} (the shard has {})", meta.games.len()))?;
    let game = replay(meta.size, meta.rule, &meta.protocol, &g.decisions)
        .with_context(|| format!("replaying game {index}"))?;
    let black_player = g.result.black_player;
    let winner = g.result.winner.map(|w| if w == black_player { Color::Black } else { Color::White });
    let name = generation_name(g.generation_first, g.generation_last);
    let reason = serde_json::to_value(g.result.reason)?.as_str().unwrap_or("?").replace('_', "-");
    Ok(PortableGame {
        size: meta.size,
        rule: meta.rule,
        first: name.clone(),
        second: name.clone(),
        black: name.clone(),
        white: name,
        protocol: meta.protocol.clone(),
        opening: game.opening(),
        decisions: g.decisions.clone(),
        moves: stones(&game),
        winner,
        reason,
    })
}

/// Reads `games.jsonl` as `ArenaSummary::write` writes it (blank lines skipped): every game
/// with its index, as a [`PortableGame`] on `size` x `size` under `rule`. Errors name the file
/// and the line.
pub fn read_games_jsonl(path: &Path, size: usize, rule: Rule) -> Result<Vec<(usize, PortableGame)>> {
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let at = || format!("{} line {}", path.display(), i + 1);
        let rec: GameRecord = serde_json::from_str(line).with_context(|| format!("{}: not a game record", at()))?;
        out.push((rec.index, from_arena_record(&rec, size, rule).with_context(at)?));
    }
    Ok(out)
}

/// Reads the games of a self-play shard (its metadata only), each with its index in the shard.
/// Errors name the file and the game.
pub fn read_shard_games(path: &Path) -> Result<Vec<(usize, PortableGame)>> {
    let meta = read_shard_meta(path)?;
    (0..meta.games.len())
        .map(|i| Ok((i, from_shard_game(&meta, i).with_context(|| format!("self-play shard {}", path.display()))?)))
        .collect()
}

/// A source of games: games.jsonl or a shard.
#[derive(Debug, PartialEq)]
pub enum GameSource {
    Jsonl(PathBuf),
    Shard(PathBuf),
}

impl GameSource {
    /// The source a file is, by its name (`*.jsonl`, `*.npz`); anything else is an error.
    pub fn of_file(path: &Path) -> Result<GameSource> {
        let name = path.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
        if name.ends_with(".jsonl") {
            Ok(GameSource::Jsonl(path.to_path_buf()))
        } else if name.ends_with(".npz") {
            Ok(GameSource::Shard(path.to_path_buf()))
        } else {
            bail!(
                "{}: not a game source (expected an arena/curve games.jsonl or a self-play shard .npz)",
                path.display()
            )
        }
    }

    /// The file.
    pub fn path(&self) -> &Path {
        match self {
            GameSource::Jsonl(p) | GameSource::Shard(p) => p,
        }
    }

    /// The name its files start with: the directory of a `games.jsonl` (an arena or curve
    /// match directory names the match), else the file name without its extension.
    pub fn label(&self) -> String {
        let p = self.path();
        let stem = p.file_stem().map(|s| s.to_string_lossy().to_string()).unwrap_or_default();
        if p.file_name().is_some_and(|n| n == "games.jsonl") {
            let parent = p.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
            let dir = parent.canonicalize().unwrap_or_else(|_| parent.to_path_buf());
            if let Some(name) = dir.file_name() {
                return name.to_string_lossy().to_string();
            }
        }
        stem
    }

    /// Its games with their indices; `size` and `rule` are those of a games.jsonl (a shard holds its own).
    pub fn games(&self, size: usize, rule: Rule) -> Result<Vec<(usize, PortableGame)>> {
        match self {
            GameSource::Jsonl(p) => read_games_jsonl(p, size, rule),
            GameSource::Shard(p) => read_shard_games(p),
        }
    }
}

/// The sources under `dir`, sorted by path: every `games.jsonl` and `.npz` shard, subdirectories
/// included except `rejected/` (shards the trainer could not read).
pub fn game_sources(dir: &Path) -> Result<Vec<GameSource>> {
    let mut out = Vec::new();
    sources_in(dir, &mut out)?;
    Ok(out)
}

fn sources_in(dir: &Path, out: &mut Vec<GameSource>) -> Result<()> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("reading directory {}", dir.display()))?
        .map(|e| e.map(|e| e.path()))
        .collect::<std::io::Result<_>>()
        .with_context(|| format!("reading directory {}", dir.display()))?;
    entries.sort();
    for p in entries {
        let name = p.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
        if p.is_dir() {
            if name != "rejected" {
                sources_in(&p, out)?;
            }
        } else if name == "games.jsonl" || name.ends_with(".npz") {
            out.push(GameSource::of_file(&p)?);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use renju_rules::notation::parse_point;

    fn pt(s: &str) -> Point {
        parse_point(s, 15).unwrap()
    }

    /// A free game of five stones, ended by White's forfeit (a five needs nine stones).
    fn five_stones() -> PortableGame {
        let moves: Vec<Point> = ["h8", "h9", "a1", "o15", "o1"].iter().map(|s| pt(s)).collect();
        let decisions = moves
            .iter()
            .enumerate()
            .map(|(k, &p)| (if k % 2 == 0 { Player::First } else { Player::Second }, Action::Place(p)))
            .collect();
        PortableGame {
            size: 15,
            rule: Rule::Renju,
            first: "alpha".into(),
            second: "beta]x".into(),
            black: "alpha".into(),
            white: "beta]x".into(),
            protocol: Protocol::Free { centre: false },
            opening: None,
            decisions,
            moves,
            winner: Some(Color::Black),
            reason: "forfeit: beta]x failed".into(),
        }
    }

    #[test]
    fn corners_and_centre_in_both_coordinate_systems() {
        assert_eq!(sgf_point(pt("a1"), 15), "ao");
        assert_eq!(sgf_point(pt("a15"), 15), "aa");
        assert_eq!(sgf_point(pt("o1"), 15), "oo");
        assert_eq!(sgf_point(pt("o15"), 15), "oa");
        assert_eq!(sgf_point(pt("h8"), 15), "hh");
        assert_eq!(sgf_point(pt("h9"), 15), "hg");
        assert_eq!(psq_point(pt("a1"), 15), "1,15");
        assert_eq!(psq_point(pt("a15"), 15), "1,1");
        assert_eq!(psq_point(pt("o1"), 15), "15,15");
        assert_eq!(psq_point(pt("o15"), 15), "15,1");
        assert_eq!(psq_point(pt("h8"), 15), "8,8");
        // 9x9: e5 is the centre, a1 the bottom-left corner.
        let p9 = parse_point("a1", 9).unwrap();
        assert_eq!((sgf_point(p9, 9), psq_point(p9, 9)), ("ai".to_string(), "1,9".to_string()));
    }

    #[test]
    fn a_five_stone_game_as_sgf_and_psq() {
        let g = five_stones();
        assert_eq!(
            g.to_sgf(),
            "(;GM[4]FF[4]CA[UTF-8]SZ[15]RU[renju]PB[alpha]PW[beta\\]x]RE[B+F]C[protocol: free\nopening: none\n\
             first player: alpha\nsecond player: beta\\]x\ndecisions: first:h8 second:h9 first:a1 second:o15 first:o1\n\
             result: Black wins (forfeit: beta\\]x failed)];B[hh];W[hg];B[ao];W[oa];B[oo])\n"
        );
        assert_eq!(g.to_psq(), "Piskvorky 15x15, 11:11, 0\n8,8,0\n8,7,0\n1,15,0\n15,1,0\n15,15,0\nalpha\nbeta]x\n-1\n");
        let draw = PortableGame { winner: None, reason: "stone-cap".into(), ..g.clone() };
        assert_eq!(draw.sgf_result(), "0");
        let resign = PortableGame { winner: Some(Color::White), reason: "resignation".into(), ..g };
        assert_eq!(resign.sgf_result(), "W+R");
    }

    fn record(protocol: &str, decisions: &[&str], moves: &str) -> GameRecord {
        GameRecord {
            index: 7,
            first: "a".into(),
            second: "b".into(),
            black: "b".into(),
            white: "a".into(),
            protocol: protocol.into(),
            opening: None,
            decisions: decisions.iter().map(|d| d.to_string()).collect(),
            moves: moves.into(),
            result: "white".into(),
            winner: Some("a".into()),
            reason: "five".into(),
            seed: 0,
        }
    }

    #[test]
    fn an_arena_record_replays_with_its_swap_in_the_comment_only() {
        // swap1: First places h8, Second (holding White) swaps: Second now holds Black.
        let rec = record("swap1", &["first:h8", "second:swap", "first:h9", "second:j10"], "h8 h9 j10");
        let g = from_arena_record(&rec, 15, Rule::Renju).unwrap();
        assert_eq!(g.moves, vec![pt("h8"), pt("h9"), pt("j10")]);
        assert_eq!(g.winner, Some(Color::White));
        let sgf = g.to_sgf();
        assert!(sgf.ends_with(";B[hh];W[hg];B[jf])\n"), "{sgf}");
        assert!(sgf.contains("decisions: first:h8 second:swap first:h9 second:j10"), "{sgf}");
        assert!(sgf.contains("PB[b]PW[a]RE[W+]"), "{sgf}");
    }

    #[test]
    fn a_record_that_does_not_replay_is_refused_naming_why() {
        let err = |rec: &GameRecord| format!("{:#}", from_arena_record(rec, 15, Rule::Renju).unwrap_err());
        let e = err(&record("free", &["first:h8", "second:h8"], "h8 h8"));
        assert!(e.contains("decision 2 `second:h8`"), "{e}");
        let e = err(&record("free", &["first:h8", "first:h9"], "h8 h9"));
        assert!(e.contains("decision 2 `first:h9`: second was to decide, not first"), "{e}");
        let e = err(&record("free", &["first:h8", "second:h9"], "h8 j9"));
        assert!(e.contains("give the stones `h8 h9` but its moves are `h8 j9`"), "{e}");
        let e = err(&record("free", &["one:h8"], "h8"));
        assert!(e.contains("decision `one:h8`: the player must be `first` or `second`"), "{e}");
        let e = err(&record("nonsense", &[], ""));
        assert!(e.contains("bad protocol 'nonsense'"), "{e}");
        // A 9x9 game read as 15x15: the centre stone e5 is not the centre h8 of the RIF protocol.
        let e = err(&record("rif", &["first:e5"], "e5"));
        assert!(e.contains("were its games played on 15x15 under renju?"), "{e}");
        let mut bad = record("free", &["first:h8"], "h8");
        bad.result = "blue".into();
        assert!(err(&bad).contains("result `blue` is none of black, white, draw"));
    }

    #[test]
    fn a_shard_game_replays_with_the_colours_after_the_swap() {
        use renju_selfplay::record::{EndReason, GameMeta, GameResult};
        let decisions = vec![
            (Player::First, Action::Place(pt("h8"))),
            (Player::Second, Action::Swap),
            (Player::First, Action::Place(pt("i9"))),
        ];
        let game = GameMeta {
            opening: None,
            decisions,
            result: GameResult {
                winner: Some(Player::Second),
                reason: EndReason::Resignation,
                black_player: Player::Second,
            },
            resign_disabled: false,
            false_resignation: false,
            would_resign: false,
            proven_positions: 0,
            proven_overruled: 0,
            generation_first: 3,
            generation_last: 4,
        };
        let meta = ShardMeta {
            encoder_version: 0,
            size: 15,
            rule: Rule::Renju,
            protocol: Protocol::Swap1,
            writer_id: "p1".into(),
            games: vec![game],
        };
        let g = from_shard_game(&meta, 0).unwrap();
        assert_eq!(g.moves, vec![pt("h8"), pt("i9")]);
        assert_eq!(g.winner, Some(Color::Black), "Second swapped to Black and won");
        assert_eq!(g.black, "gen-000003..gen-000004");
        assert_eq!(g.reason, "resignation");
        assert!(g.to_sgf().contains("RE[B+R]"), "{}", g.to_sgf());
        assert!(g.to_sgf().ends_with(";B[hh];W[ig])\n"), "{}", g.to_sgf());
        let e = format!("{:#}", from_shard_game(&meta, 1).unwrap_err());
        assert_eq!(e, "no game 1 (the shard has 1)");
    }

    #[test]
    fn a_malformed_jsonl_line_is_named() {
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join("games.jsonl");
        let good = serde_json::to_string(&record("free", &["first:h8"], "h8")).unwrap();
        std::fs::write(&path, format!("{good}\n\n{{\"index\": 3\n")).unwrap();
        let e = format!("{:#}", read_games_jsonl(&path, 15, Rule::Renju).unwrap_err());
        assert!(e.contains(&format!("{} line 3: not a game record", path.display())), "{e}");
        std::fs::write(&path, format!("{good}\n")).unwrap();
        let games = read_games_jsonl(&path, 15, Rule::Renju).unwrap();
        assert_eq!(games.len(), 1);
        assert_eq!(games[0].0, 7);
        let e = format!("{:#}", read_games_jsonl(&d.path().join("none.jsonl"), 15, Rule::Renju).unwrap_err());
        assert!(e.contains("none.jsonl"), "{e}");
    }
}
