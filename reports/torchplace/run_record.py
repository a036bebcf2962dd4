"""Records one step of a run into OUT/run.json (schema torchplace.run/1): the one file that says
what `ci/torchplace run` and a version-matrix column did, step by step, for the tools that read
it (torchplace.matrix.merge). Each call merges one step into the file, atomically:

  python3 -m torchplace.run_record OUT/run.json STEP status=VALUE [KEY=VALUE ...]
  python3 -m torchplace.run_record --status OUT/run.json STEP...  (prints each step's status,
                                                                    or "absent", on one line)

Values that are whole or decimal numbers are stored as numbers, true/false as booleans, the rest
as strings. Steps: prepare (matrix roots), build, scenarios, bench, probe, report; each has a
status (scenarios: ok | cells_failed | crashed | no_results; build: ok | failed | compiled;
bench: ran | failed | absent) and, where timed, seconds.

exit: 0 recorded (or printed), 3 the existing file is not a run record (left as it is; --status:
missing too), 64 bad arguments
"""
from __future__ import annotations

import json
import os
import re
import sys
from typing import Any, Dict, Iterable, List, Union

from torchplace import schema

STEP = re.compile(r"[a-z][a-z0-9_]*")
KEY = re.compile(r"[a-z][a-z0-9_]*")


def value_of(text: str) -> Union[int, float, bool, str]:
    if re.fullmatch(r"-?\d+", text):
        return int(text)
    if re.fullmatch(r"-?\d+\.\d+", text):
        return float(text)
    return {"true": True, "false": False}.get(text, text)


def parse_fields(pairs: Iterable[str]) -> Dict[str, Any]:
    """KEY=VALUE strings into a dict; ValueError names the first bad one."""
    fields: Dict[str, Any] = {}
    for pair in pairs:
        key, equals, text = pair.partition("=")
        if not equals or not KEY.fullmatch(key):
            raise ValueError(f"expected KEY=VALUE with a lower-case key, got {pair!r}")
        fields[key] = value_of(text)
    if "status" not in fields:
        raise ValueError("a step needs status=VALUE")
    return fields


def record(path: str, step: str, fields: Dict[str, Any]) -> None:
    """Merges `step` into the run record at `path` (created when absent)."""
    doc = (
        schema.load_run(path)
        if os.path.exists(path)
        else {"schema": schema.RUN_SCHEMA, "steps": {}}
    )
    doc["steps"][step] = fields
    schema.write_atomically(path, json.dumps(doc, indent=1) + "\n")


def step_status(path: str, step: str) -> str:
    """A step's status in the run record at `path`, "absent" when it has none; InputError when
    the record is missing or malformed."""
    return schema.load_run(path)["steps"].get(step, {}).get("status", "absent")


def main(argv: List[str]) -> int:
    if len(argv) >= 4 and argv[1] == "--status":  # --status RUN_JSON STEP...: their statuses
        try:
            print(" ".join(step_status(argv[2], step) for step in argv[3:]))
        except schema.InputError as error:
            print(f"torchplace: run_record: {error}", file=sys.stderr)
            return schema.EXIT_INPUT
        return schema.EXIT_OK
    if len(argv) < 4 or not STEP.fullmatch(argv[2]):
        print(__doc__, file=sys.stderr)
        return schema.EXIT_USAGE
    try:
        fields = parse_fields(argv[3:])
    except ValueError as error:
        print(f"torchplace: run_record: {error}", file=sys.stderr)
        return schema.EXIT_USAGE
    try:
        record(argv[1], argv[2], fields)
    except schema.InputError as error:
        print(f"torchplace: run_record: {error}", file=sys.stderr)
        return schema.EXIT_INPUT
    return schema.EXIT_OK


if __name__ == "__main__":
    sys.exit(main(sys.argv))
