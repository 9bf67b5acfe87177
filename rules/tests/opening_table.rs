//! The 26 canonical openings (RULES.md §5 table): names, geometry, recognition from any of the
//! 8 symmetric forms, and "RIF yields exactly 26 openings up to symmetry after three stones".

use renju_rules::opening::centre;
use renju_rules::{Opening, Point, Symmetry};
use std::collections::HashSet;

mod common;
use common::pt as p;

#[test]
fn table_stone_three_points_on_15x15() {
    // Stone 3 of each opening as written in RULES.md §5.
    let direct = ["h10", "i10", "j10", "i9", "j9", "i8", "j8", "h7", "i7", "j7", "h6", "i6", "j6"];
    let indirect = ["j10", "j9", "j8", "j7", "j6", "i8", "i7", "i6", "h7", "h6", "g7", "g6", "f6"];
    for (i, s3) in direct.iter().enumerate() {
        let o = Opening::Direct(i as u8 + 1);
        assert_eq!(o.stones(15), [p("h8"), p("h9"), p(s3)], "{o}");
    }
    for (i, s3) in indirect.iter().enumerate() {
        let o = Opening::Indirect(i as u8 + 1);
        assert_eq!(o.stones(15), [p("h8"), p("i9"), p(s3)], "{o}");
    }
}

#[test]
fn names_codes_and_assessments() {
    assert_eq!(Opening::all().len(), 26);
    let codes: HashSet<&str> = Opening::all().iter().map(|o| o.code()).collect();
    let names: HashSet<&str> = Opening::all().iter().map(|o| o.name()).collect();
    let chinese: HashSet<&str> = Opening::all().iter().map(|o| o.chinese_name()).collect();
    assert_eq!((codes.len(), names.len(), chinese.len()), (26, 26, 26));
    assert_eq!(Opening::Direct(4).name(), "Kagetsu");
    assert_eq!(Opening::Direct(4).chinese_name(), "花月");
    assert_eq!(Opening::Direct(4).assessment(), "Black wins");
    assert_eq!(Opening::Indirect(5).assessment(), "slightly White");
    assert_eq!(Opening::from_name("Kagetsu"), Ok(Opening::Direct(4)));
    assert_eq!(Opening::from_name("明星"), Ok(Opening::Indirect(10)));
    let obsolete: Vec<&str> = Opening::all().iter().filter(|o| o.is_obsolete()).map(|o| o.code()).collect();
    assert_eq!(obsolete, ["D13", "I13"]);
    let err = Opening::from_name("Hanagetsu").unwrap_err();
    assert!(err.to_string().contains("'Hanagetsu'"));
    assert_eq!(serde_json::to_string(&Opening::Indirect(7)).unwrap(), "\"I7\"");
    assert_eq!(serde_json::from_str::<Opening>("\"Hogetsu\"").unwrap(), Opening::Indirect(7));
}

/// Every symmetric form of `o` on a board of side `size`.
fn forms(o: Opening, size: usize) -> HashSet<[Point; 3]> {
    Symmetry::ALL.iter().map(|&s| o.stones_with(s, size)).collect()
}

#[test]
fn the_26_are_pairwise_not_equivalent() {
    for size in [15, 9, 20] {
        let all = Opening::all();
        for (i, &a) in all.iter().enumerate() {
            for &b in &all[i + 1..] {
                assert!(forms(a, size).is_disjoint(&forms(b, size)), "{a} and {b} are symmetric (size {size})");
            }
        }
    }
}

/// RIF: stone 1 on the centre, stone 2 in the central 3x3, stone 3 in the central 5x5, all
/// distinct: 8 * 23 = 184 starts, and each is exactly one of the 26 openings.
#[test]
fn rif_yields_exactly_26_openings_up_to_symmetry() {
    for size in [15, 7, 16] {
        let c = centre(size);
        let near = |r: i32| {
            let mut v = Vec::new();
            for dy in -r..=r {
                for dx in -r..=r {
                    v.push(Point::new((c.x as i32 + dx) as u8, (c.y as i32 + dy) as u8));
                }
            }
            v
        };
        let mut starts = 0;
        let mut seen = HashSet::new();
        for w in near(1).into_iter().filter(|&w| w != c) {
            for b3 in near(2).into_iter().filter(|&b| b != c && b != w) {
                starts += 1;
                let matching: Vec<Opening> =
                    Opening::all().into_iter().filter(|&o| forms(o, size).contains(&[c, w, b3])).collect();
                assert_eq!(matching.len(), 1, "start {c:?} {w:?} {b3:?} matches {matching:?}");
                let (o, s) = Opening::recognise(c, w, b3, size).expect("a RIF start is an opening");
                assert_eq!(o, matching[0]);
                assert_eq!(o.stones_with(s, size), [c, w, b3]);
                seen.insert(o);
            }
        }
        assert_eq!(starts, 184);
        assert_eq!(seen.len(), 26);
        // The orbit sizes add up to the 184 starts: every start is the image of one opening.
        let total: usize = Opening::all().iter().map(|&o| forms(o, size).len()).sum();
        assert_eq!(total, 184);
    }
}

#[test]
fn recognise_names_symmetric_forms_and_rejects_others() {
    // D4 Kagetsu h8 h9 i9 rotated: h8 i8 i7 (white right of centre, black diagonal below).
    assert_eq!(Opening::recognise(p("h8"), p("i8"), p("i7"), 15).map(|x| x.0), Some(Opening::Direct(4)));
    // I13 Suisei h8 i9 f6 mirrored: h8 g9 j6.
    assert_eq!(Opening::recognise(p("h8"), p("g9"), p("j6"), 15).map(|x| x.0), Some(Opening::Indirect(13)));
    // On 15x15 the board symmetry and the opening symmetry agree.
    for o in Opening::all() {
        for s in Symmetry::ALL {
            let st = o.stones(15).map(|q| s.apply(q, 15));
            assert_eq!(st, o.stones_with(s, 15));
            assert_eq!(Opening::recognise(st[0], st[1], st[2], 15).map(|x| x.0), Some(o));
        }
    }
    // Off-centre stone 1, stone 3 outside the 5x5, stone 2 not adjacent: not an opening.
    assert_eq!(Opening::recognise(p("g8"), p("g9"), p("h9"), 15), None);
    assert_eq!(Opening::recognise(p("h8"), p("h9"), p("h11"), 15), None);
    assert_eq!(Opening::recognise(p("h8"), p("h10"), p("i9"), 15), None);
}
