#!/usr/bin/python3
"""The held-out-style measure (README.md "The measure"): real_messages.json's public messages
through the classifier ($TORCHPLACE_CLASSIFY: the built torchplace_classify), per split.

usage: real_messages.py            check: the figures now equal the ones recorded in the file
       real_messages.py --record [--before OLD_CLASSIFIER]   record them (and the old one's)
exit: 0 equal (or recorded); 1 the figures differ from the recorded ones; 3 unreadable input or
no classifier; 64 bad arguments.
"""
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Dict, List

import source_class

DATA = Path(__file__).resolve().parent / "real_messages.json"
SPLITS = ("dev", "held_out")


class BadInput(Exception):
    pass


def entries() -> List[Dict[str, str]]:
    doc = json.loads(DATA.read_text(encoding="utf-8"))
    if doc.get("schema") != "torchplace.real_messages/1":
        raise BadInput(f"{DATA.name}: not torchplace.real_messages/1")
    for number, entry in enumerate(doc["entries"]):
        where = f"{DATA.name} entry {number}"
        if entry.get("split") not in SPLITS:
            raise BadInput(f"{where}: split must be one of {SPLITS}")
        if not str(entry.get("source", "")).startswith("https://github.com/"):
            raise BadInput(f"{where}: source must be the public thread's URL")
        if entry.get("expected_class") not in source_class.CLASSES:
            raise BadInput(f"{where}: unknown class {entry.get('expected_class')!r}")
    return doc["entries"]


def classify(classifier: str, messages: List[str]) -> List[str]:
    try:
        run = subprocess.run(
            [classifier], input=json.dumps(messages), text=True, capture_output=True, timeout=120
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise BadInput(f"the classifier {classifier} did not run: {error}") from error
    if run.returncode != 0:
        raise BadInput(f"the classifier failed: {run.stderr.strip()}")
    return [verdict["class"] for verdict in json.loads(run.stdout)]


def figures(classifier: str) -> Dict[str, Dict[str, int]]:
    """Per split: messages, right (the expected class), wrong (a class, not the expected one)."""
    rows = entries()
    got = classify(classifier, [row["message"] for row in rows])
    out = {split: {"messages": 0, "right": 0, "wrong": 0} for split in SPLITS}
    for row, verdict in zip(rows, got):
        counts = out[row["split"]]
        counts["messages"] += 1
        counts["right"] += verdict == row["expected_class"]
        counts["wrong"] += verdict not in (row["expected_class"], "Unclassified")
    return out


def main(argv: List[str]) -> int:
    record = "--record" in argv
    rest = [a for a in argv if a != "--record"]
    before = rest[1] if len(rest) == 2 and rest[0] == "--before" else None
    if (rest and before is None) or (before and not record):
        print(__doc__, file=sys.stderr)
        return 64
    classifier = os.environ.get("TORCHPLACE_CLASSIFY", "")
    try:
        if not classifier:
            raise BadInput("TORCHPLACE_CLASSIFY is not set to the built torchplace_classify")
        now = figures(classifier)
        doc = json.loads(DATA.read_text(encoding="utf-8"))
        if record:
            doc["measured"] = {"after": now, **({"before": figures(before)} if before else {})}
            DATA.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    except (BadInput, OSError, ValueError, KeyError) as error:
        print(f"real_messages.py: {error}", file=sys.stderr)
        return 3
    print(json.dumps(now, sort_keys=True))
    if not record and doc.get("measured", {}).get("after") != now:
        print(
            f"real_messages.py: the figures differ from those recorded in {DATA.name} "
            f"({doc.get('measured', {}).get('after')}): record them (--record) and update "
            "README.md",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
