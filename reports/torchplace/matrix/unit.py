"""The harness's unit tests on each version of the matrix (ci/matrix/build_and_run.sh runs
torchplace_harness_tests after the scenarios): the sim's rules, the fixes, the judge and the
runner, which the scenario cells alone never exercise on a newer LibTorch.

A column's `unit` entry in matrix.json: status ok (every test ran and passed, at least one ran),
failed (a test failed, the binary exited non-zero, or its gtest report is missing or unreadable)
or absent (no unit step: not built, or a column written before the step existed), with the number
of tests that ran and the names of those that failed. The gate fails a column that ran whose unit
entry is not ok (rule `unit`): never a pass on what was not run.
"""
from __future__ import annotations

import json
import os
from typing import Dict, List

from torchplace.schema import JsonObject

REPORT = "unit.json"  # gtest's --gtest_output=json report, in the column's folder
SHOWN = 10  # failing tests a gate failure names; matrix.json keeps them all


def _report(path: str) -> JsonObject:
    """(ran, failed names) from a gtest JSON report; ValueError when it is not one."""
    with open(path, encoding="utf-8") as handle:
        data = json.load(handle)
    if not isinstance(data, dict) or not isinstance(data.get("testsuites"), list):
        raise ValueError("not a gtest report (no testsuites list)")
    ran, failed = 0, []
    for suite in data["testsuites"]:
        for test in suite.get("testsuite", []):
            if test.get("result") == "SKIPPED" or test.get("status") == "NOTRUN":
                continue
            ran += 1
            if test.get("failures"):
                failed.append(f"{suite.get('name')}.{test.get('name')}")
    return {"ran": ran, "failed": failed}


def column_unit(column_dir: str, steps: Dict[str, JsonObject]) -> JsonObject:
    """The column's unit entry, from its run.json step and its gtest report."""
    step = steps.get("unit")
    if step is None or step.get("status") == "absent":
        note = (step or {}).get("note") or "run.json records no unit step"
        return {"status": "absent", "note": note}
    path = os.path.join(column_dir, REPORT)
    try:
        found = _report(path)
    except (OSError, ValueError) as error:  # json.JSONDecodeError is a ValueError
        note = f"no readable gtest report ({REPORT}: {error}); the binary exited {step.get('exit')}"
        return {"status": "failed", "ran": 0, "failed": [], "note": note}
    passed = found["ran"] and not found["failed"]
    ok = step.get("status") == "ok" and step.get("exit") == 0 and passed
    entry: JsonObject = {"status": "ok" if ok else "failed", **found}
    if not ok and not found["failed"]:
        entry["note"] = (
            f"no test ran ({REPORT})"
            if not found["ran"]
            else f"the binary exited {step.get('exit')} with every test passing"
        )
    return entry


def unit_failures(versions: List[JsonObject]) -> List[JsonObject]:
    """The gate's `unit` rule: each column that ran (ok) whose unit tests are not ok."""
    found = []
    for column in versions:
        unit = column.get("unit") or {"status": "absent", "note": "matrix.json records no unit"}
        if column["status"] != "ok" or unit["status"] == "ok":
            continue
        failed = unit.get("failed") or []
        names = ", ".join(failed[:SHOWN]) + (
            f" and {len(failed) - SHOWN} more" if len(failed) > SHOWN else ""
        )
        found.append(
            {
                "id": f"<{column['version']} unit tests>",
                "kind": "unit",
                "status": unit["status"],
                "detail": f"failed: {names}" if failed else unit.get("note", ""),
            }
        )
    return found
