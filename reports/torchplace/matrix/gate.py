"""Gates a version matrix (matrix.json): for each pair of neighbouring versions (old, new) it
reports every behaviour change (outcome, status, error class, message) and fails when a cell
that passed on the old version fails on the new one (looking back over skips: passed on 1.13.1,
skipped on 2.6.0 and failing on 2.14.1 is a regression of the 2.6.0 -> 2.14.1 pair).

Every cell counts, whatever its variant or expectation: a fix that stops working, and a broken
variant whose expected error is no longer raised (or raised with another class), are both
regressions. A new version that did not build or run while the old one did fails the gate as
well: none of its cells can be said to hold. A cell whose outcome category was evidence on the old
version (passed, expected_error, race_shown) and is not on the new one while still passing
(race_not_shown, or ran without exercising its claim) is a regression too: its green no longer
proves anything. So is such a cell skipped on the new version, whatever the skip's reason: what
the older LibTorch proved, the newer one no longer shows (a sim:0 cell whose capability check
broke would otherwise vanish into a stated skip).

It fails closed beyond the pairs too:
  column           any version column that is not "ok": it did not build, its scenario binary
                   crashed or exited with neither 0 nor 1, or it lacks cells another column has
  unit             a column that ran whose harness unit tests failed or did not run, or a unit
                   test that passed on a version and is skipped or gone on the next (unit.py)
  never_held       a cell that failed where it ran and passed on no version (nothing ever held;
                   a skip holds nothing: skipped on the old version, failing on the new, fails)

It cannot judge (exit 3) a matrix with no versions, a version listed twice, versions not oldest
first, a column whose fingerprint names another LibTorch than its label, a cell keyed by a
version that is not a column (or lacking one that ran every cell), a malformed unit entry, or one
in which no cell passed or failed anywhere.

usage: python3 -m torchplace.matrix.gate MATRIX_JSON [--out VERDICT_JSON]   (--out's folder is made)
exit: 0 no cell regressed, 2 a cell regressed, 3 unreadable, malformed or unjudgeable input,
64 bad arguments
"""
from __future__ import annotations

import json
import os
import re
import sys
from typing import List, Optional, TextIO, Tuple

from torchplace import schema as data
from torchplace.matrix.merge import comparable  # masks what differs on every run
from torchplace.matrix.unit import check_units, unit_failures
from torchplace.schema import EXIT_INPUT, EXIT_OK, EXIT_USAGE, JsonObject
from torchplace.schema import EXIT_REGRESSION as EXIT_REGRESSED


def compare_pair(
    matrix: JsonObject, old: str, new: str
) -> Tuple[List[JsonObject], List[JsonObject]]:
    """Regressions and changes between two versions, as lists of dicts."""
    status = {v["version"]: v for v in matrix["versions"]}
    regressions: List[JsonObject] = []
    changes: List[JsonObject] = []
    if status[old]["status"] == "ok" and status[new]["status"] != "ok":
        regressions.append(
            {
                "id": f"<{new} column>",
                "old": "ok",
                "new": status[new]["status"],
                "detail": status[new].get("first_error") or "",
            }
        )
        return regressions, changes
    for cell in matrix["cells"]:
        before, after = cell["by_version"].get(old), cell["by_version"].get(new)
        if before is None or after is None:
            if before != after and status[old]["status"] == status[new]["status"] == "ok":
                changes.append(
                    {
                        "id": cell["id"],
                        "kind": "presence",
                        "old": "absent" if before is None else "present",
                        "new": "absent" if after is None else "present",
                    }
                )
            continue
        for kind in ("observed_outcome", "category", "status", "observed_class", "message"):
            if comparable(before.get(kind)) != comparable(after.get(kind)):
                changes.append(
                    {
                        "id": cell["id"],
                        "kind": kind,
                        "old": before.get(kind),
                        "new": after.get(kind),
                    }
                )
        held = last_ran(matrix, cell, old)
        if held and held[1]["status"] == "pass" and after["status"] == "fail":
            since = "" if held[0] == old else f"passed on {held[0]}, skipped since: "
            regressions.append(
                {
                    "id": cell["id"],
                    "old": "pass",
                    "new": "fail",
                    "detail": since + after.get("reason", ""),
                }
            )
        elif (
            before["category"] in data.EVIDENCE
            and after["status"] in ("pass", "skip")
            and after["category"] not in data.EVIDENCE
        ):
            detail = (
                "no longer evidence"
                if after["status"] == "pass"
                else "skipped where the older version proved it: " + _short(after.get("reason", ""))
            )
            regressions.append(
                {
                    "id": cell["id"],
                    "old": before["category"],
                    "new": after["category"],
                    "detail": detail,
                }
            )
    return regressions, changes


