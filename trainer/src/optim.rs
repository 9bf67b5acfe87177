//! The optimisers, written over tch tensors so that their state (momentum buffers, Adam moments,
//! step count) can be saved in checkpoints and restored exactly — tch's built-in optimisers keep
//! their state inside libtorch where it cannot be serialised.
//!
//! - SGD with Nesterov momentum, PyTorch's formulation: `b = mu * b + g`, `w -= lr * (g + mu * b)`.
//! - AdamW (Loshchilov & Hutter 2019): `m = b1 m + (1-b1) g`, `v = b2 v + (1-b2) g^2`,
//!   `w -= lr * (m / (1-b1^t) / (sqrt(v / (1-b2^t)) + eps) + wd * w)`.

use crate::config::OptimizerConfig;
use anyhow::{ensure, Context, Result};
use std::collections::HashMap;
use std::path::Path;
use tch::{nn, Kind, Tensor};

/// An optimiser over the trainable variables of a `VarStore` (sorted by name).
pub struct Optimizer {
    cfg: OptimizerConfig,
    params: Vec<(String, Tensor)>,
    /// Per parameter: SGD `[momentum]`, AdamW `[m, v]`.
    state: Vec<Vec<Tensor>>,
    /// Steps taken (Adam bias correction).
    t: u64,
}

impl Optimizer {
    /// An optimiser with zero state for the trainable variables of `vs`.
    pub fn new(vs: &nn::VarStore, cfg: OptimizerConfig) -> Optimizer {
        let mut params: Vec<(String, Tensor)> = vs.variables().into_iter().filter(|(_, t)| t.requires_grad()).collect();
        params.sort_by(|a, b| a.0.cmp(&b.0));
        let buffers = match cfg {
            OptimizerConfig::Sgd { .. } => 1,
            OptimizerConfig::Adamw { .. } => 2,
        };
        let state = params.iter().map(|(_, p)| (0..buffers).map(|_| p.zeros_like()).collect()).collect();
        Optimizer { cfg, params, state, t: 0 }
    }

    /// Clears the gradients.
    pub fn zero_grad(&mut self) {
        for (_, p) in &self.params {
            let mut g = p.grad();
            if g.defined() {
                let _ = g.detach_().zero_();
            }
        }
    }

    /// The global L2 norm of the gradients (a 0-d tensor, before clipping); when `max > 0`
    /// rescales the gradients so the norm is at most `max`. No host synchronisation.
    pub fn clip_grad_norm(&mut self, max: f64) -> Tensor {
        tch::no_grad(|| {
            let norms: Vec<Tensor> = self
                .params
                .iter()
                .map(|(_, p)| p.grad())
                .filter(|g| g.defined())
                .map(|g| g.square().sum(Kind::Float))
                .collect();
            let total = Tensor::stack(&norms, 0).sum(Kind::Float).sqrt();
            if max > 0.0 {
                let coef = (Tensor::from(max).to_device(total.device()) / (&total + 1e-6)).clamp_max(1.0);
                for (_, p) in &self.params {
                    let mut g = p.grad();
                    if g.defined() {
                        let _ = g.g_mul_(&coef);
                    }
                }
            }
            total
        })
    }

    /// One update with learning rate `lr`.
    pub fn step(&mut self, lr: f64) {
        self.t += 1;
        let t = self.t as i32;
        tch::no_grad(|| {
            for ((_, p), st) in self.params.iter_mut().zip(self.state.iter_mut()) {
                let g = p.grad();
                if !g.defined() {
                    continue;
                }
                match self.cfg {
                    OptimizerConfig::Sgd { momentum } => {
                        let b = &mut st[0];
                        let _ = b.g_mul_scalar_(momentum).g_add_(&g);
                        let update = &g + &*b * momentum;
                        let _ = p.g_sub_(&(update * lr));
                    }
                    OptimizerConfig::Adamw { beta1, beta2, eps, weight_decay } => {
                        if weight_decay > 0.0 {
                            let _ = p.g_mul_scalar_(1.0 - lr * weight_decay);
                        }
                        let (m, rest) = st.split_at_mut(1);
                        let (m, v) = (&mut m[0], &mut rest[0]);
                        let _ = m.g_mul_scalar_(beta1).g_add_(&(&g * (1.0 - beta1)));
                        let _ = v.g_mul_scalar_(beta2).g_add_(&(g.square() * (1.0 - beta2)));
                        let c1 = 1.0 - beta1.powi(t);
                        let c2 = 1.0 - beta2.powi(t);
                        let denom = (&*v / c2).sqrt() + eps;
                        let _ = p.g_sub_(&(&*m / denom * (lr / c1)));
                    }
                }
            }
        });
    }

    /// Steps taken.
    pub fn steps(&self) -> u64 {
        self.t
    }

    /// Writes the state (buffers named `<k>/<variable>`, plus a `t` scalar) to a safetensors
    /// file.
    pub fn save(&self, path: &Path) -> Result<()> {
        let mut named: Vec<(String, Tensor)> = Vec::new();
        for ((name, _), st) in self.params.iter().zip(&self.state) {
            for (k, b) in st.iter().enumerate() {
                named.push((format!("{k}/{name}"), b.to_device(tch::Device::Cpu)));
            }
        }
        named.push(("t".into(), Tensor::from_slice(&[self.t as i64])));
        Tensor::write_safetensors(&named, path).with_context(|| format!("writing optimiser state {}", path.display()))
    }

    /// Restores the state written by [`Self::save`]. Errors name the file.
    pub fn load(&mut self, path: &Path) -> Result<()> {
        ensure!(path.exists(), "missing optimiser state {}", path.display());
        let named: HashMap<String, Tensor> = Tensor::read_safetensors(path)
            .map_err(|e| anyhow::anyhow!("{e}"))
            .with_context(|| format!("corrupt optimiser state {}", path.display()))?
            .into_iter()
            .collect();
        for ((name, p), st) in self.params.iter().zip(self.state.iter_mut()) {
            for (k, b) in st.iter_mut().enumerate() {
                let key = format!("{k}/{name}");
                let src = named.get(&key).with_context(|| {
                    format!(
                        "{}: optimiser buffer '{key}' missing (different optimiser or architecture?)",
                        path.display()
                    )
                })?;
                ensure!(
                    src.size() == p.size(),
                    "{}: optimiser buffer '{key}' has shape {:?}, expected {:?}",
                    path.display(),
                    src.size(),
                    p.size()
                );
                tch::no_grad(|| b.copy_(src));
            }
        }
        let t = named.get("t").with_context(|| format!("{}: step count 't' missing", path.display()))?;
        self.t = t.int64_value(&[0]) as u64;
        Ok(())
    }
}
