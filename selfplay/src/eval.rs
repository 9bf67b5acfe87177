//! The [`Evaluator`] trait (DESIGN.md "Evaluator") and two network-free evaluators:
//! [`UniformEvaluator`] (zero logits, even W/D/L) and [`HeuristicEvaluator`] (cheap pattern
//! priors and a threat-count value, a baseline opponent); [`EvaluatorSpec`], the one grammar
//! naming an evaluator (`uniform`, `heuristic`, `model:DIR`), built through an
//! [`EvaluatorLoader`] for networks (this crate has no torch).
//!
//! An evaluator maps `n` encoded positions (`planes: [n, NUM_PLANES, S, S]`,
//! `globals: [n, NUM_GLOBALS]`, see [`crate::encode`]) to policy logits `[n, A]` over the whole
//! action space (`A = action_space_size(S)`, see [`crate::action`]; the search masks illegal
//! actions and takes the softmax over legal ones) and W/D/L probabilities `[n, 3]` from the
//! deciding player's view.

use crate::action::action_space_size;
use crate::encode::{global, kind, plane, NUM_GLOBALS, NUM_PLANES};
use anyhow::{bail, ensure, Context, Result};
use renju_rules::board::DIRS;
use std::path::{Path, PathBuf};

/// Output of one batch: `policy_logits: [n, A]` flattened, `wdl: [n, 3]` flattened
/// (probabilities win, draw, loss for the deciding player; each row sums to 1).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EvalOutput {
    pub policy_logits: Vec<f32>,
    pub wdl: Vec<f32>,
}

/// Softmax of `x` in place, in f32: `exp(x_i - max)`, each times the reciprocal of their sum
/// (summed in order); the uniform distribution when that sum is zero or not finite (every `x`
/// is `-inf`, or one is NaN). The one softmax of the crate: the search's priors over a node's
/// children, the Gumbel root's improved policy, the line-pattern net's W/D/L.
pub fn softmax(x: &mut [f32]) {
    let m = x.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let mut total = 0.0f32;
    for v in x.iter_mut() {
        *v = (*v - m).exp();
        total += *v;
    }
    let inv = if total > 0.0 && total.is_finite() { 1.0 / total } else { 0.0 };
    let uniform = 1.0 / x.len() as f32;
    for v in x.iter_mut() {
        *v = if inv > 0.0 { *v * inv } else { uniform };
    }
}

/// A batched position evaluator (a network, or a stand-in).
pub trait Evaluator: Send {
    /// planes: `[n, C, S, S]` flattened; globals: `[n, G]` flattened. Returns logits `[n, A]` and
    /// W/D/L `[n, 3]`. Errors when the inputs have the wrong lengths or the model fails.
    fn evaluate(&mut self, planes: &[f32], globals: &[f32], n: usize) -> Result<EvalOutput>;
    /// The board side `S` the evaluator expects.
    fn board_size(&self) -> usize;
}

/// Checks that `planes` and `globals` hold `n` positions of side `size`.
pub fn check_inputs(planes: &[f32], globals: &[f32], n: usize, size: usize) -> Result<()> {
    let pl = NUM_PLANES * size * size;
    ensure!(
        planes.len() == n * pl,
        "evaluator: planes has {} floats, expected n * NUM_PLANES * S * S = {n} * {NUM_PLANES} * {size} * {size} = {}",
        planes.len(),
        n * pl
    );
    ensure!(
        globals.len() == n * NUM_GLOBALS,
        "evaluator: globals has {} floats, expected n * NUM_GLOBALS = {n} * {NUM_GLOBALS} = {}",
        globals.len(),
        n * NUM_GLOBALS
    );
    Ok(())
}

/// Builds a network evaluator for a `model:` spec: `(model directory, board size)`.
pub type EvaluatorLoader<'a> = dyn Fn(&Path, usize) -> Result<Box<dyn Evaluator>> + Sync + 'a;

/// A loader that refuses every model (for callers without torch, and tests).
pub fn no_models(dir: &Path, _size: usize) -> Result<Box<dyn Evaluator>> {
    bail!("cannot load model {}: this program was built without a model loader", dir.display())
}

