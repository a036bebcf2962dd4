"""The behaviour gate: a run's scenario cells against the expectations committed in the repository.

expectations.json holds, per cell id, the outcome and error class the code expected when it was
last refreshed (`ci/torchplace gate --refresh-expectations RUN_DIR`). The gate fails on:
  stopped_raising       the committed expectation is an error, the cell now succeeds
  started_failing       the committed expectation is success, the cell now raises
  error_class_changed   both raise, of different classes
  exception             the cell threw something that is not a c10::Error
  expectation_changed   the code's expectation differs from the committed one (a weakened
                        expectation shows up here; refresh the file in the same change if meant)
  harness_fail          the harness marked the cell failed for another reason
  vanished              a committed cell is absent from the run
  unexplained_skip      a cell skipped without a code from the closed set (skips.SKIP_CODES),
                        with one the run or the cell's device contradicts, or with a need code
                        (needs_cuda, needs_no_cuda, not_on_sim) its committed entry does not list
                        in "skip_codes" (skips.skip_problem)
  new_cell_failed       a cell absent from the committed file failed
  unknown_status        a status other than pass, fail or skip
  race_not_shown        a race control that never went wrong, or a fixed variant whose copy was
                        never in flight: the cell ran but proved nothing (see "Outcome categories")
  transfers_grew        a passing cell's transfer counts (copies, bytes or forced synchronisations
                        of its step, tp::sim::TransferLog) above its committed "transfers" budget,
                        naming each count and the operator that added a synchronisation
  transfers_unrecorded  a passing cell whose committed entry has a transfer budget recorded none
                        of its counts (a budget that cannot be checked is not a pass)
  notes_changed         a cell that ran noted other things than its committed entry's "notes",
                        on the LibTorch the entries were refreshed on (gate/notes.py)
  metrics_changed       a cell that ran reports a metric lost, new, or off its committed value,
                        on that LibTorch too (gate/metrics.py)
  expected_note_changed a cell's expectation, run or skipped, states another note (a skip's
                        reason, why a mistake is latent) than its committed "expected_note", on
                        that LibTorch too (gate/stated.py)
Cells skipped for an accepted code are listed, not compared. A cell on cuda:1..N is judged by
its kind's entry (the cuda:0 one), so a second GPU is never left ungated. New cells are listed.
A run in which no committed cell was compared, and an expectations file without cells, cannot
be judged (InputError: exit 3), nor can a refresh from a run without cells.
"""
from __future__ import annotations

import datetime
import json
import os
import re
from typing import Any, Dict, List, Mapping, Optional, Sequence, Set, Tuple

from torchplace.gate import metrics, notes, skips, stated
from torchplace.schema import (
    CATEGORIES,
    EXPECTED_CATEGORY,
    EXPECTED_OUTCOMES,
    ROOT,
    InputError,
    JsonObject,
    check_category,
    load_json,
    load_results,
    one_of,
    require,
    typed,
    synthetic_reason,
    write_atomically,
)

EXPECTATIONS_SCHEMA = "torchplace.expectations/1"
DEFAULT_EXPECTATIONS = str(ROOT / "ci" / "gate" / "expectations.json")
REFRESH_COMMAND = "ci/torchplace gate --refresh-expectations RUN_DIR"


# --- Outcome categories (issue 13, item 2) ------------------------------------------------------
# The committed expectation holds each cell's expected category as well (passed, expected_error,
# ran_unexercised, latent_unexercised, race_shown, skipped): a cell moved from proving its claim to
# "ran_unexercised" is a changed expectation, and a run's observed category must be evidence
# wherever the committed one is.
EXPECTED_FIELDS = ("outcome", "error_class", "category")


def _expected(cell: JsonObject) -> Dict[str, Any]:
    expected = cell["expected"]
    return {
        "outcome": expected["outcome"],
        "error_class": expected["error_class"],
        "category": expected["category"],
    }


def _category_problem(committed: Mapping[str, Any], cell: JsonObject) -> Optional[Tuple[str, str]]:
    """('race_not_shown', text) when a cell committed as evidence ran without proving it."""
    if cell["category"] != "race_not_shown":
        return None
    return "race_not_shown", (
        f"committed as {committed['category']}, the cell ran without "
        f"showing its race: {'; '.join(cell.get('notes', []))}"
    )


