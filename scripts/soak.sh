#!/usr/bin/env bash
# Fault injection for the main job (docs/reliability.md): `renju-zero train` on the tiny test config is
# killed with SIGKILL KILLS times (default 20) and restarted each time. The kills cycle through
# three timings: into a checkpoint write (a `checkpoints/.tmp-*` directory exists), into
# generation publishing (a `models/.tmp-*` directory exists) and at a random moment. Then a clean
# session finishes, `renju-zero check-run` checks every invariant (contiguous unique generations
# that all load, LATEST on the newest, every shard readable or in selfplay/rejected/, the step
# never going back, generations.jsonl matching models/), and one more session runs on a "full
# disk" (a file-size limit: writes past 16 KiB fail with EFBIG) and must fail with an error naming
# the path while leaving nothing half-published (check-run again).
#
#   bash scripts/soak.sh                 # 20 kills (about 3-5 minutes on 2 cores)
#   KILLS=200 SEED=7 bash scripts/soak.sh
#   KEEP=runs/soak bash scripts/soak.sh  # keep the run directory there
# BIN=path/to/renju-zero skips the build (the suite's short version passes its binary).
# Prints one summary line `soak: ...` with the counts; exit status 0 only when every check holds.
set -euo pipefail
KILLS="${KILLS:-20}"
SEED="${SEED:-1}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [ -z "${BIN:-}" ]; then
    source "$ROOT/scripts/env.sh"
    (cd "$ROOT" && cargo build --release --bin renju-zero)
    BIN="$ROOT/target/release/renju-zero"
fi
CONFIG="$ROOT/tests/data/e2e.toml"
if [ -n "${KEEP:-}" ]; then
    RUN="$KEEP"
    rm -rf "$RUN"
else
    TMP="$(mktemp -d)"
    trap 'rm -rf "$TMP"' EXIT
    RUN="$TMP/run"
fi
LOG="$(dirname "$RUN")/soak-stderr.log"
mkdir -p "$(dirname "$RUN")"
RANDOM="$SEED"
shopt -s nullglob

hits_checkpoint=0 hits_publish=0 random_kills=0 missed=0
# Kills the running train ($pid) when a partial directory matching $1 appears, within $2 seconds;
# returns 1 when none appeared (the kill then lands at the deadline).
kill_when() {
    local pattern="$1" deadline=$((SECONDS + $2))
    while [ "$SECONDS" -lt "$deadline" ]; do
        local found=($pattern)
        if [ "${#found[@]}" -gt 0 ]; then
            kill -KILL "$pid" 2>/dev/null || true
            return 0
        fi
        kill -0 "$pid" 2>/dev/null || return 1
    done
    kill -KILL "$pid" 2>/dev/null || true
    return 1
}

for ((i = 1; i <= KILLS; i++)); do
    "$BIN" train --config "$CONFIG" --run "$RUN" </dev/null >>"$LOG" 2>&1 &
    pid=$!
    case $((i % 3)) in
        0) if kill_when "$RUN/checkpoints/.tmp-*" 60; then hits_checkpoint=$((hits_checkpoint + 1)); else missed=$((missed + 1)); fi ;;
        1) if kill_when "$RUN/models/.tmp-*" 60; then hits_publish=$((hits_publish + 1)); else missed=$((missed + 1)); fi ;;
        2) sleep "$((RANDOM % 6)).$((RANDOM % 10))"; kill -KILL "$pid" 2>/dev/null || true; random_kills=$((random_kills + 1)) ;;
    esac
    wait "$pid" 2>/dev/null || true
done

newest() { local g=("$RUN"/models/gen-*); [ "${#g[@]}" -gt 0 ] && basename "${g[-1]}" | sed 's/gen-0*//; s/^$/0/' || echo -1; }
n="$(newest)"
# A clean session: resumes, publishes one more generation, stops by itself.
"$BIN" train --config "$CONFIG" --run "$RUN" --max-generations "$((n + 1))" </dev/null >>"$LOG" 2>&1
"$BIN" check-run --run "$RUN"

# A full disk: every file write past 16 KiB fails (EFBIG; SIGXFSZ ignored so the write returns
# the error instead of killing the process). The session must fail, naming a path.
n="$(newest)"
set +e
(trap '' XFSZ; ulimit -f 16; exec "$BIN" train --config "$CONFIG" --run "$RUN" --max-generations "$((n + 1))" </dev/null >"$RUN.full-disk.log" 2>&1)
status=$?
set -e
if [ "$status" -eq 0 ]; then echo "soak: the full-disk session did not fail" >&2; exit 1; fi
if ! grep -q "^error: .*$RUN" "$RUN.full-disk.log"; then
    echo "soak: the full-disk error does not name a path in the run directory:" >&2
    cat "$RUN.full-disk.log" >&2
    exit 1
fi
echo "full disk: $(grep '^error:' "$RUN.full-disk.log" | head -1)"
"$BIN" check-run --run "$RUN"

removed=$(grep -c "ignored and removed a partial file" "$RUN/train.log" || true)
repaired=$(grep -c "models/LATEST pointed at an older generation" "$RUN/train.log" || true)
recovered=$(grep -c '"recovered":true' "$RUN/generations.jsonl" || true)
echo "soak: $KILLS SIGKILLs (seed $SEED: $hits_checkpoint into checkpoint writes, $hits_publish into publishing, $random_kills at random moments, $missed at a deadline), $removed partial files removed on restart, $repaired LATEST repairs, $recovered recovered generations.jsonl lines, generations 0..$(newest), all checks passed"
