#!/usr/bin/env bash
# Plays our exported network inside Rapfi against our own brain: builds Rapfi 0.43
# (https://github.com/dhbloo/rapfi, GPL-3.0) with its ONNX Runtime evaluator into
# engines/rapfi-ort/ (ignored by git), exports a generation with `renju-zero export --format
# onnx` (docs/onnx-export.md), has Rapfi's MCTS search load it, and plays Rapfi-with-our-net
# against `renju-zero gomocup` on the same net, at the same time per move, on the 26 RIF
# openings with both colours (renju, 15x15), through `renju-zero arena`. Prints the score.
#
#   scripts/rapfi-onnx.sh --model DIR [--time S] [--games N] [--out DIR] [--src DIR] ...
#   scripts/rapfi-onnx.sh --build-only [--src DIR] ...
#
#   --model DIR    a renju 15x15 generation (models/gen-NNNNNN) or a models/ directory (its
#                  LATEST, resolved once so that both sides play the same generation)
#   --time S       seconds per move for both sides, sent as INFO timeout_turn (default 0.2)
#   --nodes N      instead of a time, N nodes a move for both sides (INFO max_node: Rapfi's
#                  MCTS visits, our brain's playouts), so the match compares the searches on
#                  the net rather than the evaluators' speed
#   --games N      games (default 52: every RIF opening with both colours)
#   --parallel P   games played at once (default 1; each side searches with one thread)
#   --out DIR      the match directory (default runs/rapfi-onnx/<generation>-t<S>): the ONNX
#                  file, Rapfi's config.toml, Rapfi's load log, and the arena's records
#   --build-only   build and check the engine only; no model, no match
#   --src DIR      a local checkout (or unpacked archive) of the Rapfi repository, or its Rapfi/
#                  folder; without it engines/rapfi/src is used when scripts/anchors.sh left
#                  it at --ref, else the repository is fetched (needs the network)
#   --ref COMMIT   the commit to fetch (default: the 0.43.02 release, as scripts/anchors.sh)
#   --url URL      the repository to fetch from (default: Rapfi's public repository)
#   --ort-deb FILE a local copy of the ONNX Runtime headers package (below); else downloaded
#   --jobs J       parallel compile jobs (default: the CPUs)
#
# Needs cmake >= 3.18, a C++17 compiler, curl or wget (for the headers), GNU env (-C), and
# the project's .venv (scripts/env.sh, sourced here: torch and onnx for the export, the
# onnxruntime wheel for the library). The ONNX Runtime pieces, in engines/rapfi-ort/:
#   - the library: the onnxruntime wheel's libonnxruntime.so.<version>, copied beside the
#     binary under its soname; the binary's RUNPATH is $ORIGIN, so it runs without
#     LD_LIBRARY_PATH and does not break when the venv changes (a changed wheel is copied
#     again and the binary relinked on the next run).
#   - the headers: Debian's libonnxruntime-dev 1.21.0 (pinned by SHA-256). The C++ header
#     asks the library for the C API version it was written against (21), and a newer library
#     serves every older API version, so 1.21 headers against the wheel's newer library is
#     sound (Rapfi compiles against these headers, so it can only call API that 1.21 has).
# Rapfi's config (config.toml in the match directory) sets the `ort` evaluator on one CPU
# thread, the MCTS searcher and one search thread. Built without command modules, Rapfi takes
# no command-line options (--config included): it reads config.toml from its working
# directory, else from beside the binary, else uses its built-in classical config. So Rapfi
# runs in the match directory (`env -C`), and the script checks from Rapfi's log that this
# config, the `ort` evaluator and the model for renju 15x15 loaded, and that it answers a move,
# before the match starts.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ENGINE="$ROOT/engines/rapfi-ort"
REPO_URL="https://github.com/dhbloo/rapfi.git"
# "bump version to 0.43.02" on Rapfi's main branch (the commit scripts/anchors.sh builds).
REF="164be7be056a6db942525f8e94258c17a5b60c03"
# Debian trixie's libonnxruntime-dev (headers only are used; they are the same on every
# architecture). The checksum is the one in trixie's Packages index.
ORT_DEB_NAME="libonnxruntime-dev_1.21.0+dfsg-1_amd64.deb"
ORT_DEB_URL="http://deb.debian.org/debian/pool/main/o/onnxruntime/$ORT_DEB_NAME"
ORT_DEB_SHA256="14f7d959d5deacbcf1504830d4189f91fc67382b399ed9ae9d3aa9c4050ced08"
SRC=""
ORT_DEB=""
MODEL=""
TIME="0.2"
NODES=""
GAMES=52
PARALLEL=1
MATCH_DIR=""
BUILD_ONLY=0
JOBS="$(nproc 2>/dev/null || echo 2)"

