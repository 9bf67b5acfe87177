//! Pattern codes: the code of one side of a line ([`side_code`], [`side_cells`]), the canonical
//! numbering of patterns up to mirroring ([`canonical`], [`pattern_line`]) and the raw index of a
//! point by its definition ([`raw_index_direct`]), as the parent module's docs define them.

use super::{cell, CANONICAL_PATTERNS, DIRS, HALF, POW3, RAW_PATTERNS, SIDE_CODES};
use anyhow::{ensure, Result};
use std::sync::OnceLock;

/// Code of one side, `cells` nearest first (module docs). Errors when a state is not 0..=3 or an
/// on-board cell follows a wall.
pub fn side_code(cells: &[u8; HALF]) -> Result<u32> {
    let k = cells.iter().position(|&c| c == cell::WALL).unwrap_or(HALF);
    ensure!(cells[k..].iter().all(|&c| c == cell::WALL), "side {cells:?}: an on-board cell after a wall");
    let mut code = (POW3[k] - 1) / 2;
    for (j, &c) in cells[..k].iter().enumerate() {
        ensure!(c <= cell::OPP, "side {cells:?}: cell state {c} is not 0..=3");
        code += c as u32 * POW3[j];
    }
    Ok(code)
}

/// The cells of side code `code` (inverse of [`side_code`]); `code < SIDE_CODES`.
pub fn side_cells(code: u32) -> [u8; HALF] {
    assert!((code as usize) < SIDE_CODES, "side code {code} out of range");
    let mut k = 0;
    while k < HALF && code >= (POW3[k + 1] - 1) / 2 {
        k += 1;
    }
    let mut rest = code - (POW3[k] - 1) / 2;
    let mut out = [cell::WALL; HALF];
    for c in out.iter_mut().take(k) {
        *c = (rest % 3) as u8;
        rest /= 3;
    }
    out
}

/// The pattern tables shared by every evaluator: raw index -> canonical id, and canonical id ->
/// its representative raw index (the one with `neg <= pos`).
pub struct Canonical {
    /// `[RAW_PATTERNS]`.
    pub of_raw: Vec<u32>,
    /// `[CANONICAL_PATTERNS]`.
    pub raw_of: Vec<u32>,
}

/// The canonicalisation tables (built once per process, 0.8 MB).
pub fn canonical() -> &'static Canonical {
    static C: OnceLock<Canonical> = OnceLock::new();
    C.get_or_init(|| {
        let mut of_raw = vec![u32::MAX; RAW_PATTERNS];
        let mut raw_of = Vec::with_capacity(CANONICAL_PATTERNS);
        for neg in 0..SIDE_CODES {
            for pos in neg..SIDE_CODES {
                let id = raw_of.len() as u32;
                raw_of.push((neg * SIDE_CODES + pos) as u32);
                of_raw[neg * SIDE_CODES + pos] = id;
                of_raw[pos * SIDE_CODES + neg] = id;
            }
        }
        Canonical { of_raw, raw_of }
    })
}

/// The 11 cells (offsets `-5..=5` along the line, index 5 the empty centre) of canonical pattern
/// `id`, as the trainer feeds them to its convolution stack when it writes the table.
pub fn pattern_line(id: usize) -> [u8; 2 * HALF + 1] {
    let raw = canonical().raw_of[id] as usize;
    let (neg, pos) = (side_cells((raw / SIDE_CODES) as u32), side_cells((raw % SIDE_CODES) as u32));
    let mut line = [cell::EMPTY; 2 * HALF + 1];
    for j in 0..HALF {
        line[HALF - 1 - j] = neg[j];
        line[HALF + 1 + j] = pos[j];
    }
    line
}

/// Raw pattern index at point `(x, y)` in direction `d` of a board of side `size` whose cells
/// (`y * size + x`) hold 0 empty, 1 own, 2 opponent: the definition, walked cell by cell (the
/// reference for [`LineGeometry`]).
pub fn raw_index_direct(cells: &[u8], size: usize, x: usize, y: usize, d: usize) -> u32 {
    let (dx, dy) = DIRS[d];
    let side = |s: i32| {
        let mut c = [cell::WALL; HALF];
        for (j, v) in c.iter_mut().enumerate() {
            let (cx, cy) = (x as i32 + s * dx * (j as i32 + 1), y as i32 + s * dy * (j as i32 + 1));
            if cx < 0 || cy < 0 || cx >= size as i32 || cy >= size as i32 {
                break;
            }
            *v = cells[cy as usize * size + cx as usize];
        }
        side_code(&c).expect("cells hold 0..=2")
    };
    side(-1) * SIDE_CODES as u32 + side(1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn side_codes_round_trip_and_count() {
        let mut seen = HashSet::new();
        for code in 0..SIDE_CODES as u32 {
            let c = side_cells(code);
            assert_eq!(side_code(&c).unwrap(), code);
            seen.insert(c);
        }
        assert_eq!(seen.len(), 364);
        assert!(side_code(&[cell::WALL, cell::OWN, cell::WALL, cell::WALL, cell::WALL]).is_err());
        // Written down: 5 on-board cells, own stones at j = 0 and j = 2 -> (243-1)/2 + 1 + 9 = 131.
        assert_eq!(side_code(&[1, 0, 1, 0, 0]).unwrap(), 131);
    }

    /// Enumerates every geometrically possible pattern from the definition (each side: 0..=5
    /// on-board cells of 3 states then walls), identifies mirrors, and counts.
    #[test]
    fn canonical_pattern_count_is_66430() {
        let mut sides = Vec::new();
        for k in 0..=HALF {
            for v in 0..3u32.pow(k as u32) {
                let mut c = [cell::WALL; HALF];
                let mut r = v;
                for x in c.iter_mut().take(k) {
                    *x = (r % 3) as u8;
                    r /= 3;
                }
                sides.push(c);
            }
        }
        assert_eq!(sides.len(), 364);
        let mut set = HashSet::new();
        for a in &sides {
            for b in &sides {
                set.insert(if a <= b { (*a, *b) } else { (*b, *a) });
            }
        }
        assert_eq!(set.len(), 66_430);
        assert_eq!(CANONICAL_PATTERNS, 66_430);
        let c = canonical();
        assert_eq!(c.raw_of.len(), 66_430);
        let ids: HashSet<u32> = c.of_raw.iter().copied().collect();
        assert_eq!(ids.len(), 66_430);
        for raw in 0..RAW_PATTERNS {
            let mirror = (raw % SIDE_CODES) * SIDE_CODES + raw / SIDE_CODES;
            assert_eq!(c.of_raw[raw], c.of_raw[mirror]);
            assert_eq!(c.of_raw[c.raw_of[c.of_raw[raw] as usize] as usize], c.of_raw[raw]);
        }
        // The line of a canonical pattern reproduces its raw index.
        let line = pattern_line(1234);
        let mut neg = [0u8; HALF];
        let mut pos = [0u8; HALF];
        for j in 0..HALF {
            neg[j] = line[HALF - 1 - j];
            pos[j] = line[HALF + 1 + j];
        }
        let raw = side_code(&neg).unwrap() * SIDE_CODES as u32 + side_code(&pos).unwrap();
        assert_eq!(raw, c.raw_of[1234]);
    }
}
