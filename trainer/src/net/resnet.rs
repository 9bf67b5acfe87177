//! The residual network family: a KataGo-style residual tower (Wu 2019, "Accelerating Self-Play
//! Learning in Go", Appendix A) over the shared encoder's planes and globals.
//!
//! Shapes (`n` = batch, `C` = [`NetShape::planes`], `G` = [`NetShape::globals`], `S` = board side,
//! `A` = [`NetShape::actions`] = `S*S + 4 + MAX_OFFERS`, `F` = [`NetConfig::channels`]):
//!
//! - stem: `conv5x5(C -> F)` of the planes plus `linear(G -> F)` of the globals, broadcast over
//!   the board as a per-channel bias (KataGo feeds its global inputs the same way);
//! - tower: [`NetConfig::blocks`] pre-activation residual blocks
//!   `x + conv3x3(relu(bn(conv3x3(relu(bn(x))))))`; in a global-pooling block
//!   ([`NetConfig::block_has_pool`]) the first convolution is split into `F - P` regular channels
//!   and `P` pooled ones ([`NetConfig::pool_channels`]); the pooled ones go through bn-relu, are
//!   reduced to their mean and max over the board (`[n, 2P]`) and a linear map of that is added
//!   to every point of the regular channels, which the second convolution maps back to `F`;
//!   the tower ends with bn-relu;
//! - policy head: 1x1 convolutions to `Hp` channels twice (`p` and `g`); `g` is bn-relu'd and
//!   pooled to `[n, 2Hp]`, which adds a bias to `p` and, through a linear map, gives the logits of
//!   the `A - S*S` protocol actions (keep, swap, single, double, choose 1..10); `p` goes through
//!   bn-relu and a 1x1 convolution to one plane, the `S*S` placement logits (index `y*S + x`);
//!   output `[n, A]`, placements first, exactly the action order of DESIGN.md;
//! - value head: 1x1 convolution to `Hv` channels, bn-relu, mean+max pooling `[n, 2Hv]`,
//!   `linear -> relu -> linear(3)`: logits of win, draw, loss for the deciding player, `[n, 3]`.

use super::shape::NetShape;
use crate::config::NetConfig;
use anyhow::Result;
use tch::nn::{self, ModuleT};
use tch::Tensor;

fn conv(vs: nn::Path, cin: usize, cout: usize, k: usize) -> nn::Conv2D {
    let cfg = nn::ConvConfig { padding: (k / 2) as i64, bias: false, ..Default::default() };
    nn::conv2d(vs, cin as i64, cout as i64, k as i64, cfg)
}

fn bn(vs: nn::Path, c: usize) -> nn::BatchNorm {
    nn::batch_norm2d(vs, c as i64, Default::default())
}

/// Mean and max over the board: `[n, c, S, S] -> [n, 2c]`.
fn pool(x: &Tensor) -> Tensor {
    let mean = x.mean_dim(&[2i64, 3][..], false, x.kind());
    let max = x.amax(&[2i64, 3][..], false);
    Tensor::cat(&[mean, max], 1)
}

struct Block {
    bn1: nn::BatchNorm,
    conv1: nn::Conv2D,
    /// Global pooling: (conv to pooled channels, its bn, linear from 2P to F-P).
    gpool: Option<(nn::Conv2D, nn::BatchNorm, nn::Linear)>,
    bn2: nn::BatchNorm,
    conv2: nn::Conv2D,
}

impl Block {
    fn new(vs: nn::Path, cfg: &NetConfig, pooled: bool) -> Block {
        let f = cfg.channels;
        let regular = if pooled { f - cfg.pool_channels } else { f };
        let gpool = pooled.then(|| {
            let p = cfg.pool_channels;
            (
                conv(&vs / "gconv", f, p, 3),
                bn(&vs / "gbn", p),
                nn::linear(&vs / "glin", 2 * p as i64, regular as i64, Default::default()),
            )
        });
        Block {
            bn1: bn(&vs / "bn1", f),
            conv1: conv(&vs / "conv1", f, regular, 3),
            gpool,
            bn2: bn(&vs / "bn2", regular),
            conv2: conv(&vs / "conv2", regular, f, 3),
        }
    }

    fn forward(&self, x: &Tensor, train: bool) -> Tensor {
        let a = self.bn1.forward_t(x, train).relu();
        let h = a.apply(&self.conv1);
        let h = match &self.gpool {
            Some((gconv, gbn, glin)) => {
                let g = gbn.forward_t(&a.apply(gconv), train).relu();
                h + pool(&g).apply(glin).unsqueeze(-1).unsqueeze(-1)
            }
            None => h,
        };
        let h = self.bn2.forward_t(&h, train).relu().apply(&self.conv2);
        x + h
    }
}

