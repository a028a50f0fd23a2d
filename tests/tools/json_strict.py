#!/usr/bin/env python3
"""json_strict.py [--lines] FILE|-: parse JSON the strict way a careful
consumer would: a duplicate key in an object (parsers keep only the last),
NaN or an infinity (not JSON at all) is an error. --lines: JSON Lines, one
document a line. Prints "ok N" (documents) or one line naming the first
problem and exits 1."""
import json
import sys


def no_dups(pairs):
    seen = set()
    for k, _ in pairs:
        if k in seen:
            raise ValueError(f"duplicate key {k!r}")
        seen.add(k)
    return dict(pairs)


def no_constant(c):
    raise ValueError(f"non-finite number {c}")


def main():
    args = sys.argv[1:]
    lines = bool(args) and args[0] == "--lines"
    if lines:
        args = args[1:]
    if len(args) != 1:
        print("usage: json_strict.py [--lines] FILE|-")
        return 2
    data = sys.stdin.read() if args[0] == "-" else open(args[0], encoding="utf-8").read()
    docs = [l for l in data.split("\n") if l.strip()] if lines else [data]
    if not docs or not data.strip():
        print("no JSON at all")
        return 1
    for i, d in enumerate(docs, 1):
        try:
            json.loads(d, object_pairs_hook=no_dups, parse_constant=no_constant)
        except ValueError as e:
            print(f"document {i}: {e}: {d[:160]}")
            return 1
    print(f"ok {len(docs)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
