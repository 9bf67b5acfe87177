//! The line-pattern (NNUE-style) network in tch: trained like the residual net, exported as a
//! table (`renju_selfplay::linepattern`, whose module docs fix the pattern encoding) that the
//! search evaluates without torch. The design follows Rapfi's "mix" networks (dhbloo/rapfi
//! `Rapfi/eval/mix9nnue.*`, dhbloo/pytorch-nnue-trainer `model/mixnet.py`); the code is our own.
//!
//! Shapes (`n` batch, `S` side, `F` = [`NetConfig::line_features`], `C` =
//! [`NetConfig::line_channels`], `H` = [`NetConfig::value_hidden`], `R` = `A - S*S`):
//!
//! - line input `[n, 3, S+10, S+10]`: own stones, opponent stones, wall (off-board), from the
//!   deciding player's view ([`StoneView`]), the board padded by 5 wall cells;
//! - the line mapping, per colour the decider holds (separate weights): five *valid* (unpadded)
//!   kernel-3 1-D convolutions `3 -> C -> C -> C -> C -> F`, relu between, run along each of
//!   the 4 directions (as 1x3, 3x1 and diagonal 3x3 kernels) and along each direction reversed;
//!   the 8 results are summed. Valid convolutions over the wall padding make the value at a
//!   point a function of exactly the 11 cells of its lines, computed as on an isolated line, so
//!   the sum over both orientations is a mirror-symmetric function of a line pattern: a table;
//! - `h = empty * lines + point_embed(own, opp, forbidden, offers, last 3) + linear(globals)`,
//!   `a = relu(h)`; `o = a + relu(depthwise3x3(a) + b)`;
//! - policy: `linear(F -> 1)` per point (`[n, S*S]`), then `linear(2F -> R)` of the pooled
//!   `[mean(o), max(o)]`; value: `linear(2F -> H)`, relu, `linear(H -> 3)` (W/D/L logits);
//! - with [`NetConfig::policy_pointwise`] `K > 0`, a dynamic pointwise policy stage (the design
//!   of Rapfi's mix9 policy head): `linear(2F -> F)` of the pooled vector, relu,
//!   `linear(F -> K*F + K)` gives a per-position `W [K, F]` and `b [K]`, and every point's
//!   placement logit gains `out . relu(W o[p] + b)` (`out` `[K]`, learned).
//!
//! No batch norm: the forward pass is the same in training and inference, which is what lets
//! the table evaluator reproduce it.
//!
//! Two ways to compute the line features, one function ([`LinePath`]): on the padded board
//! (tensor operations only: inference and the TorchScript trace), and, for training and the
//! table export, once per distinct line pattern of the batch and, inside the stack, once per
//! distinct window of each layer (`LineNet::line_rows`), gathered back per point. The second is
//! about 15x faster on a CPU (docs/experiments/2026-12-line-pattern-trainer.md).

use super::shape::NetShape;
use crate::config::NetConfig;
use anyhow::{Context, Result};
use renju_selfplay::encode::ENCODER_VERSION;
use renju_selfplay::linepattern::{
    canonical, cell, pattern_line, stone_cells, LineGeometry, LinePatternWeights, PointwiseStage, StoneView,
    CANONICAL_PATTERNS, HALF, POINT_INPUTS,
};
use tch::nn::{self, Module};
use tch::{Device, Kind, Tensor};

/// Layers of the line mapping (kernel 3 each: receptive field `2 * 5 + 1 = 11` cells).
pub const LINE_LAYERS: usize = HALF;

/// How [`LineNet::forward`] computes the line features. Both are the same function of the
/// position (equal up to float rounding: a test compares outputs and gradients).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinePath {
    /// The convolution stacks over the padded board (4 directions x 2 orientations): tensor
    /// operations only, so it traces to TorchScript; the inference and export path.
    Board,
    /// The stacks over the distinct line patterns of the batch, gathered per point (see
    /// `LineNet::pattern_features`): reads the stones on the host, so it does not trace; the
    /// training path, several times faster on a CPU
    /// (docs/experiments/2026-12-line-pattern-trainer.md).
    Patterns,
}

