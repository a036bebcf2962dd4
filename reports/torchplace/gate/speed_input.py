"""The speed gate's reader: a Google Benchmark JSON run, checked field by field before anything
is compared. Every refusal is an InputError naming the file and the benchmark.

Refused: a document of Google Benchmark < 1.5 (no run_type); no benchmarks, or only aggregates;
a context or entry that is not an object; a name or run_name that is not text; a measured time
(real_time) that is missing, not a number, NaN, infinite, zero or negative; an unknown
time_unit; a run_name measured in two families or instances; the same repetition_index twice;
more repetitions than the entry declares. Times of any time_unit are normalised to seconds.
"""
from __future__ import annotations

import math
from typing import Any, Dict, Optional, Tuple

from torchplace.schema import InputError, JsonObject, load_json, planned_skip

UNIT_SECONDS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
RERUN = "--benchmark_repetitions=16 --benchmark_format=json"


def load_run(path: str) -> JsonObject:
    """A Google Benchmark document, with its context and entries checked for shape."""
    doc = load_json(path, "benchmark results")
    if not isinstance(doc, dict) or "benchmarks" not in doc or "context" not in doc:
        raise InputError(f"{path}: not Google Benchmark JSON (no 'context' and 'benchmarks')")
    if not isinstance(doc["context"], dict):
        raise InputError(
            f"{path}: context must be an object, found {type(doc['context']).__name__}"
        )
    entries = doc["benchmarks"]
    if not isinstance(entries, list) or not entries:
        raise InputError(
            f"{path}: the document holds no benchmarks (benchmarks is "
            f"{'empty' if entries == [] else type(entries).__name__}); rerun with {RERUN}"
        )
    for index, entry in enumerate(entries):
        if not isinstance(entry, dict):
            raise InputError(f"{path}: benchmarks[{index}] must be an object")
    if not any("run_type" in entry for entry in entries):
        raise InputError(
            f"{path}: Google Benchmark < 1.5 JSON (no run_type in any entry): this old "
            f"format cannot tell repetitions from aggregates; rebuild torchplace_bench "
            f"with Google Benchmark >= 1.5 and rerun it with {RERUN}"
        )
    for index, entry in enumerate(entries):
        _check_entry(entry, f"{path}: benchmarks[{index}]")
    return doc


def _check_entry(entry: JsonObject, where: str) -> None:
    for key in ("name", "run_type"):
        if not isinstance(entry.get(key), str) or not entry[key]:
            raise InputError(f"{where}: {key} must be non-empty text, found {entry.get(key)!r}")
    if "run_name" in entry and (not isinstance(entry["run_name"], str) or not entry["run_name"]):
        raise InputError(
            f"{where} ({entry['name']}): run_name must be non-empty text, "
            f"found {entry['run_name']!r}"
        )
    for key in ("error_message", "skip_message"):
        if key in entry and not isinstance(entry[key], str):
            raise InputError(f"{where} ({entry['name']}): {key} must be text")


def seconds(entry: JsonObject, metric: str, where: str) -> float:
    """The entry's `metric` in seconds; refuses anything that is not a positive finite time."""
    unit = entry.get("time_unit", "ns")
    if unit not in UNIT_SECONDS:
        raise InputError(f"{where}: unknown time_unit {unit!r} (known: {', '.join(UNIT_SECONDS)})")
    value = entry.get(metric)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(f"{where}: {metric} must be a number, found {value!r}")
    if not math.isfinite(value) or value <= 0:
        raise InputError(
            f"{where}: {metric} is {value!r}: a time must be finite and above zero "
            "(a broken timer or a hand-edited file)"
        )
    return float(value) * UNIT_SECONDS[unit]


def _identity(entry: JsonObject) -> Tuple[Optional[int], Optional[int]]:
    """What tells two benchmark instances apart (Google Benchmark >= 1.6 writes both indices)."""
    return (entry.get("family_index"), entry.get("per_family_instance_index"))


def _add(group: Dict[str, Any], entry: JsonObject, where: str) -> None:
    """Adds one measured repetition; refuses a second family or a repeated repetition_index."""
    identity = _identity(entry)
    group.setdefault("identity", identity)
    if identity != group["identity"]:
        raise InputError(
            f"{where}: run_name {group['run_name']!r} appears in two benchmark "
            f"families or instances ({group['identity']} and {identity}): their "
            "repetitions would be merged"
        )
    index = entry.get("repetition_index")
    if index is not None and index in group["indices"]:
        raise InputError(
            f"{where}: repetition_index {index} of {group['run_name']!r} appears "
            "twice (the same repetitions pasted twice?)"
        )
    group["indices"].add(index)
    declared = entry.get("repetitions")
    if (
        isinstance(declared, int)
        and not isinstance(declared, bool)
        and len(group["times"]) + 1 > max(declared, 1)
    ):
        raise InputError(
            f"{where}: {group['run_name']!r} has more repetitions than the "
            f"{declared} it declares"
        )


def repetitions(
    path: str, metric: str = "real_time"
) -> Tuple[JsonObject, Dict[str, Dict[str, Any]]]:
    """(context, run_name -> {'times': [s], 'skip': reason or None, 'error': text or None})."""
    doc = load_run(path)
    groups: Dict[str, Dict[str, Any]] = {}
    for index, entry in enumerate(doc["benchmarks"]):
        if entry["run_type"] != "iteration":
            continue
        name = entry.get("run_name", entry["name"])
        where = f"{path}: benchmarks[{index}] ({name})"
        group = groups.setdefault(
            name, {"run_name": name, "times": [], "skip": None, "error": None, "indices": set()}
        )
        reason = planned_skip(entry)
        if reason is not None:
            group["skip"] = group["skip"] or str(reason)
        elif entry.get("error_occurred"):
            group["error"] = group["error"] or str(
                entry.get("error_message") or "error without a message"
            )
        else:
            _add(group, entry, where)
            group["times"].append(seconds(entry, metric, where))
    if not groups:
        kinds = {entry["run_type"] for entry in doc["benchmarks"]}
        raise InputError(
            f"{path}: no repetitions (run_type 'iteration') found"
            + (
                " - only aggregates; rerun without --benchmark_report_aggregates_only"
                if "aggregate" in kinds
                else f"; rerun with {RERUN}"
            )
        )
    for group in groups.values():
        del group["indices"], group["run_name"]
        group.pop("identity", None)
    return doc["context"], groups
