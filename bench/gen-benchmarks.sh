#!/bin/sh
# gen-benchmarks.sh - regenerate BENCHMARKS.md from the benchmarks' own tables.
#
# usage: bench/gen-benchmarks.sh [-B BUILD_DIR] [-o OUT] [--quick] [--truth FILE|DIR]
#                                [--only NAME[,NAME...]] [--host DIR]...
#   -B BUILD_DIR  where the bench_* binaries were built (default: build; `make benchmarks`
#                 passes its own)
#   -o OUT        the file written (default: BENCHMARKS.md at the repository root)
#   --quick       small inputs (a check that the page builds, not figures to keep)
#   --truth X     add bench_truth's table: X is a file holding its printed output, or a run
#                 folder (build/bench-truth/) read with `bench_truth --table X`. bench_truth
#                 itself is never run here: it boots the soft-RoCE VM and needs a quiet host.
#   --only LIST   run only these benchmarks (e.g. bench_trace,bench_model)
#   --host DIR    add tables another host printed (the GPU machine's): each DIR/*.log is
#                 one benchmark's output, its first line `$ COMMAND` as it was run there,
#                 then the output verbatim (host line first); repeatable. Nothing is run.
#
# Each benchmark prints its table with its host line first (common/hs_host.h); the page is
# dated once at its top, names the commit, and copies each table verbatim under the command
# that printed it. OUT is written to OUT.tmp and renamed, so a failed run leaves the old page.
set -eu

src=$(cd "$(dirname "$0")/.." && pwd)
build=$src/build
out=$src/BENCHMARKS.md
quick=0
truth=
only=
hosts=
while [ $# -gt 0 ]; do
    case $1 in
    -B) build=$2; shift 2 ;;
    -o) out=$2; shift 2 ;;
    --quick) quick=1; shift ;;
    --truth) truth=$2; shift 2 ;;
    --only) only=,$2,; shift 2 ;;
    --host) hosts="$hosts $2"; shift 2 ;;
    -h|--help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "gen-benchmarks.sh: unknown argument '$1' (--help)" >&2; exit 2 ;;
    esac
done
case $build in /*) ;; *) build=$(pwd)/$build ;; esac
bin=$build/bench
[ -x "$build/cli/hintsim" ] || { echo "gen-benchmarks.sh: no $build/cli/hintsim: build first" >&2; exit 3; }

if [ "$quick" = 1 ]; then
    n_trace=200000 n_model=200000 n_preload=200000 n_sweep=1 sim_args='--rounds 1 100000'
else
    n_trace=10000000 n_model=10000000 n_preload=5000000 n_sweep=5 sim_args=
fi

tmp=$out.tmp
commit=$(git -C "$src" rev-parse --short HEAD 2>/dev/null || echo unknown)
# the page itself does not count as a local change (a regeneration over an earlier one)
rel=$(realpath -m --relative-to="$src" "$out" 2>/dev/null || echo "$out")
dirty=$(git -C "$src" status --porcelain --untracked-files=no 2>/dev/null |
        awk -v rel="$rel" '$2 != rel' | head -1)
{
    echo "# Benchmarks"
    echo
    echo "Generated $(date -u '+%Y-%m-%d %H:%M UTC') by \`bench/gen-benchmarks.sh\`" \
         "(\`make benchmarks\`) at commit $commit${dirty:+ with local changes}."
    [ -r /proc/loadavg ] && echo "Load average when it started: $(cut -d' ' -f1-3 /proc/loadavg)."
    [ "$quick" = 1 ] && echo "Quick run (--quick): small inputs, figures not to be compared."
    echo "Each table is a benchmark's own output, its first line the host it ran on;"
    echo "what each measures and its goal: bench/README.md. Compare figures only within"
    echo "one table (same run, same host): shared machines vary between runs."
} > "$tmp"

# section NAME COMMAND...: run one benchmark, its output verbatim under its command
section() {
    name=$1; shift
    case $only in ''|*,$name,*) ;; *) return 0 ;; esac
    [ -x "$1" ] || { echo "gen-benchmarks.sh: $1 not built, left out" >&2; return 0; }
    echo "gen-benchmarks.sh: running $name" >&2
    shown=$(echo "$*" | sed "s|$build/||g; s|$src|.|g")
    {
        echo
        echo "## $name"
        echo
        echo "\`$shown\`"
        echo
        echo '```'
        if ! "$@" 2>&1; then echo "(exit status $?: the table above is incomplete)"; fi
        echo '```'
    } >> "$tmp"
}

section bench_trace "$bin/bench_trace" $n_trace
section bench_model "$bin/bench_model" $n_model
section bench_sim "$bin/bench_sim" $sim_args
section bench_sweep "$bin/bench_sweep" "$build/cli/hintsim" "$src" $n_sweep
section bench_preload "$bin/bench_preload" $n_preload

if [ -n "$truth" ]; then
    {
        echo
        echo "## bench_truth"
        echo
        if [ -d "$truth" ]; then
            echo "\`bench_truth --table $(basename "$truth")\` (the run's own host line below)"
            echo
            echo '```'
            "$bin/bench_truth" --table "$truth" 2>&1 || true
            if [ -d "$truth/replica" ]; then # vm_bench_truth replicated a miss
                echo '```'
                echo
                echo "its misses replicated (tests/vm/bench-truth-check.sh):" \
                    "\`bench_truth --table $(basename "$truth")/replica\`"
                echo
                echo '```'
                "$bin/bench_truth" --table "$truth/replica" 2>&1 || true
            fi
        else
            echo "bench_truth's output, from $(basename "$truth")"
            echo
            echo '```'
            cat "$truth"
        fi
        echo '```'
    } >> "$tmp"
fi
# Tables printed on another host: `$ COMMAND` first, then the benchmark's output verbatim.
for dir in $hosts; do
    for log in "$dir"/*.log; do
        [ -r "$log" ] || continue
        cmd=$(sed -n '1s/^\$ //p' "$log")
        hostline=$(sed -n '2p' "$log")
        case $hostline in host:*) ;; *)
            echo "gen-benchmarks.sh: $log: second line is not a host line, left out" >&2
            continue ;;
        esac
        {
            echo
            echo "## $(sed -n '3s/[: ].*//p' "$log") (another host: $(basename "$dir"))"
            echo
            echo "\`$cmd\`"
            echo
            echo '```'
            sed '1d' "$log"
            echo '```'
        } >> "$tmp"
    done
done
mv "$tmp" "$out"
echo "gen-benchmarks.sh: wrote $out" >&2
