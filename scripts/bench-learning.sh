#!/usr/bin/env bash
# Learning, measured (not a CI test): train configs/quick.toml from zero for MINUTES (default 30)
# on this machine, then play the latest generation against generation 0 and against the
# heuristic evaluator over the 26 RIF openings with both colours (52 games per pair), same
# playouts for everyone. Results: $RUN/arena/report.md (W/D/L per pair, Bradley-Terry ratings).
#
#   bash scripts/bench-learning.sh                 # MINUTES=30 PLAYOUTS=64 RUN=runs/bench-learning
#   MINUTES=5 PLAYOUTS=32 bash scripts/bench-learning.sh
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$ROOT"
MINUTES="${MINUTES:-30}"
PLAYOUTS="${PLAYOUTS:-64}"
RUN="${RUN:-runs/bench-learning}"
cargo build --release --bin renju-zero
BIN="$ROOT/target/release/renju-zero"
if [ -e "$RUN" ]; then
    echo "$RUN exists: remove it or set RUN=... for a fresh measurement" >&2
    exit 1
fi
"$BIN" train --config configs/quick.toml --run "$RUN" --minutes "$MINUTES"
LATEST="$(cat "$RUN/models/LATEST")"
echo "latest generation: $LATEST"
"$BIN" arena \
    --player "latest=model:$RUN/models/$LATEST,playouts=$PLAYOUTS" \
    --player "gen0=model:$RUN/models/gen-000000,playouts=$PLAYOUTS" \
    --player "heuristic=heuristic,playouts=$PLAYOUTS" \
    --games 52 --openings rif26 --rule renju --seed 1 --quiet --out "$RUN/arena"
cat "$RUN/arena/report.md"
