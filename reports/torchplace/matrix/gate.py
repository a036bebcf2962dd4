"""Gates a version matrix (matrix.json): for each pair of neighbouring versions (old, new) it
reports every behaviour change (outcome, status, error class, message) and fails when a cell
that passed on the old version fails on the new one.

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
  every_version    a cell that failed on every version that ran it (nothing ever held)

usage: python3 -m torchplace.matrix.gate MATRIX_JSON [--out VERDICT_JSON]
exit: 0 no cell regressed, 2 a cell regressed, 3 unreadable or malformed input, 64 bad arguments
"""
import json
import sys

from torchplace import schema as data
from torchplace.matrix.merge import comparable  # masks what differs on every run
from torchplace.schema import EXIT_INPUT, EXIT_OK, EXIT_USAGE
from torchplace.schema import EXIT_REGRESSION as EXIT_REGRESSED


def compare_pair(matrix, old, new):
    """Regressions and changes between two versions, as lists of dicts."""
    status = {v["version"]: v for v in matrix["versions"]}
    regressions, changes = [], []
    if status[old]["status"] == "ok" and status[new]["status"] != "ok":
        regressions.append({"id": f"<{new} column>", "old": "ok", "new": status[new]["status"],
                            "detail": status[new].get("first_error") or ""})
        return regressions, changes
    for cell in matrix["cells"]:
        before, after = cell["by_version"].get(old), cell["by_version"].get(new)
        if before is None or after is None:
            if before != after and status[old]["status"] == status[new]["status"] == "ok":
                changes.append({"id": cell["id"], "kind": "presence",
                                "old": "absent" if before is None else "present",
                                "new": "absent" if after is None else "present"})
            continue
        for kind in ("observed_outcome", "category", "status", "observed_class", "message"):
            if comparable(before.get(kind)) != comparable(after.get(kind)):
                changes.append({"id": cell["id"], "kind": kind, "old": before.get(kind),
                                "new": after.get(kind)})
        if before["status"] == "pass" and after["status"] == "fail":
            regressions.append({"id": cell["id"], "old": "pass", "new": "fail",
                                "detail": after.get("reason", "")})
        elif before["category"] in data.EVIDENCE and after["status"] in ("pass", "skip") and \
                after["category"] not in data.EVIDENCE:
            detail = ("no longer evidence" if after["status"] == "pass" else
                      "skipped where the older version proved it: " + _short(after.get("reason", "")))
            regressions.append({"id": cell["id"], "old": before["category"],
                                "new": after["category"], "detail": detail})
    return regressions, changes


def column_failures(matrix):
    return [{"id": f"<{v['version']} column>", "kind": "column", "status": v["status"],
             "detail": v.get("problem") or v.get("first_error") or ""}
            for v in matrix["versions"] if v["status"] != "ok"]


def failing_everywhere(matrix):
    """Cells that failed on every version that ran them (a column that did not run gives its
    cells its own status, build_failed or run_failed, and is not counted)."""
    found = []
    for cell in matrix["cells"]:
        seen = {v: e for v, e in cell["by_version"].items() if e["status"] in ("pass", "fail", "skip")}
        if seen and all(e["status"] == "fail" for e in seen.values()):
            found.append({"id": cell["id"], "kind": "every_version", "status": "fail",
                          "detail": f"fails on {', '.join(seen)}: "
                                    + _short(next(iter(seen.values())).get("reason", ""))})
    return found


def gate(matrix):
    ordered = [v["version"] for v in matrix["versions"]]
    pairs = []
    for old, new in zip(ordered, ordered[1:]):
        regressions, changes = compare_pair(matrix, old, new)
        pairs.append({"old": old, "new": new, "regressions": regressions, "changes": changes})
    failures = column_failures(matrix) + failing_everywhere(matrix)
    failed = bool(failures) or any(pair["regressions"] for pair in pairs)
    return {"schema": "torchplace.matrix_gate/1", "verdict": "fail" if failed else "pass",
            "failures": failures, "pairs": pairs}


def _short(text, limit=160):
    """The first line of a message, cut at `limit` characters (matrix-gate.json keeps it whole)."""
    line = str(text).split("\n", 1)[0]
    return line if len(line) <= limit and "\n" not in str(text) else line[:limit] + "…"


def print_verdict(verdict, stream):
    for pair in verdict["pairs"]:
        print(f"{pair['old']} -> {pair['new']}: {len(pair['regressions'])} regression(s), "
              f"{len(pair['changes'])} behaviour change(s)", file=stream)
        for item in pair["regressions"]:
            print(f"  REGRESSED {item['id']}: {item['old']} -> {item['new']} {item['detail']}".rstrip(),
                  file=stream)
        for item in pair["changes"]:
            print(f"  changed {item['kind']} of {item['id']}: {_short(comparable(item['old']))!r} -> "
                  f"{_short(comparable(item['new']))!r}",
                  file=stream)
    for item in verdict["failures"]:
        print(f"  FAILED ({item['kind']}) {item['id']}: {item['status']} {item['detail']}".rstrip(),
              file=stream)
    print(f"matrix gate: {verdict['verdict']}", file=stream)


def main(argv):
    if len(argv) not in (2, 4) or (len(argv) == 4 and argv[2] != "--out"):
        print(__doc__, file=sys.stderr)
        return EXIT_USAGE
    try:
        matrix = data.load_matrix(argv[1])
    except data.InputError as error:
        print(f"matrix gate: bad input: {error}", file=sys.stderr)
        return EXIT_INPUT
    verdict = gate(matrix)
    print_verdict(verdict, sys.stdout)
    if len(argv) == 4:
        data.write_atomically(argv[3], (json.dumps(verdict, indent=1) + "\n").encode("utf-8"), "wb")
    return EXIT_REGRESSED if verdict["verdict"] == "fail" else EXIT_OK


if __name__ == "__main__":
    sys.exit(main(sys.argv))