die() { echo "rapfi-onnx.sh: $*" >&2; exit 1; }
log() { echo "[rapfi-onnx] $*" >&2; }
# shellcheck source=scripts/lib/rapfi.sh
source "$ROOT/scripts/lib/rapfi.sh"
while [ $# -gt 0 ]; do
    case "$1" in
        --model) [ $# -ge 2 ] || die "--model needs a directory"; MODEL="$2"; shift 2 ;;
        --time) [ $# -ge 2 ] || die "--time needs seconds"; TIME="$2"; shift 2 ;;
        --nodes) [ $# -ge 2 ] || die "--nodes needs a number"; NODES="$2"; shift 2 ;;
        --games) [ $# -ge 2 ] || die "--games needs a number"; GAMES="$2"; shift 2 ;;
        --parallel) [ $# -ge 2 ] || die "--parallel needs a number"; PARALLEL="$2"; shift 2 ;;
        --out) [ $# -ge 2 ] || die "--out needs a directory"; MATCH_DIR="$2"; shift 2 ;;
        --build-only) BUILD_ONLY=1; shift ;;
        --src) [ $# -ge 2 ] || die "--src needs a directory"; SRC="$2"; shift 2 ;;
        --ref) [ $# -ge 2 ] || die "--ref needs a commit"; REF="$2"; shift 2 ;;
        --url) [ $# -ge 2 ] || die "--url needs a repository"; REPO_URL="$2"; shift 2 ;;
        --ort-deb) [ $# -ge 2 ] || die "--ort-deb needs a file"; ORT_DEB="$2"; shift 2 ;;
        --jobs) [ $# -ge 2 ] || die "--jobs needs a number"; JOBS="$2"; shift 2 ;;
        -h|--help) sed -n '2,45p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown argument '$1' (see --help)" ;;
    esac
done
[[ "$JOBS" =~ ^[1-9][0-9]*$ ]] || die "--jobs '$JOBS' must be a whole number >= 1"
[ -z "$NODES" ] || [[ "$NODES" =~ ^[1-9][0-9]*$ ]] || die "--nodes '$NODES' must be a whole number >= 1"
[[ "$GAMES" =~ ^[1-9][0-9]*$ ]] || die "--games '$GAMES' must be a whole number >= 1"
[[ "$PARALLEL" =~ ^[1-9][0-9]*$ ]] || die "--parallel '$PARALLEL' must be a whole number >= 1"
if ! [[ "$TIME" =~ ^([0-9]+\.?[0-9]*|\.[0-9]+)$ ]] || ! awk -v t="$TIME" 'BEGIN { exit !(t >= 0.001) }'; then
    die "--time '$TIME' must be a number of seconds >= 0.001"
fi
[ -z "$ORT_DEB" ] || [ -f "$ORT_DEB" ] || die "--ort-deb '$ORT_DEB' is not a file"

