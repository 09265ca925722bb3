#!/usr/bin/env python3
"""test_eval_source.py HINTSIM LIST SRC - the evaluators' source id that `hintsim version`
prints (part of every sweep point's key) is the hash of the sources the build lists, as they
are now, and that list covers every directory an evaluator is built from.

Recomputed here the way sweep/eval_source.cmake defines it: SHA-256 over "<path> <SHA-256 of
the file>\\n" lines in path order, first 16 hex digits. A build that kept an old id after a
model change (the id not regenerated, or a directory left out) fails here.
"""
import hashlib
import json
import subprocess
import sys


def main():
    hintsim, listing, src = sys.argv[1:4]
    with open(listing, encoding="utf-8") as f:
        files = sorted(line for line in f.read().split("\n") if line)
    for prefix in ("common/", "traces/", "model/", "sim/", "sweep/sweep_eval"):
        if not any(p.startswith(prefix) for p in files):
            sys.exit(f"{listing}: no source under {prefix}: the id would miss its changes")
    acc = ""
    for p in files:
        with open(f"{src}/{p}", "rb") as f:
            acc += f"{p} {hashlib.sha256(f.read()).hexdigest()}\n"
    want = hashlib.sha256(acc.encode()).hexdigest()[:16]
    out = subprocess.run([hintsim, "version", "--json"], check=True, capture_output=True,
                         text=True).stdout
    got = json.loads(out)["evaluator_source"]
    if got != want:
        sys.exit(f"hintsim version says evaluator_source {got}; the {len(files)} sources "
                 f"listed in {listing} hash to {want}")
    print(f"evaluator_source {got}: {len(files)} sources")


if __name__ == "__main__":
    main()
