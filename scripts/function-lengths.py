#!/usr/bin/env python3
"""Lists Rust functions longer than a limit, to keep functions short.

    scripts/function-lengths.py [--over N] [--fail-over M] DIR...

Prints every function (test modules included) longer than N lines (default 80), longest
first, and a count of those over N and over M (default 100); exits 1 when any is over M
and --fail-over is given. A function runs from its `fn` line to the line of its closing
brace; braces inside strings, chars and comments are skipped.
"""
import argparse
import os
import re
import sys

FN = re.compile(r'^\s*(pub(\([^)]*\))?\s+)?(const\s+)?(async\s+)?(unsafe\s+)?(extern\s+"[^"]*"\s+)?fn\s+(\w+)')


def strip(line, in_block):
    """The line without strings, chars and comments; whether a block comment is open."""
    out, i, n = [], 0, len(line)
    while i < n:
        if in_block:
            j = line.find('*/', i)
            if j < 0:
                return ''.join(out), True
            i, in_block = j + 2, False
            continue
        c = line[i]
        if line.startswith('//', i):
            break
        if line.startswith('/*', i):
            in_block, i = True, i + 2
            continue
        if c == '"' or (c == 'r' and re.match(r'r#*"', line[i:])):
            m = re.match(r'r(#*)"', line[i:])
            if m:
                end = '"' + m.group(1)
                j = line.find(end, i + len(m.group(0)))
                i = n if j < 0 else j + len(end)
                continue
            i += 1
            while i < n and line[i] != '"':
                i += 2 if line[i] == '\\' else 1
            i += 1
            continue
        if c == "'":
            m = re.match(r"'(\\.|[^\\'])'", line[i:]) or re.match(r"'\\u\{[0-9a-fA-F]+\}'", line[i:])
            if m:
                i += len(m.group(0))
                continue
        out.append(c)
        i += 1
    return ''.join(out), in_block


def functions(path):
    lines = open(path, encoding='utf-8').read().split('\n')
    found, stack, depth, in_block = [], [], 0, False
    nest = 0  # ( and [ open in a signature: a `;` there (`[i64; 4]`) ends nothing
    for no, raw in enumerate(lines, 1):
        code, in_block = strip(raw, in_block)
        m = FN.match(code)
        if m:
            stack.append((m.group(7), no, depth, False))
        for ch in code:
            if ch in '([':
                nest += 1
            elif ch in ')]':
                nest = max(0, nest - 1)
            if ch == '{':
                depth += 1
                if stack and not stack[-1][3] and depth == stack[-1][2] + 1:
                    name, start, d, _ = stack[-1]
                    stack[-1] = (name, start, d, True)
            elif ch == '}':
                depth -= 1
                if stack and stack[-1][3] and depth == stack[-1][2]:
                    name, start, _, _ = stack.pop()
                    found.append((no - start + 1, path, start, name))
            elif ch == ';' and nest == 0 and stack and not stack[-1][3] and depth == stack[-1][2]:
                stack.pop()  # a declaration without a body
    return found


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--over', type=int, default=80)
    ap.add_argument('--fail-over', type=int, default=None)
    ap.add_argument('dirs', nargs='+')
    a = ap.parse_args()
    limit = a.fail_over if a.fail_over is not None else 100
    found = []
    for d in a.dirs:
        for root, _, files in os.walk(d):
            for f in sorted(files):
                if f.endswith('.rs'):
                    found.extend(functions(os.path.join(root, f)))
    long = sorted((f for f in found if f[0] > a.over), reverse=True)
    for n, path, start, name in long:
        print(f'{n:5} {path}:{start} {name}')
    over_limit = sum(1 for f in found if f[0] > limit)
    print(f'{len(long)} functions over {a.over} lines, {over_limit} over {limit}')
    if a.fail_over is not None and over_limit:
        sys.exit(1)


if __name__ == '__main__':
    main()