/// The line-pattern network (variables on the `nn::VarStore` it was built on).
pub struct LineNet {
    shape: NetShape,
    features: usize,
    value_hidden: usize,
    view: StoneView,
    /// The pattern geometry of the board side (the pattern-gather path, [`LinePath::Patterns`]).
    geometry: LineGeometry,
    /// Per decider colour (0 Black, 1 White): `(weight [Cout, Cin, 3], bias [Cout])` per layer.
    stacks: [Vec<(Tensor, Tensor)>; 2],
    point_embed: Tensor,
    global: nn::Linear,
    dw_w: Tensor,
    dw_b: Tensor,
    policy: nn::Linear,
    protocol: nn::Linear,
    value1: nn::Linear,
    value2: nn::Linear,
    pointwise: Option<Pointwise>,
    /// [`NetConfig::opponent_policy`]: the opponent-policy head, `linear(F -> 1)` per point and
    /// `linear(2F -> R)` of the pooled vector, on the policy's features. Not in the table: it
    /// only shapes training.
    opponent: Option<(nn::Linear, nn::Linear)>,
}

/// The dynamic pointwise policy stage's variables (`K` outputs).
struct Pointwise {
    k: usize,
    /// `2F -> F` and `F -> K*F + K`: the generator of the per-position layer.
    l1: nn::Linear,
    l2: nn::Linear,
    /// `[K]`, zero at first (the stage starts as a no-op): the outputs' weights in the logit.
    out: Tensor,
}

fn linear(p: nn::Path, i: usize, o: usize) -> nn::Linear {
    nn::linear(p, i as i64, o as i64, Default::default())
}

/// The 2-D kernel `[Cout, Cin, kh, kw]` running the 1-D kernel `w: [Cout, Cin, 3]` along
/// direction `d` of `renju_selfplay::linepattern::DIRS` (tensor axes: 2 = y, 3 = x).
fn kernel2d(w: &Tensor, d: usize) -> Tensor {
    match d {
        0 => w.unsqueeze(2),
        1 => w.unsqueeze(3),
        2 => w.diag_embed(0, -2, -1),
        _ => w.diag_embed(0, -2, -1).flip([2]),
    }
}

impl LineNet {
    /// Builds the network on `vs` (Kaiming-uniform convolution and linear weights).
    pub fn new(vs: &nn::Path, cfg: &NetConfig, shape: NetShape) -> Result<LineNet> {
        cfg.validate()?;
        shape.validate()?;
        let (f, c, h) = (cfg.line_features, cfg.line_channels, cfg.value_hidden);
        let stack = |p: nn::Path| -> Vec<(Tensor, Tensor)> {
            (0..LINE_LAYERS)
                .map(|l| {
                    let cin = if l == 0 { 3 } else { c };
                    let cout = if l == LINE_LAYERS - 1 { f } else { c };
                    let w = p.kaiming_uniform(&format!("conv{l}_weight"), &[cout as i64, cin as i64, 3]);
                    let b = p.zeros(&format!("conv{l}_bias"), &[cout as i64]);
                    (w, b)
                })
                .collect()
        };
        Ok(LineNet {
            shape,
            features: f,
            value_hidden: h,
            view: StoneView::of_encoder(ENCODER_VERSION)?,
            geometry: LineGeometry::new(shape.size),
            stacks: [stack(vs / "line_black"), stack(vs / "line_white")],
            point_embed: vs.randn("point_embed", &[POINT_INPUTS as i64, f as i64], 0.0, 0.1),
            global: linear(vs / "global", shape.globals, f),
            dw_w: vs.kaiming_uniform("dw_weight", &[f as i64, 1, 3, 3]),
            dw_b: vs.zeros("dw_bias", &[f as i64]),
            policy: linear(vs / "policy", f, 1),
            protocol: linear(vs / "protocol", 2 * f, shape.actions - shape.points()),
            value1: linear(vs / "value1", 2 * f, h),
            value2: linear(vs / "value2", h, 3),
            pointwise: (cfg.policy_pointwise > 0).then(|| {
                let k = cfg.policy_pointwise;
                Pointwise {
                    k,
                    l1: linear(vs / "pw1", 2 * f, f),
                    l2: linear(vs / "pw2", f, k * f + k),
                    out: vs.zeros("pw_out", &[k as i64]),
                }
            }),
            opponent: cfg.opponent_policy.then(|| {
                (
                    linear(vs / "opponent_policy", f, 1),
                    linear(vs / "opponent_protocol", 2 * f, shape.actions - shape.points()),
                )
            }),
        })
    }

