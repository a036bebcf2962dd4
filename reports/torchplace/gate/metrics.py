"""A cell's metrics, held to its committed entry (issue 45, item 4): the numbers a cell reports (a
loss, the GradScaler's final scale, the steps it skipped, the largest difference after a reload)
are part of what it shows its reader, so a metric lost, added or moved is a regression,
metrics_changed. The transfer counts (transfer.*) are held apart, as a budget (behaviour.py).

A value is compared within METRIC_RTOL of the committed one (the CPU kernels a fresh machine
picks may sum in another order); a duration (a name ending "_ms") and every metric of a CUDA cell
(a race's count, a timing) are held by name only. Metrics are held on the LibTorch the
expectations were refreshed on only (notes.held): another version computes other losses. An
entry without "metrics" (refreshed from a skip, or before metrics were kept) holds none."""
from __future__ import annotations

import math
from typing import Any, Dict, List, Optional, Tuple

from torchplace.schema import InputError, JsonObject, typed

METRIC_RTOL = 1e-4
TRANSFER_PREFIX = "transfer."  # the transfer budget's counts, which behaviour.py holds


def by_name_only(cell_id: str, name: str) -> bool:
    """A metric whose value varies run to run: a duration, or any metric of a CUDA cell."""
    return name.endswith("_ms") or "=cuda:" in cell_id


def held_metrics(cell: JsonObject) -> Dict[str, float]:
    """The cell's metrics, less its transfer counts."""
    metrics = cell.get("metrics") or {}
    return {k: v for k, v in metrics.items() if not k.startswith(TRANSFER_PREFIX)}


def check_entry(expected: JsonObject, where: str) -> None:
    """An entry's optional "metrics": {name: finite number}."""
    metrics = typed(expected, "metrics", (dict,), where, optional=True) or {}
    for name, value in metrics.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise InputError(f"{where}: metrics[{name!r}] must be a number, found {value!r}")
        if not math.isfinite(value):
            raise InputError(f"{where}: metrics[{name!r}] is {value!r}: not a finite number")


def _moved(cell_id: str, want: Dict[str, float], got: Dict[str, Any]) -> List[str]:
    """'name want -> got' for each value outside METRIC_RTOL (a NaN is always outside)."""
    return [
        f"{name} {want[name]!r} -> {got[name]!r}"
        for name in sorted(set(want) & set(got))
        if not by_name_only(cell_id, name)
        and not (
            isinstance(got[name], (int, float))
            and math.isclose(got[name], want[name], rel_tol=METRIC_RTOL, abs_tol=0.0)
        )
    ]


def problem(committed: JsonObject, cell: JsonObject) -> Optional[Tuple[str, str]]:
    """('metrics_changed', text) when a cell that ran reports other metrics than its entry."""
    if "metrics" not in committed:
        return None
    want, got = committed["metrics"], held_metrics(cell)
    detail = [f"lost {name}" for name in sorted(set(want) - set(got))]
    detail += [f"new {name}" for name in sorted(set(got) - set(want))]
    detail += _moved(cell["id"], want, got)
    return ("metrics_changed", "; ".join(detail)) if detail else None


def entries(cells: Dict[str, Any], kind_of: Any) -> Dict[str, Dict[str, float]]:
    """{id: metrics} of the cells that ran under their own entry (for a refresh; a cuda:K cell is
    judged by its cuda:0 entry), transfer counts aside."""
    return {
        cell_id: held_metrics(cell)
        for cell_id, cell in sorted(cells.items())
        if cell["status"] != "skip" and kind_of(cell_id) == cell_id
    }
