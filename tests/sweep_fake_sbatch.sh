#!/bin/bash
# sweep_fake_sbatch.sh - a stand-in for Slurm's sbatch, for the sweep tests on hosts without
# Slurm (test_sweep_cli puts it on PATH as "sbatch"). It takes the options the script of
# `hintsim sweep --emit-slurm` uses, assigns a job id, and runs the job at once: each array
# task in turn (the range from --array or the script's #SBATCH --array line), with the
# variables Slurm sets (SLURM_JOB_ID, SLURM_ARRAY_JOB_ID, SLURM_ARRAY_TASK_ID) plus those of
# --export=ALL,K=V. Since jobs run to their end when submitted, every earlier job has ended,
# which is what --dependency=afterany:ID asks; an ID that was never submitted is an error.
# In $FAKE_SLURM_DIR: calls (one line per call: dependency|array|export|script args),
# job-ID_TASK.out (each task's output) and failed-ID (tasks that exited non-zero).
set -euo pipefail
d=${FAKE_SLURM_DIR:?set FAKE_SLURM_DIR}
array= dep= exports=
while [[ $# -gt 0 && $1 == --* ]]; do
    case $1 in
    --parsable | --job-name=* | --output=*) ;;
    --array=*) array=${1#--array=} ;;
    --dependency=*) dep=${1#--dependency=} ;;
    --export=*) exports=${1#--export=} ;;
    *) echo "fake sbatch: option not supported: $1" >&2; exit 1 ;;
    esac
    shift
done
script=$1
shift
echo "$dep|$array|$exports|$script $*" >>"$d/calls"
id=$(cat "$d/next_id" 2>/dev/null || echo 100)
echo $((id + 1)) >"$d/next_id"
if [[ -n $dep ]]; then
    [[ $dep == afterany:* && -e "$d/ended-${dep#afterany:}" ]] ||
        { echo "fake sbatch: --dependency=$dep: no such job" >&2; exit 1; }
fi
[[ -n $array ]] || array=$(sed -n 's/^#SBATCH --array=//p' "$script")
vars=()
IFS=, read -ra kv <<<"$exports"
for e in "${kv[@]}"; do
    [[ $e == ALL ]] || vars+=("$e")
done
for ((t = ${array%-*}; t <= ${array#*-}; t++)); do
    env "${vars[@]}" SLURM_JOB_ID="$id" SLURM_ARRAY_JOB_ID="$id" SLURM_ARRAY_TASK_ID="$t" \
        bash "$script" "$@" >"$d/job-${id}_$t.out" 2>&1 || echo "$t" >>"$d/failed-$id"
done
touch "$d/ended-$id"
echo "$id"
