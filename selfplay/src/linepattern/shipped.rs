//! The shipped model: a line-pattern generation trained with this project (15x15 renju under
//! the RIF opening rule), compiled into every binary so that a person can play and analyse with
//! no model files and no libtorch. It lives in `models/renju-15-rif/` in the compact form of
//! [`LinePatternWeights::to_compact_bytes`]; that folder's README.md gives its provenance (config,
//! training time, machine, its scores). The commands use it when no model is given and say so.

use super::{LinePatternNet, LinePatternWeights};
use anyhow::{ensure, Result};
use std::sync::{Arc, OnceLock};

/// The compact table file of the shipped model.
pub const SHIPPED_TABLE: &[u8] =
    include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/../models/renju-15-rif/linepattern.safetensors.gz"));

/// One line on the shipped model (what it is, how long it trained), as commands report it.
pub const SHIPPED_SUMMARY: &str =
    include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../models/renju-15-rif/summary.txt"));

/// The board side the shipped model plays.
pub const SHIPPED_SIZE: usize = 15;

/// The shipped net, decoded once per process and shared.
pub fn shipped_net() -> Result<Arc<LinePatternNet>> {
    static NET: OnceLock<Arc<LinePatternNet>> = OnceLock::new();
    if let Some(n) = NET.get() {
        return Ok(n.clone());
    }
    let w = LinePatternWeights::from_compact_bytes(SHIPPED_TABLE, "the shipped model (models/renju-15-rif)")?;
    ensure!(w.board_size == SHIPPED_SIZE, "the shipped model is for {}x{} boards", w.board_size, w.board_size);
    let net = LinePatternNet::new(w)?;
    Ok(NET.get_or_init(|| net).clone())
}

/// The shipped net for a board of side `size`: an error naming the one size it plays otherwise.
pub fn shipped_net_for(size: usize) -> Result<Arc<LinePatternNet>> {
    ensure!(
        size == SHIPPED_SIZE,
        "the shipped model plays {SHIPPED_SIZE}x{SHIPPED_SIZE} boards only, not {size}x{size}: give a model for \
         that size (--model DIR) or use the heuristic evaluator"
    );
    shipped_net()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_model_decodes_and_is_a_renju_15x15_net() {
        let net = shipped_net().unwrap();
        assert!(net.features() >= 1);
        let e = shipped_net_for(13).err().expect("a 13x13 board is refused").to_string();
        assert!(e.contains("15x15 boards only"), "{e}");
        assert!(!SHIPPED_SUMMARY.trim().is_empty() && !SHIPPED_SUMMARY.trim().contains('\n'));
    }
}
