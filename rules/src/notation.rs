//! Move and game notation (RULES.md §1): a point is a column letter and a row number, `h8`;
//! columns `a`, `b`, ... left to right with no letter skipped (`a..o` on 15x15, up to `t` on
//! 20x20), rows `1..=size` bottom to top; case-insensitive on input. A game is a
//! whitespace-separated list of points (`h8 h9 j10`), alternately Black and White from the first.
//! Also prints ASCII boards with coordinates, the last move and Black's forbidden points.

use crate::board::{Board, Color, ForbiddenKind, Point, MAX_SIZE};

/// A notation error; every variant names the offending token and why it was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NotationError {
    /// The move list has no moves at all.
    #[error("empty move list: expected moves like `h8 h9 j10`")]
    Empty,
    /// The token is not a letter followed by a number.
    #[error("bad move `{token}`: {reason}")]
    Malformed { token: String, reason: String },
    /// The token is well formed but off the board.
    #[error("move `{token}` is off the {size}x{size} board (columns a..{last_col}, rows 1..{size})")]
    OffBoard { token: String, size: usize, last_col: char },
    /// The same point appears twice in a game.
    #[error("move `{token}` (number {second}) is on a point already played at move {first}")]
    Repeated { token: String, first: usize, second: usize },
}

/// The column letter of `x` (0 = `a`).
pub fn column_letter(x: u8) -> char {
    (b'a' + x) as char
}

/// Print a point: `Point::new(7, 7)` -> `h8`.
pub fn format_point(p: Point) -> String {
    format!("{}{}", column_letter(p.x), p.y as u32 + 1)
}

/// Parse one point like `h8` / `H8` on a board of side `size`.
/// Errors: [`NotationError::Malformed`] (no letter, no number, extra characters),
/// [`NotationError::OffBoard`] (column or row outside the board).
pub fn parse_point(token: &str, size: usize) -> Result<Point, NotationError> {
    let malformed = |reason: &str| NotationError::Malformed { token: token.to_string(), reason: reason.to_string() };
    let t = token.trim();
    let mut chars = t.chars();
    let col = match chars.next() {
        None => return Err(malformed("empty token")),
        Some(c) if c.is_ascii_alphabetic() => c.to_ascii_lowercase(),
        Some(_) => return Err(malformed("expected a column letter first (a, b, ...)")),
    };
    let digits = chars.as_str();
    if digits.is_empty() {
        return Err(malformed("missing row number after the column letter"));
    }
    if !digits.chars().all(|c| c.is_ascii_digit()) {
        return Err(malformed("the row must be a number (e.g. `h8`)"));
    }
    let off = || NotationError::OffBoard {
        token: token.to_string(),
        size,
        last_col: column_letter((size.min(MAX_SIZE) - 1) as u8),
    };
    let row: usize = digits.parse().map_err(|_| off())?;
    let x = (col as u8 - b'a') as usize;
    if x >= size || row == 0 || row > size {
        return Err(off());
    }
    Ok(Point::new(x as u8, (row - 1) as u8))
}

/// Parse a whitespace-separated game on a board of side `size`. Errors: [`NotationError::Empty`]
/// for no moves, the errors of [`parse_point`], and [`NotationError::Repeated`] when a point is
/// played twice (move numbers 1-based).
pub fn parse_moves(text: &str, size: usize) -> Result<Vec<Point>, NotationError> {
    let mut out: Vec<Point> = Vec::new();
    for (i, tok) in text.split_whitespace().enumerate() {
        let p = parse_point(tok, size)?;
        if let Some(first) = out.iter().position(|&q| q == p) {
            return Err(NotationError::Repeated { token: tok.to_string(), first: first + 1, second: i + 1 });
        }
        out.push(p);
    }
    if out.is_empty() {
        return Err(NotationError::Empty);
    }
    Ok(out)
}

/// Print a game: points separated by single spaces.
pub fn format_moves(moves: &[Point]) -> String {
    moves.iter().map(|&p| format_point(p)).collect::<Vec<_>>().join(" ")
}

/// The marker digit of a forbidden kind on ASCII boards: `3` double-three, `4` double-four,
/// `6` overline.
pub fn forbidden_marker(k: ForbiddenKind) -> char {
    match k {
        ForbiddenKind::DoubleThree => '3',
        ForbiddenKind::DoubleFour => '4',
        ForbiddenKind::Overline => '6',
    }
}

/// ASCII board, top row first: `X` black, `O` white, `.` empty, the last stone in parentheses,
/// and (when `mark_forbidden`, renju only) Black's forbidden empty points as `3`/`4`/`6` with a
/// legend line. Column letters below, row numbers on both sides.
pub fn board_to_ascii(board: &Board, mark_forbidden: bool) -> String {
    let n = board.size();
    let mut marks = vec![None; n * n];
    let forbidden = if mark_forbidden { board.forbidden_points() } else { Vec::new() };
    for &(p, k) in &forbidden {
        marks[p.index(n)] = Some(forbidden_marker(k));
    }
    let last = board.stones().last().map(|&(p, _)| p);
    let mut s = String::new();
    let letters: String = (0..n as u8).map(|x| format!(" {}", column_letter(x))).collect();
    s.push_str(&format!("   {letters}\n"));
    for y in (0..n).rev() {
        s.push_str(&format!("{:>2} ", y + 1));
        for x in 0..n {
            let p = Point::new(x as u8, y as u8);
            let ch = match board.get(p) {
                Some(Color::Black) => 'X',
                Some(Color::White) => 'O',
                None => marks[p.index(n)].unwrap_or('.'),
            };
            let before = if Some(p) == last {
                '('
            } else if x > 0 && Some(Point::new(x as u8 - 1, y as u8)) == last {
                ')'
            } else {
                ' '
            };
            s.push(before);
            s.push(ch);
        }
        let after = if Some(Point::new(n as u8 - 1, y as u8)) == last { ')' } else { ' ' };
        s.push(after);
        s.push_str(&format!("{:<2}\n", y + 1));
    }
    s.push_str(&format!("   {letters}\n"));
    s.push_str("X black, O white, (.) last move");
    if mark_forbidden {
        s.push_str("; Black's forbidden points: 3 double-three, 4 double-four, 6 overline");
    }
    s.push('\n');
    if mark_forbidden {
        if forbidden.is_empty() {
            s.push_str("forbidden: none\n");
        } else {
            let list: Vec<String> = forbidden.iter().map(|&(p, k)| format!("{} {k}", format_point(p))).collect();
            s.push_str(&format!("forbidden: {}\n", list.join(", ")));
        }
    }
    s
}
