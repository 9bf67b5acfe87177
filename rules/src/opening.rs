//! The 26 canonical renju openings (RULES.md §5 table): black h8, white h9 (direct) or i9
//! (indirect), black stone 3; recognised from any of the 8 symmetric forms.
//!
//! Openings are defined by offsets from the centre, so they exist on every board size: stone 1 is
//! on [`centre`]`(size)`, stone 2 one point "up" (direct, 直指) or diagonally "up-right"
//! (indirect, 斜指), stone 3 inside the central 5x5. On the standard 15x15 board the centre is h8.

use crate::board::Point;
use crate::symmetry::Symmetry;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::str::FromStr;

/// One of the 26 canonical openings: `D1..=D13` (direct) or `I1..=I13` (indirect).
///
/// Serialises as its code (`"D4"`); deserialises from anything [`Opening::from_str`] accepts.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Opening {
    Direct(u8),
    Indirect(u8),
}

/// One row of the RULES.md §5 table.
struct Row {
    code: &'static str,
    romanised: &'static str,
    chinese: &'static str,
    /// Traditional-character spelling, where it differs from the simplified one.
    traditional: Option<&'static str>,
    /// Offset of black stone 3 from stone 1 (columns right, rows up).
    stone3: (i8, i8),
    assessment: &'static str,
    /// Marked † in RULES.md: no longer used in RIF play.
    obsolete: bool,
}

const fn row(
    code: &'static str,
    romanised: &'static str,
    chinese: &'static str,
    traditional: Option<&'static str>,
    stone3: (i8, i8),
    assessment: &'static str,
    obsolete: bool,
) -> Row {
    Row { code, romanised, chinese, traditional, stone3, assessment, obsolete }
}

// RULES.md §5: direct openings (white h9 = offset (0,1)), stone 3 as listed (h8 = (0,0)).
const DIRECT: [Row; 13] = [
    row("D1", "Kansei", "寒星", None, (0, 2), "Black wins", false),
    row("D2", "Keigetsu", "溪月", None, (1, 2), "Black wins", false),
    row("D3", "Sosei", "疏星", None, (2, 2), "about equal, slightly White", false),
    row("D4", "Kagetsu", "花月", None, (1, 1), "Black wins", false),
    row("D5", "Zangetsu", "残月", Some("殘月"), (2, 1), "Black advantage", false),
    row("D6", "Ugetsu", "雨月", None, (1, 0), "Black wins", false),
    row("D7", "Kinsei", "金星", None, (2, 0), "Black wins", false),
    row("D8", "Shogetsu", "松月", None, (0, -1), "slightly Black", false),
    row("D9", "Kyugetsu", "丘月", None, (1, -1), "slightly Black", false),
    row("D10", "Shingetsu", "新月", None, (2, -1), "Black advantage", false),
    row("D11", "Zuisei", "瑞星", None, (0, -2), "about equal, slightly Black", false),
    row("D12", "Sangetsu", "山月", None, (1, -2), "Black advantage", false),
    row("D13", "Yusei", "游星", Some("遊星"), (2, -2), "White wins", true),
];

// RULES.md §5: indirect openings (white i9 = offset (1,1)).
const INDIRECT: [Row; 13] = [
    row("I1", "Chosei", "长星", Some("長星"), (2, 2), "about equal, slightly White", false),
    row("I2", "Kyogetsu", "峡月", Some("峽月"), (2, 1), "Black wins", false),
    row("I3", "Kosei", "恒星", None, (2, 0), "Black wins", false),
    row("I4", "Suigetsu", "水月", None, (2, -1), "Black wins", false),
    row("I5", "Ryusei", "流星", None, (2, -2), "slightly White", false),
    row("I6", "Ungetsu", "云月", Some("雲月"), (1, 0), "Black wins", false),
    row("I7", "Hogetsu", "浦月", None, (1, -1), "Black wins", false),
    row("I8", "Rangetsu", "岚月", Some("嵐月"), (1, -2), "Black wins", false),
    row("I9", "Gingetsu", "银月", Some("銀月"), (0, -1), "Black advantage", false),
    row("I10", "Myojo", "明星", None, (0, -2), "Black wins", false),
    row("I11", "Shagetsu", "斜月", None, (-1, -1), "slightly Black", false),
    row("I12", "Meigetsu", "名月", None, (-1, -2), "Black advantage", false),
    row("I13", "Suisei", "彗星", None, (-2, -2), "White wins", true),
];

