#!/bin/bash
# test_sweep_slurm.sh HINTSIM SRC - the --emit-slurm script under a real Slurm: a private
# one-node cluster (slurmctld + slurmd from Debian's slurmctld/slurmd/slurm-client, its own
# config, state and ports in a temporary folder, auth/none) is started, the script submitted
# with `bash FILE`, and then: the merge job started only after every array task had ended
# (afterany), exactly one job merged (its log, "merged": true; every task's, false), and
# sweep.csv and sweep.json are byte-identical to a local run's. Exit 77 (skipped) without
# the Slurm daemons or when not root (slurmd runs jobs as their owner).
set -euo pipefail
bin=$1
src=$2
for c in slurmctld slurmd sbatch squeue scontrol; do
    command -v "$c" >/dev/null || { echo "SKIP: $c not installed (apt-get install slurmctld slurmd slurm-client)"; exit 77; }
done
[[ $(id -u) == 0 ]] || { echo "SKIP: a private slurmd needs root"; exit 77; }

t=$(mktemp -d "${TMPDIR:-/tmp}/hintsim-slurm.XXXXXX")
port=$((20000 + RANDOM % 20000))
host=$(hostname)
export SLURM_CONF=$t/slurm.conf
mkdir -p "$t/state" "$t/spool"
cat >"$SLURM_CONF" <<EOF
ClusterName=hintsimtest
SlurmctldHost=$host
SlurmctldPort=$port
SlurmdPort=$((port + 1))
AuthType=auth/none
CredType=cred/none
StateSaveLocation=$t/state
SlurmdSpoolDir=$t/spool
SlurmctldPidFile=$t/slurmctld.pid
SlurmdPidFile=$t/slurmd.pid
SlurmctldLogFile=$t/slurmctld.log
SlurmdLogFile=$t/slurmd.log
ProctrackType=proctrack/pgid
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MpiDefault=none
SlurmUser=root
SlurmdUser=root
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
NodeName=$host CPUs=$(nproc) State=UNKNOWN
PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
stop() {
    local pid
    for f in slurmd slurmctld; do
        pid=$(cat "$t/$f.pid" 2>/dev/null || true)
        [[ -n $pid ]] && kill "$pid" 2>/dev/null || true
    done
    sleep 1
    rm -rf "$t"
}
trap stop EXIT
fail() {
    echo "FAIL: $*" >&2
    tail -20 "$t"/slurm*.log >&2 || true
    exit 1
}
slurmctld -f "$SLURM_CONF"
slurmd -f "$SLURM_CONF"
for _ in $(seq 60); do
    sinfo -h -o %T 2>/dev/null | grep -qx idle && break
    sleep 1
done
sinfo -h -o %T | grep -qx idle || fail "the private Slurm node did not come up"

cat >"$t/grid.json" <<EOF
{"profiles": ["generic"], "vary": {"ll.depth": [16, 64], "bw.depth": [128, 512]},
 "hints": [0, 4096, "auto"], "objective": "p99"}
EOF
trace=$src/traces/samples/kv.hst
"$bin" sweep --grid "$t/grid.json" --trace "$trace" -o "$t/local" --no-plots --quiet
"$bin" sweep --grid "$t/grid.json" --trace "$trace" -o "$t/slurm" --emit-slurm "$t/job.sh" \
    --slices 3 --quiet
out=$(cd / && bash "$t/job.sh" --json --no-plots) || fail "submitting: $out"
echo "$out"
[[ $out =~ array\ job\ ([0-9]+)\ \(3\ tasks\),\ merge\ job\ ([0-9]+) ]] || fail "submit said: $out"
array=${BASH_REMATCH[1]}
merge=${BASH_REMATCH[2]}
for _ in $(seq 180); do
    [[ -z $(squeue -h) ]] && break
    sleep 1
done
[[ -z $(squeue -h) ]] && echo "all jobs ended" || fail "jobs still queued: $(squeue)"

# afterany: the merge job started no earlier than the last task ended
ends=$(scontrol -o show job "$array" | grep -o 'EndTime=[^ ]*' | cut -d= -f2 | sort | tail -1)
start=$(scontrol -o show job "$merge" | grep -o 'StartTime=[^ ]*' | cut -d= -f2)
[[ -n $ends && -n $start && ! $start < $ends ]] || fail "merge started $start, a task ended $ends"
[[ $(scontrol -o show job "$merge") == *"Dependency="* ]] || fail "no dependency on the merge job"

# one merger: the merge job; every task says it did not merge
merged=$(grep -l '"merged": true' "$t"/slurm/slurm-*.out || true)
[[ $merged == "$t/slurm/slurm-$merge-merge.out" ]] || fail "merged in: ${merged:-none}"
n=$(grep -l '"merged": false' "$t"/slurm/slurm-"$array"_*.out | wc -l)
[[ $n == 3 ]] || fail "$n of 3 tasks said they did not merge"
grep -q '"computed": 0' "$t/slurm/slurm-$merge-merge.out" || fail "the merge job computed points"

cmp "$t/local/sweep.csv" "$t/slurm/sweep.csv" || fail "sweep.csv differs from the local run's"
cmp "$t/local/sweep.json" "$t/slurm/sweep.json" || fail "sweep.json differs from the local run's"
echo "PASS: 3 array tasks and one merge job under Slurm $(sinfo -V | cut -d' ' -f2)"
