//! Helpers shared by the rules integration tests (as `trainer/tests/common` is for the
//! trainer's): points and stone lists written in notation (parsed by `renju_rules::notation`),
//! games under a protocol stepped decision by decision, the random "realistic" position generator
//! of the differential and symmetry tests, and the random game positions of the solver tests.
#![allow(dead_code)]

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use renju_rules::notation::{parse_moves, parse_point};
use renju_rules::{Action, Color, DecisionKind, Game, Player, Point, Rule};

/// The point named `name` (`h8`) on a 15x15 board.
pub fn pt(name: &str) -> Point {
    pt_on(name, 15)
}

/// The point named `name` on a board of side `size`.
pub fn pt_on(name: &str, size: usize) -> Point {
    parse_point(name, size).unwrap_or_else(|e| panic!("bad point '{name}': {e}"))
}

/// `Action::Place` on the point named `name` (15x15).
pub fn at(name: &str) -> Action {
    Action::Place(pt(name))
}

/// Black stones then white stones, each a space-separated list in notation (either may be
/// empty), on a board of side `size`.
pub fn stones(black: &str, white: &str, size: usize) -> Vec<(Point, Color)> {
    let mut v = Vec::new();
    for (text, c) in [(black, Color::Black), (white, Color::White)] {
        if !text.trim().is_empty() {
            v.extend(parse_moves(text, size).unwrap().into_iter().map(|p| (p, c)));
        }
    }
    v
}

/// A random realistic position: stones in placement order on a board of side `size`; a third
/// are random games played near existing stones, two thirds dense black-heavy clusters (one
/// or two windows) so that forbidden shapes actually occur.
pub fn realistic_position(rng: &mut ChaCha8Rng, size: usize) -> Vec<(Point, Color)> {
    let mut occ = vec![false; size * size];
    let mut stones: Vec<(Point, Color)> = Vec::new();
    let put = |p: Point, c: Color, stones: &mut Vec<(Point, Color)>, occ: &mut Vec<bool>| {
        let i = p.index(size);
        if !occ[i] {
            occ[i] = true;
            stones.push((p, c));
        }
    };
    match rng.gen_range(0..3) {
        0 => {
            // Random game, moves near existing stones, alternate colours.
            let n = rng.gen_range(1..(size * size * 2 / 3).min(120));
            for i in 0..n {
                let c = if i % 2 == 0 { Color::Black } else { Color::White };
                let p = if stones.is_empty() || rng.gen_bool(0.1) {
                    Point::new(rng.gen_range(0..size) as u8, rng.gen_range(0..size) as u8)
                } else {
                    let (q, _) = stones[rng.gen_range(0..stones.len())];
                    let x = (q.x as i32 + rng.gen_range(-2..=2)).clamp(0, size as i32 - 1);
                    let y = (q.y as i32 + rng.gen_range(-2..=2)).clamp(0, size as i32 - 1);
                    Point::new(x as u8, y as u8)
                };
                put(p, c, &mut stones, &mut occ);
            }
        }
        _ => {
            // Dense clusters: black-heavy random fill of one or two windows.
            let clusters = rng.gen_range(1..=2);
            let pb = rng.gen_range(0.12..0.5);
            let pw = rng.gen_range(0.0..0.2);
            for _ in 0..clusters {
                let w = rng.gen_range(5..=size.min(11));
                let x0 = rng.gen_range(0..=size - w);
                let y0 = rng.gen_range(0..=size - w);
                for y in y0..y0 + w {
                    for x in x0..x0 + w {
                        let r: f64 = rng.gen();
                        let p = Point::new(x as u8, y as u8);
                        if r < pb {
                            put(p, Color::Black, &mut stones, &mut occ);
                        } else if r < pb + pw {
                            put(p, Color::White, &mut stones, &mut occ);
                        }
                    }
                }
            }
        }
    }
    stones
}

/// A 15x15 renju game under `protocol` (its string form).
pub fn game(protocol: &str) -> Game {
    Game::new(15, Rule::Renju, protocol.parse().unwrap(), None).unwrap()
}

/// Applies `a` as `who`'s decision and checks who decides what next.
pub fn step(g: &mut Game, who: Player, a: Action, next: (Player, DecisionKind)) {
    assert_eq!(g.to_decide(), who, "before {a}");
    g.apply(a).unwrap_or_else(|e| panic!("{a}: {e}"));
    assert_eq!((g.to_decide(), g.decision()), next, "after {a}");
}

/// The legal actions of `g`, which must all be placements, as points.
pub fn points(g: &Game) -> Vec<Point> {
    g.legal_actions()
        .into_iter()
        .map(|a| match a {
            Action::Place(q) => q,
            other => panic!("expected points, got {other:?}"),
        })
        .collect()
}

/// A random position on 15x15 under `rule` for the solver tests: a game of `lo..=hi` stones
/// played near the existing stones (legal moves only, Black's forbidden points excluded under
/// renju; any legal point when none is near), stopped before anyone has five. Returns the board
/// and the side to move.
pub fn random_game_position(rng: &mut ChaCha8Rng, rule: Rule, lo: usize, hi: usize) -> (renju_rules::Board, Color) {
    let n = 15;
    let mut b = renju_rules::Board::new(n, rule).unwrap();
    let target = rng.gen_range(lo..=hi);
    let mut c = Color::Black;
    b.place(Point::new(7, 7), c);
    c = c.opponent();
    while b.stone_count() < target {
        let legal: Vec<usize> = b.legal_mask(c).iter().collect();
        let near: Vec<usize> = legal
            .iter()
            .copied()
            .filter(|&i| {
                let p = Point::from_index(i, n);
                b.stones().iter().any(|&(q, _)| p.x.abs_diff(q.x) <= 2 && p.y.abs_diff(q.y) <= 2)
            })
            .collect();
        let pool = if near.is_empty() { &legal } else { &near };
        if pool.is_empty() {
            break;
        }
        let p = Point::from_index(pool[rng.gen_range(0..pool.len())], n);
        if b.makes_five(p, c) {
            continue; // keep the game undecided
        }
        b.place(p, c);
        c = c.opponent();
    }
    (b, c)
}
