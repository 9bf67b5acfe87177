//! The rule variants (RULES.md §2) and the verdict on a move under them (RULES.md §2–4).

use crate::color::Color;
use serde::{Deserialize, Serialize};

/// Rule variant (RULES.md §2 table).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Rule {
    /// Five or overline wins for both; no forbidden moves.
    Freestyle,
    /// Exactly five wins for both; an overline is not a win; no forbidden moves.
    Standard,
    /// Black: exactly five wins, double-three / double-four / overline forbidden;
    /// White: five or overline wins.
    Renju,
}

impl Rule {
    /// Whether a line of `len` stones of colour `c` wins for `c` under this rule (RULES.md §2
    /// table): freestyle five or more; standard exactly five; renju exactly five for Black, five
    /// or more for White.
    #[inline(always)]
    pub const fn run_wins(self, c: Color, len: usize) -> bool {
        match (self, c) {
            (Rule::Freestyle, _) | (Rule::Renju, Color::White) => len >= 5,
            (Rule::Standard, _) | (Rule::Renju, Color::Black) => len == 5,
        }
    }
}

impl std::fmt::Display for Rule {
    /// `renju`, `standard` or `freestyle` (what [`std::str::FromStr`] and serde read).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Rule::Freestyle => "freestyle",
            Rule::Standard => "standard",
            Rule::Renju => "renju",
        })
    }
}

/// Error from parsing a [`Rule`]: the text that is none of the three names.
#[derive(Clone, Debug, thiserror::Error, PartialEq, Eq)]
#[error("unknown rule '{0}' (expected renju, standard or freestyle)")]
pub struct ParseRuleError(pub String);

impl std::str::FromStr for Rule {
    type Err = ParseRuleError;
    /// `renju`, `standard` or `freestyle`, case-insensitive.
    fn from_str(s: &str) -> Result<Rule, ParseRuleError> {
        match s.to_ascii_lowercase().as_str() {
            "freestyle" => Ok(Rule::Freestyle),
            "standard" => Ok(Rule::Standard),
            "renju" => Ok(Rule::Renju),
            other => Err(ParseRuleError(other.to_string())),
        }
    }
}

/// Why a black move is forbidden (RULES.md §4). Order of precedence when several apply:
/// overline, then double-four, then double-three.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ForbiddenKind {
    Overline,
    DoubleFour,
    DoubleThree,
}

/// The verdict on placing a stone of a colour on a point.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Verdict {
    /// The move wins: a five (exactly five for Black under renju/standard; under renju White's
    /// overline; under freestyle any five or longer).
    Five,
    /// A black move forbidden under renju (never returned for White or other rules).
    Forbidden(ForbiddenKind),
    /// An ordinary legal move.
    Legal,
    /// The point already holds a stone.
    Occupied,
}

impl std::fmt::Display for ForbiddenKind {
    /// `overline`, `double-four` or `double-three`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ForbiddenKind::Overline => "overline",
            ForbiddenKind::DoubleFour => "double-four",
            ForbiddenKind::DoubleThree => "double-three",
        })
    }
}

impl std::fmt::Display for Verdict {
    /// `five`, `legal`, `occupied`, or the [`ForbiddenKind`] of a forbidden move
    /// (`double-three`, ...): the result words of `renju-zero rules classify`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Verdict::Five => f.write_str("five"),
            Verdict::Forbidden(k) => k.fmt(f),
            Verdict::Legal => f.write_str("legal"),
            Verdict::Occupied => f.write_str("occupied"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdict_words() {
        let words: Vec<String> = [
            Verdict::Five,
            Verdict::Forbidden(ForbiddenKind::DoubleThree),
            Verdict::Forbidden(ForbiddenKind::DoubleFour),
            Verdict::Forbidden(ForbiddenKind::Overline),
            Verdict::Legal,
            Verdict::Occupied,
        ]
        .iter()
        .map(Verdict::to_string)
        .collect();
        assert_eq!(words, ["five", "double-three", "double-four", "overline", "legal", "occupied"]);
    }

    #[test]
    fn rule_names_round_trip() {
        for r in [Rule::Renju, Rule::Standard, Rule::Freestyle] {
            assert_eq!(r.to_string().parse::<Rule>(), Ok(r));
        }
        assert_eq!("RENJU".parse::<Rule>(), Ok(Rule::Renju));
        assert_eq!("caro".parse::<Rule>(), Err(ParseRuleError("caro".into())));
    }
}