    /// The input/output dimensions.
    pub fn shape(&self) -> NetShape {
        self.shape
    }

    /// The stack of colour `c` along direction `d` (reversed when `flip`), valid convolutions.
    fn run_stack(&self, x: &Tensor, c: usize, d: usize, flip: bool) -> Tensor {
        let mut h = x.shallow_clone();
        for (l, (w, b)) in self.stacks[c].iter().enumerate() {
            let w = if flip { w.flip([2]) } else { w.shallow_clone() };
            h = h.conv2d(&kernel2d(&w, d), Some(b), [1, 1], [0, 0], [1, 1], 1);
            if l + 1 < LINE_LAYERS {
                h = h.relu();
            }
        }
        h
    }

    /// Line features `[m, F, S, S]` of padded line inputs `x: [m, 3, S+10, S+10]` with colour
    /// `c`'s mapping: both orientations of all 4 directions, summed.
    fn line_features(&self, x: &Tensor, c: usize) -> Tensor {
        let s = self.shape.size as i64;
        let mut sum: Option<Tensor> = None;
        for d in 0..4 {
            let xin = match d {
                0 => x.narrow(2, HALF as i64, s),
                1 => x.narrow(3, HALF as i64, s),
                _ => x.shallow_clone(),
            };
            for flip in [false, true] {
                let y = self.run_stack(&xin, c, d, flip);
                sum = Some(match sum {
                    None => y,
                    Some(t) => t + y,
                });
            }
        }
        sum.expect("four directions")
    }

    /// Forward pass: `planes [n, C, S, S]`, `globals [n, G]` -> `(policy logits [n, A], value
    /// logits [n, 3])`. Identical in training and inference; `path` only chooses how the line
    /// features are computed (the same function up to float rounding, see [`LinePath`]).
    pub fn forward(&self, planes: &Tensor, globals: &Tensor, path: LinePath) -> (Tensor, Tensor) {
        let (policy, value, _) = self.forward_heads(planes, globals, path, false);
        (policy, value)
    }

