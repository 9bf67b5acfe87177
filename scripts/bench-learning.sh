#!/usr/bin/env bash
# Learning, measured (not a CI test): train CONFIG (default configs/quick.toml) from zero for
# MINUTES (default 30) on this machine, then the learning curve (`renju-zero curve`): every
# EVERY-th published generation and the newest against the heuristic evaluator and generation 0
# in the training distribution (the run's rule, protocol and stone cap, whole protocol games,
# the same search for both sides, colours alternating), GAMES per point, PLAYOUTS per decision,
# the first EXPLORE decisions sampled. Results: $RUN/curve/curve.csv and curve.svg.
#
#   bash scripts/bench-learning.sh             # MINUTES=30 PLAYOUTS=32 GAMES=40 EVERY=5 EXPLORE=4 RUN=runs/bench-learning
#   MINUTES=2 GAMES=4 PLAYOUTS=8 EVERY=1 RUN=/tmp/smoke bash scripts/bench-learning.sh   # a smoke run
#   CONFIG=configs/my-variant.toml RUN=runs/ab-b bash scripts/bench-learning.sh        # the B side of an A/B
#   SET="selfplay.search.algorithm=gumbel training.net.blocks=2" RUN=runs/ab-b bash scripts/bench-learning.sh
#                                        # ... or the preset with `train --set KEY=VALUE` overrides
#   BIN=path/to/renju-zero bash scripts/bench-learning.sh   # use an already built binary
# RIF26=1 also plays the newest generation against both opponents from the 26 RIF openings
# (`arena --openings rif26`: for comparing engines, not for measuring learning).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$ROOT"
CONFIG="${CONFIG:-configs/quick.toml}"
MINUTES="${MINUTES:-30}"
PLAYOUTS="${PLAYOUTS:-32}"
GAMES="${GAMES:-40}"
EVERY="${EVERY:-5}"
EXPLORE="${EXPLORE:-4}"
RUN="${RUN:-runs/bench-learning}"
if [ -z "${BIN:-}" ]; then
    cargo build --release --bin renju-zero
    BIN="$ROOT/target/release/renju-zero"
fi
if [ -e "$RUN" ]; then
    echo "$RUN exists: remove it or set RUN=... for a fresh measurement" >&2
    exit 1
fi
SETS=()
set -f # overrides such as milestones=[[600,0.5]] are not file patterns
for KV in ${SET:-}; do SETS+=(--set "$KV"); done
set +f
"$BIN" train --config "$CONFIG" --run "$RUN" --minutes "$MINUTES" "${SETS[@]}"
LATEST="$(cat "$RUN/models/LATEST")"
echo "latest generation: $LATEST"
"$BIN" curve --run "$RUN" --every-generations "$EVERY" --games "$GAMES" --playouts "$PLAYOUTS" --explore "$EXPLORE" \
    --opponent heuristic --opponent gen:0
if [ -n "${RIF26:-}" ]; then
    for OPP in gen0 heuristic; do
        if [ "$OPP" = gen0 ]; then SPEC="model:$RUN/models/gen-000000,playouts=$PLAYOUTS"; else SPEC="heuristic,playouts=$PLAYOUTS"; fi
        "$BIN" arena --player "latest=model:$RUN/models/$LATEST,playouts=$PLAYOUTS" --player "$OPP=$SPEC" \
            --games 52 --openings rif26 --rule renju --seed 1 --quiet --out "$RUN/arena-$OPP"
        cat "$RUN/arena-$OPP/report.md"
    done
fi