def last_ran(
    matrix: JsonObject, cell: JsonObject, version: str
) -> Optional[Tuple[str, JsonObject]]:
    """(version, entry) where the cell last passed or failed, at `version` or before it, looking
    back over skips only (a skip holds nothing, so it hides no regression); else None."""
    ordered = [v["version"] for v in matrix["versions"]]
    for earlier in reversed(ordered[: ordered.index(version) + 1]):
        entry = cell["by_version"].get(earlier)
        if entry is None or entry["status"] != "skip":
            return (earlier, entry) if entry and entry["status"] in ("pass", "fail") else None
    return None


def column_failures(matrix: JsonObject) -> List[JsonObject]:
    return [
        {
            "id": f"<{v['version']} column>",
            "kind": "column",
            "status": v["status"],
            "detail": v.get("problem") or v.get("first_error") or "",
        }
        for v in matrix["versions"]
        if v["status"] != "ok"
    ]


def failing_everywhere(matrix: JsonObject) -> List[JsonObject]:
    """Cells that failed where they ran and passed on no version: nothing ever held, and a skip
    holds nothing (a column that did not run gives its cells its own status, build_failed or
    run_failed, and is not counted)."""
    found = []
    for cell in matrix["cells"]:
        failed = {v: e for v, e in cell["by_version"].items() if e["status"] == "fail"}
        passed = [v for v, e in cell["by_version"].items() if e["status"] == "pass"]
        if failed and not passed:
            found.append(
                {
                    "id": cell["id"],
                    "kind": "never_held",
                    "status": "fail",
                    "detail": f"fails on {', '.join(failed)}, passes on none: "
                    + _short(next(iter(failed.values())).get("reason", "")),
                }
            )
    return found


VERSION_LABEL = re.compile(r"\d+(?:\.\d+)*")
RAN = ("pass", "fail", "skip")


def version_key(label: object, where: str) -> Tuple[int, ...]:
    """'2.14.1' -> (2, 14, 1); InputError for a label that is no version number."""
    if not isinstance(label, str) or not VERSION_LABEL.fullmatch(label):
        raise data.InputError(f"{where}: version {label!r} is not a version number like 2.14.1")
    return tuple(int(part) for part in label.split("."))


def check_versions(matrix: JsonObject, path: str) -> None:
    """The columns must be known, unique, oldest first, each labelled as its fingerprint says,
    and every cell's by_version keyed by them: else pairs would compare the wrong columns.
    A fingerprint's major.minor must match the label (Debian's libtorch-dev 1.13.1 headers say
    TORCH_VERSION 1.13.0: torch/csrc/api/include/torch/version.h, TORCH_VERSION_PATCH 0)."""
    labels = [v["version"] for v in matrix["versions"]]
    if not labels:
        raise data.InputError(f"{path}: no versions: a matrix without columns compares nothing")
    keys = [version_key(label, f"{path}: versions[{i}]") for i, label in enumerate(labels)]
    repeated = sorted({label for label in labels if labels.count(label) > 1})
    if repeated:
        raise data.InputError(f"{path}: version(s) {', '.join(repeated)} listed twice")
    if keys != sorted(keys):
        raise data.InputError(
            f"{path}: versions {', '.join(labels)} are not oldest first: "
            "neighbouring pairs would compare in the wrong direction"
        )
    for index, column in enumerate(matrix["versions"]):
        where = f"{path}: versions[{index}].fingerprint"
        found = (column.get("fingerprint") or {}).get("libtorch_version")
        number = VERSION_LABEL.match(found or "")  # "2.6.0", "2.6.0+dfsg", "2.6.0a0"
        if found is not None and (
            not number or version_key(number.group(), where)[:2] != keys[index][:2]
        ):
            raise data.InputError(
                f"{path}: versions[{index}] is labelled {labels[index]} but its "
                f"results' fingerprint says LibTorch {found}"
            )
    check_cells(matrix, path)
    check_units(matrix["versions"], path)


