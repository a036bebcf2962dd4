"""The suite's contracts, in one place: its exit codes and the readers of the JSON it writes
(shared by the report, the gates, the matrix merge and the tools).

Every reader fails with InputError naming the file and the problem: a missing or unreadable file,
bytes that are not UTF-8, malformed JSON, an empty file, a document of another schema or tool, a
missing field, a field of the wrong type (a list of objects that is not one).
"""
from __future__ import annotations

import argparse
import collections
import contextlib
import json
import os
import re
import signal
import sys
import tempfile
from pathlib import Path
from types import FrameType
from typing import (
    Any,
    Dict,
    Iterable,
    Iterator,
    List,
    Mapping,
    NoReturn,
    Optional,
    Sequence,
    TextIO,
    Tuple,
    Union,
)

# A parsed JSON object (a dict once checked), and a path the readers and writers take.
JsonObject = Dict[str, Any]
PathLike = Union[str, "os.PathLike[str]"]

# Exit codes of every tool; ci/lib/common.sh's TP_EXIT_* hold the same
# (reports/tests/test_package.py).
EXIT_OK = 0  # done, nothing regressed
EXIT_FAIL = 1  # a test, cell or benchmark failed; the speed gate: slower
EXIT_REGRESSION = 2  # the gates: a behaviour regression (never a usage error, as argparse has it)
EXIT_ENV = 3  # environment or input error: a tool that cannot judge says so
EXIT_BUILD = 4  # the build failed
EXIT_BUDGET = 5  # `run --budget-s`: the budget ran out (what ran passed; run.json names the rest)
EXIT_USAGE = 64  # bad arguments (sysexits' EX_USAGE)
EXIT_SKIP = 77  # a test that could not run here, with its reason (CTest's SKIP_RETURN_CODE)
EXIT_INPUT = EXIT_ENV  # bad input is an environment/input error
EXIT_CODES = {
    "OK": EXIT_OK,
    "FAIL": EXIT_FAIL,
    "REGRESSION": EXIT_REGRESSION,
    "ENV": EXIT_ENV,
    "BUILD": EXIT_BUILD,
    "BUDGET": EXIT_BUDGET,
    "USAGE": EXIT_USAGE,
    "SKIP": EXIT_SKIP,
}


class ArgumentParser(argparse.ArgumentParser):
    """argparse, but bad arguments exit EXIT_USAGE: its own 2 would read as a regression."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


# The repository: reports/torchplace/schema.py -> the folder above reports/. The tools' committed
# data stays beside the shell that uses it (ci/gate/*.json, harness/messages/corpus.json).
ROOT = Path(__file__).resolve().parents[2]

RESULTS_SCHEMA = "torchplace.results/1"
MATRIX_SCHEMA = "torchplace.matrix/1"
RUN_SCHEMA = "torchplace.run/1"  # what a run did, step by step (torchplace.run_record)
CONFORMANCE_SCHEMA = "torchplace.conformance/1"  # a sweep of the sim (torchplace.conformance)
KNOWN_DIFFERENCES_SCHEMA = "torchplace.sim_differences/1"  # the sim's listed differences
SKIP_PREFIX = "skip: "  # Google Benchmark < 1.8 has no SkipWithMessage


class InputError(Exception):
    """Bad input: the message names the file and what is wrong with it."""


def to_devnull(stream: TextIO) -> None:
    """After a write failed on a closed pipe (`| head`): points the stream's descriptor at
    /dev/null, so that Python's flush at exit cannot fail again and turn the exit code into 120."""
    try:
        with open(os.devnull, "wb") as devnull:
            os.dup2(devnull.fileno(), stream.fileno())
    except (OSError, ValueError):  # a stream without a descriptor (a test's StringIO)
        pass


