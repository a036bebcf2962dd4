"""Folds what a version matrix observed into the committed message corpus
(harness/messages/corpus.json), which harness/tests/message_corpus_test.cpp holds the classifier to.

Sources, per version column of MATRIX_OUT:
  <version>/messages.json  the message probe's observations (expected class set by the probe)
  matrix.json              scenario cells that raised the error the scenario expected and
                           passed (a failed cell's message is not evidence of its class)
Entries already in the corpus are kept; an entry is one (version, source, message).

usage: python3 -m torchplace.matrix.corpus MATRIX_OUT [CORPUS_JSON]
exit: 0 written, 64 bad arguments, 3 an input unreadable or malformed (the corpus is left as it was)
"""
from __future__ import annotations

import json
import os
import sys
from typing import Any, List, Tuple

from torchplace.schema import JsonObject

from torchplace import schema as data
from torchplace.matrix.merge import comparable  # masks per-run temporary folders in messages

CORPUS_SCHEMA = "torchplace.message_corpus/1"
ENTRY_FIELDS = ("version", "source", "message", "expected_class")
DEFAULT_CORPUS = str(data.ROOT / "harness" / "messages" / "corpus.json")


def probe_entries(out_dir: str, version: str) -> List[JsonObject]:
    path = os.path.join(out_dir, version, "messages.json")
    if not os.path.exists(path):
        return []
    doc = data.load_json(path, "message probe observations")
    data.require(doc, ("observations",), path)
    observations = doc["observations"]
    for index, item in enumerate(observations):
        where = f"{path}: observations[{index}]"
        data.require(item, ("probe", "expected_class", "outcome"), where)
        if item["outcome"] == "error":
            data.require(item, ("message",), where)
    return [
        {
            "version": version,
            "source": "probe:" + item["probe"],
            "message": comparable(item["message"]),
            "expected_class": item["expected_class"],
        }
        for item in observations
        if item["outcome"] == "error"
    ]


def cell_entries(matrix: JsonObject) -> List[JsonObject]:
    entries: List[JsonObject] = []
    for cell in matrix["cells"]:
        for version, seen in cell["by_version"].items():
            if (
                seen.get("status") == "pass"
                and seen.get("observed_outcome") == "error"
                and seen.get("expected_class")
            ):
                data.require(seen, ("message",), f"matrix.json: {cell['id']} on {version}")
                entries.append(
                    {
                        "version": version,
                        "source": "cell:" + cell["id"],
                        "message": comparable(seen["message"]),
                        "expected_class": seen["expected_class"],
                    }
                )
    return entries


def read_sources(out_dir: str) -> List[JsonObject]:
    """The entries the matrix in out_dir observed: its cells', then each column's probe's."""
    matrix = data.load_matrix(os.path.join(out_dir, "matrix.json"))
    found = cell_entries(matrix)
    for column in matrix["versions"]:
        found += probe_entries(out_dir, column["version"])
    return found


def load_corpus(path: str) -> JsonObject:
    """The committed corpus, or an empty one when there is none yet."""
    if not os.path.exists(path):
        return {"schema": CORPUS_SCHEMA, "entries": []}
    corpus = data.load_json(path, "message corpus")
    data.require(corpus, ("schema", "entries"), path)
    if corpus["schema"] != CORPUS_SCHEMA:
        raise data.InputError(f"{path}: schema is {corpus['schema']!r}, expected {CORPUS_SCHEMA!r}")
    for index, entry in enumerate(corpus["entries"]):
        data.require(entry, ENTRY_FIELDS, f"{path}: entries[{index}]")
    return corpus


def fold(corpus: JsonObject, new_entries: List[JsonObject]) -> JsonObject:
    key = lambda e: (e["version"], e["source"], e["message"])  # noqa: E731
    merged = {key(e): e for e in corpus["entries"]}
    for entry in new_entries:
        merged.setdefault(key(entry), entry)
    corpus["entries"] = sorted(merged.values(), key=entry_order)
    return corpus


def version_order(version: str) -> Tuple[int, Any]:
    """Sort key: 1.13.1 before 2.6.0 before 2.14.1; a public report's 'unstated' last."""
    parts = version.split(".")
    if all(p.isdigit() for p in parts):
        return (0, tuple(int(p) for p in parts))
    return (1, version)


def entry_order(entry: JsonObject) -> Tuple[str, Tuple[int, Any], str]:
    return (entry["source"], version_order(entry["version"]), entry["message"])


def main(argv: List[str]) -> int:
    if len(argv) not in (2, 3):
        print(__doc__, file=sys.stderr)
        return data.EXIT_USAGE
    out_dir, corpus_path = argv[1], argv[2] if len(argv) == 3 else DEFAULT_CORPUS
    try:
        corpus = fold(load_corpus(corpus_path), read_sources(out_dir))
    except data.InputError as error:
        print(f"corpus: bad input, corpus unchanged: {error}", file=sys.stderr)
        return data.EXIT_INPUT
    text = json.dumps(corpus, indent=1, ensure_ascii=False) + "\n"
    data.write_atomically(corpus_path, text.encode("utf-8"), "wb")
    print(f"corpus: {len(corpus['entries'])} entries in {corpus_path}")
    return data.EXIT_OK


if __name__ == "__main__":
    sys.exit(main(sys.argv))