def check_cells(matrix: JsonObject, path: str) -> None:
    """Every cell keyed by the columns, and in a column that ran (ok) passed, failed or skipped:
    any other status there is judged by no rule."""
    labels = [v["version"] for v in matrix["versions"]]
    status = {v["version"]: v["status"] for v in matrix["versions"]}
    for index, cell in enumerate(matrix["cells"]):
        odd = [
            f"{v}: {e['status']!r}"
            for v, e in cell["by_version"].items()
            if status.get(v) == "ok" and e["status"] not in RAN
        ]
        if odd:
            raise data.InputError(
                f"{path}: cells[{index}] ({cell['id']}): status {', '.join(odd)} in a column "
                "that ran: only pass, fail or skip can be judged"
            )
        unknown = sorted(set(cell["by_version"]) - set(labels))
        missing = [v for v in labels if v not in cell["by_version"] and status[v] == "ok"]
        if unknown or missing:
            raise data.InputError(
                f"{path}: cells[{index}] ({cell['id']}): by_version "
                + (
                    f"has {', '.join(unknown)}, not among the versions"
                    if unknown
                    else f"lacks {', '.join(missing)}, a column that ran every cell"
                )
            )


def compared_cells(matrix: JsonObject) -> int:
    """Cells that ran (pass or fail) on at least one version: what the verdict rests on."""
    return sum(
        1
        for cell in matrix["cells"]
        if any(e["status"] in ("pass", "fail") for e in cell["by_version"].values())
    )


def gate(matrix: JsonObject, path: str = "matrix.json") -> JsonObject:
    """The verdict; InputError when the matrix cannot be judged (check_versions) or nothing in it
    was compared and nothing failed."""
    check_versions(matrix, path)
    ordered = [v["version"] for v in matrix["versions"]]
    pairs: List[JsonObject] = []
    for old, new in zip(ordered, ordered[1:]):  # each version against its older neighbour
        regressions, changes = compare_pair(matrix, old, new)
        pairs.append({"old": old, "new": new, "regressions": regressions, "changes": changes})
    failures = column_failures(matrix) + unit_failures(matrix["versions"])
    failures += failing_everywhere(matrix)
    failed = bool(failures) or any(pair["regressions"] for pair in pairs)
    compared = compared_cells(matrix)
    if not compared and not failed:
        raise data.InputError(
            f"{path}: nothing compared: none of its {len(matrix['cells'])} "
            "cell(s) passed or failed on any version"
        )
    verdict: JsonObject = {
        "schema": "torchplace.matrix_gate/1",
        "verdict": "fail" if failed else "pass",
        "compared": compared,
        "failures": failures,
        "pairs": pairs,
    }
    synthetic = [
        {"version": v["version"], "reason": data.synthetic_reason(v.get("fingerprint"))}
        for v in matrix["versions"]
        if data.synthetic_reason(v.get("fingerprint"))
    ]
    if synthetic:  # a note, not a failure: the gate's own tests run on synthetic columns
        verdict["synthetic"] = synthetic
    return verdict


def _short(text: object, limit: int = 160) -> str:
    """The first line of a message, cut at `limit` characters (matrix-gate.json keeps it whole)."""
    line = str(text).split("\n", 1)[0]
    return line if len(line) <= limit and "\n" not in str(text) else line[:limit] + "…"