def load_json(path: PathLike, what: str) -> Any:
    """Parses `path` as JSON; `what` names the document in errors ("scenario results")."""
    if not os.path.exists(path):
        raise InputError(f"{what}: {path} does not exist")
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except UnicodeDecodeError as error:
        bad = error.object[error.start : error.start + 1].hex()
        raise InputError(
            f"{what}: {path} is not UTF-8 text (byte 0x{bad} at offset "
            f"{error.start}: {error.reason})"
        ) from None
    except OSError as error:  # a folder in its place, no permission, an I/O error
        raise InputError(f"{what}: {path} cannot be read ({error.strerror or error})") from None
    if not text.strip():
        raise InputError(f"{what}: {path} is empty")
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise InputError(f"{what}: {path} is not valid JSON ({error})") from None


def require(mapping: object, keys: Iterable[str], where: str) -> None:
    """Raises InputError unless every key is in mapping."""
    if not isinstance(mapping, dict):
        raise InputError(f"{where}: expected an object, found {type(mapping).__name__}")
    missing = [key for key in keys if key not in mapping]
    if missing:
        raise InputError(f"{where}: missing field(s) {', '.join(missing)}")


def require_objects(mapping: JsonObject, key: str, where: str) -> List[JsonObject]:
    """mapping[key] as a list of objects; InputError names the field and what it holds instead."""
    items = mapping[key]
    if not isinstance(items, list):
        raise InputError(
            f"{where}: {key} must be a list of objects, found " f"{type(items).__name__}"
        )
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            raise InputError(
                f"{where}: {key}[{index}] must be an object, found " f"{type(item).__name__}"
            )
    return items


CELL_FIELDS = (
    "id",
    "scenario",
    "axes",
    "device",
    "expected",
    "observed",
    "status",
    "reason",
    "category",
)

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
# The closed sets of harness/internal/results.{h,cpp}: what a cell expected, what it observed.
EXPECTED_OUTCOMES = ("success", "error", "skip")
OBSERVED_OUTCOMES = ("success", "error", "exception", "not_run")
# A category as the harness derives it from the status (CellRecord::category): a skip is
# "skipped", any status but pass (fail, or a cell that never finished) is "failed", and a pass
# is one of the rest. The expected category as expected_category() derives it from the outcome.
CATEGORY_OF_STATUS = {
    "skip": ("skipped",),
    "pass": (
        "passed",
        "expected_error",
        "race_shown",
        "ran_unexercised",
        "latent_unexercised",
        "race_not_shown",
    ),
}
EXPECTED_CATEGORY = {
    "error": ("expected_error",),
    "skip": ("skipped",),
    "success": ("passed", "ran_unexercised", "latent_unexercised", "race_shown"),
}


def check_category(category: object, where: str, allowed: Mapping[str, str] = CATEGORIES) -> str:
    if not isinstance(category, str) or category not in allowed:
        raise InputError(
            f"{where}: unknown outcome category {category!r} (known: "
            f"{', '.join(allowed)}); results written before categories existed "
            "must be produced again"
        )
    return category


NONE: type = type(None)


def typed(
    mapping: JsonObject, key: str, types: Tuple[Any, ...], where: str, optional: bool = False
) -> Any:
    """mapping[key], which must be one of `types` (bool is no int); InputError otherwise. An
    optional key may be absent (None is returned)."""
    if key not in mapping:
        if optional:
            return None
        raise InputError(f"{where}: missing field(s) {key}")
    value = mapping[key]
    wrong_bool = isinstance(value, bool) and bool not in types
    if wrong_bool or not isinstance(value, types):
        names = " or ".join("null" if t is NONE else t.__name__ for t in types)
        raise InputError(
            f"{where}: {key} must be {names}, found {type(value).__name__} " f"{_clip(value)}"
        )
    return value


def one_of(mapping: JsonObject, key: str, allowed: Sequence[str], where: str) -> str:
    """mapping[key] as text from a closed set."""
    value = typed(mapping, key, (str,), where)
    if value not in allowed:
        raise InputError(f"{where}: {key} {value!r} is not one of {', '.join(allowed)}")
    return value


