#!/usr/bin/env bash
# The whole test suite, from a fresh clone: installs libtorch (torch wheel) on first run, then
# checks formatting (rustfmt.toml), lints the workspace with clippy (warnings are errors),
# builds and runs every test of the workspace in release mode, and runs the Slurm scripts on a
# single-node Slurm (deploy/slurm/local-cluster-test.sh; as root, and only when no test
# filter is given). The browser test (tests/serve_browser.rs) needs Debian's chromium and
# chromium-driver; they are installed here when missing (as root). Clippy runs in the release profile so that it reuses the release build's
# build-script outputs (torch-sys compiles its C++ wrapper once per profile).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$ROOT"
cargo fmt --all --check
cargo clippy --workspace --all-targets --release -- -D warnings
# The build without libtorch (tests/no_torch.rs builds and runs it).
cargo clippy -p renju-zero -p renju-trainer --lib --bins --release --no-default-features -- -D warnings
if [[ ! -x /usr/bin/chromium || ! -x /usr/bin/chromedriver ]]; then
    if [[ $(id -u) == 0 ]]; then
        export DEBIAN_FRONTEND=noninteractive
        apt-get install -y -qq --no-install-recommends chromium chromium-driver >/dev/null \
            || { apt-get update -qq && apt-get install -y -qq --no-install-recommends chromium chromium-driver >/dev/null; }
    else
        echo "tests/serve_browser.rs needs chromium and chromium-driver: install them (apt-get, as root)" >&2
    fi
fi
cargo test --workspace --release "$@"
# A real single-node Slurm runs the cluster scripts (about two and a half minutes, Debian's
# slurm-wlm and munge installed when missing); it needs root.
if [[ $# == 0 ]]; then
    if [[ $(id -u) == 0 ]]; then
        bash deploy/slurm/local-cluster-test.sh
    else
        echo "deploy/slurm/local-cluster-test.sh skipped: it needs root (it starts Slurm's daemons)" >&2
    fi
fi
