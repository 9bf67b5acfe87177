#!/usr/bin/env bash
# The whole test suite, from a fresh clone: installs libtorch (torch wheel) on first run, then
# checks formatting (rustfmt.toml), lints the workspace with clippy (warnings are errors), and
# builds and runs every test of the workspace in release mode. Clippy runs in the release profile so that it reuses the release
# build's build-script outputs (torch-sys compiles its C++ wrapper once per profile).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$ROOT"
cargo fmt --all --check
cargo clippy --workspace --all-targets --release -- -D warnings
# The build without libtorch (tests/no_torch.rs builds and runs it).
cargo clippy -p renju-zero -p renju-trainer --lib --bins --release --no-default-features -- -D warnings
cargo test --workspace --release "$@"
