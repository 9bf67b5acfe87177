#!/usr/bin/env bash
# The main job, from a fresh clone: installs libtorch (torch wheel) on first run, builds the CLI,
# and trains from zero with configs/quick.toml on CPU. Extra arguments go to `renju-zero train`
# (e.g. `--run runs/mine`, or `--config configs/lianhuan.toml` for another preset). Ctrl-C and
# the same command again resumes.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$ROOT"
cargo build --release --bin renju-zero
exec "$ROOT/target/release/renju-zero" train "$@"   # --config defaults to configs/quick.toml