def _clip(value: object, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


# Hand-made test data says so in its fingerprint ("synthetic": "hand-made test data, not a
# measurement: <what it is for>") or, in Google Benchmark JSON, in context.torchplace_synthetic.
# The report shows it as SYNTHETIC; the gates note it. Never set by a real run.
SYNTHETIC_KEY = "synthetic"
SYNTHETIC_CONTEXT_KEY = "torchplace_synthetic"


def synthetic_reason(fingerprint: object) -> Optional[str]:
    """The `synthetic` text of a fingerprint (a dict, else None): why it is not a measurement."""
    if isinstance(fingerprint, dict) and isinstance(fingerprint.get(SYNTHETIC_KEY), str):
        return fingerprint[SYNTHETIC_KEY]
    return None


def check_synthetic_context(context: JsonObject, where: str) -> None:
    """A Google Benchmark context's optional torchplace_synthetic must be text."""
    typed(context, SYNTHETIC_CONTEXT_KEY, (str,), f"{where}: context", optional=True)


def check_fingerprint(fingerprint: object, where: str) -> JsonObject:
    """The fields the gates read: libtorch_version, cuda.built_with_cuda, cuda.device_count; and
    the optional `synthetic` text of hand-made test data (synthetic_reason)."""
    if not isinstance(fingerprint, dict):
        raise InputError(
            f"{where}: fingerprint must be an object, found "
            f"{type(fingerprint).__name__} {_clip(fingerprint)}"
        )
    where = f"{where}: fingerprint"
    typed(fingerprint, "libtorch_version", (str,), where)
    typed(fingerprint, SYNTHETIC_KEY, (str,), where, optional=True)
    cuda = typed(fingerprint, "cuda", (dict,), where)
    typed(cuda, "built_with_cuda", (bool,), f"{where}.cuda")
    count = typed(cuda, "device_count", (int,), f"{where}.cuda")
    if count < 0:
        raise InputError(f"{where}.cuda: device_count {count} is negative")
    if count and not cuda["built_with_cuda"]:
        raise InputError(f"{where}.cuda: {count} CUDA device(s) on a LibTorch built without CUDA")
    return fingerprint


def check_cell(cell: JsonObject, where: str) -> JsonObject:
    """Every field of a results.json cell the tools read, its type and its closed set; the
    category must agree with the status and the expected category with the expected outcome."""
    require(cell, CELL_FIELDS, where)
    if not typed(cell, "id", (str,), where):
        raise InputError(f"{where}: id is empty")
    for key in ("scenario", "device", "status", "reason"):
        typed(cell, key, (str,), where)
    axes = typed(cell, "axes", (dict,), where)
    for name, value in axes.items():
        typed(axes, name, (str,), f"{where}.axes")
    expected = typed(cell, "expected", (dict,), where)
    outcome = one_of(expected, "outcome", EXPECTED_OUTCOMES, f"{where}.expected")
    typed(expected, "error_class", (str,) if outcome == "error" else (NONE,), f"{where}.expected")
    check_category(expected.get("category"), f"{where}.expected")
    if expected["category"] not in EXPECTED_CATEGORY[outcome]:
        raise InputError(
            f"{where}.expected: category {expected['category']!r} contradicts "
            f"outcome {outcome!r}"
        )
    observed = typed(cell, "observed", (dict,), where)
    seen = one_of(observed, "outcome", OBSERVED_OUTCOMES, f"{where}.observed")
    typed(observed, "error_class", (str,) if seen == "error" else (str, NONE), f"{where}.observed")
    typed(observed, "message", (str,), f"{where}.observed", optional=True)
    category = check_category(cell["category"], where)
    allowed = CATEGORY_OF_STATUS.get(cell["status"], ("failed",))
    if category not in allowed:
        raise InputError(
            f"{where}: category {category!r} contradicts status {cell['status']!r} "
            f"(a {cell['status']!r} cell is {' or '.join(allowed)})"
        )
    if cell["status"] == "pass" and (seen == "error") != (category == "expected_error"):
        raise InputError(f"{where}: a passing cell that observed {seen!r} cannot be {category!r}")
    if cell["status"] == "pass" and seen not in ("success", "error"):
        raise InputError(f"{where}: a passing cell cannot have observed {seen!r}")
    typed(cell, "skip_code", (str, NONE), where, optional=True)
    typed(cell, "needs_libtorch", (str, NONE), where, optional=True)
    for index, note in enumerate(typed(cell, "notes", (list,), where, optional=True) or []):
        if not isinstance(note, str):
            raise InputError(f"{where}: notes[{index}] must be str, found {type(note).__name__}")
    return cell


def load_results(path: str) -> JsonObject:
    """A scenario results document (schema torchplace.results/1), every field the tools read
    checked for its type (check_cell, check_fingerprint): the one place that does it."""
    doc = load_json(path, "scenario results")
    require(doc, ("schema", "fingerprint", "cells"), path)
    if doc["schema"] != RESULTS_SCHEMA:
        raise InputError(f"{path}: schema is {doc['schema']!r}, expected {RESULTS_SCHEMA!r}")
    for index, cell in enumerate(require_objects(doc, "cells", path)):
        check_cell(cell, f"{path}: cells[{index}]")
    check_fingerprint(doc["fingerprint"], path)
    return doc


def merge_results(folder: PathLike) -> JsonObject:
    """One results document from the records one binary wrote into a folder (a file a process,
    TORCHPLACE_RESULTS_DIR): InputError where none was written, one is unreadable, their
    fingerprints differ (not one binary on one host) or a cell is recorded twice."""
    docs = [load_results(str(path)) for path in sorted(Path(folder).glob("*.json"))]
    if not docs:
        raise InputError(f"{folder}: no cell record was written")
    if len({json.dumps(doc["fingerprint"], sort_keys=True) for doc in docs}) != 1:
        raise InputError(f"{folder}: the records' fingerprints differ (not one binary on one host)")
    cells = [cell for doc in docs for cell in doc["cells"]]
    twice = sorted(k for k, n in collections.Counter(c["id"] for c in cells).items() if n > 1)
    if twice:
        raise InputError(f"{folder}: cell(s) recorded twice: {', '.join(twice[:5])}")
    return {"schema": docs[0]["schema"], "fingerprint": docs[0]["fingerprint"], "cells": cells}


def load_run(path: str) -> JsonObject:
    """A run record (schema torchplace.run/1): {"schema", "steps": {step: {"status", ...}}};
    a step's status is text, its exit a whole number, its seconds a number."""
    doc = load_json(path, "run record")
    require(doc, ("schema", "steps"), path)
    if doc["schema"] != RUN_SCHEMA:
        raise InputError(f"{path}: schema is {doc['schema']!r}, expected {RUN_SCHEMA!r}")
    if not isinstance(doc["steps"], dict):
        raise InputError(f"{path}: steps must be an object, found {type(doc['steps']).__name__}")
    for name, step in doc["steps"].items():
        where = f"{path}: steps.{name}"
        require(step, ("status",), where)
        typed(step, "status", (str,), where)
        typed(step, "exit", (int,), where, optional=True)
        typed(step, "seconds", (int, float), where, optional=True)
    return doc


MATRIX_VERSION_FIELDS = ("version", "status")
MATRIX_CELL_FIELDS = ("id", "scenario", "axes", "device", "by_version")
BY_VERSION_FIELDS = ("status", "observed_outcome", "category")


def check_matrix_entry(entry: JsonObject, where: str) -> None:
    """One cell's entry for one version: a cell that ran (status pass, fail or skip, a category
    agreeing with it) or one its column never got to (any other status, category not_run)."""
    require(entry, BY_VERSION_FIELDS, where)
    status = typed(entry, "status", (str,), where)
    ran = status in ("pass", "fail", "skip")
    one_of(entry, "observed_outcome", OBSERVED_OUTCOMES if ran else (NOT_RUN,), where)
    category = check_category(entry["category"], where, {**CATEGORIES, NOT_RUN: "not run"})
    allowed = CATEGORY_OF_STATUS.get(status, ("failed",)) if ran else (NOT_RUN,)
    if category not in allowed:
        raise InputError(f"{where}: category {category!r} contradicts status {status!r}")
    for key in ("observed_class",):
        typed(entry, key, (str, NONE), where, optional=True)
    for key in ("message", "reason"):
        typed(entry, key, (str,), where, optional=True)


def load_matrix(path: str) -> JsonObject:
    """A version matrix document (schema torchplace.matrix/1), every field the tools read checked
    for its type."""
    doc = load_json(path, "version matrix")
    require(doc, ("schema", "versions", "cells"), path)
    if doc["schema"] != MATRIX_SCHEMA:
        raise InputError(f"{path}: schema is {doc['schema']!r}, expected {MATRIX_SCHEMA!r}")
    for index, version in enumerate(require_objects(doc, "versions", path)):
        where = f"{path}: versions[{index}]"
        require(version, MATRIX_VERSION_FIELDS, where)
        typed(version, "version", (str,), where)
        typed(version, "status", (str,), where)
        if typed(version, "fingerprint", (dict, NONE), where, optional=True):
            typed(version["fingerprint"], "libtorch_version", (str,), f"{where}.fingerprint")
            typed(
                version["fingerprint"], SYNTHETIC_KEY, (str,), f"{where}.fingerprint", optional=True
            )
    for index, cell in enumerate(require_objects(doc, "cells", path)):
        where = f"{path}: cells[{index}]"
        require(cell, MATRIX_CELL_FIELDS, where)
        for key in ("id", "scenario", "device"):
            typed(cell, key, (str,), where)
        typed(cell, "axes", (dict,), where)
        for version, entry in typed(cell, "by_version", (dict,), where).items():
            check_matrix_entry(entry, f"{where}.by_version[{version!r}]")
    return doc


def load_benchmarks(path: str) -> JsonObject:
    """A Google Benchmark JSON document (--benchmark_format=json)."""
    doc = load_json(path, "benchmark results")
    if not isinstance(doc, dict) or "benchmarks" not in doc or "context" not in doc:
        raise InputError(f"{path}: not Google Benchmark JSON (no 'context' and 'benchmarks')")
    if isinstance(doc["context"], dict):
        check_synthetic_context(doc["context"], path)
    for index, entry in enumerate(require_objects(doc, "benchmarks", path)):
        require(entry, ("name", "run_type"), f"{path}: benchmarks[{index}]")
    return doc


def parse_benchmark_name(name: str) -> Tuple[str, Dict[str, str]]:
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


def planned_skip(entry: JsonObject) -> Optional[str]:
    """The reason of a planned skip, or None (also None for a real error)."""
    if entry.get("skipped"):
        return entry.get("skip_message", "skipped")
    message = entry.get("error_message", "")
    if entry.get("error_occurred") and message.startswith(SKIP_PREFIX):
        return message[len(SKIP_PREFIX) :]
    return None


def iteration_groups(
    doc: JsonObject, path: PathLike, metric: str = "real_time", required: Sequence[str] = ()
) -> Dict[str, Dict[str, Any]]:
    """A Google Benchmark document's repetitions (run_type "iteration"), grouped by run_name in
    first-seen order: run_name -> {"entries": measured entries, "times": their `metric` in
    seconds, "skip": the first planned skip's reason or None, "error": the first real error's
    message ("" when it has none) or None}. Aggregates (_mean, ...) are left out: callers
    recompute them from the repetitions. A measured entry must hold `metric` and `required`."""
    fields = tuple(dict.fromkeys((*required, metric)))
    groups: Dict[str, Dict[str, Any]] = {}
    for index, entry in enumerate(doc["benchmarks"]):
        if entry["run_type"] != "iteration":
            continue
        name = entry.get("run_name", entry["name"])
        if not isinstance(name, str):
            raise InputError(
                f"{path}: benchmarks[{index}]: run_name must be a string, found "
                f"{type(name).__name__}"
            )
        group = groups.setdefault(name, {"entries": [], "times": [], "skip": None, "error": None})
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


def encode(text: Union[str, bytes]) -> bytes:
    """UTF-8 bytes of text whatever it holds: a lone surrogate (JSON's "\\ud800") becomes its
    escape rather than an error after half the files were written."""
    return text if isinstance(text, bytes) else text.encode("utf-8", errors="backslashreplace")


def write_atomically(path: PathLike, data: Union[str, bytes], mode: str = "w") -> None:
    """Writes to a temporary file beside path, then renames: readers never see half a file.
    Text is encoded (encode()) before anything is written; `mode` is kept for callers."""
    data = encode(data)
    directory = os.path.dirname(os.path.abspath(path))
    handle, temporary = tempfile.mkstemp(
        dir=directory, prefix=".tmp-", suffix=os.path.basename(path)
    )
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        os.chmod(temporary, 0o666 & ~_current_umask())  # mkstemp makes 0600; CI artifacts need 0644
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise


class Terminated(BaseException):
    """SIGTERM arrived (a CI timeout, a killed wrapper): the tool stops cleanly."""


def exit_cleanly_on_sigterm() -> None:
    """SIGTERM raises Terminated in the main thread, so that temporary files are removed and the
    tool can say it was stopped, instead of dying between two of its output files. The handler
    holds SIGTERM back before it raises: a second one (a CI runner's cancel sends two) waits, and
    cannot cut the clean stop short (stops_cleanly drops it on the way out)."""

    def handler(signum: int, _frame: Optional[FrameType]) -> NoReturn:
        hold_sigterm()
        raise Terminated(f"stopped by signal {signum} (SIGTERM)")

    signal.signal(signal.SIGTERM, handler)


@contextlib.contextmanager
def stops_cleanly() -> Iterator[None]:
    """A tool's main runs inside: SIGTERM raises Terminated (exit_cleanly_on_sigterm). On the way
    out the tool is done, so a held SIGTERM is dropped (its exit code stands, and a late one
    changes nothing), and the caller's signal mask comes back."""
    entry = signal.pthread_sigmask(signal.SIG_BLOCK, [])
    exit_cleanly_on_sigterm()
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.pthread_sigmask(signal.SIG_SETMASK, entry)


@contextlib.contextmanager
def sigterm_deferred() -> Iterator[None]:
    """SIGTERM is held back while a set of files is written: a kill leaves the whole set or
    none of it, and takes effect right after."""
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def hold_sigterm() -> None:
    """Holds SIGTERM back until stops_cleanly ends: a tool that has judged can no longer be
    stopped between its verdict and its files. A SIGTERM that came just before raises here."""
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})


