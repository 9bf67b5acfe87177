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
# evaluator needs no network weights. Built without its command modules, Rapfi takes no
# command-line options: it reads config.toml from its working directory, else from beside the
# binary, else uses the classical configuration it embeds (internalConfig.cpp). That embedded
# configuration is what the ladder plays, so run the engine where no config.toml lies; a copy
# is written to engines/rapfi/classical.toml for reading, and the printed spec still passes it
# with --config, which this build ignores. Only the search (alpha-beta over the classical
# pattern evaluation) runs; one thread unless told otherwise. Nothing in the test suite needs
# this engine.
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
log() { echo "[anchors] $*" >&2; }
# shellcheck source=scripts/lib/rapfi.sh
source "$ROOT/scripts/lib/rapfi.sh"
while [ $# -gt 0 ]; do
    case "$1" in
        --src) [ $# -ge 2 ] || die "--src needs a directory"; SRC="$2"; shift 2 ;;
        --ref) [ $# -ge 2 ] || die "--ref needs a commit"; REF="$2"; shift 2 ;;
        --url) [ $# -ge 2 ] || die "--url needs a repository"; REPO_URL="$2"; shift 2 ;;
        --nodes) [ $# -ge 2 ] || die "--nodes needs a number"; NODES="$2"; shift 2 ;;
        --jobs) [ $# -ge 2 ] || die "--jobs needs a number"; JOBS="$2"; shift 2 ;;
        -h|--help) sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown argument '$1' (see --help)" ;;
    esac
done
[[ "$NODES" =~ ^[1-9][0-9]*$ ]] || die "--nodes '$NODES' must be a whole number >= 1"
[[ "$JOBS" =~ ^[1-9][0-9]*$ ]] || die "--jobs '$JOBS' must be a whole number >= 1"

mkdir -p "$OUT"
if [ -z "$SRC" ]; then
    SRC="$OUT/src"
    rapfi_fetch "$SRC"
fi
rapfi_locate "$SRC"
[ -f "$CMAKE_DIR/internalConfig.cpp" ] || die "$CMAKE_DIR has no internalConfig.cpp (the classical configuration)"
if [ "$MAJOR.$MINOR" != "0.43" ]; then
    log "warning: the source declares Rapfi $VERSION, the ladder is calibrated on 0.43"
fi

log "building Rapfi $VERSION from $CMAKE_DIR into $OUT/build ($JOBS jobs)"
rapfi_build "$OUT/build" "$JOBS" "$OUT/build.log"
cp "$OUT/build/pbrain-rapfi" "$OUT/pbrain-rapfi"

# The classical configuration: the text between R"internalConfig( and )internalConfig".
awk '/^\)internalConfig"/ { on = 0 } on { print } /R"internalConfig\(/ { on = 1 }' \
    "$CMAKE_DIR/internalConfig.cpp" >"$OUT/classical.toml"
grep -q '^\[model' "$OUT/classical.toml" \
    || die "no classical configuration found in $CMAKE_DIR/internalConfig.cpp"

# Smoke test: one renju move at 1000 nodes. END comes a while later: Rapfi reads commands while
# it thinks, and END would end the search.
ANSWER="$(cd "$OUT" || exit 1; { printf 'START 15\nINFO rule 4\nINFO timeout_turn 60000\nINFO max_node 1000\n'
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
