#!/usr/bin/env bash
# test_pipes.sh HINTSIM SRC_DIR - '-' (standard input or output), pipes and FIFOs through every
# command that reads or writes a file without a device: each result piped is compared with
# the same command on files, so a command that loses bytes, reads a name "-" or mixes its
# summary into the data fails. (The live commands, validate, calibrate and capture bench,
# read and write through the same code but need a verbs device: tests/vm.)
set -uo pipefail
hs=$1
src=$2
fails=0
passes=0
check() { if "$@"; then passes=$((passes + 1)); else echo "FAIL: $*" >&2; fails=$((fails + 1)); fi; }
same() { cmp -s "$1" "$2" || { echo "differ: $1 $2" >&2; diff <(head -c 2000 "$1") <(head -c 2000 "$2") | head -5 >&2; return 1; }; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
kv=$src/traces/samples/kv.hst
cd "$tmp" || exit 1

# trace gen to stdout: the same bytes as to a file, the summary on stderr
"$hs" trace gen -w burst -n 3000 -s 5 -o file.hst >/dev/null
"$hs" trace gen -w burst -n 3000 -s 5 -o - --to hst >piped.hst 2>gen.err
check same file.hst piped.hst
check grep -q '3000 records' gen.err
"$hs" trace gen -w burst -n 3000 -s 5 -o file.csv >/dev/null
"$hs" trace gen -w burst -n 3000 -s 5 -o - --to csv 2>/dev/null | cat >piped.csv
check same file.csv piped.csv
# '-' needs --to; a name that says one format and --to another is refused
"$hs" trace gen -w kv -n 10 -o - >/dev/null 2>err
check test $? -eq 2
check grep -q -- '--to' err

# trace convert: stdin to stdout, each format, byte for byte the file's (the viewers' formats
# name their source, '-' against the file's path: their sizes differ by the names' lengths)
for to in hst csv jsonl perfetto chrome-json; do
    case $to in perfetto) ext=pftrace ;; chrome-json) ext=json ;; *) ext=$to ;; esac
    "$hs" trace convert "$kv" -o "f.$ext" --to "$to" >/dev/null
    cat "$kv" | "$hs" trace convert - -o - --to "$to" 2>/dev/null >"p.$ext"
    case $to in
    perfetto | chrome-json)
        check test -s "p.$ext"
        check test $(( $(stat -c %s "f.$ext") - $(stat -c %s "p.$ext") )) -eq $(( ${#kv} - 1 )) ;;
    *) check same "f.$ext" "p.$ext" ;;
    esac
done
# /dev/stdout when stdout is a pipe: written in place, not replaced by a renamed temporary
"$hs" trace convert "$kv" -o /dev/stdout --to csv 2>/dev/null | cat >devstdout.csv
"$hs" trace convert "$kv" -o kv.csv >/dev/null
check same kv.csv devstdout.csv

# a chain: gen | convert | salvage | validate, info; every stage through a pipe
"$hs" trace gen -w phased -n 5000 -o - --to csv 2>/dev/null |
    "$hs" trace convert - -o - --to hst 2>/dev/null |
    "$hs" trace salvage - -o - 2>/dev/null >chain.hst
"$hs" trace gen -w phased -n 5000 -o chain-file.hst >/dev/null
check same chain-file.hst chain.hst
"$hs" trace validate - <chain.hst >val.out
check grep -q '5000 records' val.out
"$hs" trace info "$kv" --json | grep -v '"path"' >info-file.json
"$hs" trace info - --json <"$kv" | grep -v '"path"' >info-pipe.json
check same info-file.json info-pipe.json

# a FIFO as output (written in place) and as input
mkfifo out.fifo
"$hs" trace gen -w burst -n 3000 -s 5 -o out.fifo --to hst 2>/dev/null &
gen_pid=$!
timeout 60 cat out.fifo >fifo.hst
wait $gen_pid
check test $? -eq 0
check same file.hst fifo.hst

# trace audit's merged trace to stdout; its report then on stderr
mkdir aud && cp "$kv" aud/a.hst && cp "$kv" aud/b.hst
"$hs" trace audit aud -o merged.hst >audit.out
"$hs" trace audit aud -o - 2>audit.err >merged-pipe.hst
check same merged.hst merged-pipe.hst
check same audit.out audit.err

# sim --platform -: SimGrid reads the platform once per hint, so a pipe is copied once (two
# hints, the same figures as from the file; the copy is gone afterwards)
cat >plat.xml <<'XML'
<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM 'https://simgrid.org/simgrid.dtd'>
<platform version="4.1"><zone id="z" routing="Full">
<host id="sender0" speed="1Gf"/><host id="receiver" speed="1Gf"/>
<link id="l" bandwidth="10Gbps" latency="2us"/>
<route src="sender0" dst="receiver"><link_ctn id="l"/></route></zone></platform>
XML
"$hs" sim "$kv" -p generic --hint 0,4K --platform plat.xml -q --json | grep -E '_us"' >plat-file.txt
# the platform read from a pipe goes through a temporary file, removed after: in a TMPDIR of
# this test's own (the shared one's listing moves with any other test running sim meanwhile)
mkdir plat-tmp
TMPDIR=$tmp/plat-tmp "$hs" sim "$kv" -p generic --hint 0,4K --platform - -q --json <plat.xml |
    grep -E '_us"' >plat-pipe.txt
check test -s plat-file.txt
check same plat-file.txt plat-pipe.txt
cat plat.xml | TMPDIR=$tmp/plat-tmp "$hs" sim "$kv" -p generic --hint 0,4K --platform /dev/stdin \
    -q --json | grep -E '_us"' >plat-fifo.txt
check same plat-file.txt plat-fifo.txt
check test -z "$(ls -A plat-tmp)"

# model, sim, recommend: the trace from stdin gives the same figures as the file
for cmd in "model -p generic --hint 4K,64K" "sim -p generic --hint 4K" \
           "recommend -p generic --hint 0,4K,64K"; do
    # shellcheck disable=SC2086
    "$hs" $cmd "$kv" -q --json | grep -v -e '"path"' -e '"wall_s"' >a.json
    # shellcheck disable=SC2086
    cat "$kv" | "$hs" $cmd - -q --json | grep -v -e '"path"' -e '"wall_s"' >b.json
    check test -s a.json
    check same a.json b.json
done
# a profile from stdin: the same figures as the built-in it was shown from
"$hs" profile show generic --json >generic.json
"$hs" model "$kv" -p generic --hint 4K -q --json | grep -E '_us"|gbps' >p-file.txt
"$hs" model "$kv" -p - --hint 4K -q --json <generic.json | grep -E '_us"|gbps' >p-pipe.txt
check test -s p-file.txt
check same p-file.txt p-pipe.txt
"$hs" profile show - <generic.json >show.out
check grep -q 'profile generic' show.out

echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
