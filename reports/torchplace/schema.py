"""The suite's contracts, in one place: its exit codes and the readers of the JSON it writes
(shared by the report, the gates, the matrix merge and the tools).

Every reader fails with InputError naming the file and the problem: a missing or unreadable file,
bytes that are not UTF-8, malformed JSON, an empty file, a document of another schema or tool, a
missing field, a field of the wrong type (a list of objects that is not one).
"""
import argparse
import json
import os
import re
import sys
import tempfile
from pathlib import Path

# Exit codes of every tool; ci/lib/common.sh's TP_EXIT_* hold the same (reports/tests/test_package.py).
EXIT_OK = 0          # done, nothing regressed
EXIT_FAIL = 1        # a test, cell or benchmark failed; the speed gate: slower
EXIT_REGRESSION = 2  # the gates: a behaviour regression (never a usage error, as argparse has it)
EXIT_ENV = 3         # environment or input error: a tool that cannot judge says so
EXIT_BUILD = 4       # the build failed
EXIT_USAGE = 64      # bad arguments (sysexits' EX_USAGE)
EXIT_SKIP = 77       # a test that could not run here, with its reason (CTest's SKIP_RETURN_CODE)
EXIT_INPUT = EXIT_ENV  # bad input is an environment/input error
EXIT_CODES = {"OK": EXIT_OK, "FAIL": EXIT_FAIL, "REGRESSION": EXIT_REGRESSION, "ENV": EXIT_ENV,
              "BUILD": EXIT_BUILD, "USAGE": EXIT_USAGE, "SKIP": EXIT_SKIP}


class ArgumentParser(argparse.ArgumentParser):
    """argparse, but bad arguments exit EXIT_USAGE: its own 2 would read as a regression."""

    def error(self, message):
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


# The repository: reports/torchplace/schema.py -> the folder above reports/. The tools' committed
# data stays beside the shell that uses it (ci/gate/*.json, harness/messages/corpus.json).
ROOT = Path(__file__).resolve().parents[2]

RESULTS_SCHEMA = "torchplace.results/1"
MATRIX_SCHEMA = "torchplace.matrix/1"
RUN_SCHEMA = "torchplace.run/1"  # what a run did, step by step (torchplace.run_record)
SKIP_PREFIX = "skip: "  # Google Benchmark < 1.8 has no SkipWithMessage


class InputError(Exception):
    """Bad input: the message names the file and what is wrong with it."""


def load_json(path, what):
    """Parses `path` as JSON; `what` names the document in errors ("scenario results")."""
    if not os.path.exists(path):
        raise InputError(f"{what}: {path} does not exist")
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except UnicodeDecodeError as error:
        bad = error.object[error.start:error.start + 1].hex()
        raise InputError(f"{what}: {path} is not UTF-8 text (byte 0x{bad} at offset "
                         f"{error.start}: {error.reason})") from None
    except OSError as error:  # a folder in its place, no permission, an I/O error
        raise InputError(f"{what}: {path} cannot be read ({error.strerror or error})") from None
    if not text.strip():
        raise InputError(f"{what}: {path} is empty")
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise InputError(f"{what}: {path} is not valid JSON ({error})") from None


def require(mapping, keys, where):
    """Raises InputError unless every key is in mapping."""
    if not isinstance(mapping, dict):
        raise InputError(f"{where}: expected an object, found {type(mapping).__name__}")
    missing = [key for key in keys if key not in mapping]
    if missing:
        raise InputError(f"{where}: missing field(s) {', '.join(missing)}")


def require_objects(mapping, key, where):
    """mapping[key] as a list of objects; InputError names the field and what it holds instead."""
    items = mapping[key]
    if not isinstance(items, list):
        raise InputError(f"{where}: {key} must be a list of objects, found "
                         f"{type(items).__name__}")
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            raise InputError(f"{where}: {key}[{index}] must be an object, found "
                             f"{type(item).__name__}")
    return items


CELL_FIELDS = ("id", "scenario", "axes", "device", "expected", "observed", "status", "reason",
               "category")

# Outcome categories of a cell (harness/scenario.h), machine value -> label. Only EVIDENCE is
# green: a cell there proved its claim. The others ran without proving it, or did not run.
CATEGORIES = {
    "passed": "passed",
    "expected_error": "expected error",
    "race_shown": "race shown",
    "ran_unexercised": "ran (placement not exercised)",
    "latent_unexercised": "latent (mistake cannot show here)",
    "race_not_shown": "race not shown",
    "skipped": "skipped",
    "failed": "failed",
}
EVIDENCE = ("passed", "expected_error", "race_shown")
NOT_RUN = "not_run"  # matrix only: the column's build or run did not get to the cell


def check_category(category, where, allowed=CATEGORIES):
    if category not in allowed:
        raise InputError(f"{where}: unknown outcome category {category!r} (known: "
                         f"{', '.join(allowed)}); results written before categories existed "
                         "must be produced again")
    return category


def load_results(path):
    """A scenario results document (schema torchplace.results/1)."""
    doc = load_json(path, "scenario results")
    require(doc, ("schema", "fingerprint", "cells"), path)
    if doc["schema"] != RESULTS_SCHEMA:
        raise InputError(f"{path}: schema is {doc['schema']!r}, expected {RESULTS_SCHEMA!r}")
    for index, cell in enumerate(require_objects(doc, "cells", path)):
        where = f"{path}: cells[{index}]"
        require(cell, CELL_FIELDS, where)
        check_category(cell["category"], where)
        require(cell["expected"], ("category",), f"{where}.expected")
        check_category(cell["expected"]["category"], f"{where}.expected")
    return doc