def _category_counts(cells: Dict[str, JsonObject]) -> Dict[str, int]:
    """{category: cells} of the run, evidence first: what its green marks rest on."""
    counts: Dict[str, int] = {}
    for cell in cells.values():
        counts[cell["category"]] = counts.get(cell["category"], 0) + 1
    order = list(CATEGORIES)
    return dict(sorted(counts.items(), key=lambda item: order.index(item[0])))


# --- end of outcome categories ------------------------------------------------------------------


# --- Transfer budgets (issue 32) -----------------------------------------------------------------
# A cell that counts its step's transfers on the simulated device records them as metrics
# (harness/transfer_metrics.h): transfer.<phase>.{h2d,d2h,d2d}.{copies,bytes,non_blocking} and
# transfer.<phase>.sync.<operator>. Its committed entry holds them as "transfers" {metric: count}
# (written by a refresh); a count above its entry is a regression, a count below it is listed.
TRANSFER_PREFIX = metrics.TRANSFER_PREFIX  # one definition: metrics.py leaves these to the budget
DIRECTIONS = {"h2d": "host-to-device", "d2h": "device-to-host", "d2d": "device-to-device"}


def transfers_of(cell: dict[str, Any]) -> dict[str, int]:
    """The cell's transfer counts from its metrics ({} when it recorded none)."""
    metrics = cell.get("metrics") or {}
    return {
        name: int(value)
        for name, value in metrics.items()
        if name.startswith(TRANSFER_PREFIX) and isinstance(value, (int, float))
    }


def describe_transfer(name: str) -> str:
    """'transfer.step.sync.nonzero' -> 'step: synchronisations by nonzero'."""
    phase, rest = name[len(TRANSFER_PREFIX) :].split(".", 1)
    kind, what = rest.split(".", 1) if "." in rest else (rest, "")
    if kind == "sync":
        return f"{phase}: synchronisations by {what}"
    return f"{phase}: {DIRECTIONS.get(kind, kind)} {what.replace('_', '-')}"


def _check_transfers(expected: dict[str, Any], where: str) -> None:
    budget = typed(expected, "transfers", (dict,), where, optional=True) or {}
    for name, count in budget.items():
        if not name.startswith(TRANSFER_PREFIX) or name.count(".") < 3:
            raise InputError(
                f"{where}: transfers key {name!r} is not transfer.<phase>.<kind>.<what>"
            )
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise InputError(
                f"{where}: transfers[{name!r}] is {count!r}: a count is a whole number >= 0"
            )


def _transfer_problem(committed: dict[str, Any], cell: dict[str, Any]) -> Optional[tuple[str, str]]:
    """transfers_unrecorded or transfers_grew for a passing cell with a committed budget."""
    budget = committed.get("transfers") or {}
    if not budget or cell["status"] != "pass":
        return None
    seen = transfers_of(cell)
    missing = sorted(set(budget) - set(seen))
    if missing:
        return "transfers_unrecorded", (
            f"its committed transfer budget has {len(budget)} count(s), the run recorded "
            f"{len(budget) - len(missing)} of them (missing: {', '.join(missing[:3])})"
        )
    grew = [
        f"{describe_transfer(name)} {budget.get(name, 0)} -> {count}"
        for name, count in sorted(seen.items())
        if count > budget.get(name, 0)
    ]
    if grew:
        return "transfers_grew", "; ".join(grew)
    return None


def _transfers_below(committed: dict[str, Any], cell: dict[str, Any]) -> list[str]:
    """The counts of a passing cell below its committed budget (refresh to keep the gain)."""
    budget = committed.get("transfers") or {}
    seen = transfers_of(cell) if cell["status"] == "pass" else {}
    return [
        f"{describe_transfer(name)} {count} -> {seen[name]}"
        for name, count in sorted(budget.items())
        if name in seen and seen[name] < count
    ]


def _transfer_budgets(cells: dict[str, dict[str, Any]]) -> dict[str, dict[str, int]]:
    """{kind: transfers} of the run's passing cells that recorded counts (for a refresh)."""
    out: dict[str, dict[str, int]] = {}
    for cell_id, cell in sorted(cells.items()):
        counts = transfers_of(cell)
        if counts and cell["status"] == "pass":
            out.setdefault(kind_id(cell_id), counts)
    return out


# --- end of transfer budgets --------------------------------------------------------------------


