#!/usr/bin/env bash
# vm-ctest.sh OUTDIR CHECK [run-in-vm.sh options] SCRIPT [ARGS...]
# What CTest runs for each hs_add_vm_test: empties OUTDIR, runs SCRIPT in the soft-RoCE VM
# with its $OUT brought back into OUTDIR, then, if the script passed and CHECK is not "-",
# runs the host-side check "CHECK OUTDIR". Exit status: the script's (77 skipped, 124 VM
# timeout), else the check's.
set -euo pipefail
[ $# -ge 3 ] || { echo "usage: $0 OUTDIR CHECK|- [run-in-vm options] SCRIPT [ARGS...]" >&2; exit 2; }
outdir=$1 check=$2
shift 2
rm -rf "$outdir"
mkdir -p "$outdir"
rc=0
"$(dirname "$0")/run-in-vm.sh" --out "$outdir" "$@" || rc=$?
[ $rc -eq 0 ] || exit $rc
[ "$check" != - ] || exit 0
if [ -x "$check" ]; then "$check" "$outdir"; else bash "$check" "$outdir"; fi
