//! [`NetShape`]: the input and output dimensions every network family is built for, fixed by the
//! encoder version and the board size.

use anyhow::{ensure, Result};
use serde::{Deserialize, Serialize};

/// Input and output dimensions of a network (fixed by the encoder version and the board size).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NetShape {
    /// Input planes `C` (`renju_selfplay::encode::NUM_PLANES`).
    pub planes: usize,
    /// Input globals `G` (`renju_selfplay::encode::NUM_GLOBALS`).
    pub globals: usize,
    /// Board side `S`.
    pub size: usize,
    /// Policy outputs `A` (`renju_selfplay::action::action_space_size(S)`); must be `> S*S`.
    pub actions: usize,
}

impl NetShape {
    /// The shape the current shared encoder (`renju_selfplay::encode`, version
    /// `ENCODER_VERSION`) and action space give for boards of side `size`.
    pub fn current(size: usize) -> NetShape {
        NetShape {
            planes: renju_selfplay::encode::NUM_PLANES,
            globals: renju_selfplay::encode::NUM_GLOBALS,
            size,
            actions: renju_selfplay::action::action_space_size(size),
        }
    }

    /// The shape of a network for encoder `version` (`renju_selfplay::encode::input_shape`) on
    /// boards of side `size`. Errors: a version this build does not know.
    pub fn for_version(version: u32, size: usize) -> anyhow::Result<NetShape> {
        let (planes, globals) = renju_selfplay::encode::input_shape(version)?;
        Ok(NetShape { planes, globals, ..NetShape::current(size) })
    }

    /// Points on the board, `S*S`.
    pub fn points(&self) -> usize {
        self.size * self.size
    }

    /// Checks what every network family needs of the shape. Errors: an action space that does not
    /// exceed the points (the protocol actions follow the points, docs/DESIGN.md).
    pub fn validate(&self) -> Result<()> {
        ensure!(self.actions > self.points(), "action space {} must exceed the {} points", self.actions, self.points());
        Ok(())
    }
}
