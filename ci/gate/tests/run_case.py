#!/usr/bin/env python3
"""Runs one case of cases.json: the gate on fixtures, then checks the exit code and gate.json.

  run_case.py CASE_NAME      (CTest runs one test per case; see ci/CMakeLists.txt)
The gate runs as `python3 -m torchplace.gate` with the PYTHONPATH given (CTest: reports/).
Exits 0 when every check holds, 1 with the failed checks listed otherwise.
"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "fixtures")
GATE = ["-m", "torchplace.gate"]


def load_case(name):
    with open(os.path.join(HERE, "cases.json"), encoding="utf-8") as handle:
        cases = {case["name"]: case for case in json.load(handle)["cases"]}
    if name not in cases:
        sys.exit(f"run_case: no case {name!r} in cases.json")
    return cases[name]


def gate_args(case, out_dir):
    args = [
        arg if arg.startswith("--") or "=" in arg else os.path.join(FIXTURES, arg)
        for arg in case["args"]
    ]
    if "--baseline" in args and "--policy" not in args:
        args += ["--policy", os.path.join(FIXTURES, "speed", "policy.json")]
    return args + ([] if case.get("no_report") else ["--out", out_dir])


def report_failures(case, verdict):
    """The checks of gate.json that do not hold, as text."""
    failures = []
    rows = {row["name"]: row for row in (verdict["speed"] or {}).get("benchmarks", [])}
    for name, outcome in case.get("outcomes", {}).items():
        got = rows.get(name, {}).get("outcome")
        if got != outcome:
            failures.append(f"benchmark {name}: outcome {got}, expected {outcome}")
    if "kinds" in case:
        kinds = sorted(r["kind"] for r in (verdict["behaviour"] or {}).get("regressions", []))
        if kinds != sorted(case["kinds"]):
            failures.append(f"regression kinds {kinds}, expected {sorted(case['kinds'])}")
    for key, section, listing, field in (
        ("skipped_benchmarks", "speed", "skipped", "name"),
        ("skipped_cells", "behaviour", "skipped", "id"),
        ("new_cells", "behaviour", "new", "id"),
    ):
        listed = [row[field] for row in (verdict[section] or {}).get(listing, [])]
        failures += [
            f"{key}: {name} not listed" for name in case.get(key, []) if name not in listed
        ]
    if "compared" in case and (verdict["behaviour"] or {}).get("compared") != case["compared"]:
        failures.append(
            f"compared {(verdict['behaviour'] or {}).get('compared')} cells, "
            f"expected {case['compared']}"
        )
    problem = case.get("problem")  # text, or a list of texts that one problem must all hold
    wanted = [problem] if isinstance(problem, str) else problem or []
    if wanted and not any(all(w in text for w in wanted) for text in verdict["problems"]):
        failures.append(f"no problem mentions {wanted!r}: {verdict['problems']}")
    if case["exit"] == 3 and not verdict["problems"]:
        failures.append("exit 3 without a problem stated in gate.json")
    return failures


def main(name):
    case = load_case(name)
    with tempfile.TemporaryDirectory(prefix="gate-case-") as out_dir:
        done = subprocess.run(
            [sys.executable, *GATE, *gate_args(case, out_dir)], capture_output=True, text=True
        )
        print(done.stdout + done.stderr)
        failures = (
            []
            if done.returncode == case["exit"]
            else [f"exit code {done.returncode}, expected {case['exit']}"]
        )
        if "Traceback (most recent call last)" in done.stdout + done.stderr:
            failures.append("a Python traceback reached the user")
        written = [
            f for f in ("gate.json", "summary.md") if os.path.exists(os.path.join(out_dir, f))
        ]
        if not case.get("no_report") and len(written) < 2:
            failures.append(f"--out holds only {written}: a verdict must always be written")
        elif not case.get("no_report"):
            with open(os.path.join(out_dir, "gate.json"), encoding="utf-8") as handle:
                failures += report_failures(case, json.load(handle))
    for failure in failures:
        print(f"FAIL {name}: {failure}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