def print_verdict(verdict: JsonObject, stream: TextIO) -> None:
    for pair in verdict["pairs"]:
        print(
            f"{pair['old']} -> {pair['new']}: {len(pair['regressions'])} regression(s), "
            f"{len(pair['changes'])} behaviour change(s)",
            file=stream,
        )
        for item in pair["regressions"]:
            print(
                f"  REGRESSED {item['id']}: {item['old']} -> {item['new']} "
                f"{item['detail']}".rstrip(),
                file=stream,
            )
        for item in pair["changes"]:
            print(
                f"  changed {item['kind']} of {item['id']}: {_short(comparable(item['old']))!r} -> "
                f"{_short(comparable(item['new']))!r}",
                file=stream,
            )
    for item in verdict["failures"]:
        print(
            f"  FAILED ({item['kind']}) {item['id']}: {item['status']} {item['detail']}".rstrip(),
            file=stream,
        )
    for item in verdict.get("synthetic", []):
        print(
            f"matrix gate: note: column {item['version']} is SYNTHETIC (hand-made test data, "
            f"not a measurement): {item['reason']}",
            file=stream,
        )
    print(f"matrix gate: {verdict['verdict']}", file=stream)


def exit_code(verdict: JsonObject) -> int:
    """2 when a cell regressed between neighbouring versions, else 0."""
    return EXIT_REGRESSED if verdict["verdict"] == "fail" else EXIT_OK


def main(argv: List[str]) -> int:
    if len(argv) not in (2, 4) or (len(argv) == 4 and argv[2] != "--out"):
        print(__doc__, file=sys.stderr)
        return EXIT_USAGE
    with data.stops_cleanly():  # a held SIGTERM is dropped once the verdict is out
        return judge_and_write(argv[1], argv[3] if len(argv) == 4 else None)


def judge_and_write(path: str, out: Optional[str]) -> int:
    """The verdict on the matrix at path, written to out when given, then printed. An earlier
    verdict at out is removed first: a run that judges nothing leaves none behind."""
    folder, name = os.path.dirname(os.path.abspath(out or ".")), os.path.basename(out or ".")
    try:
        if out:
            data.remove_outputs(folder, [name])
        matrix = data.load_matrix(path)
        verdict = gate(matrix, path)
        data.hold_sigterm()  # judged: a SIGTERM now waits until the verdict is out
    except data.InputError as error:
        _say(f"matrix gate: bad input: {error}")
        return EXIT_INPUT
    except data.Terminated:  # the handler holds a second SIGTERM back
        _say("matrix gate: stopped by SIGTERM; nothing judged (exit 3)")
        return EXIT_INPUT
    except Exception as error:  # noqa: BLE001  a tool error is exit 3, never a pass
        _say(f"matrix gate: tool error {type(error).__name__}: {error} (exit 3)")
        return EXIT_INPUT
    code = exit_code(verdict)
    if out:
        try:  # a folder that is not there yet is made
            data.write_set(folder, {name: json.dumps(verdict, indent=1) + "\n"}, last=name)
        except OSError as error:
            _say(f"matrix gate: cannot write {out}: {error.strerror or error} (exit 3)")
            return EXIT_INPUT
    try:
        print_verdict(verdict, sys.stdout)
        sys.stdout.flush()  # here, not at exit, where a closed pipe would make the code 120
    except OSError:  # a closed pipe: the verdict stands, and the flush at exit must not fail
        data.to_devnull(sys.stdout)
    except ValueError:  # a closed or ASCII-only stream (UnicodeError): the verdict stands
        pass
    return code


def _say(text: str) -> None:
    try:
        print(text.encode("utf-8", "backslashreplace").decode("utf-8"), file=sys.stderr)
    except (OSError, ValueError, UnicodeError):
        pass


if __name__ == "__main__":
    sys.exit(main(sys.argv))
