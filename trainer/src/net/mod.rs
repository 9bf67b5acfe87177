//! The policy-value networks: [`Net`] over the two families, which take the same inputs and give
//! the same outputs, so that training, publishing and the evaluator never look at the family.
//!
//! - [`shape`]: [`NetShape`], the dimensions both families are built for;
//! - [`resnet`]: the KataGo-style residual tower ([`ResNet`]);
//! - [`linepattern`]: the line-pattern (NNUE-style) net ([`LineNet`]) and its table export.

pub mod linepattern;
pub mod resnet;
pub mod shape;

pub use linepattern::{LineNet, LinePath};
pub use resnet::ResNet;
pub use shape::NetShape;

use crate::config::{NetConfig, NetKind};
use anyhow::Result;
use tch::nn;
use tch::Tensor;

/// A network of either family ([`NetConfig::kind`]): the residual tower or the line-pattern net
/// ([`linepattern`]). Both take the encoder's planes and globals and give the same outputs.
pub enum Net {
    /// [`NetKind::Resnet`].
    Res(Box<ResNet>),
    /// [`NetKind::Linepattern`].
    Line(Box<LineNet>),
}

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

    /// Inference output in the exported layout: `[n, A + 3]` = policy logits then value logits
    /// (win, draw, loss).
    pub fn forward_export(&self, planes: &Tensor, globals: &Tensor) -> Tensor {
        let (p, v) = self.forward(planes, globals, false);
        Tensor::cat(&[p, v], 1)
    }
}

/// Whether a variable is subject to the L2 penalty: convolution and linear weights (rank >= 2),
/// not biases or batch-norm parameters (KataGo's choice).
pub fn is_decayed(name: &str, t: &Tensor) -> bool {
    t.dim() >= 2 && name.ends_with("weight")
}
