#!/usr/bin/env python3
"""test_param_count.py - no function defined or declared in model/ (profiles, the engine,
predictions, recommend) or sim/ (the SimGrid engine) takes more than 6 parameters (STYLE.md: a context struct instead of
a long parameter list).

    test_param_count.py SOURCE_DIR [MAX [DIR|FILE...]]

Scans every .c and .h file under SOURCE_DIR/model unless paths (relative to SOURCE_DIR) are
given; prints every function over the limit (file:line name count) and exits 1 if any."""
import os
import re
import sys

# a function's name and its parameter list, up to the first ';' or '{' after it
FUNC = re.compile(r'^[A-Za-z_][\w \t\*]*?\b([A-Za-z_]\w*)\s*\(([^;{}]*?)\)\s*[{;]',
                  re.MULTILINE | re.DOTALL)
# a function pointer (a member of an ops table, a typedef): its name and parameter list
FPTR = re.compile(r'\(\s*\*\s*([A-Za-z_]\w*)\s*\)\s*\(([^;{}()]*(?:\([^;{}()]*\)[^;{}()]*)*)\)\s*[;,=)]',
                  re.MULTILINE | re.DOTALL)
SKIP = {'if', 'while', 'for', 'switch', 'return', 'sizeof', 'defined'}


def strip(text):
    """Comments and string literals blanked (newlines kept, for line numbers)."""
    def blank(m):
        return re.sub(r'[^\n]', ' ', m.group(0))
    text = re.sub(r'/\*.*?\*/', blank, text, flags=re.DOTALL)
    text = re.sub(r'//[^\n]*', blank, text)
    text = re.sub(r'"(?:\\.|[^"\\\n])*"', blank, text)
    text = re.sub(r'__attribute__\s*\(\(.*?\)\)', blank, text)
    return re.sub(r'^\s*#[^\n]*(?:\\\n[^\n]*)*', blank, text, flags=re.MULTILINE)


def nparams(plist):
    """Top-level commas of a parameter list + 1; 0 for '' and 'void'."""
    p = plist.strip()
    if p in ('', 'void'):
        return 0
    depth, n = 0, 1
    for ch in p:
        if ch in '([':
            depth += 1
        elif ch in ')]':
            depth -= 1
        elif ch == ',' and depth == 0:
            n += 1
    return n


def sources(src, paths):
    """Every .c and .h file under the given paths (files or directories)."""
    for rel in paths:
        p = os.path.join(src, rel)
        if os.path.isfile(p):
            yield p
            continue
        for dirpath, _, files in sorted(os.walk(p)):
            for f in sorted(files):
                if f.endswith(('.c', '.h')):
                    yield os.path.join(dirpath, f)


def main():
    src = sys.argv[1]
    limit = int(sys.argv[2]) if len(sys.argv) > 2 else 6
    paths = sys.argv[3:] or ['model']
    over, seen = [], 0
    for path in sources(src, paths):
        with open(path, encoding='utf-8') as fh:
            text = strip(fh.read())
        for m in list(FUNC.finditer(text)) + list(FPTR.finditer(text)):
            if m.group(1) in SKIP:
                continue
            seen += 1
            n = nparams(m.group(2))
            if n > limit:
                line = text.count('\n', 0, m.start(1)) + 1
                over.append(f'{os.path.relpath(path, src)}:{line} {m.group(1)} {n}')
    for o in over:
        print(o)
    print(f'test_param_count: {seen} functions in {" ".join(paths)}, {len(over)} over '
          f'{limit} parameters')
    if seen < 50:
        print('test_param_count: too few functions found: the scan is broken')
        return 1
    return 1 if over else 0


if __name__ == '__main__':
    sys.exit(main())
