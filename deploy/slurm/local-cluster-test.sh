#!/usr/bin/env bash
# A real Slurm on this machine: installs Debian's slurm-wlm and munge when missing (apt-get, as
# root), starts munged, slurmctld and slurmd with a localhost-only config of its own (nothing in
# /etc/slurm is touched), submits the trainer and a 2-task self-play array with submit.sh on the
# tiny test config against a file:// run, and then
# - requeues the trainer after generation 1 (scontrol requeue: SIGTERM, as a preemption does);
# - after generation 2, loses the trainer's node: SIGKILL to the trainer, its cache deleted,
#   the job requeued (a fresh cache, as on another node);
# - waits for the new trainer to download the checkpoint (once the killed one's lease has run
#   out) and to publish a generation past the killed one's, stops everything with scancel and
#   checks the run in the store with `renju-zero check-run`.
# Prints the time to the first shard, the shards per second of the 2 workers, the trainer's lag
# behind self-play at each generation, the steps the killed trainer lost (at most
# training.checkpoint_every), the stop time after scancel and the total. Needs the release
# build (cargo build --release).
#   bash deploy/slurm/local-cluster-test.sh
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
# shellcheck source=/dev/null
source "$root/scripts/env.sh"
bin=$root/target/release/renju-zero
[[ -x $bin ]] || { echo "build first: cargo build --release" >&2; exit 1; }