def load_expectations(path: str) -> Dict[str, JsonObject]:
    """The committed cells: {id: {"outcome", "error_class", "category"[, "skip_codes"]}}, every
    field checked for its type and closed set; an empty file compares nothing and is refused."""
    return expectation_cells(load_json(path, "committed expectations"), path)


def expectation_cells(doc: JsonObject, path: str) -> Dict[str, JsonObject]:
    """load_expectations of a document already read from path."""
    require(doc, ("schema", "cells"), path)
    if doc["schema"] != EXPECTATIONS_SCHEMA:
        raise InputError(f"{path}: schema is {doc['schema']!r}, expected {EXPECTATIONS_SCHEMA!r}")
    cells = typed(doc, "cells", (dict,), path)
    if not cells:
        raise InputError(
            f"{path}: no cells: an empty expectations file compares nothing "
            f"(refresh it from a run: {REFRESH_COMMAND})"
        )
    for cell_id, expected in cells.items():
        _check_entry(expected, f"{path}: cells[{cell_id!r}]")
    return cells


def _check_entry(expected: JsonObject, where: str) -> None:
    require(expected, EXPECTED_FIELDS, where)
    outcome = one_of(expected, "outcome", EXPECTED_OUTCOMES, where)
    typed(expected, "error_class", (str,) if outcome == "error" else (type(None),), where)
    check_category(expected["category"], where)
    if expected["category"] not in EXPECTED_CATEGORY[outcome]:
        raise InputError(
            f"{where}: category {expected['category']!r} contradicts outcome " f"{outcome!r}"
        )
    codes = typed(expected, "skip_codes", (list,), where, optional=True) or []
    typed(expected, "needs_libtorch", (str,), where, optional=True)
    unknown = [code for code in codes if code not in skips.NEED_CODES]
    if unknown:
        raise InputError(
            f"{where}: skip_codes {unknown!r} are not need codes "
            f"({', '.join(skips.NEED_CODES)}); device-absence codes need no entry"
        )
    _check_transfers(expected, where)
    notes.check_entry(expected, where)
    metrics.check_entry(expected, where)
    stated.check_entry(expected, where)


def results_path(run_dir: str) -> str:
    """RUN_DIR/results.json, or the file itself when a file is given."""
    return run_dir if os.path.isfile(run_dir) else os.path.join(run_dir, "results.json")


def _cells_by_id(doc: JsonObject, path: str) -> Dict[str, JsonObject]:
    cells = {}
    for cell in doc["cells"]:
        if cell["id"] in cells:
            raise InputError(f"{path}: cell {cell['id']!r} appears twice")
        cells[cell["id"]] = cell
    return cells


OTHER_GPU = re.compile(r"/device=cuda:[1-9]\d*$")


def kind_id(cell_id: str) -> str:
    """The committed entry a cell is judged by: cuda:K's kind is its cuda:0 entry."""
    return OTHER_GPU.sub("/device=cuda:0", cell_id)


def _observation_problem(committed: JsonObject, cell: JsonObject) -> Optional[Tuple[str, str]]:
    """The regression kind and text when the observed outcome breaks the committed one, or None."""
    observed = cell["observed"]
    if observed["outcome"] == "exception":
        return "exception", f"threw a non-c10 exception: {observed.get('message', '')}"
    if committed["outcome"] == "error" and observed["outcome"] == "success":
        return "stopped_raising", f"expected {committed['error_class']}, the cell now succeeds"
    if committed["outcome"] == "success" and observed["outcome"] == "error":
        return (
            "started_failing",
            f"now raises {observed['error_class']}: {observed.get('message', '')}",
        )
    if committed["outcome"] == "error" and observed["error_class"] != committed["error_class"]:
        return "error_class_changed", (
            f"raises {observed['error_class']} instead of "
            f"{committed['error_class']}: {observed.get('message', '')}"
        )
    if committed["outcome"] == "skip":
        return "outcome_changed", f"committed as skipped, the cell ran ({observed['outcome']})"
    if cell["status"] == "fail":
        return "harness_fail", cell["reason"]
    return _category_problem(committed, cell)