/// Which evaluator to use: the one evaluator grammar of every command (`selfplay --evaluator`,
/// `arena --player`, `openings --model`, `gomocup --model`).
#[derive(Clone, Debug, PartialEq)]
pub enum EvaluatorSpec {
    /// `uniform`: zero logits, value 0 ([`UniformEvaluator`]).
    Uniform,
    /// `heuristic`: pattern priors and threat value ([`HeuristicEvaluator`]).
    Heuristic,
    /// `model:DIR`: a published generation (or a models directory with `LATEST`).
    Model(PathBuf),
    /// `shipped`: the model compiled into the binary ([`crate::linepattern::shipped`]; 15x15).
    Shipped,
}

impl EvaluatorSpec {
    /// Parses `uniform`, `heuristic`, `shipped`, `model:DIR`, or a model directory's path, which means the
    /// same as `model:DIR`: the path of an existing file or directory, or any text with more than
    /// one path component (`/models/gen-000012`, `./models`). Whether a model is there is decided
    /// when it is loaded, the same way for both spellings. Errors: `model:` without a directory,
    /// or a single word that is none of these and names nothing (a misspelt `heuristic`).
    pub fn parse(s: &str) -> Result<EvaluatorSpec> {
        match s.trim() {
            "uniform" => Ok(EvaluatorSpec::Uniform),
            "heuristic" => Ok(EvaluatorSpec::Heuristic),
            "shipped" => Ok(EvaluatorSpec::Shipped),
            t => {
                if let Some(dir) = t.strip_prefix("model:") {
                    ensure!(!dir.is_empty(), "'model:' needs a directory (model:DIR)");
                    return Ok(EvaluatorSpec::Model(PathBuf::from(dir)));
                }
                let path = Path::new(t);
                ensure!(
                    path.exists() || path.components().count() > 1,
                    "unknown evaluator '{t}' (expected uniform, heuristic, shipped, model:DIR or a model directory; \
                     there is no file or directory '{t}')"
                );
                Ok(EvaluatorSpec::Model(PathBuf::from(t)))
            }
        }
    }
    /// Builds the evaluator for boards of side `size`.
    pub fn build(&self, size: usize, loader: &EvaluatorLoader) -> Result<Box<dyn Evaluator>> {
        Ok(match self {
            EvaluatorSpec::Uniform => Box::new(UniformEvaluator::new(size)),
            EvaluatorSpec::Heuristic => Box::new(HeuristicEvaluator::new(size)),
            EvaluatorSpec::Shipped => Box::new(crate::linepattern::shipped::shipped_net_for(size)?.evaluator()),
            EvaluatorSpec::Model(dir) => {
                let e = loader(dir, size).with_context(|| format!("loading model {}", dir.display()))?;
                ensure!(
                    e.board_size() == size,
                    "model {} is for {}x{} boards, but the games are {size}x{size}",
                    dir.display(),
                    e.board_size(),
                    e.board_size()
                );
                e
            }
        })
    }
}

impl std::fmt::Display for EvaluatorSpec {
    /// `uniform`, `heuristic` or `model:DIR`, which parses back to the same value.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EvaluatorSpec::Uniform => f.write_str("uniform"),
            EvaluatorSpec::Heuristic => f.write_str("heuristic"),
            EvaluatorSpec::Shipped => f.write_str("shipped"),
            EvaluatorSpec::Model(dir) => write!(f, "model:{}", dir.display()),
        }
    }
}

/// Zero logits (a uniform prior over legal actions after masking) and W/D/L = (1/3, 1/3, 1/3),
/// i.e. value 0. Costs nothing beyond filling the output; used for tests and benchmarks.
#[derive(Clone, Debug)]
pub struct UniformEvaluator {
    size: usize,
}

impl UniformEvaluator {
    /// For boards of side `size`.
    pub fn new(size: usize) -> UniformEvaluator {
        UniformEvaluator { size }
    }
}

