#!/usr/bin/env bash
# Builds the anchor engine of the strength ladder (docs/strength-ladder.md): Rapfi 0.43
# (https://github.com/dhbloo/rapfi, GPL-3.0) with its classical evaluator, into engines/rapfi/
# (ignored by git), and prints the `--opponent` spec that plays it at a fixed node budget.
#
#   scripts/anchors.sh [--src DIR] [--ref COMMIT] [--nodes N] [--jobs J]
#
#   --src DIR     a local checkout (or unpacked archive) of the Rapfi repository, or its Rapfi/
#                 folder; without it the repository is fetched (needs the network) at --ref
#   --ref COMMIT  the commit to fetch (default: the 0.43.02 release)
#   --url URL     the repository to fetch from (default: Rapfi's public repository)
#   --nodes N     the node budget in the printed spec (default 16000)
#   --jobs J      parallel compile jobs (default: the CPUs)
#
# Needs cmake >= 3.18 and a C++17 compiler (g++ or clang++); git when fetching. The classical
# evaluator needs no network weights: the build's own classical configuration (the one Rapfi
# embeds in internalConfig.cpp) is written to engines/rapfi/classical.toml and passed with
# --config, so that no config.toml in the working directory can replace it. Only the search
# (alpha-beta over the classical pattern evaluation) runs; one thread unless told otherwise.
# Nothing in the test suite needs this engine.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="$ROOT/engines/rapfi"
REPO_URL="https://github.com/dhbloo/rapfi.git"
# "bump version to 0.43.02" on Rapfi's main branch.
REF="164be7be056a6db942525f8e94258c17a5b60c03"
SRC=""
NODES=16000
JOBS="$(nproc 2>/dev/null || echo 2)"

die() { echo "anchors.sh: $*" >&2; exit 1; }
while [ $# -gt 0 ]; do
    case "$1" in
        --src) [ $# -ge 2 ] || die "--src needs a directory"; SRC="$2"; shift 2 ;;
        --ref) [ $# -ge 2 ] || die "--ref needs a commit"; REF="$2"; shift 2 ;;
        --url) [ $# -ge 2 ] || die "--url needs a repository"; REPO_URL="$2"; shift 2 ;;
        --nodes) [ $# -ge 2 ] || die "--nodes needs a number"; NODES="$2"; shift 2 ;;
        --jobs) [ $# -ge 2 ] || die "--jobs needs a number"; JOBS="$2"; shift 2 ;;
        -h|--help) sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown argument '$1' (see --help)" ;;
    esac
done
[[ "$NODES" =~ ^[1-9][0-9]*$ ]] || die "--nodes '$NODES' must be a whole number >= 1"
[[ "$JOBS" =~ ^[1-9][0-9]*$ ]] || die "--jobs '$JOBS' must be a whole number >= 1"

mkdir -p "$OUT"
if [ -z "$SRC" ]; then
    command -v git >/dev/null || die "git is not installed; give a local checkout with --src DIR"
    SRC="$OUT/src"
    if [ "$(git -C "$SRC" rev-parse HEAD 2>/dev/null || true)" != "$REF" ]; then
        echo "[anchors] fetching $REPO_URL at $REF" >&2
        rm -rf "$SRC"
        git init -q "$SRC"
        git -C "$SRC" fetch -q --depth 1 "$REPO_URL" "$REF" \
            || { rm -rf "$SRC"; die "cannot fetch $REPO_URL at $REF (offline?); give a local checkout with --src DIR"; }
        git -C "$SRC" checkout -q FETCH_HEAD
    fi
fi
[ -d "$SRC" ] || die "--src '$SRC' is not a directory"
SRC="$(cd "$SRC" && pwd)"
if [ -f "$SRC/Rapfi/CMakeLists.txt" ]; then
    CMAKE_DIR="$SRC/Rapfi"
elif [ -f "$SRC/CMakeLists.txt" ] && [ -f "$SRC/internalConfig.cpp" ]; then
    CMAKE_DIR="$SRC"
else
    die "'$SRC' holds neither Rapfi/CMakeLists.txt nor CMakeLists.txt with internalConfig.cpp: not a Rapfi checkout"
