#!/usr/bin/env python3
"""Appends REST's benchmarks to WHOLE (Google Benchmark JSON), or makes WHOLE from REST alone;
WHOLE is replaced atomically. usage: merge_bench.py WHOLE REST   exit: 0 merged, 3 bad input"""
import json
import os
import sys


def main(whole, rest):
    with open(rest) as handle:
        merged = json.load(handle)
    if os.path.exists(whole):
        with open(whole) as handle:
            first = json.load(handle)
        merged = dict(first, benchmarks=first["benchmarks"] + merged["benchmarks"])
    with open(whole + ".new", "w") as handle:
        json.dump(merged, handle, indent=1)
    os.replace(whole + ".new", whole)
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        sys.exit(64)
    try:
        sys.exit(main(sys.argv[1], sys.argv[2]))
    except (OSError, ValueError, KeyError, TypeError) as error:
        print(f"merge_bench.py: cannot merge {sys.argv[2]} into {sys.argv[1]}: {error}", file=sys.stderr)
        sys.exit(3)