impl Evaluator for UniformEvaluator {
    fn evaluate(&mut self, planes: &[f32], globals: &[f32], n: usize) -> Result<EvalOutput> {
        check_inputs(planes, globals, n, self.size)?;
        Ok(EvalOutput { policy_logits: vec![0.0; n * action_space_size(self.size)], wdl: [1.0 / 3.0; 3].repeat(n) })
    }
    fn board_size(&self) -> usize {
        self.size
    }
}

/// Pattern-based priors and a threat-count value, from the encoded planes only.
///
/// Policy (stone placements and offers, colour `c` = the stone to be placed, global 8): the logit
/// of an empty point is `min(score / 4, 30)` where the score adds, over the 4 line directions, the
/// unbroken run the point would make: own five 1000, blocking the opponent's five 500, own open
/// four 100 (simple four 40), blocking a four 60 (30), own open three 20, blocking an open three
/// 15, own/opponent open two 4/3; plus 0.5 per stone within distance 2 (proximity) and a small
/// centre bias. Offer picks score the offers by how bad they are for Black. Protocol decisions
/// (swap, single/double, choose N) get zero logits.
///
/// Value: from the deciding player's view. With a five-point of the player to move the value is
/// +0.95; facing two or more opponent five-points, -0.9; otherwise
/// `tanh(0.25 * (threat(own) - threat(opponent)))` with `threat = 4 * five-points + open-four
/// points`. Squashed to W/D/L with a draw probability of 0.1:
/// `W = (1 + v) / 2 * 0.9`, `L = (1 - v) / 2 * 0.9`.
#[derive(Clone, Debug)]
pub struct HeuristicEvaluator {
    size: usize,
}

impl HeuristicEvaluator {
    /// For boards of side `size`.
    pub fn new(size: usize) -> HeuristicEvaluator {
        HeuristicEvaluator { size }
    }
}

/// Per-direction run information for placing colour `c` (1 = black plane, 2 = white) at (x, y).
struct LineView<'a> {
    cells: &'a [u8],
    size: i32,
}

impl LineView<'_> {
    fn at(&self, x: i32, y: i32) -> u8 {
        if x < 0 || y < 0 || x >= self.size || y >= self.size {
            3
        } else {
            self.cells[(y * self.size + x) as usize]
        }
    }
    /// (run length through the point, open ends) in direction d for colour c.
    fn run(&self, x: i32, y: i32, d: (i32, i32), c: u8) -> (u32, u32) {
        let mut len = 1;
        let mut open = 0;
        for s in [1, -1] {
            let (mut cx, mut cy) = (x + s * d.0, y + s * d.1);
            loop {
                let v = self.at(cx, cy);
                if v == c {
                    len += 1;
                    cx += s * d.0;
                    cy += s * d.1;
                } else {
                    if v == 0 {
                        open += 1;
                    }
                    break;
                }
            }
        }
        (len, open)
    }
    /// Pattern score for colour `c` at (x, y) plus flags (makes five, makes open four).
    fn score(&self, x: i32, y: i32, c: u8, own: bool) -> (f32, bool, bool) {
        let mut s = 0.0;
        let mut five = false;
        let mut open_four = false;
        for d in DIRS {
            let (len, open) = self.run(x, y, d, c);
            let v = match (len, open) {
                (l, _) if l >= 5 => {
                    five = true;
                    if own {
                        1000.0
                    } else {
                        500.0
                    }
                }
                (4, 2) => {
                    open_four = true;
                    if own {
                        100.0
                    } else {
                        60.0
                    }
                }
                (4, 1) => {
                    if own {
                        40.0
                    } else {
                        30.0
                    }
                }
                (3, 2) => {
                    if own {
                        20.0
                    } else {
                        15.0
                    }
                }
                (2, 2) => {
                    if own {
                        4.0
                    } else {
                        3.0
                    }
                }
                _ => 0.0,
            };
            s += v;
        }
        (s, five, open_four)
    }
}

