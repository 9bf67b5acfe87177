#!/usr/bin/env bash
# A real Slurm on this machine: installs Debian's slurm-wlm and munge when missing (apt-get, as
# root), starts munged, slurmctld and slurmd with a localhost-only config of its own (nothing in
# /etc/slurm is touched), submits the trainer and a 2-task self-play array with submit.sh on the
# tiny test config against a file:// run, requeues the trainer after generation 1 (scontrol
# requeue, as a preemption does), waits for generation 2, stops everything with scancel
# and checks the run with `renju-zero check-run`. Prints the time to the first shard, the stop
# time after scancel and the total. Needs the release build (cargo build --release).
#   bash deploy/slurm/local-cluster-test.sh
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
# shellcheck source=/dev/null
source "$root/scripts/env.sh"
bin=$root/target/release/renju-zero
[[ -x $bin ]] || { echo "build first: cargo build --release" >&2; exit 1; }

if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends slurm-wlm munge
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/renju-slurm.XXXXXX")
pids=()
cleanup() {
    if [[ -n ${trainer_id:-} ]]; then
        scancel "$trainer_id" "$workers_id" 2>/dev/null || true
        for _ in $(seq 40); do
            [[ -z $(squeue -h 2>/dev/null) ]] && break
            sleep 1
        done
    fi
    # slurmd, slurmctld, then munged (the daemons need munge to the end).
    for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
        kill "${pids[i]}" 2>/dev/null || true
        for _ in $(seq 10); do
            kill -0 "${pids[i]}" 2>/dev/null || break
            sleep 1
        done
        kill -9 "${pids[i]}" 2>/dev/null || true
    done
    if [[ ${KEEP:-0} == 0 ]]; then rm -rf "$work"; else echo "kept $work"; fi
}
trap cleanup EXIT
mkdir -p "$work"/{state,spool,munge,scratch,store,logs}
node=$(hostname -s)

# munge: its own socket and key, so a munged already running is left alone.
dd if=/dev/urandom of="$work/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$work/munge/munge.key"
munged --force --foreground --key-file="$work/munge/munge.key" --socket="$work/munge/socket" \
    --pid-file="$work/munge/pid" --log-file="$work/munge/log" --seed-file="$work/munge/seed" &
pids+=($!)

export SLURM_CONF=$work/slurm.conf
cat >"$SLURM_CONF" <<CONF
ClusterName=renjutest
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=16817
SlurmdPort=16818
SlurmUser=root
AuthType=auth/munge
AuthInfo=socket=$work/munge/socket
CredType=cred/munge
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/slurmctld.log
SlurmdLogFile=$work/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
ReturnToService=2
KillWait=30
NodeName=$node NodeAddr=127.0.0.1 CPUs=8 RealMemory=16000 State=UNKNOWN
PartitionName=local Nodes=$node Default=YES MaxTime=INFINITE State=UP
CONF
sleep 1
slurmctld -D -f "$SLURM_CONF" &
pids+=($!)
slurmd -D -f "$SLURM_CONF" -N "$node" &
pids+=($!)
for _ in $(seq 60); do
    if sinfo -h -o %T 2>/dev/null | grep -qx idle; then break; fi
    sleep 1
done
sinfo -h -o %T | grep -qx idle || { echo "the node did not come up:" >&2; tail -20 "$work"/slurm*.log >&2; exit 1; }

t0=$SECONDS
cd "$work/logs"
out=$(TMPDIR=$work/scratch RUN=file://$work/store CONFIG=$root/tests/data/e2e.toml GPUS=0 WORKERS=2 \
    WORKER_CPUS=1 RENJU_ZERO=$bin bash "$here/submit.sh" --cpus-per-task=1 --mem=2G)
echo "$out"
trainer_id=$(awk '/^  trainer /{print $3}' <<<"$out")
workers_id=$(awk '/self-play workers/{print $6}' <<<"$out")

wait_for() { # what, seconds, test command...
    local what=$1 secs=$2
    shift 2
    local start=$SECONDS
    until "$@"; do
        if ((SECONDS - start > secs)); then
            echo "$what did not happen within $secs s" >&2
            squeue >&2 || true
            tail -n 20 "$work"/logs/*.out >&2 || true
            exit 1
        fi
        sleep 1
    done
}
shard() { compgen -G "$work/store/selfplay/*.npz" >/dev/null; }
wait_for "a shard in the run" 300 shard
first=$((SECONDS - t0))
# Requeue the trainer after generation 1, as a preemption would: SIGTERM, then the same job
# again (the same job id, so on this single node the same cache).
gen1() { [[ -e $work/store/models/gen-000001.manifest.json ]]; }
wait_for "generation 1" 600 gen1
scontrol requeue "$trainer_id"
restarted() { grep -q "restart 1" "$work/logs/renju-zero-trainer-$trainer_id.out"; }
wait_for "the requeued trainer's start" 300 restarted
gen2() { [[ -e $work/store/models/gen-000002.manifest.json ]]; }
wait_for "generation 2" 600 gen2
gens=$((SECONDS - t0))

t1=$SECONDS
scancel "$trainer_id" "$workers_id"
gone() { [[ -z $(squeue -h -j "$trainer_id,$workers_id" 2>/dev/null) ]]; }
wait_for "the jobs' end after scancel" 120 gone
stop=$((SECONDS - t1))
trainer_id=

echo "--- trainer log"
cat "$work/logs/renju-zero-trainer-"*.out
shards=$(find "$work/store/selfplay" -name '*.npz' | wc -l)
cache=$(find "$work/scratch" -maxdepth 1 -name 'renju-zero-trainer-*' | head -1)
"$bin" check-run --run "$cache"
echo "local Slurm: first shard after ${first} s, generation 2 after ${gens} s, ${shards} shards," \
    "all jobs ended ${stop} s after scancel, total $((SECONDS - t0)) s"
