#!/bin/sh
# engine_identity.sh - the model engine's outputs of two builds, byte for byte: `hintsim
# model --json` and its text for every sample trace x profiles seed000, seed003, generic x
# open, closed x hints 0, 4K, 64K, 1M (one run per combination, every hint in it), and
# `sim --json` at hint 4K for each sample and profile in open loop (sim reads the model's
# offered-load check). A refactoring of model/engine/ must change none of them.
#
#   tests/engine_identity.sh BASE_HINTSIM NEW_HINTSIM [SAMPLES_DIR] [--no-sim]
#
# Prints one line per differing combination and a summary; exit 0 when all are identical.
set -u
base=$1
new=$2
dir=${3:-$(dirname "$0")/../traces/samples}
sim=1
[ "${4:-}" = "--no-sim" ] && sim=0
out=$(mktemp -d) || exit 2
trap 'rm -rf "$out"' EXIT
n=0
bad=0

# compare NAME CMD...: run CMD with each binary, count a difference
compare() {
    name=$1
    shift
    "$base" "$@" > "$out/a" 2>&1
    ra=$?
    "$new" "$@" > "$out/b" 2>&1
    rb=$?
    n=$((n + 1))
    if [ $ra -ne $rb ] || ! cmp -s "$out/a" "$out/b"; then
        bad=$((bad + 1))
        echo "DIFFERS: $name (exit $ra / $rb)"
    fi
}

for tr in "$dir"/*.hst; do
    t=$(basename "$tr" .hst)
    for p in seed000 seed003 generic; do
        for m in open closed; do
            compare "model $t $p $m json" model "$tr" -q --profile "$p" --mode "$m" \
                --hint 0,4K,64K,1M --json --threads 1
            compare "model $t $p $m text" model "$tr" -q --profile "$p" --mode "$m" \
                --hint 0,4K,64K,1M --threads 1
        done
        [ $sim -eq 1 ] && compare "sim $t $p open json" sim "$tr" -q --profile "$p" \
            --hint 4K --json
    done
done
echo "engine_identity: $n runs, $bad differ"
[ $bad -eq 0 ]