/// Offset of white stone 2 from stone 1 in direct openings (h9 from h8).
const DIRECT_WHITE: (i8, i8) = (0, 1);
/// Offset of white stone 2 from stone 1 in indirect openings (i9 from h8).
const INDIRECT_WHITE: (i8, i8) = (1, 1);

/// The centre point of a board of side `size`: `(size / 2, size / 2)`, h8 on 15x15 (RULES.md §1).
/// On even sizes there is no true centre; this is the upper-right of the four central points.
pub fn centre(size: usize) -> Point {
    let c = (size / 2) as u8;
    Point::new(c, c)
}

/// Error for an unknown opening name.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("unknown opening '{0}' (expected a code D1..D13 / I1..I13, a romanised name like Kagetsu, or a Chinese name like 花月)")]
pub struct UnknownOpening(pub String);

/// Offsets are mapped through a [`Symmetry`] acting on a virtual 5x5 board centred on stone 1,
/// which equals the board symmetry on odd-sized boards and still makes sense on even ones.
fn map_offset(s: Symmetry, (dx, dy): (i8, i8)) -> (i8, i8) {
    let p = s.apply(Point::new((dx + 2) as u8, (dy + 2) as u8), 5);
    (p.x as i8 - 2, p.y as i8 - 2)
}

fn offset_point(size: usize, (dx, dy): (i8, i8)) -> Point {
    let c = centre(size);
    Point::new((c.x as i8 + dx) as u8, (c.y as i8 + dy) as u8)
}

fn point_offset(size: usize, p: Point) -> (i8, i8) {
    let c = centre(size);
    (p.x as i8 - c.x as i8, p.y as i8 - c.y as i8)
}

impl Opening {
    /// All 26 openings: D1..D13 then I1..I13 (RULES.md §5 table order).
    pub fn all() -> [Opening; 26] {
        let mut out = [Opening::Direct(1); 26];
        for i in 0..13 {
            out[i] = Opening::Direct(i as u8 + 1);
            out[13 + i] = Opening::Indirect(i as u8 + 1);
        }
        out
    }

    fn row(self) -> &'static Row {
        match self {
            Opening::Direct(n) => &DIRECT[(n as usize).clamp(1, 13) - 1],
            Opening::Indirect(n) => &INDIRECT[(n as usize).clamp(1, 13) - 1],
        }
    }

    /// Whether the number is in 1..=13 (a value built by hand could be out of range; every
    /// method treats an out-of-range number as the nearest valid one).
    pub fn is_valid(self) -> bool {
        matches!(self, Opening::Direct(1..=13) | Opening::Indirect(1..=13))
    }

    /// Whether stone 2 is directly above stone 1 (直指, `D*`) rather than diagonal (斜指, `I*`).
    pub fn is_direct(self) -> bool {
        matches!(self, Opening::Direct(_))
    }

    /// The code, `"D1"`..`"D13"`, `"I1"`..`"I13"`.
    pub fn code(self) -> &'static str {
        self.row().code
    }

    /// The romanised (Japanese) name, e.g. `"Kagetsu"` for D4.
    pub fn name(self) -> &'static str {
        self.row().romanised
    }

    /// The Chinese name in simplified characters as RULES.md writes it, e.g. `"花月"`.
    pub fn chinese_name(self) -> &'static str {
        self.row().chinese
    }

    /// The published assessment under the old RIF rule (RULES.md §5 table, from English
    /// Wikipedia "Renju opening pattern"), e.g. `"Black wins"`. A reference, not an oracle.
    pub fn assessment(self) -> &'static str {
        self.row().assessment
    }

    /// Marked † in RULES.md (D13 Yusei, I13 Suisei): no longer used in RIF play.
    pub fn is_obsolete(self) -> bool {
        self.row().obsolete
    }

    /// Offsets (columns right, rows up) of the three stones from the centre, canonical form.
    pub fn offsets(self) -> [(i8, i8); 3] {
        let white = if self.is_direct() { DIRECT_WHITE } else { INDIRECT_WHITE };
        [(0, 0), white, self.row().stone3]
    }

    /// The three stones (black, white, black) in canonical form on a board of side `size`
    /// (>= 5): stone 1 on [`centre`]`(size)`, e.g. D4 on 15x15 is `[h8, h9, i9]`.
    pub fn stones(self, size: usize) -> [Point; 3] {
        self.offsets().map(|o| offset_point(size, o))
    }

    /// The three stones of this opening transformed by `sym` (acting around stone 1).
    pub fn stones_with(self, sym: Symmetry, size: usize) -> [Point; 3] {
        self.offsets().map(|o| offset_point(size, map_offset(sym, o)))
    }

    /// The canonical white stone-2 points (h9 and i9 on 15x15): the stone-2 choices when a
    /// player picks one of the 26 openings in canonical orientation.
    pub fn canonical_white_points(size: usize) -> [Point; 2] {
        [offset_point(size, DIRECT_WHITE), offset_point(size, INDIRECT_WHITE)]
    }

    /// The opening whose canonical form is stone 2 on `white` and stone 3 on `black3` (no
    /// symmetry applied), if any.
    pub fn from_canonical(white: Point, black3: Point, size: usize) -> Option<Opening> {
        let w = point_offset(size, white);
        let b = point_offset(size, black3);
        Opening::all().into_iter().find(|o| {
            let off = o.offsets();
            off[1] == w && off[2] == b
        })
    }

    /// Name the opening formed by black `black1`, white `white2`, black `black3` on a board of
    /// side `size`, from any of its 8 symmetric forms. `black1` must be the centre. Returns the
    /// opening and the symmetry `s` with `o.stones_with(s, size) == [black1, white2, black3]`
    /// (on odd sizes the same as mapping each canonical stone with `s.apply(_, size)`).
    /// `None` when the stones are not one of the 26 (off-centre, too far apart, repeated).
    pub fn recognise(black1: Point, white2: Point, black3: Point, size: usize) -> Option<(Opening, Symmetry)> {
        if black1 != centre(size) {
            return None;
        }
        let w = point_offset(size, white2);
        let b = point_offset(size, black3);
        for o in Opening::all() {
            let off = o.offsets();
            for s in Symmetry::ALL {
                if map_offset(s, off[1]) == w && map_offset(s, off[2]) == b {
                    return Some((o, s));
                }
            }
        }
        None
    }
}