/// The residual network. Its variables live in the `nn::VarStore` it was built on; their names
/// (the safetensors keys) are stable for a given [`NetConfig`].
pub struct ResNet {
    shape: NetShape,
    stem_conv: nn::Conv2D,
    stem_globals: nn::Linear,
    blocks: Vec<Block>,
    trunk_bn: nn::BatchNorm,
    p_conv: nn::Conv2D,
    p_gconv: nn::Conv2D,
    p_gbn: nn::BatchNorm,
    p_glin: nn::Linear,
    p_protocol: nn::Linear,
    p_bn: nn::BatchNorm,
    p_out: nn::Conv2D,
    v_conv: nn::Conv2D,
    v_bn: nn::BatchNorm,
    v_fc1: nn::Linear,
    v_fc2: nn::Linear,
    /// [`NetConfig::opponent_policy`]: the opponent-policy head's output convolution and
    /// protocol layer, on the policy head's features.
    opponent: Option<(nn::Conv2D, nn::Linear)>,
}

impl ResNet {
    /// Builds the network on `vs` (variables created with tch's default initialisation: Kaiming
    /// uniform; seed torch with `tch::manual_seed` first for reproducible weights).
    pub fn new(vs: &nn::Path, cfg: &NetConfig, shape: NetShape) -> Result<ResNet> {
        cfg.validate()?;
        shape.validate()?;
        let f = cfg.channels;
        let hp = cfg.policy_channels;
        let hv = cfg.value_channels;
        let lin = |p: nn::Path, i: usize, o: usize| nn::linear(p, i as i64, o as i64, Default::default());
        let blocks =
            (0..cfg.blocks).map(|i| Block::new(vs / format!("block{i}"), cfg, cfg.block_has_pool(i))).collect();
        Ok(ResNet {
            shape,
            stem_conv: conv(vs / "stem_conv", shape.planes, f, 5),
            stem_globals: lin(vs / "stem_globals", shape.globals, f),
            blocks,
            trunk_bn: bn(vs / "trunk_bn", f),
            p_conv: conv(vs / "policy_conv", f, hp, 1),
            p_gconv: conv(vs / "policy_gconv", f, hp, 1),
            p_gbn: bn(vs / "policy_gbn", hp),
            p_glin: lin(vs / "policy_glin", 2 * hp, hp),
            p_protocol: lin(vs / "policy_protocol", 2 * hp, shape.actions - shape.points()),
            p_bn: bn(vs / "policy_bn", hp),
            p_out: {
                let cfg = nn::ConvConfig { bias: true, ..Default::default() };
                nn::conv2d(vs / "policy_out", hp as i64, 1, 1, cfg)
            },
            v_conv: conv(vs / "value_conv", f, hv, 1),
            v_bn: bn(vs / "value_bn", hv),
            v_fc1: lin(vs / "value_fc1", 2 * hv, cfg.value_hidden),
            v_fc2: lin(vs / "value_fc2", cfg.value_hidden, 3),
            opponent: cfg.opponent_policy.then(|| {
                let cfg = nn::ConvConfig { bias: true, ..Default::default() };
                (
                    nn::conv2d(vs / "opponent_out", hp as i64, 1, 1, cfg),
                    lin(vs / "opponent_protocol", 2 * hp, shape.actions - shape.points()),
                )
            }),
        })
    }

    /// The input/output dimensions.
    pub fn shape(&self) -> NetShape {
        self.shape
    }

    /// Forward pass. `planes: [n, C, S, S]`, `globals: [n, G]` (float, on the network's device
    /// and of its kind). Returns `(policy_logits [n, A], value_logits [n, 3])`; `train` selects
    /// batch statistics (training) or the running averages (inference) in batch norm.
    pub fn forward(&self, planes: &Tensor, globals: &Tensor, train: bool) -> (Tensor, Tensor) {
        let (policy, value, _) = self.forward_heads(planes, globals, train, false);
        (policy, value)
    }

    /// [`Self::forward`] and, with `opponent` and the head built ([`NetConfig::opponent_policy`]),
    /// the opponent-policy logits `[n, A]`.
    pub fn forward_heads(
        &self,
        planes: &Tensor,
        globals: &Tensor,
        train: bool,
        opponent: bool,
    ) -> (Tensor, Tensor, Option<Tensor>) {
        let g = globals.apply(&self.stem_globals).unsqueeze(-1).unsqueeze(-1);
        let mut x = planes.apply(&self.stem_conv) + g;
        for b in &self.blocks {
            x = b.forward(&x, train);
        }
        let x = self.trunk_bn.forward_t(&x, train).relu();

        let p = x.apply(&self.p_conv);
        let g = self.p_gbn.forward_t(&x.apply(&self.p_gconv), train).relu();
        let gp = pool(&g);
        let p = p + gp.apply(&self.p_glin).unsqueeze(-1).unsqueeze(-1);
        let hidden = self.p_bn.forward_t(&p, train).relu();
        let policy = Tensor::cat(&[hidden.apply(&self.p_out).flatten(1, -1), gp.apply(&self.p_protocol)], 1);
        let opponent_policy = match &self.opponent {
            Some((out, protocol)) if opponent => {
                Some(Tensor::cat(&[hidden.apply(out).flatten(1, -1), gp.apply(protocol)], 1))
            }
            _ => None,
        };

        let v = self.v_bn.forward_t(&x.apply(&self.v_conv), train).relu();
        let value = pool(&v).apply(&self.v_fc1).relu().apply(&self.v_fc2);
        (policy, value, opponent_policy)
    }
}
