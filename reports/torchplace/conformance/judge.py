"""The verdict of a sweep: each entry that does not agree must be one of the sim's listed
differences (known_differences.json, beside this file: the entry, the torch versions it holds
for, why, and the test that shows it); a listed entry that agrees again is stale and must go.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List, Tuple

from torchplace import schema

KNOWN = Path(__file__).with_name("known_differences.json")


def load_known(path: Path = KNOWN) -> List[Dict[str, Any]]:
    doc = schema.load_json(path, "the sim's known differences")
    schema.require(doc, ["schema", "differences"], str(path))
    if doc["schema"] != schema.KNOWN_DIFFERENCES_SCHEMA:
        raise schema.InputError(
            f"{path}: schema is {doc['schema']!r}, expected " f"{schema.KNOWN_DIFFERENCES_SCHEMA!r}"
        )
    entries = schema.require_objects(doc, "differences", str(path))
    for index, entry in enumerate(entries):
        schema.require(
            entry, ["sweep", "name", "versions", "reason", "test"], f"{path}: differences[{index}]"
        )
    return entries


def _listed(known: List[Dict[str, Any]], sweep: str, name: str, version: str) -> bool:
    """Listed for this sweep, entry and torch major.minor (versions: ["1.13", "2.14", ...])."""
    return any(
        entry["sweep"] == sweep and entry["name"] == name and version in entry["versions"]
        for entry in known
    )


def judge(
    sweep: str, results: List[Dict[str, Any]], version: str, known: List[Dict[str, Any]]
) -> Tuple[Dict[str, int], List[str]]:
    """(the figures, the problems): each result classified as agree, listed (a known
    difference), new (a difference not listed) or stale (listed, yet it agrees)."""
    figures = {
        "entries": len(results),
        "cpu_runs": 0,
        "agree": 0,
        "listed": 0,
        "new": 0,
        "stale": 0,
        "exact": 0,
    }
    problems: List[str] = []
    for result in results:
        if not result.get("cpu_runs", True):
            continue
        figures["cpu_runs"] += 1
        listed = _listed(known, sweep, result["name"], version)
        if result["agree"]:
            figures["agree"] += 1
            figures["exact"] += int(bool(result.get("exact")))
            if listed:
                figures["stale"] += 1
                problems.append(
                    f"STALE: {sweep} {result['name']} agrees on torch {version} but "
                    f"is listed as a difference: remove it from {KNOWN.name}"
                )
        elif listed:
            figures["listed"] += 1
        else:
            figures["new"] += 1
            problems.append(f"DIFFERS: {sweep} {result['name']}: {describe(result)}")
    return figures, problems


def describe(result: Dict[str, Any]) -> str:
    if result.get("crashed"):
        return f"the worker died ({result['crashed']}): {result.get('output_tail', '')[-400:]}"
    if result.get("error"):
        return f"the sweep itself failed: {result['error']}"
    failure = result.get("first_failure") or {}
    where = ", ".join(
        f"{key} {failure[key]}"
        for key in ("stage", "dtype", "sample", "training")
        if key in failure
    )
    return f"{failure.get('verdict')} ({where}): {failure.get('detail')}"
