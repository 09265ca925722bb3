#!/usr/bin/env bash
# test_cli_vocab.sh HINTSIM - one option vocabulary across subcommands, read from every
# command's --help (the option tables):
#   - a short letter means one long option in every command that has it (-p is --profile,
#     -P is --port, -o --output, -q --quiet ...);
#   - every command with --profile takes -p; every hint list is --hint (--hints and
#     --candidates only as old names that still work and warn);
#   - the old "-p PORT" of validate, calibrate and capture bench is refused with exit 2
#     naming -P, before anything touches a device;
#   - recommend --candidates gives the same answer as --hint;
#   - every option docs/CLI.md's command lines name is in that command's --help.
set -uo pipefail
hs=$1
fails=0
passes=0
check() { if "$@"; then passes=$((passes + 1)); else echo "FAIL: $*" >&2; fails=$((fails + 1)); fi; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

commands() { "$@" --help | awk '/^commands:/ {on = 1; next} on && /^  [a-z]/ {print $1} on && /^$/ {on = 0}'; }
leaves=()
for c in $(commands "$hs"); do
    if "$hs" "$c" --help | head -n 1 | grep -q 'COMMAND \[ARGS'; then
        for s in $(commands "$hs" "$c"); do leaves+=("$c $s"); done
    else
        leaves+=("$c")
    fi
done
check test "${#leaves[@]}" -ge 15

# "CMD<TAB>-x<TAB>--long<TAB>help" for every option line of every command
for l in "${leaves[@]}"; do
    "$hs" $l --help | awk -v cmd="$l" '/^options:/ {on = 1; next} on && /^$/ {on = 0}
        on && /^ +-/ {short = ""; i = 1; if ($1 ~ /^-[A-Za-z],$/) {short = substr($1, 1, 2); i = 2}
                      help = $0; sub(/^ +-[^ ]*( [^ ]+)? +/, "", help)
                      printf "%s\t%s\t%s\t%s\n", cmd, short, $i, help}'
done >"$tmp/opts.tsv"
check test "$(wc -l <"$tmp/opts.tsv")" -ge 100

# a letter, one meaning. Known and left for now: trace gen's -s --seed / -n --count against
# perftest's -s size / -n iterations in capture bench and calibrate (renaming trace gen's
# letters would break scripts; the pairs are listed here so that no new one slips in).
conflicts=$(awk -F'\t' '$2 != "" {m[$2] = m[$2] ? m[$2] : $3; if (m[$2] != $3) print $2 " is " m[$2] " and " $3 " (" $1 ")"}' "$tmp/opts.tsv" |
    grep -v -e '^-s is --seed and --sizes ' -e '^-n is --count and --iters ' | sort -u)
check test -z "$conflicts"
[ -z "$conflicts" ] || echo "$conflicts" >&2
check grep -qP '^validate\t-P\t--port\t' "$tmp/opts.tsv"
check grep -qP '^validate\t-p\t--profile\t' "$tmp/opts.tsv"
# --profile takes -p wherever it exists
noshort=$(awk -F'\t' '$3 == "--profile" && $2 != "-p" {print $1}' "$tmp/opts.tsv")
check test -z "$noshort"
[ -z "$noshort" ] || echo "--profile without -p in: $noshort" >&2
# hint lists: --hint; the old names only as old names
for c in model sim recommend validate "capture bench"; do
    check grep -qP "^$c\t\t--hint\t" "$tmp/opts.tsv"
done
old=$(awk -F'\t' '($3 == "--hints" || $3 == "--candidates") && $4 !~ /^old name of --hint/' "$tmp/opts.tsv")
check test -z "$old"

# the old -p PORT: exit 2, naming -P, without a device (rxe-none does not exist)
for cmd in "validate x.hst -d rxe-none" "calibrate -d rxe-none -o $tmp/p.json" \
           "capture bench -d rxe-none --sizes 8 -o $tmp/t.hst"; do
    "$hs" $cmd -p 18515 >"$tmp/out" 2>"$tmp/err"
    check test $? -eq 2
    check grep -q -- '-P N or --port N' "$tmp/err"
done

# old names work and warn; same answer as the new one
kv=$(dirname "$0")/../traces/samples/kv.hst
"$hs" recommend "$kv" --profile generic --hint 0,4K --json -q 2>"$tmp/new.err" |
    grep -v '"wall_s"' >"$tmp/new.json"
"$hs" recommend "$kv" --profile generic --candidates 0,4K --json -q 2>"$tmp/old.err" |
    grep -v '"wall_s"' >"$tmp/old.json"
check test -s "$tmp/new.json"
check cmp -s "$tmp/new.json" "$tmp/old.json"
check grep -q -- '--candidates is the old name of --hint' "$tmp/old.err"
check test ! -s "$tmp/new.err"
"$hs" validate --hints 4K >/dev/null 2>"$tmp/err"
check test $? -eq 2
check grep -q -- '--hints is the old name of --hint' "$tmp/err"

# docs/CLI.md: every option its command lines name is in that command's --help
doc=$(dirname "$0")/../docs/CLI.md
awk '/^```/ {code = !code; next}
     code && /^hintsim / {if (line) print line; line = $0; next}
     code && line && /^ +[[-]/ {line = line " " $0; next}
     {if (line) print line; line = ""}
     END {if (line) print line}' "$doc" | sed 's/ *#.*//' >"$tmp/doc-lines"
check test "$(wc -l <"$tmp/doc-lines")" -ge 15
while read -r _ c rest; do
    cmd=$c
    sub=${rest%% *}
    if "$hs" "$c" --help | head -n 1 | grep -q 'COMMAND \[ARGS'; then
        cmd="$c ${sub%%|*}"
    fi
    help=$("$hs" $cmd --help 2>/dev/null)
    [ -n "$help" ] || { echo "FAIL: docs/CLI.md names 'hintsim $cmd', which has no --help" >&2; fails=$((fails + 1)); continue; }
    for o in $(grep -oE '(^|[ [|])--?[a-zA-Z][a-zA-Z0-9-]*' <<<"$rest" | sed 's/^[ [|]//' | sort -u); do
        if grep -qE -- "(^| )$o([ ,]|$)" <<<"$help"; then
            passes=$((passes + 1))
        else
            echo "FAIL: docs/CLI.md: hintsim $cmd $o is not in its --help" >&2
            fails=$((fails + 1))
        fi
    done
done <"$tmp/doc-lines"

echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