    /// [`Self::forward`] and, with `opponent` and the head built ([`NetConfig::opponent_policy`]),
    /// the opponent-policy logits `[n, A]`.
    pub fn forward_heads(
        &self,
        planes: &Tensor,
        globals: &Tensor,
        path: LinePath,
        opponent: bool,
    ) -> (Tensor, Tensor, Option<Tensor>) {
        let pl = |i: usize| planes.narrow(1, i as i64, 1);
        let (own, opp, black) = match self.view {
            StoneView::Absolute { black, white, decider_is_black } => {
                let is_black = globals.narrow(1, decider_is_black as i64, 1).gt(0.5).view([-1, 1, 1, 1]);
                let (b, w) = (pl(black), pl(white));
                (b.where_self(&is_black, &w), w.where_self(&is_black, &b), is_black.flatten(0, -1))
            }
            StoneView::Relative { own, opp, colour_plane } => {
                (pl(own), pl(opp), planes.select(1, colour_plane as i64).amax([1, 2], false).gt(0.5))
            }
        };
        let f = self.features as i64;
        let empty = own.ones_like() - &own - &opp;
        let lines = match path {
            LinePath::Board => {
                let pad = [HALF as i64; 4];
                // Shapes derive from the inputs (no batch-size constants), so a traced module
                // takes any n.
                let inside = own.ones_like().constant_pad_nd(pad);
                let wall = inside.ones_like() - inside;
                let x = Tensor::cat(&[Tensor::cat(&[&own, &opp], 1).constant_pad_nd(pad), wall], 1);
                let bidx = black.nonzero().squeeze_dim(1);
                let widx = black.logical_not().nonzero().squeeze_dim(1);
                let fb = self.line_features(&x.index_select(0, &bidx), 0);
                let fw = self.line_features(&x.index_select(0, &widx), 1);
                let lines = own.zeros_like().repeat([1, f, 1, 1]).index_copy(0, &bidx, &fb).index_copy(0, &widx, &fw);
                lines * &empty
            }
            LinePath::Patterns => self.pattern_features(&own, &opp, &black),
        };
        let mut inputs = vec![own.shallow_clone(), opp.shallow_clone()];
        inputs.extend(self.view.extra_planes().iter().map(|&c| pl(c)));
        let inputs = Tensor::cat(&inputs, 1);
        let emb = inputs.permute([0, 2, 3, 1]).matmul(&self.point_embed).permute([0, 3, 1, 2]);
        let g = self.global.forward(globals).unsqueeze(-1).unsqueeze(-1);
        let a = (lines + emb + g).relu();
        let o = &a + a.conv2d(&self.dw_w, Some(&self.dw_b), [1, 1], [1, 1], [1, 1], f).relu();
        let linear_place = self.policy.forward(&o.permute([0, 2, 3, 1])).flatten(1, -1);
        let pooled = Tensor::cat(&[o.mean_dim([2i64, 3].as_slice(), false, o.kind()), o.amax([2, 3], false)], 1);
        let place = match &self.pointwise {
            None => linear_place,
            Some(pw) => {
                let k = pw.k as i64;
                let g = pw.l2.forward(&pw.l1.forward(&pooled).relu());
                let wd = g.narrow(1, 0, k * f).view([-1, k, f]);
                let bd = g.narrow(1, k * f, k).unsqueeze(-1);
                let hid = (wd.bmm(&o.flatten(2, -1)) + bd).relu(); // [n, K, S*S]
                linear_place + hid.transpose(1, 2).matmul(&pw.out.unsqueeze(-1)).squeeze_dim(-1)
            }
        };
        let policy = Tensor::cat(&[place, self.protocol.forward(&pooled)], 1);
        let value = self.value2.forward(&self.value1.forward(&pooled).relu());
        let opponent_policy = match &self.opponent {
            Some((place, protocol)) if opponent => Some(Tensor::cat(
                &[place.forward(&o.permute([0, 2, 3, 1])).flatten(1, -1), protocol.forward(&pooled)],
                1,
            )),
            _ => None,
        };
        (policy, value, opponent_policy)
    }

    /// The table rows `[m, F]` (on `device`, of `kind`) of canonical patterns `ids` for decider
    /// colour `c`: the line mapping of the isolated 11-cell line ([`pattern_line`]) summed over
    /// both orientations, the function [`Self::run_stack`] computes on the board.
    ///
    /// Computed layer by layer over *distinct windows*: the output of layer `l` (1-based) at a
    /// cell depends only on the `2l + 1` cells around it, whichever line they belong to, so each
    /// layer runs once per distinct window of its length among all the lines (the reversed line
    /// with the same weights gives the flipped-kernel orientation). A window is keyed by its cell
    /// states in base 4 (cell 0 in the lowest digit); its three sub-windows (the inputs of the
    /// kernel-3 convolution) are the key shifted by 0, 1 and 2 digits. Each layer is then one
    /// gather of its sub-windows' features and one matrix product. Lines share most of their
    /// windows (a side of a line has 364 codes), so this is several times less work than running
    /// the stack on every line (all 2 x 66,430 patterns: about 0.4 M window evaluations instead of
    /// 6.6 M).
    fn line_rows(&self, ids: &[u32], c: usize, device: Device, kind: Kind) -> Tensor {
        let len = 2 * HALF + 1;
        let m = ids.len();
        // Top layer: every line and its reverse (the second orientation), keyed.
        let mut keys: Vec<u32> = Vec::with_capacity(2 * m);
        let mut rev: Vec<u32> = Vec::with_capacity(m);
        for &id in ids {
            let line = pattern_line(id as usize);
            let (mut k, mut r) = (0u32, 0u32);
            for j in 0..len {
                k |= (line[j] as u32) << (2 * j);
                r |= (line[len - 1 - j] as u32) << (2 * j);
            }
            keys.push(k);
            rev.push(r);
        }
        keys.extend(rev);
        // Top down: per layer, the sub-window indices of its windows into the layer below.
        let mut children: Vec<Vec<i64>> = Vec::with_capacity(LINE_LAYERS);
        for l in (1..=LINE_LAYERS).rev() {
            let sub_len = 2 * l - 1; // cells of a sub-window (layer l - 1's window)
            let mask = (1u32 << (2 * sub_len)) - 1;
            let mut idx = Vec::with_capacity(keys.len() * 3);
            if l == 1 {
                // Layer 0 "windows" are single cells: their index is the cell state.
                for &k in &keys {
                    idx.extend((0..3).map(|o| ((k >> (2 * o)) & mask) as i64));
                }
                children.push(idx);
                break;
            }
            let mut slot = vec![u32::MAX; 1 << (2 * sub_len)];
            let mut below = Vec::new();
            for &k in &keys {
                for o in 0..3 {
                    let sk = (k >> (2 * o)) & mask;
                    if slot[sk as usize] == u32::MAX {
                        slot[sk as usize] = below.len() as u32;
                        below.push(sk);
                    }
                    idx.push(slot[sk as usize] as i64);
                }
            }
            children.push(idx);
            keys = below;
        }
        // children[l - 1]: layer l's sub-window indices.
        children.reverse();
        // Layer 0 features: the one-hot input channels (own, opponent, wall) of the 4 states.
        let mut h = Tensor::from_slice(&[0f32, 0., 0., 1., 0., 0., 0., 1., 0., 0., 0., 1.])
            .view([4, 3])
            .to_kind(kind)
            .to_device(device);
        for (l, (w, b)) in self.stacks[c].iter().enumerate() {
            let idx = Tensor::from_slice(&children[l]).to_device(device);
            let cin = w.size()[1];
            let rows = children[l].len() as i64 / 3;
            // x[window, k * Cin + ci] = h[sub-window k, ci];  w [Cout, Cin, 3] -> [3 * Cin, Cout].
            let x = h.index_select(0, &idx).view([rows, 3 * cin]);
            h = x.matmul(&w.permute([2, 1, 0]).reshape([3 * cin, -1])) + b;
            if l + 1 < LINE_LAYERS {
                h = h.relu();
            }
        }
        let m = m as i64;
        h.narrow(0, 0, m) + h.narrow(0, m, m)
    }

