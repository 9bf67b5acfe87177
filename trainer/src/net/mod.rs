//! The policy-value networks: [`Net`] over the two families, which take the same inputs and give
//! the same outputs, so that training, publishing and the evaluator never look at the family.
//!
//! - [`shape`]: [`NetShape`], the dimensions both families are built for;
//! - [`resnet`]: the KataGo-style residual tower ([`ResNet`]);
//! - [`linepattern`]: the line-pattern (NNUE-style) net ([`LineNet`]) and its table export.
//!
//! Only [`shape`] is built without the `torch` feature.

#[cfg(feature = "torch")]
pub mod linepattern;
#[cfg(feature = "torch")]
pub mod resnet;
pub mod shape;

#[cfg(feature = "torch")]
pub use linepattern::{LineNet, LinePath};
#[cfg(feature = "torch")]
pub use resnet::ResNet;
pub use shape::NetShape;

#[cfg(feature = "torch")]
use crate::config::{NetConfig, NetKind};
#[cfg(feature = "torch")]
use anyhow::Result;
#[cfg(feature = "torch")]
use tch::{nn, Tensor};

#[cfg(feature = "torch")]
/// A network of either family ([`NetConfig::kind`]): the residual tower or the line-pattern net
/// ([`linepattern`]). Both take the encoder's planes and globals and give the same outputs.
pub enum Net {
    /// [`NetKind::Resnet`].
    Res(Box<ResNet>),
    /// [`NetKind::Linepattern`].
    Line(Box<LineNet>),
}

#[cfg(feature = "torch")]
impl Net {
    /// Builds the network of family `cfg.kind` on `vs` (tch's default initialisation; seed torch
    /// with `tch::manual_seed` first for reproducible weights).
    pub fn new(vs: &nn::Path, cfg: &NetConfig, shape: NetShape) -> Result<Net> {
        Ok(match cfg.kind {
            NetKind::Resnet => Net::Res(Box::new(ResNet::new(vs, cfg, shape)?)),
            NetKind::Linepattern => Net::Line(Box::new(LineNet::new(vs, cfg, shape)?)),
        })
    }

    /// The input/output dimensions.
    pub fn shape(&self) -> NetShape {
        match self {
            Net::Res(n) => n.shape(),
            Net::Line(n) => n.shape(),
        }
    }

    /// Forward pass. `planes: [n, C, S, S]`, `globals: [n, G]` (float, on the network's device
    /// and of its kind). Returns `(policy_logits [n, A], value_logits [n, 3])`; `train` selects
    /// training mode (batch statistics in batch norm; the line-pattern net's pattern-gather path,
    /// [`LinePath::Patterns`], which does not trace: `train = false` is the traceable path).
    pub fn forward(&self, planes: &Tensor, globals: &Tensor, train: bool) -> (Tensor, Tensor) {
        match self {
            Net::Res(n) => n.forward(planes, globals, train),
            Net::Line(n) => n.forward(planes, globals, if train { LinePath::Patterns } else { LinePath::Board }),
        }
    }

    /// [`Self::forward`] and, when the network has the opponent-policy head
    /// ([`NetConfig::opponent_policy`]), its logits `[n, A]`: the training forward pass.
    pub fn forward_with_opponent(
        &self,
        planes: &Tensor,
        globals: &Tensor,
        train: bool,
    ) -> (Tensor, Tensor, Option<Tensor>) {
        match self {
            Net::Res(n) => n.forward_heads(planes, globals, train, true),
            Net::Line(n) => {
                n.forward_heads(planes, globals, if train { LinePath::Patterns } else { LinePath::Board }, true)
            }
        }
    }

    /// Inference output in the exported layout: `[n, A + 3]` = policy logits then value logits
    /// (win, draw, loss).
    pub fn forward_export(&self, planes: &Tensor, globals: &Tensor) -> Tensor {
        let (p, v) = self.forward(planes, globals, false);
        Tensor::cat(&[p, v], 1)
    }
}

#[cfg(feature = "torch")]
/// Whether a variable is subject to the L2 penalty: convolution and linear weights (rank >= 2),
/// not biases or batch-norm parameters (KataGo's choice).
pub fn is_decayed(name: &str, t: &Tensor) -> bool {
    t.dim() >= 2 && name.ends_with("weight")
}
