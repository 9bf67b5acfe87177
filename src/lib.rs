//! `renju-zero` as a library: the [`pipeline`] (the resumable self-play / training / publishing
//! loop and its run config) that the CLI in `src/main.rs` drives, and the board in the browser
//! ([`serve`]). Each subcommand's arguments and glue live in the binary (`src/cmd/`).

pub mod pipeline;
pub mod serve;