    /// Line features `[n, F, S, S]` (zero at occupied points) by pattern gathering: the host
    /// reads each position's stones (`own`, `opp: [n, 1, S, S]`, `black: [n]` the decider
    /// holds Black), finds the canonical pattern of every empty point and direction
    /// ([`LineGeometry::raw_indices`], [`canonical`]), runs each colour's line mapping once per
    /// *distinct* pattern of the batch ([`Self::line_rows`]), and sums the 4 rows of every point
    /// (a gather; its backward is a scatter-add into the distinct rows). A batch of 64 midgames
    /// holds about 5,000 distinct patterns against `64 x 225 x 4` point-directions, and the
    /// stack runs once per distinct window of those lines instead of on the padded board.
    fn pattern_features(&self, own: &Tensor, opp: &Tensor, black: &Tensor) -> Tensor {
        let device = own.device();
        let n = own.size()[0] as usize;
        let pp = self.shape.points();
        let host = |t: &Tensor| -> Vec<f32> {
            let t = t.detach().to_kind(Kind::Float).to_device(Device::Cpu).contiguous().flatten(0, -1);
            Vec::<f32>::try_from(&t).expect("a float tensor converts to Vec<f32>")
        };
        let (own_h, opp_h, black_h) = (host(own), host(opp), host(black));
        let can = canonical();
        // Dense map (colour, canonical id) -> position in that colour's distinct list.
        let mut slot_of = vec![u32::MAX; 2 * CANONICAL_PATTERNS];
        let mut distinct: [Vec<u32>; 2] = [Vec::new(), Vec::new()];
        // Per point-direction: the colour-tagged key, or u32::MAX at an occupied point.
        let mut keys = vec![u32::MAX; n * pp * 4];
        let mut cells = Vec::with_capacity(pp);
        let mut raw = Vec::with_capacity(pp * 4);
        for i in 0..n {
            let c = if black_h[i] > 0.5 { 0 } else { 1 };
            stone_cells(&own_h[i * pp..(i + 1) * pp], &opp_h[i * pp..(i + 1) * pp], &mut cells);
            self.geometry.raw_indices(&cells, &mut raw);
            for p in 0..pp {
                if cells[p] != cell::EMPTY {
                    continue;
                }
                for d in 0..4 {
                    let id = can.of_raw[raw[d * pp + p] as usize];
                    let key = (c * CANONICAL_PATTERNS) as u32 + id;
                    if slot_of[key as usize] == u32::MAX {
                        slot_of[key as usize] = distinct[c].len() as u32;
                        distinct[c].push(id);
                    }
                    keys[(i * pp + p) * 4 + d] = key;
                }
            }
        }
        let (nb, nw) = (distinct[0].len(), distinct[1].len());
        let zero_row = (nb + nw) as i64;
        let index: Vec<i64> = keys
            .iter()
            .map(|&k| {
                if k == u32::MAX {
                    zero_row
                } else if (k as usize) < CANONICAL_PATTERNS {
                    slot_of[k as usize] as i64
                } else {
                    nb as i64 + slot_of[k as usize] as i64
                }
            })
            .collect();
        let f = self.features as i64;
        let kind = own.kind();
        let mut rows = Vec::with_capacity(3);
        for (c, ids) in distinct.iter().enumerate() {
            if !ids.is_empty() {
                rows.push(self.line_rows(ids, c, device, kind));
            }
        }
        rows.push(Tensor::zeros([1, f], (kind, device)));
        let rows = Tensor::cat(&rows, 0);
        let index = Tensor::from_slice(&index).to_device(device);
        let s = self.shape.size as i64;
        rows.index_select(0, &index)
            .view([n as i64, pp as i64, 4, f])
            .sum_dim_intlist(2, false, kind)
            .permute([0, 2, 1])
            .reshape([n as i64, f, s, s])
    }