if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
    [[ $(id -u) == 0 ]] || { echo "installing slurm-wlm and munge needs root" >&2; exit 1; }
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -qq --no-install-recommends slurm-wlm munge >/dev/null \
        || { apt-get update -qq && apt-get install -y -qq --no-install-recommends slurm-wlm munge >/dev/null; }
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
AuthInfo=socket=$work/munge/socket,cred_expire=10
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
# The tiny test config, with a checkpoint every other round of training steps, so that the
# killed trainer can lose steps.
sed 's/^checkpoint_every *=.*/checkpoint_every = 16/' "$root/tests/data/e2e.toml" >"$work/config.toml"
out=$(TMPDIR=$work/scratch RUN=file://$work/store CONFIG=$work/config.toml GPUS=0 WORKERS=2 \
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
shards_now() { find "$work/store/selfplay" -name '*.npz' 2>/dev/null | wc -l; }
shard() { (($(shards_now) > 0)); }
wait_for "a shard in the run" 300 shard
first=$((SECONDS - t0))
t_first=$SECONDS
manifest() { [[ -e $work/store/models/gen-$(printf %06d "$1").manifest.json ]]; }
# Shards in the store when each generation appeared (the trainer's lag, below).
declare -A shards_at
wait_generation() {
    wait_for "generation $1" 600 manifest "$1"
    shards_at[$1]=$(shards_now)
}

# Preemption: requeue the trainer after generation 1 (SIGTERM, then the same job again: the same
# job id, so on this single node the same cache).
wait_generation 1
scontrol requeue "$trainer_id"
restarted() { grep -q "restart $1" "$work/logs/renju-zero-trainer-$trainer_id.out"; }
wait_for "the requeued trainer's start" 300 restarted 1
wait_generation 2

# The trainer's node is lost: SIGKILL (no checkpoint, the lease not given back), the cache
# deleted, the job requeued. The step it had reached is at least the newest in its TensorBoard
# file, which it writes after each round of training steps (and less than a round more).
sleep 3
cache=$(find "$work/scratch" -maxdepth 1 -name "renju-zero-trainer-$trainer_id")
pkill -KILL -f "renju-zero trainer --run file://$work/store" || true
sleep 1
# The newest generation the killed trainer published (it may be ahead of the waits above).
newest=$(find "$work/store/models" -name 'gen-*.manifest.json' | sed 's/.*gen-0*\([0-9][0-9]*\)\.manifest\.json/\1/' | sort -n | tail -1)
killed_at=$(python3 - "$cache/tensorboard" <<'PY'
import glob, struct, sys
def varint(b, i):
    v = s = 0
    while True:
        c = b[i]; i += 1; v |= (c & 0x7F) << s; s += 7
        if c < 0x80: return v, i
last = -1
for path in glob.glob(sys.argv[1] + "/events.out.tfevents.*"):
    data = open(path, "rb").read(); i = 0
    while i + 12 <= len(data):
        (n,) = struct.unpack_from("<Q", data, i); rec = data[i + 12:i + 12 + n]; i += 16 + n
        if len(rec) < n: break
        j = 0
        while j < len(rec):
            tag, j = varint(rec, j); field, wire = tag >> 3, tag & 7
            if wire == 0:
                v, j = varint(rec, j)
                if field == 2: last = max(last, v)  # Event.step
            elif wire == 1: j += 8
            elif wire == 5: j += 4
            elif wire == 2: l, j = varint(rec, j); j += l
            else: break
print(last)
PY
)
rm -rf "$cache"
scontrol requeue "$trainer_id"
wait_for "the trainer's start on a fresh cache" 300 restarted 2
# Its first attempts may find the killed trainer's lease still held; it retries until the lease
# runs out, then downloads the checkpoint and trains on past the killed trainer's generations.
resumed_ok() { grep -q 'downloaded the checkpoint at step' "$work/store/train.log"; }
wait_for "the resumed trainer's checkpoint download" 300 resumed_ok
final=$((newest + 1))
wait_generation "$final"
gens=$((SECONDS - t0))
shards_end=$(shards_now)
rate=$(awk -v n="$shards_end" -v t=$((SECONDS - t_first)) 'BEGIN { printf "%.2f", (n - 1) / t }')

t1=$SECONDS
scancel "$trainer_id" "$workers_id"
gone() { [[ -z $(squeue -h -j "$trainer_id,$workers_id" 2>/dev/null) ]]; }
wait_for "the jobs' end after scancel" 120 gone
stop=$((SECONDS - t1))
trainer_id=

echo "--- trainer log"
cat "$work/logs/renju-zero-trainer-"*.out
echo "--- train.log in the store"
cat "$work/store/train.log"
"$bin" check-run --run "$work/store"

# The step the resumed trainer started from, and the games each generation's trainer had read.
resumed=$(grep -o 'downloaded the checkpoint at step [0-9]*' "$work/store/train.log" | tail -1 | grep -o '[0-9]*$')
every=$(sed -n 's/^checkpoint_every *= *\([0-9]*\).*/\1/p' "$work/config.toml")
round=$(sed -n 's/^steps_per_round *= *\([0-9]*\).*/\1/p' "$work/config.toml")
lost=$((killed_at - resumed))
((killed_at >= 0 && lost >= 0 && lost <= every)) \
    || { echo "the killed trainer was at step $killed_at, the new one resumed at $resumed: $lost steps lost" >&2; exit 1; }
per_shard=$(sed -n 's/^games_per_shard *= *\([0-9]*\).*/\1/p' "$work/config.toml")
lag=""
for g in 1 2 "$final"; do
    read_games=$(python3 -c 'import json, sys
for line in open(sys.argv[1]):
    d = json.loads(line)
    if d["generation"] == int(sys.argv[2]): print(d["selfplay_games"])' "$work/store/generations.jsonl" "$g" | tail -1)
    behind=$((shards_at[$g] * per_shard - read_games))
    lag+=" gen $g: $behind games ($(awk -v b="$behind" -v r="$rate" -v k="$per_shard" 'BEGIN { printf "%.0f", b / (r * k) }') s)"
done
echo "local Slurm: first shard after ${first} s; 2 workers: ${rate} shards/s (${per_shard} games each);" \
    "trainer behind self-play at publication:${lag}; killed at step ${killed_at}, resumed at step" \
    "${resumed} on a fresh cache: ${lost} to $((lost + round - 1)) steps lost (checkpoint_every ${every});" \
    "generation $final after" \
    "${gens} s; all jobs ended ${stop} s after scancel; total $((SECONDS - t0)) s"
