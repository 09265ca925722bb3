#!/usr/bin/env bash
# test_install.sh BUILD_DIR SRC_DIR - `cmake --install` into a DESTDIR, then use what it put
# there as a user would: the installed hintsim runs (and finds the installed libhintcap for
# `capture run`), hintsim(1) has a section for every command `hintsim --help` names (and
# for every command of each group) listing every long option of that command's --help, man
# renders it without warnings, and the installed bash completion completes the commands,
# every command's long options and the values of --profile, --workload and a|b choices.
set -uo pipefail
build=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
passes=0
ok() { passes=$((passes + 1)); }
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
check() { if "$@"; then ok; else fail "$*"; fi; }

prefix=/opt/hintsim-test
dest=$tmp/dest
DESTDIR=$dest cmake --install "$build" --prefix "$prefix" >"$tmp/install.log" 2>&1 ||
    { cat "$tmp/install.log" >&2; echo "FAIL: cmake --install" >&2; exit 1; }
root=$dest$prefix
for f in bin/hintsim lib/hintsim/libhintcap.so lib/hintsim/libhintcap-audit.so \
         share/man/man1/hintsim.1 share/bash-completion/completions/hintsim; do
    check test -f "$root/$f"
done
hs=$root/bin/hintsim
man=$root/share/man/man1/hintsim.1
comp=$root/share/bash-completion/completions/hintsim

# ---- the installed binary runs --------------------------------------------------------
check test "$("$hs" --version)" = "$("$build/cli/hintsim" --version)"
"$hs" trace gen --workload kv --count 2000 --seed 3 -o "$tmp/kv.hst" >/dev/null 2>&1 ||
    fail "installed hintsim trace gen"
n=$("$hs" trace info "$tmp/kv.hst" --json 2>/dev/null |
    sed -n 's/^[[:space:]]*"records":[[:space:]]*\([0-9]*\).*/\1/p' | head -n 1)
check test "$n" = 2000
"$hs" model "$tmp/kv.hst" --profile generic --hint 4K --json -q >"$tmp/model.json" 2>&1 ||
    fail "installed hintsim model"
check grep -q '"results"' "$tmp/model.json"
# capture run preloads the installed libhintcap (../lib/hintsim next to bin/hintsim), not
# the build tree's: the child sees it in LD_PRELOAD and LD_AUDIT.
(cd "$tmp" && env -u HINTCAP_LIB "$hs" capture run -o "$tmp/cap" -- \
    sh -c 'echo "P=$LD_PRELOAD"; echo "A=$LD_AUDIT"' >"$tmp/cap.log" 2>&1)
check grep -qx "P=$root/lib/hintsim/libhintcap.so" "$tmp/cap.log"
check grep -qx "A=$root/lib/hintsim/libhintcap-audit.so" "$tmp/cap.log"

# ---- the man page ---------------------------------------------------------------------
commands() { "$@" --help | awk '/^commands:/ {on = 1; next} on && /^  [a-z]/ {print $1} on && /^$/ {on = 0}'; }
longopts() { "$@" --help | awk '/^options:/ {on = 1; next} on && /^$/ {on = 0}
    on && /^ +-/ {for (i = 1; i <= NF; i++) if ($i ~ /^--/) {print $i; break}}'; }
# A section's text: from its .SS line to the next one.
section() { awk -v h=".SS \"$1\"" '$0 == h {on = 1; next} /^\.SS / {on = 0} on' "$man" | sed 's/\\-/-/g'; }
leaves=()
top=$(commands "$hs")
for c in trace model recommend capture validate sweep; do   # the commands the docs name
    grep -qx "$c" <<<"$top" || fail "hintsim --help does not list $c"
done
for c in $top; do
    check grep -q "^\.B $c\$" "$man"   # the COMMANDS list
    sub=$(commands "$hs" "$c" 2>/dev/null)
    if "$hs" "$c" --help | head -n 1 | grep -q 'COMMAND \[ARGS'; then
        for s in $sub; do leaves+=("$c $s"); done
    else
        leaves+=("$c")
    fi
done
check test "${#leaves[@]}" -ge 15
for l in "${leaves[@]}"; do
    text=$(section "hintsim $l")
    [ -n "$text" ] || { fail "man page has no section for hintsim $l"; continue; }
    for o in $(longopts "$hs" $l); do
        grep -q -- "^\.B .*$o\b" <<<"$text" || fail "man page: hintsim $l lacks $o"
    done
    ok
done
if command -v man >/dev/null; then
    warn=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$man" 2>&1 >/dev/null)
    check test -z "$warn"
    [ -z "$warn" ] || echo "$warn" >&2
    LC_ALL=C.UTF-8 MANWIDTH=80 man -l "$man" 2>/dev/null | grep -q -- '--profile' || fail "man -l output"
fi

# ---- bash completion ------------------------------------------------------------------
complete_words() {   # complete_words WORD... : the completions of the last word
    bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _hintsim
             printf "%s\n" "${COMPREPLY[@]}"' _ "$comp" "$@"
}
got=$(complete_words "$hs" "")
for c in $top; do grep -qx "$c" <<<"$got" || fail "completion: no command $c"; done
ok
got=$(complete_words "$hs" trace "")
for c in info validate convert gen; do grep -qx "$c" <<<"$got" || fail "completion: trace $c"; done
for l in "${leaves[@]}"; do
    got=$(complete_words "$hs" $l --)
    for o in $(longopts "$hs" $l); do
        grep -qx -- "$o" <<<"$got" || fail "completion: hintsim $l lacks $o"
    done
done
got=$(complete_words "$hs" model x.hst --profile "")
check grep -qx generic <<<"$got"
got=$(complete_words "$hs" model x.hst -p "")
check grep -qx seed000 <<<"$got"
got=$(complete_words "$hs" trace gen --workload "")
check grep -qx kv <<<"$got"
got=$(complete_words "$hs" model x.hst --mode "")
check test "$(sort <<<"$got" | tr '\n' ' ')" = "closed open "
got=$(complete_words "$hs" recommend x.hst --en)
check test "$got" = --engine

echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
