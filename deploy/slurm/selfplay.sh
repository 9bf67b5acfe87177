#!/usr/bin/env bash
# Self-play workers of a run on object storage, as a Slurm job array: each array task is one
# `renju-zero selfplay --run` with its own cache on the node's local scratch (submit.sh submits
# it; by hand: `RUN=s3://bucket/prefix sbatch --array=0-7 selfplay.sh`). The game and search
# settings, threads included, are the run's config; give each task as many CPUs as
# `selfplay.threads`.
#SBATCH --job-name=renju-zero-selfplay
#SBATCH --ntasks=1
#SBATCH --cpus-per-task=12
#SBATCH --mem=8G
#SBATCH --output=renju-zero-selfplay-%A_%a.out
set -euo pipefail

: "${RUN:?set RUN to the run URL (s3://bucket/prefix, gs://..., az://..., file:///dir)}"
RENJU_ZERO=${RENJU_ZERO:-renju-zero}
scratch=${SLURM_TMPDIR:-${TMPDIR:-/tmp}}
export RENJU_ZERO_CACHE=$scratch/renju-zero-selfplay-${SLURM_ARRAY_JOB_ID:-${SLURM_JOB_ID:-local}}_${SLURM_ARRAY_TASK_ID:-0}
echo "self-play worker ${SLURM_ARRAY_TASK_ID:-0} of $RUN on $(hostname), cache $RENJU_ZERO_CACHE"

# Until the trainer has written the run's config.toml, self-play is refused; a worker that fails
# within a minute of its start tries again (20 times, 15 s apart). SIGTERM (scancel) reaches the
# worker itself, which uploads its last shard and exits.
for attempt in $(seq 20); do
    start=$SECONDS
    status=0
    "$RENJU_ZERO" selfplay --run "$RUN" || status=$?
    if ((status == 0 || SECONDS - start >= 60 || attempt == 20)); then exit "$status"; fi
    echo "self-play exited with status $status after $((SECONDS - start)) s; trying again in 15 s"
    sleep 15
done
