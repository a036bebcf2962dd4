"""Merges the version matrix's columns (OUT/<version>/, written by ci/matrix/build_and_run.sh)
into OUT/matrix.json (schema torchplace.matrix/1) and a plain-text summary OUT/matrix.md.

A column's status comes from its run.json (schema torchplace.run/1): build_failed, compiled
(--cuda-compile), run_failed (no scenarios step or no results.json), run_crashed (the scenario
binary exited with neither 0 nor 1: a crash, a signal, or no exit recorded) or ok; an ok column
that lacks cells another column has is "run_incomplete". Crashed and incomplete columns keep
their results, so the cells they did finish still show. Each column that ran also carries the
harness unit tests' result on its version (`unit`: torchplace/matrix/unit.py).

usage: python3 -m torchplace.matrix.merge OUT VERSION[=ROOT] ... [--require-cuda-compile]
       (versions oldest first; --require-cuda-compile: OUT/cuda-2.6.0 must exist, else exit 3)
       python3 -m torchplace.matrix.merge --status COLUMN_DIR   (prints one column's status)
A bare VERSION is a column made elsewhere (ci/torchplace matrix --columns-only, another machine,
a CI job's artifact): OUT/VERSION/run.json must exist and name its root (prepare.root); the
merging host is never probed. A missing or unreadable such column is exit 3, naming it.
exit: 0 written, 64 bad arguments, 3 a column's run.json or results.json unreadable or malformed
(or a bare VERSION's column missing)
"""
from __future__ import annotations

import json
import os
import re
import sys
from typing import Dict, List, Optional, Sequence, Tuple

from torchplace import schema as data
from torchplace.matrix.summary import render
from torchplace.matrix.unit import column_unit
from torchplace.schema import JsonObject

# A column: its matrix.json entry and its results.json (None when it did not run).
Column = Tuple[JsonObject, Optional[JsonObject]]

SCHEMA = data.MATRIX_SCHEMA
CUDA_COLUMN = "cuda-2.6.0"
# The first compiler (or CMake) error of a failed build.
FIRST_ERROR = re.compile(r"(error:|CMake Error|fatal error|undefined reference)")
# What differs on every run of the same build, masked before messages are compared so that only
# wording changes show: a cell's temporary folder (harness/temp_dir.h: torchplace-<label>-<pid>-
# <mkdtemp's XXXXXX>, under any $TMPDIR, its label possibly holding "-<digits>"), anything else
# under /tmp (not a folder named tmp elsewhere), addresses, and process or thread ids.
RUN_SPECIFIC = (
    (
        re.compile(r"(?<![\w./-])(?:/tmp|/var/tmp)/(?:[^\s'\",;)\]]*/)?([^\s'\",;)\]/]*)"),
        r"<tmp>/\1",
    ),
    (
        re.compile(r"torchplace-[A-Za-z0-9_-]*?-\d+-[A-Za-z0-9]+(?![A-Za-z0-9_-])"),
        "torchplace-<tmp>",
    ),
    (re.compile(r"\b0x[0-9a-fA-F]{6,}\b"), "0x<address>"),
    (re.compile(r"\b(pid|PID|process|thread|tid)( id)?[ =:]+\d+"), r"\1\2 <id>"),
)


def comparable(value: object) -> object:
    """`value` with run-specific parts masked (a string), or `value` itself."""
    if not isinstance(value, str):
        return value
    for pattern, mask in RUN_SPECIFIC:
        value = pattern.sub(mask, value)
    return value


