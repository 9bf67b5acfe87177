#!/usr/bin/env bash
# End-to-end run on a real S3 server: a single-node Garage on 127.0.0.1 (loopback only), one
# bucket and one key; one `renju-zero trainer` and two `renju-zero selfplay` processes on
# s3://renju/e2e with the tiny config (tests/data/e2e.toml) until two generations are published;
# one self-play process SIGKILLed (mid-upload, if it is uploading) and restarted; then the run's
# invariants (contiguous generations, LATEST newest, every shard readable, nothing duplicated,
# the trainer's shards identical to the bucket's) and the figures: shards/s uploaded and the
# trainer lag (shard written by self-play -> shard in the trainer's cache).
#
# Garage comes from `cargo install --locked garage` into $GARAGE_ROOT (default
# ~/.cache/renju-zero/garage) when `garage` is not on PATH; it is a long build (docs/benchmarks.md),
# never part of scripts/test.sh. Figures and setup: docs/many-machines.md.
#
# Usage: bash scripts/s3-e2e.sh [--keep]   (--keep: leave the work directory for inspection)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$ROOT"
KEEP=${1:-}

GARAGE_ROOT=${GARAGE_ROOT:-$HOME/.cache/renju-zero/garage}
export PATH="$GARAGE_ROOT/bin:$PATH"
if ! command -v garage >/dev/null; then
  echo "garage not found: cargo install --locked garage --root $GARAGE_ROOT (a long build)"
  nice -n 19 cargo install --locked garage --root "$GARAGE_ROOT"
fi
cargo build --release --bin renju-zero
BIN="$ROOT/target/release/renju-zero"

WORK=$(mktemp -d -t renju-s3-e2e.XXXXXX)
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  if [ "$KEEP" = "--keep" ]; then echo "work directory kept: $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT

# --- Garage: one node on loopback ------------------------------------------------------------
cat > "$WORK/garage.toml" <<EOF
metadata_dir = "$WORK/garage/meta"
data_dir = "$WORK/garage/data"
db_engine = "lmdb"
replication_factor = 1
rpc_bind_addr = "127.0.0.1:3901"
rpc_public_addr = "127.0.0.1:3901"
rpc_secret = "$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')"

[s3_api]
s3_region = "garage"
api_bind_addr = "127.0.0.1:3900"
root_domain = ".s3.garage.localhost"
EOF
G="garage -c $WORK/garage.toml"
$G server > "$WORK/garage.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 60); do $G status >/dev/null 2>&1 && break; sleep 0.5; done
NODE=$($G status 2>/dev/null | awk '/127.0.0.1:3901/ {print $1; exit}')
[ -n "$NODE" ] || { echo "garage did not start:"; cat "$WORK/garage.log"; exit 1; }
$G layout assign -z dc1 -c 1G "$NODE" >/dev/null
$G layout apply --version 1 >/dev/null
$G bucket create renju >/dev/null
KEYS=$($G key create renju-e2e)
export AWS_ACCESS_KEY_ID=$(echo "$KEYS" | awk -F': *' '/Key ID/ {print $2; exit}')
export AWS_SECRET_ACCESS_KEY=$(echo "$KEYS" | awk -F': *' '/Secret key/ {print $2; exit}')
$G bucket allow --read --write --owner renju --key renju-e2e >/dev/null
export AWS_ENDPOINT_URL=http://127.0.0.1:3900 AWS_REGION=garage AWS_ALLOW_HTTP=true
URL=s3://renju/e2e

# --- Errors first: a wrong key and a missing bucket write nothing ----------------------------
for bad in "AWS_SECRET_ACCESS_KEY=wrong $URL" "AWS_SECRET_ACCESS_KEY=$AWS_SECRET_ACCESS_KEY s3://no-such-bucket/e2e"; do
  set -- $bad
  if env "$1" RENJU_ZERO_CACHE="$WORK/bad-cache" "$BIN" trainer --run "$2" --config tests/data/e2e.toml 2> "$WORK/err.txt"; then
    echo "FAIL: $2 with $1 was accepted"; exit 1
  fi
  echo "expected error ($2): $(head -c 300 "$WORK/err.txt")"
  [ ! -e "$WORK/bad-cache" ] || { echo "FAIL: the cache was created"; exit 1; }
done

# --- One trainer, two self-play processes ----------------------------------------------------
T0=$(date +%s.%N)
RENJU_ZERO_CACHE="$WORK/cache-trainer" "$BIN" trainer --run "$URL" --config tests/data/e2e.toml --max-generations 2 \
  > "$WORK/trainer.log" 2>&1 &
TRAINER=$!
PIDS+=($TRAINER)
for _ in $(seq 120); do [ -e "$WORK/cache-trainer/models/LATEST" ] && break; sleep 0.5; done
start_selfplay() { RENJU_ZERO_CACHE="$WORK/cache-$1" "$BIN" selfplay --run "$URL" > "$WORK/selfplay-$1.log" 2>&1 & echo $!; }
A=$(start_selfplay a); PIDS+=($A)
B=$(start_selfplay b); PIDS+=($B)
# SIGKILL B as soon as it has written its second shard (its uploader polls every second, so
# the kill lands before, during or just after that upload), then restart it on the same cache.
for _ in $(seq 600); do [ "$(ls "$WORK/cache-b/selfplay" 2>/dev/null | grep -c '\.npz$')" -ge 2 ] && break; sleep 0.2; done
kill -KILL "$B"
echo "killed self-play B (pid $B) with $(ls "$WORK/cache-b/selfplay" | grep -c '\.npz$') local shards"
B=$(start_selfplay b); PIDS+=($B)
wait "$TRAINER" || { echo "FAIL: trainer:"; tail -20 "$WORK/trainer.log"; exit 1; }
T1=$(date +%s.%N)
kill -TERM "$A" "$B"; wait "$A" "$B" || true

# --- Checks and figures (the trainer's cache is what its listings of the bucket brought) -----
python3 - "$WORK" "$T0" "$T1" <<'EOF'
import os, sys, glob, hashlib, zipfile
work, t0, t1 = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
tr = os.path.join(work, "cache-trainer")
gens = sorted(d for d in os.listdir(os.path.join(tr, "models")) if d.startswith("gen-"))
assert gens == ["gen-000000", "gen-000001", "gen-000002"], gens
assert open(os.path.join(tr, "models/LATEST")).read().strip() == "gen-000002"
shards = sorted(glob.glob(os.path.join(tr, "selfplay/*.npz")))
digests = {}
for p in shards:
    with zipfile.ZipFile(p) as z:
        assert z.testzip() is None, p
    d = hashlib.sha256(open(p, "rb").read()).hexdigest()
    assert d not in digests, f"{p} duplicates {digests[d]}"
    digests[d] = p
written = [int(os.path.basename(p).split("-")[3]) / 1000 for p in shards]
lags = sorted(os.path.getmtime(p) - w for p, w in zip(shards, written))
span = max(written) - min(written) if len(written) > 1 else float("nan")
print(f"OK: generations {gens}, {len(shards)} shards in the trainer's cache, all readable, none duplicated")
print(f"figures: {len(shards) / max(span, 1e-9):.2f} shards/s uploaded (over {span:.0f} s), "
      f"trainer lag median {lags[len(lags) // 2]:.2f} s, max {lags[-1]:.2f} s; run {t1 - t0:.0f} s")
EOF
grep -h "removed a partial\|rejected" "$WORK"/cache-*/train.log || echo "no partial or rejected shard reported"
echo "s3-e2e passed"