impl Evaluator for HeuristicEvaluator {
    fn evaluate(&mut self, planes: &[f32], globals: &[f32], n: usize) -> Result<EvalOutput> {
        let size = self.size;
        check_inputs(planes, globals, n, size)?;
        let pp = size * size;
        let a = action_space_size(size);
        let mut out = EvalOutput { policy_logits: vec![0.0; n * a], wdl: vec![0.0; n * 3] };
        let mut cells = vec![0u8; pp];
        for i in 0..n {
            let pl = &planes[i * NUM_PLANES * pp..(i + 1) * NUM_PLANES * pp];
            let gl = &globals[i * NUM_GLOBALS..(i + 1) * NUM_GLOBALS];
            // Cells by colour (1 black, 2 white) from the own / opponent planes.
            let (own, opp) = if gl[global::DECIDER_IS_BLACK] > 0.5 { (1, 2) } else { (2, 1) };
            for k in 0..pp {
                cells[k] = if pl[plane::OWN * pp + k] > 0.5 {
                    own
                } else if pl[plane::OPPONENT * pp + k] > 0.5 {
                    opp
                } else {
                    0
                };
            }
            let view = LineView { cells: &cells, size: size as i32 };
            let decision = (0..kind::COUNT).find(|&k| gl[global::KIND + k] > 0.5).unwrap_or(kind::PLACE_STONE);
            let decider: u8 = if gl[global::DECIDER_IS_BLACK] > 0.5 { 1 } else { 2 };
            let stone: u8 = if gl[global::STONE_IS_BLACK] > 0.5 { 1 } else { 2 };
            let logits = &mut out.policy_logits[i * a..(i + 1) * a];
            // Threat counts for the value, per colour (index 1 black, 2 white).
            let mut fives = [0u32; 3];
            let mut open_fours = [0u32; 3];
            let centre = (size as f32 - 1.0) / 2.0;
            for k in 0..pp {
                if cells[k] != 0 {
                    continue;
                }
                let (x, y) = ((k % size) as i32, (k / size) as i32);
                let (sb, fb, ob) = view.score(x, y, 1, true);
                let (sw, fw, ow) = view.score(x, y, 2, true);
                fives[1] += fb as u32;
                fives[2] += fw as u32;
                open_fours[1] += ob as u32;
                open_fours[2] += ow as u32;
                if decision == kind::PLACE_STONE || decision == kind::PLACE_OFFER || decision == kind::PICK_OFFER {
                    let (own_s, opp_c) = if stone == 1 { (sb, 2) } else { (sw, 1) };
                    let (opp_s, _, _) = view.score(x, y, opp_c, false);
                    let mut near = 0.0;
                    for dy in -2..=2 {
                        for dx in -2..=2 {
                            let v = view.at(x + dx, y + dy);
                            if v == 1 || v == 2 {
                                near += 0.5;
                            }
                        }
                    }
                    let dc = (x as f32 - centre).abs().max((y as f32 - centre).abs());
                    let mut score = own_s + opp_s + near - 0.05 * dc;
                    if decision == kind::PICK_OFFER {
                        // Picking an offer: keep the one that helps Black least.
                        score = -sb;
                    }
                    logits[k] = (score / 4.0).min(30.0);
                }
            }
            let own = decider as usize;
            let opp = 3 - own;
            let to_move_is_decider = decision == kind::PLACE_STONE && stone == decider;
            let v: f32 = if to_move_is_decider && fives[own] > 0 {
                0.95
            } else if fives[opp] >= 2 && fives[own] == 0 {
                -0.9
            } else {
                let t = |c: usize| 4.0 * fives[c] as f32 + open_fours[c] as f32;
                (0.25 * (t(own) - t(opp))).tanh()
            };
            let w = &mut out.wdl[i * 3..i * 3 + 3];
            w[0] = (1.0 + v) / 2.0 * 0.9;
            w[1] = 0.1;
            w[2] = (1.0 - v) / 2.0 * 0.9;
        }
        Ok(out)
    }
    fn board_size(&self) -> usize {
        self.size
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_grammar() {
        assert_eq!(EvaluatorSpec::parse("heuristic").unwrap(), EvaluatorSpec::Heuristic);
        assert_eq!(EvaluatorSpec::parse(" uniform ").unwrap(), EvaluatorSpec::Uniform);
        // A path means the same as `model:PATH`, whether or not anything is there yet.
        for dir in ["/no/such/models", "./models", "runs/quick/models"] {
            assert_eq!(EvaluatorSpec::parse(dir).unwrap(), EvaluatorSpec::Model(PathBuf::from(dir)));
            assert_eq!(
                EvaluatorSpec::parse(&format!("model:{dir}")).unwrap(),
                EvaluatorSpec::Model(PathBuf::from(dir))
            );
        }
        // An existing directory given as one word.
        assert_eq!(EvaluatorSpec::parse(".").unwrap(), EvaluatorSpec::Model(PathBuf::from(".")));
        let e = EvaluatorSpec::parse("heurstic").unwrap_err().to_string();
        assert!(e.contains("unknown evaluator 'heurstic'") && e.contains("no file or directory"), "{e}");
        assert!(EvaluatorSpec::parse("model:").unwrap_err().to_string().contains("needs a directory"));
    }

    #[test]
    fn softmax_written_down_and_degenerate_inputs() {
        // exp(0) : exp(ln 3) = 1 : 3.
        let mut x = [0.0, 3f32.ln()];
        softmax(&mut x);
        assert!((x[0] - 0.25).abs() < 1e-7 && (x[1] - 0.75).abs() < 1e-7, "{x:?}");
        // Large logits do not overflow: only differences matter. 1 : 1 : exp(-2), over
        // 2 + exp(-2) = 2.135335283.
        let mut x = [1000.0, 1000.0, 998.0];
        softmax(&mut x);
        for (got, want) in x.iter().zip([0.468_310_5, 0.468_310_5, 0.063_378_9]) {
            assert!((got - want).abs() < 1e-6, "{x:?}");
        }
        // No finite logit, or a NaN: the uniform distribution.
        let mut x = [f32::NEG_INFINITY; 4];
        softmax(&mut x);
        assert_eq!(x, [0.25; 4]);
        let mut x = [0.0, f32::NAN];
        softmax(&mut x);
        assert_eq!(x, [0.5; 2]);
        let mut x: [f32; 0] = [];
        softmax(&mut x);
    }

    #[test]
    fn uniform_shapes_and_errors() {
        let mut e = UniformEvaluator::new(9);
        let out = e.evaluate(&[0.0; 2 * NUM_PLANES * 81], &[0.0; 2 * NUM_GLOBALS], 2).unwrap();
        assert_eq!(out.policy_logits.len(), 2 * action_space_size(9));
        assert_eq!(out.wdl.len(), 6);
        let err = e.evaluate(&[0.0; 3], &[0.0; NUM_GLOBALS], 1).unwrap_err().to_string();
        assert!(err.contains("planes has 3 floats"), "{err}");
    }

    #[test]
    fn heuristic_prefers_own_five_and_blocks() {
        let size = 9;
        let pp = size * size;
        let mut planes = vec![0.0; NUM_PLANES * pp];
        let mut globals = vec![0.0; NUM_GLOBALS];
        // Black stones a1..d1 (x 0..4, y 0); white stones a3..c3 (x 0..3, y 2). White to move:
        // the black stones are the opponent's.
        for x in 0..4 {
            planes[plane::OPPONENT * pp + x] = 1.0;
        }
        for x in 0..3 {
            planes[plane::OWN * pp + 2 * size + x] = 1.0;
        }
        globals[global::KIND] = 1.0;
        let mut e = HeuristicEvaluator::new(size);
        let out = e.evaluate(&planes, &globals, 1).unwrap();
        let l = &out.policy_logits;
        let best = (0..pp).max_by(|&a, &b| l[a].partial_cmp(&l[b]).unwrap()).unwrap();
        assert_eq!(best, 4, "white must block black's five at e1");
        // White deciding, facing one black five-point and no own five: value below zero.
        assert!(out.wdl[0] < out.wdl[2]);
    }
}