BIN="$ROOT/target/release/renju-zero"
if [ "$BUILD_ONLY" = 0 ]; then
    [ -n "$MODEL" ] || die "--model DIR is required (or --build-only)"
    [ -x "$BIN" ] || die "$BIN is missing: build it with 'cargo build --release' (after 'source scripts/env.sh')"
    [ -d "$MODEL" ] || die "--model '$MODEL' is not a directory"
    MODEL="$(cd "$MODEL" && pwd)"
    # A models/ directory follows LATEST; it is read once, so a run that is still training
    # cannot hand the two sides different generations.
    if [ -f "$MODEL/LATEST" ]; then
        MODEL="$MODEL/$(tr -d '[:space:]' <"$MODEL/LATEST")"
        [ -d "$MODEL" ] || die "$MODEL (named by LATEST) is not a directory"
    fi
    [ -f "$MODEL/config.json" ] || die "'$MODEL' holds no config.json: not a generation directory"
fi

# The project's Python: onnxruntime's library (and torch and onnx for the export).
# shellcheck source=scripts/env.sh disable=SC1091
source "$ROOT/scripts/env.sh"

mkdir -p "$ENGINE/ort/lib" "$ENGINE/ort/include"

# --- ONNX Runtime: the library from the wheel, beside the binary under its soname ----------
ORT_PKG="$(python3 -c 'import os, onnxruntime; print(os.path.dirname(onnxruntime.__file__))')" \
    || die "the project's Python cannot import onnxruntime (scripts/env.sh installs it)"
ORT_LIB="$(find "$ORT_PKG/capi" -maxdepth 1 -name 'libonnxruntime.so.[0-9]*' | sort | tail -n 1)"
[ -n "$ORT_LIB" ] || die "no libonnxruntime.so.<version> in $ORT_PKG/capi"
ORT_SONAME="$(readelf -d "$ORT_LIB" 2>/dev/null | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')"
ORT_SONAME="${ORT_SONAME:-libonnxruntime.so.1}"
if ! cmp -s "$ORT_LIB" "$ENGINE/$ORT_SONAME"; then
    cp "$ORT_LIB" "$ENGINE/$ORT_SONAME.tmp" && mv "$ENGINE/$ORT_SONAME.tmp" "$ENGINE/$ORT_SONAME"
    # The binary binds to the symbol versions of the library it was linked with: relink.
    rm -f "$ENGINE/build/pbrain-rapfi"
fi
ln -sfn "../../$ORT_SONAME" "$ENGINE/ort/lib/libonnxruntime.so"
log "ONNX Runtime library: $(basename "$ORT_LIB") from the onnxruntime wheel, as $ENGINE/$ORT_SONAME"

# --- ONNX Runtime: the headers from Debian's libonnxruntime-dev ------------------------------
if [ "$(cat "$ENGINE/ort/include/.sha256" 2>/dev/null || true)" != "$ORT_DEB_SHA256" ]; then
    DEB="$ENGINE/ort/$ORT_DEB_NAME"
    if [ -n "$ORT_DEB" ]; then
        cp "$ORT_DEB" "$DEB"
    else
        log "downloading $ORT_DEB_URL"
        if command -v curl >/dev/null; then
            curl -fsSL -o "$DEB" "$ORT_DEB_URL" || die "cannot download $ORT_DEB_URL (offline? give a copy with --ort-deb FILE)"
        elif command -v wget >/dev/null; then
            wget -q -O "$DEB" "$ORT_DEB_URL" || die "cannot download $ORT_DEB_URL (offline? give a copy with --ort-deb FILE)"
        else
            die "neither curl nor wget is installed; give a copy of $ORT_DEB_NAME with --ort-deb FILE"
        fi
    fi
    GOT="$(sha256sum "$DEB" | cut -d' ' -f1)"
    [ "$GOT" = "$ORT_DEB_SHA256" ] || { rm -f "$DEB"; die "$ORT_DEB_NAME has SHA-256 $GOT, expected $ORT_DEB_SHA256"; }
    X="$ENGINE/ort/deb"
    rm -rf "$X" && mkdir -p "$X"
    if command -v dpkg-deb >/dev/null; then
        dpkg-deb -x "$DEB" "$X"
    else
        (cd "$X" && ar x "$DEB" && tar -xf data.tar.*) || die "cannot unpack $DEB (needs dpkg-deb, or ar and tar)"
    fi
    # Rapfi includes <onnxruntime_cxx_api.h>: the package's usr/include/onnxruntime/ is the
    # include root.
    [ -f "$X/usr/include/onnxruntime/onnxruntime_cxx_api.h" ] || die "$ORT_DEB_NAME holds no usr/include/onnxruntime/onnxruntime_cxx_api.h"
    rm -rf "$ENGINE/ort/include" && cp -r "$X/usr/include/onnxruntime" "$ENGINE/ort/include"
    echo "$ORT_DEB_SHA256" >"$ENGINE/ort/include/.sha256"
    rm -rf "$X" "$DEB"
