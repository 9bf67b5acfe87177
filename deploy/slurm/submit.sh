#!/usr/bin/env bash
# Submits a run on object storage to Slurm with one command: the trainer (trainer.sh, one task,
# a GPU unless GPUS=0) and WORKERS self-play workers (selfplay.sh, one job array). Then prints
# how to watch the run and how to stop it.
#
#   RUN=s3://renju/big CONFIG=configs/resnet-10x128-gpu.toml WORKERS=8 deploy/slurm/submit.sh
#
# RUN (required) the run URL; CONFIG the trainer's config (needed for a new run); WORKERS (2);
# GPUS the trainer's GPUs (1; 0 for none); WORKER_CPUS (12, the run's selfplay.threads);
# PARTITION, TRAINER_PARTITION (default PARTITION), TIME (a time limit for both, e.g. 2-00:00:00);
# RENJU_ZERO the binary (default: renju-zero on PATH). The store's credentials are the AWS_*
# (GOOGLE_*, AZURE_*) variables of the submitting shell: Slurm passes the environment on.
# Extra arguments go to both sbatch calls.
set -euo pipefail

: "${RUN:?set RUN to the run URL (s3://bucket/prefix, gs://..., az://..., file:///dir)}"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
WORKERS=${WORKERS:-2}
GPUS=${GPUS:-1}
WORKER_CPUS=${WORKER_CPUS:-12}
if [[ -n ${CONFIG:-} ]]; then
    CONFIG=$(realpath "$CONFIG")
    export CONFIG
fi
export RUN
if [[ -n ${RENJU_ZERO:-} && $RENJU_ZERO == */* ]]; then
    RENJU_ZERO=$(realpath "$RENJU_ZERO")
    export RENJU_ZERO
fi

common=()
if [[ -n ${TIME:-} ]]; then common+=(--time "$TIME"); fi
trainer=("${common[@]}")
if ((GPUS > 0)); then trainer+=(--gres "gpu:$GPUS"); fi
if [[ -n ${TRAINER_PARTITION:-${PARTITION:-}} ]]; then trainer+=(--partition "${TRAINER_PARTITION:-$PARTITION}"); fi
workers=("${common[@]}" --array "0-$((WORKERS - 1))" --cpus-per-task "$WORKER_CPUS")
if [[ -n ${PARTITION:-} ]]; then workers+=(--partition "$PARTITION"); fi

trainer_id=$(sbatch --parsable "${trainer[@]}" "$@" "$here/trainer.sh")
trainer_id=${trainer_id%%;*}
# The workers start once the trainer runs (they wait for the run's config.toml it writes).
workers_id=$(sbatch --parsable --dependency "after:$trainer_id" "${workers[@]}" "$@" "$here/selfplay.sh")
workers_id=${workers_id%%;*}

cat <<MSG
Submitted the run $RUN:
  trainer            job $trainer_id   (log renju-zero-trainer-$trainer_id.out)
  $WORKERS self-play workers   job array $workers_id   (logs renju-zero-selfplay-${workers_id}_N.out)
Watch:
  squeue -j $trainer_id,$workers_id
  tail -f renju-zero-trainer-$trainer_id.out
  renju-zero check-run --run DIR   (DIR: a file:// run's directory, or the trainer's cache
                                    named in its log, on the trainer's node)
Stop (SIGTERM: the workers upload their last shard, the trainer writes a checkpoint and gives
the lease back, each within a few seconds, well inside Slurm's KillWait):
  scancel $trainer_id $workers_id
More workers later: RUN=$RUN sbatch --array=0-3 $here/selfplay.sh
MSG
