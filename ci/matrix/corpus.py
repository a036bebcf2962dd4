#!/usr/bin/env python3
"""Folds what a version matrix observed into the committed message corpus
(harness/messages/corpus.json), which harness/message_corpus_test.cpp holds the classifier to.

Sources, per version column of MATRIX_OUT:
  <version>/messages.json  the message probe's observations (expected class set by the probe)
  matrix.json              scenario cells that raised an error the scenario expected
Entries already in the corpus are kept; an entry is one (version, source, message).

usage: corpus.py MATRIX_OUT [CORPUS_JSON]
"""
import json
import os
import sys

from merge import comparable  # masks per-run temporary folders in messages

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_CORPUS = os.path.join(HERE, "..", "..", "harness", "messages", "corpus.json")


def probe_entries(out_dir, version):
    path = os.path.join(out_dir, version, "messages.json")
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as handle:
        observations = json.load(handle)["observations"]
    return [{"version": version, "source": "probe:" + item["probe"],
             "message": comparable(item["message"]),
             "expected_class": item["expected_class"]}
            for item in observations if item["outcome"] == "error"]


def cell_entries(matrix):
    entries = []
    for cell in matrix["cells"]:
        for version, seen in cell["by_version"].items():
            if seen.get("observed_outcome") == "error" and seen.get("expected_class"):
                entries.append({"version": version, "source": "cell:" + cell["id"],
                                "message": comparable(seen["message"]),
                                "expected_class": seen["expected_class"]})
    return entries


def fold(corpus, new_entries):
    key = lambda e: (e["version"], e["source"], e["message"])  # noqa: E731
    merged = {key(e): e for e in corpus["entries"]}
    for entry in new_entries:
        merged.setdefault(key(entry), entry)
    version_key = lambda v: tuple(int(p) for p in v.split("."))  # noqa: E731
    corpus["entries"] = sorted(merged.values(),
                               key=lambda e: (e["source"], version_key(e["version"]), e["message"]))
    return corpus


def main(argv):
    if len(argv) not in (2, 3):
        print(__doc__, file=sys.stderr)
        return 2
    out_dir, corpus_path = argv[1], argv[2] if len(argv) == 3 else DEFAULT_CORPUS
    try:
        with open(os.path.join(out_dir, "matrix.json"), encoding="utf-8") as handle:
            matrix = json.load(handle)
    except (OSError, ValueError) as error:
        print(f"corpus: cannot read {out_dir}/matrix.json: {error}", file=sys.stderr)
        return 3
    corpus = {"schema": "torchplace.message_corpus/1", "entries": []}
    if os.path.exists(corpus_path):
        with open(corpus_path, encoding="utf-8") as handle:
            corpus = json.load(handle)
    found = cell_entries(matrix)
    for column in matrix["versions"]:
        found += probe_entries(out_dir, column["version"])
    corpus = fold(corpus, found)
    with open(corpus_path + ".tmp", "w", encoding="utf-8") as handle:
        json.dump(corpus, handle, indent=1, ensure_ascii=False)
        handle.write("\n")
    os.replace(corpus_path + ".tmp", corpus_path)
    print(f"corpus: {len(corpus['entries'])} entries in {corpus_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
