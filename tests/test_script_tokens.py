#!/usr/bin/env python3
"""test_script_tokens.py SRC - every token a shell script of the tree gives hintsim
(`HINTSIM_TOKEN=VALUE`, `--token VALUE`) as a literal has CAP_TOKEN_MIN to CAP_TOKEN_MAX
characters (capture/cap_proto.h), as cap_token_from_text requires: a shorter one fails only once the script runs, in the
soft-RoCE VM at the end of CI (bench_truth.sh's did). Values taken from a variable ($X) are
the scripts' own business and skipped.
"""
import pathlib
import re
import sys

TOKEN = re.compile(r"""(?:HINTSIM_TOKEN=|--token[ =])(["']?)([^\s"'#;)]+)\1""")


def limit(src, name):
    """CAP_TOKEN_MIN / CAP_TOKEN_MAX as capture/cap_proto.h defines them."""
    text = (src / "capture" / "cap_proto.h").read_text()
    m = re.search(rf"#define {name} (\d+)", text)
    if not m:
        sys.exit(f"capture/cap_proto.h: no #define {name}")
    return int(m.group(1))


def main():
    src = pathlib.Path(sys.argv[1])
    lo, hi = limit(src, "CAP_TOKEN_MIN"), limit(src, "CAP_TOKEN_MAX")
    bad, seen = [], 0
    for path in sorted(src.rglob("*.sh")):
        if any(part.startswith("build") or part == ".git" for part in path.parts):
            continue
        for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            for m in TOKEN.finditer(line):
                value = m.group(2)
                if "$" in value:
                    continue
                seen += 1
                if not lo <= len(value) <= hi:
                    bad.append(f"{path.relative_to(src)}:{n}: token '{value}' has "
                               f"{len(value)} characters, not {lo}..{hi}")
    if bad:
        sys.exit("\n".join(bad))
    if seen == 0:
        sys.exit("no literal token found in any script: the pattern no longer matches them")
    print(f"{seen} literal tokens in scripts, each {lo}..{hi} characters")


if __name__ == "__main__":
    main()