def load_run(path):
    """A run record (schema torchplace.run/1): {"schema", "steps": {step: {"status", ...}}}."""
    doc = load_json(path, "run record")
    require(doc, ("schema", "steps"), path)
    if doc["schema"] != RUN_SCHEMA:
        raise InputError(f"{path}: schema is {doc['schema']!r}, expected {RUN_SCHEMA!r}")
    if not isinstance(doc["steps"], dict):
        raise InputError(f"{path}: steps must be an object, found {type(doc['steps']).__name__}")
    for name, step in doc["steps"].items():
        require(step, ("status",), f"{path}: steps.{name}")
    return doc


MATRIX_VERSION_FIELDS = ("version", "status")
MATRIX_CELL_FIELDS = ("id", "scenario", "axes", "device", "by_version")
BY_VERSION_FIELDS = ("status", "observed_outcome", "category")


def load_matrix(path):
    """A version matrix document (schema torchplace.matrix/1)."""
    doc = load_json(path, "version matrix")
    require(doc, ("schema", "versions", "cells"), path)
    if doc["schema"] != MATRIX_SCHEMA:
        raise InputError(f"{path}: schema is {doc['schema']!r}, expected {MATRIX_SCHEMA!r}")
    for index, version in enumerate(require_objects(doc, "versions", path)):
        require(version, MATRIX_VERSION_FIELDS, f"{path}: versions[{index}]")
    for index, cell in enumerate(require_objects(doc, "cells", path)):
        where = f"{path}: cells[{index}]"
        require(cell, MATRIX_CELL_FIELDS, where)
        require(cell["by_version"], (), f"{where}.by_version")
        for version, entry in cell["by_version"].items():
            require(entry, BY_VERSION_FIELDS, f"{where}.by_version[{version!r}]")
            check_category(entry["category"], f"{where}.by_version[{version!r}]",
                           {**CATEGORIES, NOT_RUN: "not run"})
    return doc


def load_benchmarks(path):
    """A Google Benchmark JSON document (--benchmark_format=json)."""
    doc = load_json(path, "benchmark results")
    if not isinstance(doc, dict) or "benchmarks" not in doc or "context" not in doc:
        raise InputError(f"{path}: not Google Benchmark JSON (no 'context' and 'benchmarks')")
    for index, entry in enumerate(require_objects(doc, "benchmarks", path)):
        require(entry, ("name", "run_type"), f"{path}: benchmarks[{index}]")
    return doc


def parse_benchmark_name(name):
    """'transfer/direction:h2d/bytes:4096' -> ('transfer', {'direction': 'h2d', 'bytes': '4096'}).

    Google Benchmark appends suffixes such as '/repeats:5', '/manual_time' or '_mean'; they are
    kept as parts like any other, so callers should use run_name for grouping.
    """
    family, *parts = name.split("/")
    fields = {}
    for part in parts:
        key, sep, value = part.partition(":")
        fields[key] = value if sep else ""
    return family, fields


def planned_skip(entry):
    """The reason of a planned skip, or None (also None for a real error)."""
    if entry.get("skipped"):
        return entry.get("skip_message", "skipped")
    message = entry.get("error_message", "")
    if entry.get("error_occurred") and message.startswith(SKIP_PREFIX):
        return message[len(SKIP_PREFIX):]
    return None


def iteration_groups(doc, path, metric="real_time", required=()):
    """A Google Benchmark document's repetitions (run_type "iteration"), grouped by run_name in
    first-seen order: run_name -> {"entries": measured entries, "times": their `metric` in
    seconds, "skip": the first planned skip's reason or None, "error": the first real error's
    message ("" when it has none) or None}. Aggregates (_mean, ...) are left out: callers
    recompute them from the repetitions. A measured entry must hold `metric` and `required`."""
    fields = tuple(dict.fromkeys((*required, metric)))
    groups = {}
    for index, entry in enumerate(doc["benchmarks"]):
        if entry["run_type"] != "iteration":
            continue
        group = groups.setdefault(entry.get("run_name", entry["name"]),
                                  {"entries": [], "times": [], "skip": None, "error": None})
        reason = planned_skip(entry)
        if reason is not None:
            group["skip"] = reason if group["skip"] is None else group["skip"]
        elif entry.get("error_occurred"):
            message = entry.get("error_message") or ""
            group["error"] = message if group["error"] is None else group["error"]
        else:
            require(entry, fields, f"{path}: benchmarks[{index}] ({entry['name']})")
            group["entries"].append(entry)
            group["times"].append(seconds(entry, metric))
    return groups


def write_atomically(path, data, mode="w"):
    """Writes to a temporary file beside path, then renames: readers never see half a file."""
    directory = os.path.dirname(os.path.abspath(path))
    handle, temporary = tempfile.mkstemp(dir=directory, prefix=".tmp-", suffix=os.path.basename(path))
    try:
        with os.fdopen(handle, mode) as out:
            out.write(data)
        os.chmod(temporary, 0o666 & ~_current_umask())  # mkstemp makes 0600; CI artifacts need 0644
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise


def _current_umask():
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


_UNIT_TO_SECONDS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}


def seconds(entry, field="real_time"):
    """An entry's time in seconds, whatever its time_unit."""
    unit = entry.get("time_unit", "ns")
    if unit not in _UNIT_TO_SECONDS:
        raise InputError(f"benchmark {entry.get('name')}: unknown time_unit {unit!r}")
    return float(entry[field]) * _UNIT_TO_SECONDS[unit]


def safe_name(text):
    """A file-name-safe version of text."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_")