def _check_cell(
    committed: Optional[JsonObject], cell: JsonObject, fingerprint: JsonObject
) -> Optional[Tuple[str, str]]:
    """(kind, text) for a regression, ('skipped', reason), or None when the cell is fine.
    committed is None for a new cell: only its status and skip are judged."""
    if cell["status"] not in ("pass", "fail", "skip"):
        return "unknown_status", f"status {cell['status']!r}: {cell['reason']}"
    if cell["status"] == "skip":
        problem = skips.skip_problem(cell, committed, fingerprint)
        if problem:
            return "unexplained_skip", problem
    if committed is None:  # a new cell: failed, or a race it never showed, is a regression
        if cell["status"] == "fail":
            return "new_cell_failed", cell["reason"]
        return _category_problem(_expected(cell), cell)
    if _expected(cell) != {key: committed[key] for key in EXPECTED_FIELDS}:
        return "expectation_changed", (
            f"the code expects {_expected(cell)}, the committed file says "
            f"{committed}; if intended, refresh: {REFRESH_COMMAND}"
        )
    if cell["status"] == "skip":
        return "skipped", f"{cell['reason']} [{cell['skip_code']}]"
    return _observation_problem(committed, cell) or _transfer_problem(committed, cell)


def _regression(
    cell: JsonObject, committed: Optional[JsonObject], problem: Tuple[str, str]
) -> JsonObject:
    return {
        "id": cell["id"],
        "kind": problem[0],
        "detail": problem[1],
        "expected": committed or _expected(cell),
        "observed": {
            "outcome": cell["observed"]["outcome"],
            "error_class": cell["observed"]["error_class"],
            "category": cell["category"],
        },
    }


def _held_problem(
    own: JsonObject, cell: JsonObject, problem: Optional[Tuple[str, str]]
) -> Optional[Tuple[str, str]]:
    """What the cell's own entry holds beyond its outcome, on the LibTorch it was refreshed on:
    its expectation's note, whether it ran or skipped; the notes and metrics of a cell that ran."""
    if problem and problem[0] != "skipped":
        return problem
    return (
        stated.problem(own, cell)
        or problem
        or notes.problem(own, cell)
        or metrics.problem(own, cell)
    )


def compare(
    run_dir: str, expectations_path: str, required: Optional[Dict[str, int]] = None
) -> JsonObject:
    """The behaviour section of the verdict; raises InputError on unreadable input or a run on
    fewer devices than required ({'cuda': N}, from --require-devices)."""
    path = results_path(run_dir)
    doc = load_results(path)
    too_few = skips.device_problem(required, doc["fingerprint"], path)
    if too_few:
        raise InputError(too_few)
    cells = _cells_by_id(doc, path)
    expectations = load_json(expectations_path, "committed expectations")
    committed = expectation_cells(expectations, expectations_path)
    hold_outputs = notes.held(expectations, doc["fingerprint"])  # notes and metrics alike
    section: Dict[str, Any] = {
        "results": path,
        "expectations": expectations_path,
        "compared": 0,
        "regressions": [],
        "skipped": [],
        "new": [],
        "transfers_below_budget": [],
        "categories": _category_counts(cells),
    }
    if synthetic_reason(doc["fingerprint"]):  # a note, not a failure: the gate's tests use it
        section["synthetic"] = synthetic_reason(doc["fingerprint"])
    for cell_id, cell in cells.items():
        entry = committed.get(cell_id, committed.get(kind_id(cell_id)))
        if entry is None:
            section["new"].append(
                {
                    "id": cell_id,
                    "expected": _expected(cell),
                    "observed": cell["observed"]["outcome"],
                    "category": cell["category"],
                }
            )
        problem = _check_cell(entry, cell, doc["fingerprint"])
        if hold_outputs and cell_id in committed:  # a cell's own entry only
            problem = _held_problem(committed[cell_id], cell, problem)
        if problem and problem[0] == "skipped":
            section["skipped"].append({"id": cell_id, "reason": problem[1]})
            continue
        section["compared"] += entry is not None
        if problem:
            section["regressions"].append(_regression(cell, entry, problem))
        elif entry is not None and _transfers_below(entry, cell):
            below = "; ".join(_transfers_below(entry, cell))
            section["transfers_below_budget"].append({"id": cell_id, "detail": below})
    for cell_id in sorted(set(committed) - set(cells)):
        section["regressions"].append(
            {
                "id": cell_id,
                "kind": "vanished",
                "detail": "in the committed expectations, absent from the run",
                "expected": committed[cell_id],
                "observed": None,
            }
        )
    if not section["compared"] and not section["regressions"]:
        raise InputError(
            f"{path}: nothing compared: none of its {len(cells)} cell(s) ran against "
            f"a committed expectation ({len(section['skipped'])} skipped, "
            f"{len(section['new'])} new); a run that proves nothing cannot pass"
        )
    return section


