#!/usr/bin/env bash
# The trainer of a run on object storage, as one Slurm task (submit.sh submits it; by hand:
# `RUN=s3://bucket/prefix CONFIG=configs/resnet-10x128-gpu.toml sbatch --gres=gpu:1 trainer.sh`).
# Requeued (preemption, a node failure, `scontrol requeue`), it resumes from the run's newest
# checkpoint. Cache: $RENJU_ZERO_CACHE when set, otherwise the node's local scratch.
#SBATCH --job-name=renju-zero-trainer
#SBATCH --ntasks=1
#SBATCH --cpus-per-task=4
#SBATCH --mem=16G
#SBATCH --requeue
#SBATCH --open-mode=append
#SBATCH --output=renju-zero-trainer-%j.out
set -euo pipefail

: "${RUN:?set RUN to the run URL (s3://bucket/prefix, gs://..., az://..., file:///dir)}"
RENJU_ZERO=${RENJU_ZERO:-renju-zero}
scratch=${SLURM_TMPDIR:-${TMPDIR:-/tmp}}
export RENJU_ZERO_CACHE=${RENJU_ZERO_CACHE:-$scratch/renju-zero-trainer-${SLURM_JOB_ID:-local}}
config=()
if [[ -n ${CONFIG:-} ]]; then config=(--config "$CONFIG"); fi
echo "trainer of $RUN on $(hostname), cache $RENJU_ZERO_CACHE, restart ${SLURM_RESTART_COUNT:-0}"

# A trainer that fails within a minute of its start is most often refused by the lease of a
# trainer killed without giving it back (a node lost, SIGKILL after KillWait): that lease lapses
# within 60 s, so try again a few times before giving up.
for attempt in 1 2 3 4; do
    start=$SECONDS
    status=0
    "$RENJU_ZERO" trainer --run "$RUN" "${config[@]}" || status=$?
    if ((status == 0 || SECONDS - start >= 60 || attempt == 4)); then exit "$status"; fi
    echo "the trainer exited with status $status after $((SECONDS - start)) s; trying again in 30 s"
    sleep 30
done