fi

# --- Rapfi's source ---------------------------------------------------------------------------
if [ -z "$SRC" ]; then
    if [ "$(git -C "$ROOT/engines/rapfi/src" rev-parse HEAD 2>/dev/null || true)" = "$REF" ]; then
        SRC="$ROOT/engines/rapfi/src"
    else
        SRC="$ENGINE/src"
        rapfi_fetch "$SRC"
    fi
fi
rapfi_locate "$SRC"
grep -q 'USE_ORT_EVALUATOR' "$CMAKE_DIR/CMakeLists.txt" || die "$CMAKE_DIR/CMakeLists.txt has no USE_ORT_EVALUATOR option"
[ "$MAJOR.$MINOR" = "0.43" ] || log "warning: the source declares Rapfi $VERSION; the ONNX interface is that of 0.43"

# --- Build ---------------------------------------------------------------------------------
log "building Rapfi $VERSION with the ONNX Runtime evaluator from $CMAKE_DIR into $ENGINE/build ($JOBS jobs)"
# ORT_ROOTDIR is read as <dir>/include and <dir>/lib; the RUNPATH $ORIGIN finds the library
# copied beside the binary.
BUILD_START=$SECONDS
# shellcheck disable=SC2016 # $ORIGIN is for the dynamic loader, not the shell
rapfi_build "$ENGINE/build" "$JOBS" "$ENGINE/build.log" -DUSE_ORT_EVALUATOR=ON -DORT_ROOTDIR="$ENGINE/ort" \
    -DCMAKE_SKIP_BUILD_RPATH=OFF -DCMAKE_BUILD_RPATH='$ORIGIN'
cp "$ENGINE/build/pbrain-rapfi" "$ENGINE/pbrain-rapfi.tmp" && mv "$ENGINE/pbrain-rapfi.tmp" "$ENGINE/pbrain-rapfi"
log "build: $((SECONDS - BUILD_START)) s"
# shellcheck disable=SC2016
readelf -d "$ENGINE/pbrain-rapfi" | grep -E '(RUNPATH|RPATH)' | grep -qF '$ORIGIN' \
    || die "$ENGINE/pbrain-rapfi has no \$ORIGIN run path"
RESOLVED="$(ldd "$ENGINE/pbrain-rapfi" | awk -v so="$ORT_SONAME" '$1 == so { print $3 }')"
[ "$RESOLVED" -ef "$ENGINE/$ORT_SONAME" ] \
    || die "$ENGINE/pbrain-rapfi loads $ORT_SONAME from '${RESOLVED:-nowhere}', not from $ENGINE"

if [ "$BUILD_ONLY" = 1 ]; then
    log "$ENGINE/pbrain-rapfi (Rapfi $VERSION, ONNX Runtime $(python3 -c 'import onnxruntime; print(onnxruntime.__version__)'))"
    exit 0
fi

