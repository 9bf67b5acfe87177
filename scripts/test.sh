#!/usr/bin/env bash
# The whole test suite, from a fresh clone: installs libtorch (torch wheel) on first run, then
# builds and runs every test of the workspace in release mode.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$ROOT"
cargo test --workspace --release "$@"
