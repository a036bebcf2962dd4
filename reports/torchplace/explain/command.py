"""The command line of torchplace explain (see torchplace.explain)."""
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Optional

from torchplace import schema
from torchplace.explain import coverage
from torchplace.explain.extract import Found, find_errors

USAGE = "usage: torchplace explain [--json] [FILE | -]   (a message or a log; '-' or none: stdin)"
CLASSIFIER = "torchplace_classify"
TIMEOUT_S = 60  # the classifier reads a list of messages; it never takes this long


class ExplainError(Exception):
    """Input that cannot be judged: exit 3 with this message."""


def find_classifier() -> Path:
    given = os.environ.get("TORCHPLACE_CLASSIFY")
    # Installed: share/torchplace/reports/torchplace/explain/ -> share/torchplace/bin/.
    candidates = (
        [Path(given)] if given else [Path(__file__).resolve().parents[3] / "bin" / CLASSIFIER]
    )
    for path in candidates:
        if path.is_file() and os.access(path, os.X_OK):
            return path
    raise ExplainError(
        f"no classifier at {candidates[0]}: build the target {CLASSIFIER} "
        "(ci/torchplace explain does) or set TORCHPLACE_CLASSIFY to it"
    )


def classify(messages: List[str]) -> List[Dict]:
    """tp::classify's verdict on each message: class, family (pattern, versions), core."""
    if not messages:
        return []
    try:
        run = subprocess.run(
            [str(find_classifier())],
            input=json.dumps(messages),
            text=True,
            capture_output=True,
            timeout=TIMEOUT_S,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise ExplainError(f"the classifier did not run: {error}") from error
    if run.returncode != 0:
        raise ExplainError(f"the classifier failed ({run.returncode}): {run.stderr.strip()}")
    verdicts = json.loads(run.stdout)
    if len(verdicts) != len(messages):
        raise ExplainError("the classifier answered for a different number of messages")
    return verdicts


def bare_message(text: str) -> List[Found]:
    """Input without any marker: the classifier decides which lines start a LibTorch error. A
    line no family knows is no error found ("all good, 12 tests passed"): exit 3, not 1."""
    lines = text.split("\n")
    starts = [i for i, v in enumerate(classify(lines)) if v["class"] != "Unclassified"]
    found = []
    for i in starts:
        end = next((j for j in range(i + 1, len(lines)) if not lines[j].strip()), len(lines))
        found.append(Found(i + 1, "\n".join(lines[i:end])))
    return found


def explain(text: str) -> List[Dict]:
    found = find_errors(text)
    if not found:
        whole = classify([text.strip()])[0] if text.strip() else None
        found = (
            [Found(1, text.strip())]
            if whole and whole["class"] != "Unclassified"
            else bare_message(text)
        )
    seen: Dict[str, Dict] = {}
    for item, verdict in zip(found, classify([f.text for f in found])):
        core = verdict["core"].strip()
        if core in seen:  # the same error from every rank, or raised twice: once, counted
            seen[core]["occurrences"] += 1
            continue
        names = coverage.named(core)
        seen[core] = {
            "line": item.line,
            "class": verdict["class"],
            "message": core,
            "family": verdict["family"],
            "names": names,
            "occurrences": 1,
            "covered_by": coverage.covered_by(verdict["class"], core, names),
        }
    return list(seen.values())


def render(errors: List[Dict]) -> str:
    out = []
    for number, error in enumerate(errors, 1):
        first = error["message"].split("\n", 1)[0]
        times = f", {error['occurrences']} times" if error["occurrences"] > 1 else ""
        out.append(f"error {number} (line {error['line']}{times}): {error['class']}")
        out.append(f"  message:  {first}")
        family = error["family"]
        if family is None:
            out.append(
                "  family:   none: no family of harness/message_families.cpp matches; "
                "if LibTorch raised it, add its family there with its source"
            )
        else:
            out.append(f"  family:   {family['pattern']}")
            out.append(f"  versions: {family['versions']}")
        names = error["names"]
        parts = [
            f"argument {names['argument']}" if names["argument"] else "",
            f"in {names['method']}" if names["method"] else "",
            "devices " + ", ".join(names["devices"]) if names["devices"] else "",
            "dtypes " + ", ".join(names["dtypes"]) if names["dtypes"] else "",
        ]
        out.append("  names:    " + ("; ".join(p for p in parts if p) or "nothing more"))
        if names["where"]:
            places = ", ".join(f"{p['tensor']} on {p['device']}" for p in names["where"])
            out.append(f"  where:    {places} (in the message's order)")
        for cover in error["covered_by"]:
            where = (
                f"{cover['scenario']} ({cover['scenario_file']}; {cover['readme']})"
                if cover["scenario"]
                else "no scenario"
            )
            out.append(f"  scenario: {where}: {cover['why']}")
            out.append(f"  fix:      {cover['fix']}")
    return "\n".join(out)


def parse(argv: List[str]) -> Optional[Dict]:
    options = {"json": False, "input": "-"}
    paths = []
    for arg in argv:
        if arg == "--json":
            options["json"] = True
        elif arg in ("-h", "--help"):
            options["help"] = True
        elif arg.startswith("-") and arg != "-":
            return None
        else:
            paths.append(arg)
    if len(paths) > 1:
        return None
    options["input"] = paths[0] if paths else "-"
    return options


def read(source: str) -> str:
    try:
        if source == "-":
            return sys.stdin.buffer.read().decode("utf-8", errors="replace")
        return Path(source).read_bytes().decode("utf-8", errors="replace")
    except OSError as error:
        raise ExplainError(f"cannot read {source}: {error.strerror or error}") from error


def main(argv: List[str]) -> int:
    options = parse(argv)
    if options is None:
        print(USAGE, file=sys.stderr)
        return schema.EXIT_USAGE
    if options.get("help"):
        print(USAGE)
        return schema.EXIT_OK
    try:
        errors = explain(read(options["input"]))
    except ExplainError as error:
        print(f"explain: {error}", file=sys.stderr)
        return schema.EXIT_INPUT
    unclassified = [e for e in errors if e["class"] == "Unclassified"]
    code = schema.EXIT_INPUT if not errors else schema.EXIT_FAIL if unclassified else schema.EXIT_OK
    if options["json"]:
        print(
            json.dumps({"schema": "torchplace.explain/1", "errors": errors, "exit": code}, indent=1)
        )
    elif errors:
        print(render(errors))
    if not errors:
        print("explain: no LibTorch error found in the input", file=sys.stderr)
    elif unclassified:
        print(
            f"explain: {len(unclassified)} error(s) that no family knows (shown above)",
            file=sys.stderr,
        )
    return code
