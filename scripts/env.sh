# Sourced by the other scripts: makes sure the project-local virtualenv holds the torch wheel that
# tch expects (and onnx and onnxruntime for the ONNX export), and exports what tch's build needs.
# Safe to source repeatedly; a second run reuses the virtualenv.
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
# The ONNX export for other engines (`renju-zero export --format onnx`, docs/onnx-export.md)
# converts with torch's exporter, which needs `onnx`; its test runs the file with ONNX Runtime
# (CPU wheel). About 170 MB with numpy, installed once beside torch.
ONNX_VERSION="1.23.2"
ORT_VERSION="1.31.1"
ONNX_STAMP="$VENV/.onnx-$ONNX_VERSION-ort-$ORT_VERSION"
if [ ! -f "$ONNX_STAMP" ]; then
    echo "[setup] installing onnx==$ONNX_VERSION and onnxruntime==$ORT_VERSION into $VENV (first run only)" >&2
    "$VENV/bin/pip" install --quiet --disable-pip-version-check "onnx==$ONNX_VERSION" "onnxruntime==$ORT_VERSION" \
        || { echo "[setup] pip install onnx onnxruntime failed" >&2; return 1 2>/dev/null || exit 1; }
    touch "$ONNX_STAMP"
fi
export LIBTORCH_USE_PYTORCH=1
export PATH="$VENV/bin:$PATH"
