#!/usr/bin/env bash
# bench_fuzz.sh SECONDS BUILD_TESTS_DIR SOURCE_DIR HINTSIM - every libFuzzer target of
# tests/fuzz for SECONDS each (CI runs each for 5-20 s), over a copy of its seed corpus, and
# a table of what each did: executions, executions per second, inputs added, peak memory,
# and whether it found anything (a crash or sanitizer report leaves crash-*/leak-*/timeout-*
# in the target's work folder, named in the table; the exit status is then 1). The host
# line first: HINTSIM doctor's.
set -euo pipefail
secs=${1:?usage: bench_fuzz.sh SECONDS BUILD_TESTS_DIR SOURCE_DIR HINTSIM}
# absolute: each target runs from its own work folder
bin=$(cd "${2:?}" && pwd)
src=${3:?}
hintsim=${4:?}
work=$(mktemp -d "${TMPDIR:-/tmp}/hintsim-bench-fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT

# the host line every benchmark prints first (common/hs_host.h), from hintsim doctor
host=$("$hintsim" doctor | grep '^host: ') ||
    { echo "bench_fuzz: no host line from $hintsim doctor" >&2; exit 1; }
echo "$host"
printf '%-20s %6s %12s %10s %8s %8s  %s\n' target seconds executions exec/s added rss_mb found
found_any=0
for f in "$bin"/fuzz_*; do
    [ -x "$f" ] && [ -f "$f" ] && [ "$(basename "$f")" != fuzz_probe ] || continue
    name=$(basename "$f")
    case $name in
    fuzz_trace_reader) corpus=$src/tests/fuzz/corpus ;;
    fuzz_cap_proto) corpus=$src/tests/fuzz/corpus_cap_proto ;;
    *) corpus=$src/tests/fuzz/corpus/$name ;;
    esac
    mkdir -p "$work/$name/new" "$work/$name/art"
    [ -d "$corpus" ] && find "$corpus" -maxdepth 1 -type f -exec cp {} "$work/$name/new/" \;
    rc=0
    (cd "$work/$name" && ASAN_OPTIONS=detect_leaks=1 "$f" -max_total_time="$secs" \
        -max_len=16384 -close_fd_mask=1 -print_final_stats=1 \
        -artifact_prefix="$work/$name/art/" new >"$work/$name/log" 2>&1) || rc=$?
    st() { sed -n "s/^stat::$1: *//p" "$work/$name/log" | tail -1; }
    execs=$(st number_of_executed_units)
    rate=$(st average_exec_per_sec)
    added=$(st new_units_added)
    rss=$(st peak_rss_mb)
    art=$(ls "$work/$name/art" 2>/dev/null | head -3 | tr '\n' ' ')
    if [ "$rc" -ne 0 ] || [ -n "$art" ]; then
        found_any=1
        mkdir -p "$bin/fuzz-found/$name"
        cp -r "$work/$name/art/." "$work/$name/log" "$bin/fuzz-found/$name/" 2>/dev/null || true
        art="exit $rc ${art:-(no artifact)}: $bin/fuzz-found/$name"
    fi
    printf '%-20s %6s %12s %10s %8s %8s  %s\n' "$name" "$secs" "${execs:--}" "${rate:--}" \
        "${added:--}" "${rss:--}" "${art:-none}"
done
exit $found_any