def regressed(section: JsonObject) -> bool:
    return bool(section["regressions"])


def _kind_entries(
    cells: Dict[str, JsonObject],
    path: str,
    fingerprint: JsonObject,
    carried: Mapping[str, Sequence[str]],
) -> Dict[str, JsonObject]:
    """One entry per kind: cuda:K cells fold into their cuda:0 entry and must agree with it. Each
    entry lists the need codes its cells were skipped with here (where the run makes them true)
    and those `carried` from the committed file ({kind: codes}): a run cannot show needs_no_cuda
    without CUDA, nor needs_cuda with it, so a CPU refresh keeps what a GPU one recorded."""
    out: Dict[str, JsonObject] = {}
    codes: Dict[str, Set[str]] = {}
    versions: Dict[str, str] = {}
    for cell_id, cell in sorted(cells.items()):
        key = kind_id(cell_id)
        if key in out and out[key] != _expected(cell):
            raise InputError(
                f"{path}: {cell_id} expects {_expected(cell)}, its kind {key} "
                f"expects {out[key]}; one entry per kind cannot hold both"
            )
        out.setdefault(key, _expected(cell))
        found = codes.setdefault(key, set(carried.get(key, ())))
        code = cell.get("skip_code")
        if (
            cell["status"] == "skip"
            and code in skips.NEED_CODES
            and not skips._untrue(code, cell, fingerprint)
        ):
            found.add(code)
            if code == "needs_newer_libtorch":  # the version it waits for, held (skips.py)
                versions[key] = cell["needs_libtorch"]
    for key, found in codes.items():
        if found:
            out[key] = dict(out[key], skip_codes=sorted(found))
    for key, version in versions.items():
        out[key] = dict(out[key], needs_libtorch=version)
    for key, budget in _transfer_budgets(cells).items():
        out[key] = dict(out[key], transfers=budget)
    for key, kept in notes.entries(cells, kind_id).items():
        out[key] = dict(out[key], notes=kept)
    for key, held in metrics.entries(cells, kind_id).items():
        out[key] = dict(out[key], metrics=held)
    for key, note in stated.entries(cells, kind_id).items():
        out[key] = dict(out[key], **{stated.KEY: note})
    return out


def _committed_codes(expectations_path: str) -> Dict[str, List[str]]:
    """{kind: need codes} of the expectations file being replaced ({} when there is none or it
    holds none it could keep)."""
    if not os.path.exists(expectations_path):
        return {}
    cells = load_json(expectations_path, "committed expectations")
    cells = cells.get("cells") if isinstance(cells, dict) else None
    if not isinstance(cells, dict):
        return {}
    return {
        key: [code for code in entry.get("skip_codes", []) if code in skips.NEED_CODES]
        for key, entry in cells.items()
        if isinstance(entry, dict) and isinstance(entry.get("skip_codes"), list)
    }


def refresh(run_dir: str, expectations_path: str) -> int:
    """Rewrites the committed expectations from a run's cells; refuses a run with failed cells
    or with none. Makes the expectations' folder on a first refresh (a project with no ci/ yet)."""
    path = results_path(run_dir)
    doc = load_results(path)
    if not doc["cells"]:
        raise InputError(
            f"{path}: the run has no cells; refreshing from it would wipe " f"{expectations_path}"
        )
    failed = [cell["id"] for cell in doc["cells"] if cell["status"] == "fail"]
    if failed:
        raise InputError(
            f"{path}: {len(failed)} cell(s) failed (first: {failed[0]}); fix them "
            "before refreshing the expectations"
        )
    entries = _kind_entries(
        _cells_by_id(doc, path), path, doc["fingerprint"], _committed_codes(expectations_path)
    )
    out = {
        "schema": EXPECTATIONS_SCHEMA,
        "refresh": REFRESH_COMMAND,
        "generated": {
            "at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "libtorch_version": doc["fingerprint"].get("libtorch_version"),
            "os": doc["fingerprint"].get("os"),
            "cells": len(entries),
        },
        "cells": entries,
    }
    os.makedirs(os.path.dirname(os.path.abspath(expectations_path)), exist_ok=True)
    write_atomically(expectations_path, json.dumps(out, indent=1) + "\n")
    return len(entries)
