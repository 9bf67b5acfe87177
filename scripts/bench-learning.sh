#!/usr/bin/env bash
# Learning, measured (not a CI test): train configs/quick.toml from zero for MINUTES (default 30)
# on this machine, then play the latest generation against generation 0 and against the
# heuristic evaluator from the RIF openings with colours alternating (GAMES per match; 52 plays
# each of the 26 openings with both colours), same playouts for everyone. Results:
# $RUN/arena-gen0/report.md and $RUN/arena-heuristic/report.md (W/D/L, Bradley-Terry ratings).
#
#   bash scripts/bench-learning.sh            # MINUTES=30 PLAYOUTS=32 GAMES=26 RUN=runs/bench-learning
#   MINUTES=5 GAMES=52 bash scripts/bench-learning.sh
#   BIN=path/to/renju-zero bash scripts/bench-learning.sh   # use an already built binary
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$ROOT"
MINUTES="${MINUTES:-30}"
PLAYOUTS="${PLAYOUTS:-32}"
GAMES="${GAMES:-26}"
RUN="${RUN:-runs/bench-learning}"
if [ -z "${BIN:-}" ]; then
    cargo build --release --bin renju-zero
    BIN="$ROOT/target/release/renju-zero"
fi
if [ -e "$RUN" ]; then
    echo "$RUN exists: remove it or set RUN=... for a fresh measurement" >&2
    exit 1
fi
"$BIN" train --config configs/quick.toml --run "$RUN" --minutes "$MINUTES"
LATEST="$(cat "$RUN/models/LATEST")"
echo "latest generation: $LATEST"
for OPP in gen0 heuristic; do
    if [ "$OPP" = gen0 ]; then SPEC="model:$RUN/models/gen-000000,playouts=$PLAYOUTS"; else SPEC="heuristic,playouts=$PLAYOUTS"; fi
    "$BIN" arena --player "latest=model:$RUN/models/$LATEST,playouts=$PLAYOUTS" --player "$OPP=$SPEC" \
        --games "$GAMES" --openings rif26 --rule renju --seed 1 --quiet --out "$RUN/arena-$OPP"
    cat "$RUN/arena-$OPP/report.md"
done