def write_set(
    out_dir: PathLike, files: Mapping[str, Union[str, bytes]], last: str, stale: Iterable[str] = ()
) -> None:
    """Writes {name: text or bytes} into out_dir, each atomically, `last` (the verdict, or the
    page) after the rest, with SIGTERM deferred: the files of one run, never a mixture with
    another's. `stale` names an earlier run's files to remove first (its verdict first), so that
    even a SIGKILL midway leaves no old verdict beside new files. Once the set is written a
    SIGTERM is ignored: the run is done, and its exit code is the one its verdict states."""
    encoded = {name: encode(content) for name, content in files.items()}  # before any write
    with sigterm_deferred():
        os.makedirs(out_dir, exist_ok=True)
        for name in stale:
            path = os.path.join(out_dir, name)
            if os.path.lexists(path):
                os.unlink(path)
        for name in sorted(encoded, key=lambda name: (name == last, name)):
            write_atomically(os.path.join(out_dir, name), encoded[name], "wb")
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a pending one is dropped when unblocked


def remove_outputs(out_dir: PathLike, names: Iterable[str]) -> None:
    """Removes what an earlier run wrote (the verdict first), so that no old file stands beside
    a new one; OSError when one cannot be removed."""
    with sigterm_deferred():
        for name in names:
            path = os.path.join(out_dir, name)
            if os.path.lexists(path):
                os.unlink(path)


def _current_umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


_UNIT_TO_SECONDS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}


def seconds(entry: JsonObject, field: str = "real_time") -> float:
    """An entry's time in seconds, whatever its time_unit."""
    unit = entry.get("time_unit", "ns")
    if unit not in _UNIT_TO_SECONDS:
        raise InputError(f"benchmark {entry.get('name')}: unknown time_unit {unit!r}")
    return float(entry[field]) * _UNIT_TO_SECONDS[unit]


def safe_name(text: str) -> str:
    """A file-name-safe version of text."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_")