# --- The network as ONNX -------------------------------------------------------------------
GEN="$(basename "$MODEL")"
BUDGET="time=$TIME"
BUDGET_TEXT="$TIME s a move"
if [ -n "$NODES" ]; then BUDGET="nodes=$NODES"; BUDGET_TEXT="$NODES nodes a move"; fi
MATCH_DIR="${MATCH_DIR:-$ROOT/runs/rapfi-onnx/$GEN-${BUDGET/=/}}"
mkdir -p "$MATCH_DIR"
MATCH_DIR="$(cd "$MATCH_DIR" && pwd)"
case "$MATCH_DIR$ENGINE$MODEL$BIN" in
    *[\'\"\\]*) die "paths with quotes or backslashes cannot go into the engine commands and the config" ;;
esac
ONNX="$MATCH_DIR/model.onnx"
rm -f "$ONNX"
log "exporting $MODEL to $ONNX"
"$BIN" export --format onnx --model "$MODEL" --out "$ONNX" >&2
python3 "$ROOT/trainer/python/rapfi_onnx.py" check "$ONNX" --rule renju --size 15 >&2 \
    || die "$ONNX does not serve renju on 15x15 (--model must be a renju 15x15 generation)"

# --- Rapfi's config: the ort evaluator on one CPU thread, MCTS, one search thread ----------
# Rapfi's MCTS consults the clock only every 16 descents from the root (every 1,024 nodes
# when descents add more than 64), and a descent may evaluate up to max_num_visits_per_playout
# new nodes (default 100, sized for its NNUE evaluators at microseconds a node). Through ONNX
# Runtime a node takes milliseconds, so the default spends over a second on a 0.2 s move; one
# new node a descent keeps to the clock.
CFG="$MATCH_DIR/config.toml"
cat >"$CFG" <<EOF
# Rapfi with the network of $GEN (written by scripts/rapfi-onnx.sh).
[general]
default_thread_num = 1

[search]
default_searcher = "mcts"
max_num_visits_per_playout = 1

[model.evaluator]
type = "ort"
ort_device = "cpu"

[[model.evaluator.weights]]
weight_file = "$ONNX"
EOF

# --- Rapfi loads the model and keeps to the time: two renju moves on 15x15, its log kept -----
# Driven as the arena drives it (START, INFO, BOARD ... DONE), with the match's time a move;
# each answer is timed. A pause follows each answer: Rapfi prints its move before it is idle
# again and drops commands that arrive in between.
CHECK_LOG="$MATCH_DIR/rapfi-load.log"
: >"$CHECK_LOG"
MOVE_MS="$(awk -v t="$TIME" 'BEGIN { printf "%d", t * 1000 + 0.5 }')"
WAIT_S="$(awk -v t="$TIME" 'BEGIN { printf "%d", 2 * t + 4 }')"
now_us() {
    if [ -n "${EPOCHREALTIME:-}" ]; then echo "${EPOCHREALTIME//[!0-9]/}"; else date +%s%6N; fi
}
coproc RAPFI { exec env -C "$MATCH_DIR" "$ENGINE/pbrain-rapfi" 2>&1; }
RAPFI_IN="${RAPFI[1]}"
RAPFI_OUT="${RAPFI[0]}"
# shellcheck disable=SC2153 # coproc RAPFI sets RAPFI_PID
RAPFI_CHILD="$RAPFI_PID"
check_fail() { kill "$RAPFI_CHILD" 2>/dev/null || true; die "$* (log: $CHECK_LOG)"; }
# A write to an engine that has exited fails (SIGPIPE ignored here) instead of ending the script.
trap '' PIPE
# shellcheck disable=SC2059 # send FORMAT ARGS...: the format is the caller's
send() { printf "$@" 1>&"$RAPFI_IN" 2>/dev/null || check_fail "Rapfi exited"; }
# Reads Rapfi's lines into the log until one matches the ERE $1 (kept in LINE), for at most $2 s.
await() {
    local deadline=$(($(now_us) + $2 * 1000000)) left
    while left=$(((deadline - $(now_us)) / 1000)) && [ "$left" -gt 0 ]; do
        IFS= read -r -t "$((left / 1000)).$(printf %03d $((left % 1000)))" -u "$RAPFI_OUT" LINE || return 1
        echo "$LINE" >>"$CHECK_LOG"
        [[ "$LINE" =~ $1 ]] && return 0
    done
    return 1
}
send 'START 15\n'
await '^OK$' 60 || check_fail "Rapfi did not answer OK to START 15"
send 'INFO timeout_turn %s\nINFO timeout_match 0\nINFO rule 4\n' "$MOVE_MS"
sleep 0.1
MOVE_TIMES=()
# Rapfi as White after three stones, then as Black after four (field 1: Rapfi's stones).
for POSITION in "7,7,2 8,7,1 6,8,2" "7,7,1 8,7,2 6,8,1 7,9,2"; do
    T0="$(now_us)"
    send 'BOARD\n%s\nDONE\n' "${POSITION// /$'\n'}"
    await '^[0-9]+,[0-9]+$' "$WAIT_S" || check_fail "Rapfi answered no move within $WAIT_S s"
    MOVE_TIMES+=("$(awk -v d=$(($(now_us) - T0)) 'BEGIN { printf "%.3f", d / 1e6 }')")
    sleep 0.2
done
send 'END\n'
wait "$RAPFI_CHILD" 2>/dev/null || true
trap - PIPE
grep -E 'config|Evaluator|onnx|Ort\(|ERROR|[Ff]ail|nodes' "$CHECK_LOG" | sed 's/^/[rapfi] /' >&2 || true
grep -qx 'MESSAGE Load config from config.toml' "$CHECK_LOG" || check_fail "Rapfi did not load $CFG"
grep -q 'Evaluator set to ort' "$CHECK_LOG" || check_fail "Rapfi did not set the ort evaluator"
grep -qF "Initialized onnx model $ONNX" "$CHECK_LOG" || check_fail "Rapfi did not initialise $ONNX for renju 15x15"
! grep -q 'Evaluator is not enabled' "$CHECK_LOG" || check_fail "Rapfi's MCTS found no evaluator"
log "Rapfi loaded $ONNX with the ort evaluator; at $TIME s a move it answered in ${MOVE_TIMES[0]} s" \
    "(the first move, with the model's initialisation) and ${MOVE_TIMES[1]} s"
if [ -z "$NODES" ] && awk -v a="${MOVE_TIMES[1]}" -v t="$TIME" 'BEGIN { exit !(a > 1.5 * t + 0.1) }'; then
    log "warning: Rapfi took ${MOVE_TIMES[1]} s for a $TIME s move: the two sides do not get equal time"
fi

# --- The match -----------------------------------------------------------------------------
RAPFI_SPEC="engine:\"env -C '$MATCH_DIR' '$ENGINE/pbrain-rapfi'\",$BUDGET"
BRAIN_SPEC="engine:\"'$BIN' gomocup --model '$MODEL' --threads 1\",$BUDGET"
log "match: $GAMES games, rif26 openings, renju 15x15, $BUDGET_TEXT for both, $PARALLEL at once, into $MATCH_DIR"
log "  rapfi-ort=$RAPFI_SPEC"
log "  renju-zero=$BRAIN_SPEC"
"$BIN" arena --player "rapfi-ort=$RAPFI_SPEC" --player "renju-zero=$BRAIN_SPEC" \
    --games "$GAMES" --openings rif26 --rule renju --size 15 --threads "$PARALLEL" --out "$MATCH_DIR"

# pairs.csv: player,opponent,games,wins,draws,losses,score,score_low95,score_high95 (Rapfi first).
awk -F, -v t="$BUDGET_TEXT" 'NR == 2 {
    printf "%s (Rapfi 0.43, MCTS on the net through ONNX Runtime) vs %s (our brain, same net), ", $1, $2
    printf "%s: %d games, %d-%d-%d (W-L-D), score %.3f [%.3f, %.3f]\n", t, $3, $4, $6, $5, $7, $8, $9
}' "$MATCH_DIR/pairs.csv"
FORFEITS="$(grep -c '"reason":"forfeit' "$MATCH_DIR/games.jsonl" || true)"
[ "${FORFEITS:-0}" = 0 ] || log "warning: $FORFEITS game(s) ended by forfeit (an engine failed); see $MATCH_DIR/results.csv"
