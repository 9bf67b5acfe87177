//! One module per subcommand: its clap arguments and the glue from them to the libraries.

pub mod analyze;
pub mod arena;
pub mod curve;
pub mod export;
pub mod games;
pub mod gomocup;
pub mod openings;
pub mod progress;
pub mod rules;
pub mod selfplay;
pub mod train;