def read_text(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read()
    except FileNotFoundError:
        return ""


def first_error(build_log: str) -> Optional[str]:
    for line in build_log.splitlines():
        if FIRST_ERROR.search(line):
            return line.strip()
    return None


def load_run_record(column_dir: str) -> Dict[str, JsonObject]:
    """The column's run.json steps ({} when the column wrote none: it did not get to build)."""
    path = os.path.join(column_dir, "run.json")
    return data.load_run(path)["steps"] if os.path.exists(path) else {}


def column_status(steps: Dict[str, JsonObject], results_exist: bool) -> str:
    """ok, build_failed, compiled (--cuda-compile), run_failed (no results) or run_crashed (the
    scenario binary exited with neither 0 nor 1): the column's status from its run record."""
    build = steps.get("build", {}).get("status")
    if build in ("failed", "compiled"):
        return "build_failed" if build == "failed" else "compiled"
    scenarios = steps.get("scenarios")
    if build != "ok" or scenarios is None or not results_exist:
        return "run_failed"
    return "ok" if scenarios.get("exit") in (0, 1) else "run_crashed"


def recorded_root(column_dir: str, version: str) -> str:
    """The root label a column made elsewhere recorded in its run.json (prepare.root); InputError
    when the column, its run.json or the label is missing: a fan-out merge fails closed."""
    path = os.path.join(column_dir, "run.json")
    if not os.path.exists(path):
        raise data.InputError(f"column {version} is missing: {path} does not exist")
    root = data.load_run(path)["steps"].get("prepare", {}).get("root")
    if not isinstance(root, str) or not root:
        raise data.InputError(f"column {version}: {path} records no root (steps.prepare.root)")
    return root


def load_column(out_dir: str, version: str, root: Optional[str]) -> Column:
    """The version's entry of matrix.json and its results (or None when it did not run); root
    None: a column made elsewhere, its root read from its own run.json."""
    column_dir = os.path.join(out_dir, version)
    if root is None:
        root = recorded_root(column_dir, version)
    steps = load_run_record(column_dir)
    results_path = os.path.join(column_dir, "results.json")
    status = column_status(steps, os.path.exists(results_path))
    results = load_column_results(results_path) if status in ("ok", "run_crashed") else None
    # a filter or a broken registry: no evidence (status ok: its results were read)
    empty = status == "ok" and results is not None and not results["cells"]
    status = "run_incomplete" if empty else status
    prepare, build = steps.get("prepare", {}), steps.get("build", {})
    run_seconds = sum(steps.get(name, {}).get("seconds", 0) for name in ("scenarios", "bench"))
    timings = {
        "root": prepare.get("root_seconds"),
        "install": prepare.get("install_seconds"),
        "build": build.get("seconds"),
        "run": run_seconds if "scenarios" in steps else None,
    }
    bench = steps.get("bench", {})
    entry = {
        "version": version,
        "root": root,
        "status": status,
        "first_error": first_error(read_text(os.path.join(column_dir, "build.log")))
        if status in ("build_failed", "compiled")
        else None,
        "results": f"{version}/results.json" if results else None,
        "fingerprint": results["fingerprint"] if results else None,
        "timings_s": {key: value for key, value in timings.items() if value is not None},
        "root_cached": bool(prepare.get("root_cached", 0)),
        "scenarios_exit": steps.get("scenarios", {}).get("exit"),
        "problem": crash_problem(steps)
        if status == "run_crashed"
        else "the scenario binary ran no cells (results.json lists none)"
        if empty
        else None,
        "bench": bench.get("status", "absent"),
        "unit": column_unit(column_dir, steps) if results else None,
    }
    if entry["bench"] == "absent":
        entry["bench_note"] = bench.get("note", "no benchmark pass in this column")
    return entry, results


def crash_problem(steps: Dict[str, JsonObject]) -> str:
    code = steps["scenarios"].get("exit")
    if code is None:
        return "run.json's scenarios step has no exit: the scenario binary's exit is unknown"
    return (
        f"the scenario binary exited {code:g} (0 and 1 are its only verdicts; "
        f"{code - 128:g} would be the signal)"
        if code > 128
        else f"the scenario binary exited {code:g} (0 and 1 are its only verdicts)"
    )


def mark_incomplete(columns: List[Column]) -> None:
    """A column that ran but lacks cells another column has: status run_incomplete."""
    ran = [(entry, results) for entry, results in columns if results is not None]
    every = (
        set().union(*({c["id"] for c in results["cells"]} for _, results in ran)) if ran else set()
    )
    for entry, results in ran:
        missing = sorted(every - {c["id"] for c in results["cells"]})
        if missing:
            entry["status"] = "run_incomplete" if entry["status"] == "ok" else entry["status"]
            entry["missing_cells"] = missing
            entry["problem"] = entry["problem"] or (
                f"{len(missing)} cell(s) another column has are absent (first: {missing[0]})"
            )


def load_column_results(path: str) -> JsonObject:
    """A column's results.json, with every field cell_entry reads; InputError otherwise."""
    results = data.load_results(path)
    for index, cell in enumerate(results["cells"]):
        where = f"{path}: cells[{index}]"
        data.require(cell["expected"], ("outcome", "error_class"), f"{where}.expected")
        data.require(cell["observed"], ("outcome", "error_class", "message"), f"{where}.observed")
    return results


def cell_entry(cell: JsonObject) -> JsonObject:
    observed = cell["observed"]
    return {
        "status": cell["status"],
        "expected_outcome": cell["expected"]["outcome"],
        "expected_class": cell["expected"]["error_class"],
        "latent": cell["expected"].get("latent", False),  # absent before results carried it
        "category": cell["category"],  # the outcome category (torchplace.schema.CATEGORIES)
        "observed_outcome": observed["outcome"],
        "observed_class": observed["error_class"],
        "message": observed["message"],
        "reason": cell.get("reason", ""),
    }


def merge_cells(columns: List[Column]) -> List[JsonObject]:
    """columns: [(entry, results)] oldest first -> the cells list of matrix.json."""
    cells: Dict[str, JsonObject] = {}
    for entry, results in columns:
        for cell in (results or {}).get("cells", []):
            merged = cells.setdefault(
                cell["id"],
                {
                    "id": cell["id"],
                    "scenario": cell["scenario"],
                    "axes": cell["axes"],
                    "device": cell["device"],
                    "by_version": {},
                },
            )
            merged["by_version"][entry["version"]] = cell_entry(cell)
    for entry, results in columns:
        if results is None:  # the column did not run: every cell shows why
            for merged in cells.values():
                merged["by_version"][entry["version"]] = {
                    "status": entry["status"],
                    "observed_outcome": "not_run",
                    "category": data.NOT_RUN,
                    "observed_class": None,
                    "message": entry["first_error"] or "",
                }
    return list(cells.values())


# What differs between the versions that ran, in this order of importance.
DIFFERENCE_KINDS = (
    ("outcome", "observed_outcome"),
    ("category", "category"),
    ("status", "status"),
    ("error_class", "observed_class"),
    ("message", "message"),
)


def differences(cells: List[JsonObject], ran_versions: Sequence[str]) -> List[JsonObject]:
    found: List[JsonObject] = []
    for cell in cells:
        present = {v: cell["by_version"].get(v) for v in ran_versions}
        for kind, key in DIFFERENCE_KINDS:
            values = {v: (e[key] if e else "absent") for v, e in present.items()}
            if len({json.dumps(comparable(value)) for value in values.values()}) > 1:
                found.append({"id": cell["id"], "kind": kind, "versions": values})
    return found


def merge(
    out_dir: str, version_roots: Sequence[Tuple[str, Optional[str]]], require_cuda: bool = False
) -> JsonObject:
    columns = [load_column(out_dir, version, root) for version, root in version_roots]
    mark_incomplete(columns)
    cells = merge_cells(columns)
    ran = [entry["version"] for entry, results in columns if results is not None]
    matrix: JsonObject = {
        "schema": SCHEMA,
        "versions": [entry for entry, _ in columns],
        "cells": cells,
        "differences": differences(cells, ran),
    }
    if os.path.isdir(os.path.join(out_dir, CUDA_COLUMN)):  # --cuda-compile: built, never run
        matrix["cuda_compile"] = load_column(out_dir, CUDA_COLUMN, "trixie-cuda")[0]
    elif require_cuda:  # a fan-out merge that expects the compile-only column: fail closed
        raise data.InputError(
            f"column {CUDA_COLUMN} is missing: "
            f"{os.path.join(out_dir, CUDA_COLUMN)} does not exist"
        )
    return matrix


def main(argv: List[str]) -> int:
    if len(argv) == 3 and argv[1] == "--status":
        try:
            steps = load_run_record(argv[2])
        except data.InputError as error:
            print(f"matrix merge: bad input: {error}", file=sys.stderr)
            return data.EXIT_INPUT
        print(column_status(steps, os.path.exists(os.path.join(argv[2], "results.json"))))
        return data.EXIT_OK
    require_cuda = "--require-cuda-compile" in argv[2:]
    versions = [arg for arg in argv[2:] if arg != "--require-cuda-compile"]
    if (
        len(argv) < 3
        or not versions
        or any(arg.startswith("-") or arg.startswith("=") or arg.endswith("=") for arg in versions)
    ):
        print(__doc__, file=sys.stderr)
        return data.EXIT_USAGE
    out_dir = argv[1]
    pairs = [
        (arg.split("=", 1)[0], arg.split("=", 1)[1] if "=" in arg else None) for arg in versions
    ]
    try:
        matrix = merge(out_dir, pairs, require_cuda)
    except data.InputError as error:
        print(f"matrix merge: bad input, nothing written: {error}", file=sys.stderr)
        return data.EXIT_INPUT
    summary = render(matrix)
    try:  # as a set: the earlier pair removed, matrix.md, then matrix.json last (SIGTERM held)
        data.write_set(
            out_dir,
            {"matrix.json": json.dumps(matrix, indent=1) + "\n", "matrix.md": summary},
            last="matrix.json",
            stale=("matrix.json", "matrix.md"),
        )
    except OSError as error:
        print(f"matrix merge: cannot write into {out_dir}: {error}", file=sys.stderr)
        return data.EXIT_INPUT
    return data.EXIT_OK


if __name__ == "__main__":
    sys.exit(main(sys.argv))
