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
# An A/B pair at once, each run pinned to its own core (taskset; the curve then plays one game at
# a time): the same budget and machine for both sides, half the compute of a whole-machine run.
#   CPUS=0 RUN=runs/ab-a bash scripts/bench-learning.sh & CPUS=1 SET=... RUN=runs/ab-b bash scripts/bench-learning.sh
# EVERY=auto puts generation 0, the (kept) middle one and the newest on the curve (the cost of a point
# grows with the network: a 6x64 ResNet at 32 playouts takes ~10 s a game on one core).
# RIF26=1 also plays the newest generation against both opponents from the 26 RIF openings
# (`arena --openings rif26`: for comparing engines, not for measuring learning).
# The whole body is one block, read before it runs: editing this file during a 30-minute
# measurement cannot change or break the running one.
{
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
PIN=()
THREADS=()
if [ -n "${CPUS:-}" ]; then
    PIN=(taskset -c "$CPUS")
    THREADS=(--threads "$(taskset -c "$CPUS" nproc)")
fi
SETS=()
set -f # overrides such as milestones=[[600,0.5]] are not file patterns
for KV in ${SET:-}; do SETS+=(--set "$KV"); done
set +f
"${PIN[@]}" "$BIN" train --config "$CONFIG" --run "$RUN" --minutes "$MINUTES" "${SETS[@]}"
LATEST="$(cat "$RUN/models/LATEST")"
echo "latest generation: $LATEST"
if [ "$EVERY" = auto ]; then
    # The published generation nearest the middle (pipeline.keep_generations_every may have
    # pruned the others); the curve takes the generations divisible by it, and the newest.
    N=$((10#${LATEST#gen-}))
    EVERY=$(ls "$RUN/models" | sed -n 's/^gen-0*\([0-9][0-9]*\)$/\1/p' |
        awk -v m=$(((N + 1) / 2)) '$1 > 0 { d = $1 - m; if (d < 0) d = -d; if (!b || d < bd) { b = $1; bd = d } } END { print (b ? b : 1) }')
fi
"${PIN[@]}" "$BIN" curve --run "$RUN" "${THREADS[@]}" --every-generations "$EVERY" --games "$GAMES" --playouts "$PLAYOUTS" --explore "$EXPLORE" \
    --opponent heuristic --opponent gen:0
if [ -n "${RIF26:-}" ]; then
    for OPP in gen0 heuristic; do
        if [ "$OPP" = gen0 ]; then SPEC="model:$RUN/models/gen-000000,playouts=$PLAYOUTS"; else SPEC="heuristic,playouts=$PLAYOUTS"; fi
        "$BIN" arena --player "latest=model:$RUN/models/$LATEST,playouts=$PLAYOUTS" --player "$OPP=$SPEC" \
            --games 52 --openings rif26 --rule renju --seed 1 --quiet --out "$RUN/arena-$OPP"
        cat "$RUN/arena-$OPP/report.md"
    done
fi
exit
}
