"""Small checks and edits of Google Benchmark JSON for the shell (torchplace.command,
ci/workflows/judge_run.sh):

  python3 -m torchplace.bench_json merge WHOLE REST   appends REST's benchmarks to WHOLE, or makes
                                                      WHOLE from REST alone; WHOLE is replaced
                                                      atomically. exit 0 merged, 3 bad input
  python3 -m torchplace.bench_json is-json FILE       exit 0 when FILE parses as JSON, 3 otherwise
  python3 -m torchplace.bench_json errors FILE        prints each benchmark's real error (planned
                                                      "skip: ..." ones left out), or why FILE
                                                      cannot be read, one a line; exit 0
Bad arguments: exit 64.
"""
from __future__ import annotations

import json
import os
import sys
from typing import List

from torchplace import schema


def merge(whole: str, rest: str) -> None:
    """WHOLE's benchmarks then REST's, written over WHOLE atomically."""
    with open(rest) as handle:
        merged = json.load(handle)
    if os.path.exists(whole):
        with open(whole) as handle:
            first = json.load(handle)
        merged = dict(first, benchmarks=first["benchmarks"] + merged["benchmarks"])
    schema.write_atomically(whole, json.dumps(merged, indent=1))


def errors(path: str) -> List[str]:
    """Real benchmark errors, read as the report and the gate read them; an unreadable file is
    one line naming the problem."""
    try:
        groups = schema.iteration_groups(schema.load_benchmarks(path), path)
    except schema.InputError as error:
        return [str(error)]
    return [
        f"{name}: {group['error'] or 'error without a message'}"
        for name, group in groups.items()
        if group["error"] is not None
    ]


def is_json(path: str) -> bool:
    try:
        with open(path, encoding="utf-8") as handle:
            json.load(handle)
    except (OSError, ValueError):
        return False
    return True


def main(argv: List[str]) -> int:
    command, args = (argv[0], argv[1:]) if argv else ("", [])
    if (command, len(args)) == ("merge", 2):
        try:
            merge(*args)
        except (OSError, ValueError, KeyError, TypeError) as error:
            print(f"bench_json: cannot merge {args[1]} into {args[0]}: {error}", file=sys.stderr)
            return schema.EXIT_INPUT
        return schema.EXIT_OK
    if (command, len(args)) == ("is-json", 1):
        return schema.EXIT_OK if is_json(args[0]) else schema.EXIT_INPUT
    if (command, len(args)) == ("errors", 1):
        for line in errors(args[0]):
            print(line)
        return schema.EXIT_OK
    print(__doc__, file=sys.stderr)
    return schema.EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