    /// The table row of every canonical pattern for decider colour `c`: `[CANONICAL_PATTERNS, F]`
    /// (the stack over both orientations of the isolated 11-cell line).
    fn table_rows(&self, c: usize) -> Result<Vec<f32>> {
        let ids: Vec<u32> = (0..CANONICAL_PATTERNS as u32).collect();
        let y = tch::no_grad(|| self.line_rows(&ids, c, self.point_embed.device(), self.point_embed.kind()));
        let y = y.to_kind(Kind::Float).to_device(Device::Cpu).contiguous();
        Vec::<f32>::try_from(&y.flatten(0, -1)).context("copying table rows")
    }

    /// Tabulates the network: every canonical pattern through both colours' line mappings, and
    /// the head's weights, in the layout of [`LinePatternWeights`].
    pub fn export(&self) -> Result<LinePatternWeights> {
        let _ = canonical();
        let v = |t: &Tensor| -> Result<Vec<f32>> {
            let t = t.detach().to_kind(Kind::Float).to_device(Device::Cpu).contiguous().flatten(0, -1);
            Ok(Vec::<f32>::try_from(&t)?)
        };
        let bias = |l: &nn::Linear| l.bs.as_ref().expect("linear layers have a bias").shallow_clone();
        let f = self.features as i64;
        let mut table = self.table_rows(0)?;
        table.extend(self.table_rows(1)?);
        Ok(LinePatternWeights {
            features: self.features,
            value_hidden: self.value_hidden,
            board_size: self.shape.size,
            encoder_version: ENCODER_VERSION,
            table,
            point_embed: v(&self.point_embed)?,
            global_w: v(&self.global.ws.tr())?,
            global_b: v(&bias(&self.global))?,
            dw_w: v(&self.dw_w.view([f, 9]).tr())?,
            dw_b: v(&self.dw_b)?,
            policy_w: v(&self.policy.ws)?,
            policy_b: v(&bias(&self.policy))?,
            protocol_w: v(&self.protocol.ws)?,
            protocol_b: v(&bias(&self.protocol))?,
            value_w1: v(&self.value1.ws)?,
            value_b1: v(&bias(&self.value1))?,
            value_w2: v(&self.value2.ws)?,
            value_b2: v(&bias(&self.value2))?,
            pointwise: match &self.pointwise {
                None => None,
                Some(p) => Some(PointwiseStage {
                    outputs: p.k,
                    w1: v(&p.l1.ws)?,
                    b1: v(&bias(&p.l1))?,
                    w2: v(&p.l2.ws)?,
                    b2: v(&bias(&p.l2))?,
                    out: v(&p.out)?,
                }),
            },
        })
    }
}