impl fmt::Display for Opening {
    /// Writes the code, e.g. `D4`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())
    }
}

impl FromStr for Opening {
    type Err = UnknownOpening;
    /// Accepts the code (`D4`, case-insensitive), the romanised name (`Kagetsu`,
    /// case-insensitive) or the Chinese name (`花月`, simplified or traditional).
    fn from_str(s: &str) -> Result<Opening, UnknownOpening> {
        let t = s.trim();
        Opening::all()
            .into_iter()
            .find(|o| {
                let r = o.row();
                r.code.eq_ignore_ascii_case(t)
                    || r.romanised.eq_ignore_ascii_case(t)
                    || r.chinese == t
                    || r.traditional == Some(t)
            })
            .ok_or_else(|| UnknownOpening(s.to_string()))
    }
}

impl Opening {
    /// Same as [`str::parse`]: by code, romanised or Chinese name.
    pub fn from_name(s: &str) -> Result<Opening, UnknownOpening> {
        s.parse()
    }
}

impl Serialize for Opening {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.code())
    }
}

impl<'de> Deserialize<'de> for Opening {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Opening, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn d4_on_15x15_is_h8_h9_i9() {
        let p = |x, y| Point::new(x, y);
        assert_eq!(Opening::Direct(4).stones(15), [p(7, 7), p(7, 8), p(8, 8)]);
        // I13 Suisei: f6 = column 5, row 5.
        assert_eq!(Opening::Indirect(13).stones(15), [p(7, 7), p(8, 8), p(5, 5)]);
    }

    #[test]
    fn names_parse() {
        assert_eq!("D4".parse(), Ok(Opening::Direct(4)));
        assert_eq!("kagetsu".parse(), Ok(Opening::Direct(4)));
        assert_eq!("花月".parse(), Ok(Opening::Direct(4)));
        assert_eq!("嵐月".parse(), Ok(Opening::Indirect(8)));
        assert_eq!("i13".parse(), Ok(Opening::Indirect(13)));
        assert_eq!("D14".parse::<Opening>(), Err(UnknownOpening("D14".into())));
        for o in Opening::all() {
            assert_eq!(o.code().parse(), Ok(o));
            assert_eq!(o.name().parse(), Ok(o));
            assert_eq!(o.chinese_name().parse(), Ok(o));
        }
    }
}
