"""Records one step of a run into OUT/run.json (schema torchplace.run/1): the one file that says
what `ci/torchplace run` and a version-matrix column did, step by step, for the tools that read
it (torchplace.matrix.merge). Each call merges one step into the file, atomically:

  python3 -m torchplace.run_record OUT/run.json STEP status=VALUE [KEY=VALUE ...]
  python3 -m torchplace.run_record --status OUT/run.json STEP...  (prints each step's status,
                                                                    or "absent", on one line)
  python3 -m torchplace.run_record --outcome OUT/run.json STATUS   (CI's verdict on a run that
                                                                    exited STATUS: see outcome)

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


# The outcome step: what `torchplace run` decided from its steps, once (decide), and what CI reads
# (verdict) instead of working it out again. status: passed (exit 0), cells_failed (exit 1 for
# failed cells only: the behaviour gate judges them), cut (exit 5: the budget ran out) or failed
# (problems says why).
OUTCOME = "outcome"


def problems_of(doc: dict, run_dir: str) -> "list[str]":
    """Why a run that exited 1 failed beyond its cells: a crashed or silent scenario binary, a
    benchmark step that did not run cleanly, a report step that failed or wrote no page."""
    steps = doc["steps"]

    def status(step: str) -> str:
        return steps.get(step, {}).get("status", "absent")

    found = []
    if status("scenarios") not in ("ok", "cells_failed"):
        found.append(
            f"the scenarios step is '{status('scenarios')}' (the binary crashed or wrote no "
            "results)"
        )
    if status("bench") != "ran":
        found.append(
            f"the bench step is '{status('bench')}': the benchmarks failed, crashed or did not run"
        )
    elif not os.path.isfile(os.path.join(run_dir, "bench.json")):
        found.append("the bench step ran, but there is no bench.json")
    if status("report") != "ok":
        found.append(
            f"the report step is '{status('report')}' (rerun: ci/torchplace report {run_dir})"
        )
    elif not os.path.isfile(os.path.join(run_dir, "index.html")):
        found.append(
            "no index.html although the report step is ok (no Python with matplotlib here?); "
            f"rerun: ci/torchplace report {run_dir}"
        )
    for name, step in steps.items():  # the GPU run's other steps, and any cut by the budget
        if name not in ("scenarios", "bench", "report", OUTCOME) and step["status"] not in (
            "ok",
            "ran",
            "absent",
            "compiled",
        ):
            found.append(f"the {name} step is '{step['status']}'")
    return found


def decide(path: str, run_dir: str, exit_code: int) -> dict:
    """Records the run's outcome (step "outcome") from its exit code and its steps; returns it."""
    if exit_code == schema.EXIT_OK:
        fields = {"status": "passed", "exit": exit_code}
    elif exit_code == schema.EXIT_FAIL:
        found = problems_of(schema.load_run(path), run_dir)
        fields = {"status": "failed" if found else "cells_failed", "exit": exit_code}
        if found:
            fields["problems"] = "; ".join(found)
    elif exit_code == schema.EXIT_BUDGET:
        steps = schema.load_run(path)["steps"]
        unfinished = [name for name, step in steps.items() if step["status"] in ("cut", "not_run")]
        problem = f"the budget ran out: {', '.join(unfinished) or 'no step'} cut or not run"
        fields = {"status": "cut", "exit": exit_code, "problems": problem}
    else:
        meaning = "3 environment or input, 4 build, 64 bad arguments"
        problem = f"exit {exit_code} ({meaning})"
        fields = {"status": "failed", "exit": exit_code, "problems": problem}
    record(path, OUTCOME, fields)
    return fields


def verdict(path: str, status: str) -> "tuple[int, str]":
    """CI's exit code for a run that exited `status`, read from its recorded outcome: 0 passed
    or only cells failed (the gate judged them), 1 anything else failed, the run's own code for
    3, 4, 5 or 64; 3 when the run did not finish, or its record is missing, unreadable or of
    another exit."""
    if not re.fullmatch(r"[0-9]+", status):
        return schema.EXIT_ENV, f"no exit code ('{status}'): the run did not finish"
    try:
        outcome = schema.load_run(path)["steps"].get(OUTCOME)
    except schema.InputError as error:
        return schema.EXIT_ENV, f"{error}: what the run did is unknown"
    if outcome is None or outcome.get("exit") != int(status):
        return schema.EXIT_ENV, f"{path} records no outcome of a run that exited {status}"
    said = outcome.get("problems", outcome["status"])
    if outcome["status"] == "passed":
        return schema.EXIT_OK, "the run passed"
    if outcome["status"] == "cells_failed":
        return schema.EXIT_OK, "exit 1 for failed cells only; the behaviour gate judged them"
    return (int(status) if int(status) != schema.EXIT_OK else schema.EXIT_FAIL), said


def main(argv: List[str]) -> int:
    if len(argv) == 4 and argv[1] == "--outcome":  # --outcome RUN_JSON STATUS: CI's verdict
        code, said = verdict(argv[2], argv[3])
        print(f"torchplace: run outcome: {said}", file=sys.stderr)
        return code
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
