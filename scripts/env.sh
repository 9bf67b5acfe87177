# Sourced by the other scripts: makes sure the project-local virtualenv holds the torch wheel that
# tch expects, and exports what tch's build needs. Safe to source repeatedly; a second run reuses
# the virtualenv.
#
# tch 0.26 is built against libtorch 2.13.0; we take libtorch from PyPI's `torch` wheel of that
# exact version (LIBTORCH_USE_PYTORCH=1). Binaries get an rpath from build.rs, so running them
# needs no LD_LIBRARY_PATH.
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.venv"
TORCH_VERSION="2.13.0"
STAMP="$VENV/.torch-$TORCH_VERSION"
if [ ! -f "$STAMP" ]; then
    echo "[setup] installing torch==$TORCH_VERSION into $VENV (first run only, ~5 GB)" >&2
    python3 -m venv "$VENV" || { echo "[setup] python3 -m venv failed" >&2; return 1 2>/dev/null || exit 1; }
    "$VENV/bin/pip" install --quiet --disable-pip-version-check "torch==$TORCH_VERSION" \
        || { echo "[setup] pip install torch==$TORCH_VERSION failed" >&2; return 1 2>/dev/null || exit 1; }
    touch "$STAMP"
fi
export LIBTORCH_USE_PYTORCH=1
export PATH="$VENV/bin:$PATH"
