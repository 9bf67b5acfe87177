//! The 26 canonical renju openings (RULES.md §5 table): black h8, white h9 (direct) or i9
//! (indirect), black stone 3; recognised from any of the 8 symmetric forms.

use serde::{Deserialize, Serialize};

/// One of the 26 canonical openings: `D1..=D13` (direct) or `I1..=I13` (indirect).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Opening {
    Direct(u8),
    Indirect(u8),
}