fi

# The version the source declares (core/version.cpp in 0.43).
ver_part() { sed -n "s/^#define RAPFI_$1_VER *\([0-9]*\).*/\1/p" "$CMAKE_DIR/core/version.cpp" 2>/dev/null | head -1; }
MAJOR="$(ver_part MAJOR)"; MINOR="$(ver_part MINOR)"; REVISION="$(ver_part REVISION)"
VERSION="${MAJOR:-?}.${MINOR:-?}.$(printf %02d "${REVISION:-0}")"
if [ "$MAJOR.$MINOR" != "0.43" ]; then
    echo "[anchors] warning: the source declares Rapfi $VERSION, the ladder is calibrated on 0.43" >&2
fi

command -v cmake >/dev/null || die "cmake (>= 3.18) is not installed: e.g. 'apt-get install cmake' or 'pip install cmake'"
echo "[anchors] building Rapfi $VERSION from $CMAKE_DIR into $OUT/build ($JOBS jobs)" >&2
# A build folder configured for another source is started afresh.
if [ -f "$OUT/build/CMakeCache.txt" ] \
    && ! grep -qxF "CMAKE_HOME_DIRECTORY:INTERNAL=$CMAKE_DIR" "$OUT/build/CMakeCache.txt"; then
    rm -rf "$OUT/build"
fi
# Command modules (self-play, tuning, database tools) are not needed to play. The policy
# minimum lets CMake 4 configure the bundled libraries' older CMakeLists.
cmake -S "$CMAKE_DIR" -B "$OUT/build" -DCMAKE_BUILD_TYPE=Release -DNO_COMMAND_MODULES=ON \
    -DCMAKE_POLICY_VERSION_MINIMUM=3.5 >"$OUT/build.log" 2>&1 \
    || { tail -n 30 "$OUT/build.log" >&2; die "cmake could not configure the build (log: $OUT/build.log)"; }
cmake --build "$OUT/build" -j "$JOBS" >>"$OUT/build.log" 2>&1 \
    || { tail -n 30 "$OUT/build.log" >&2; die "the build failed (log: $OUT/build.log)"; }
cp "$OUT/build/pbrain-rapfi" "$OUT/pbrain-rapfi"

# The classical configuration: the text between R"internalConfig( and )internalConfig".
awk '/^\)internalConfig"/ { on = 0 } on { print } /R"internalConfig\(/ { on = 1 }' \
    "$CMAKE_DIR/internalConfig.cpp" >"$OUT/classical.toml"
grep -q '^\[model' "$OUT/classical.toml" \
    || die "no classical configuration found in $CMAKE_DIR/internalConfig.cpp"

# Smoke test: one renju move at 1000 nodes. END comes a while later: Rapfi reads commands while
# it thinks, and END would end the search.
ANSWER="$(cd "$OUT" && { printf 'START 15\nINFO rule 4\nINFO timeout_turn 60000\nINFO max_node 1000\n'
    printf 'BOARD\n7,7,2\n8,7,1\n6,8,2\nDONE\n'; sleep 3; printf 'END\n'; } \
    | timeout 60 ./pbrain-rapfi --config classical.toml 2>/dev/null | grep -E '^[0-9]+,[0-9]+$' | head -1 || true)"
[ -n "$ANSWER" ] || die "the built engine did not answer a move ($OUT/pbrain-rapfi)"
echo "[anchors] $OUT/pbrain-rapfi (Rapfi $VERSION, classical evaluator) answers a move at 1000 nodes: $ANSWER" >&2

SPEC="engine:\"engines/rapfi/pbrain-rapfi --config classical.toml\",nodes=$NODES"
cat >&2 <<EOF
[anchors] the --opponent spec (paths from the repository root; rungs: nodes=1000, 4000, 16000,
[anchors] 64000, 256000), e.g.
[anchors]   renju-zero curve --run runs/quick --opponent '$SPEC'
[anchors] from another directory: engine:"$OUT/pbrain-rapfi --config classical.toml",nodes=$NODES
EOF
echo "$SPEC"
