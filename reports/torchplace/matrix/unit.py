"""The harness's unit tests on each version of the matrix (ci/matrix/build_and_run.sh runs
torchplace_harness_tests after the scenarios): the sim's rules, the fixes, the judge and the
runner, which the scenario cells alone never exercise on a newer LibTorch.

A column's `unit` entry in matrix.json: status ok (every test in its report passed or skipped, at
least one ran, the binary exited 0), failed (anything else: a failed test, a non-zero exit, a
report missing, malformed or contradicting itself) or absent (no unit step), with `tests`, each
test's pass, fail or skip, and the names of those that failed. The gate's rule `unit` fails a
column that ran whose entry is not ok, and a test that passed on a version and is skipped or gone
on the next one (a skip holds nothing, as for the cells). A malformed entry is exit 3.
"""
from __future__ import annotations

import json
import os
from typing import Dict, List, Optional, Tuple

from torchplace.schema import InputError, JsonObject

REPORT = "unit.json"  # gtest's --gtest_output=json report, in the column's folder
SHOWN = 10  # failing tests a gate failure names; matrix.json keeps them all
UNIT_STATUSES = ("ok", "failed", "absent")


def _test_status(test: object) -> str:
    """pass, fail or skip for one test of gtest's report; ValueError for anything else."""
    if not isinstance(test, dict) or not isinstance(test.get("name"), str):
        raise ValueError(f"a test entry that is not gtest's: {str(test)[:80]}")
    if test.get("failures"):
        return "fail"
    if test.get("status") == "NOTRUN" or test.get("result") == "SKIPPED":
        return "skip"  # DISABLED_ or GTEST_SKIP
    if test.get("status") == "RUN" and test.get("result") == "COMPLETED":
        return "pass"
    raise ValueError(
        f"test {test['name']}: status {test.get('status')!r}, result {test.get('result')!r}"
    )


def _report(path: str) -> Dict[str, str]:
    """Each test's status ('Suite.Name' -> pass, fail or skip) from a gtest JSON report;
    ValueError when it is not one, or its failure counts disagree with its tests."""
    with open(path, encoding="utf-8") as handle:
        data = json.load(handle)
    if not isinstance(data, dict) or not isinstance(data.get("testsuites"), list):
        raise ValueError("not a gtest report (no testsuites list)")
    tests: Dict[str, str] = {}
    for suite in data["testsuites"]:
        if not isinstance(suite, dict) or not isinstance(suite.get("testsuite"), list):
            raise ValueError(f"a suite without its list of tests: {str(suite)[:80]}")
        statuses = [_test_status(test) for test in suite["testsuite"]]
        if suite.get("failures", statuses.count("fail")) != statuses.count("fail"):
            raise ValueError(f"suite {suite.get('name')} counts failures it does not list")
        for test, status in zip(suite["testsuite"], statuses):
            tests[f"{suite.get('name')}.{test['name']}"] = status
    failed = sum(status == "fail" for status in tests.values())
    counted = data.get("failures", failed)
    if counted != failed:
        raise ValueError(f"it counts {counted} failure(s) and lists {failed}")
    return tests


def _failed_entry(note: str) -> JsonObject:
    return {"status": "failed", "ran": 0, "failed": [], "tests": {}, "note": note}


def column_unit(column_dir: str, steps: Dict[str, JsonObject]) -> JsonObject:
    """The column's unit entry, from its run.json step and its gtest report."""
    step = steps.get("unit")
    if step is None or step.get("status") == "absent":
        note = (step or {}).get("note") or "run.json records no unit step"
        return {"status": "absent", "note": note}
    exit_code = step.get("exit")
    ended = "timed out (900 s)" if exit_code == 124 else f"exited {exit_code}"
    try:
        tests = _report(os.path.join(column_dir, REPORT))
    except (OSError, ValueError) as error:  # json.JSONDecodeError is a ValueError
        return _failed_entry(f"no readable gtest report ({REPORT}: {error}); the binary {ended}")
    failed = sorted(name for name, status in tests.items() if status == "fail")
    ran = sum(status != "skip" for status in tests.values())
    ok = step.get("status") == "ok" and exit_code == 0 and ran and not failed
    entry: JsonObject = {"status": "ok" if ok else "failed", "ran": ran, "failed": failed}
    entry["tests"] = tests
    if not ok and not failed:
        entry["note"] = (
            f"no test ran ({REPORT})"
            if not ran
            else f"the binary {ended} though no test in its report failed"
        )
    return entry


def check_units(versions: List[JsonObject], path: str) -> None:
    """InputError for a unit entry the rule cannot judge: not a dict, an unknown status, names
    that are not strings, or an ok that ran nothing or names a failure."""
    for index, column in enumerate(versions):
        unit = column.get("unit")
        if unit is None:
            continue  # no unit: failed by the rule, when the column ran
        where = f"{path}: versions[{index}].unit"
        if not isinstance(unit, dict) or unit.get("status") not in UNIT_STATUSES:
            raise InputError(f"{where}: not a unit entry with a status in {UNIT_STATUSES}")
        failed, tests = unit.get("failed", []), unit.get("tests", {})
        if not isinstance(failed, list) or not all(isinstance(n, str) for n in failed):
            raise InputError(f"{where}: failed is not a list of test names")
        if not isinstance(tests, dict):
            raise InputError(f"{where}: tests is not a map of test names to statuses")
        ran = unit.get("ran")
        if unit["status"] == "ok" and (not isinstance(ran, int) or ran < 1 or failed):
            raise InputError(f"{where}: ok, but ran {ran!r} test(s) and names {failed}")


def _names(failed: List[str]) -> str:
    more = f" and {len(failed) - SHOWN} more" if len(failed) > SHOWN else ""
    return ", ".join(failed[:SHOWN]) + more


def unit_failures(versions: List[JsonObject]) -> List[JsonObject]:
    """The gate's `unit` rule: each column that ran (ok) whose unit tests are not ok, and each
    test that passed on a column and is skipped or gone on the next column that ran."""
    found: List[JsonObject] = []
    before: Optional[Tuple[str, Dict[str, str]]] = None  # the last ok column: version, tests
    for column in versions:
        unit = column.get("unit") or {"status": "absent", "note": "matrix.json records no unit"}
        if column["status"] != "ok":
            continue
        failure = {"id": f"<{column['version']} unit tests>", "kind": "unit"}
        if unit["status"] != "ok":
            failed = unit.get("failed") or []
            detail = f"failed: {_names(failed)}" if failed else unit.get("note", "")
            found.append({**failure, "status": unit["status"], "detail": detail})
        elif before is not None:
            held = [n for n, s in before[1].items() if s == "pass"]
            lost = [n for n in held if unit.get("tests", {}).get(n) not in ("pass", "fail")]
            if lost:
                detail = f"passed on {before[0]}, skipped or gone here: {_names(lost)}"
                found.append({**failure, "status": "skipped", "detail": detail})
        if unit["status"] == "ok":
            before = (column["version"], unit.get("tests", {}))
    return found
