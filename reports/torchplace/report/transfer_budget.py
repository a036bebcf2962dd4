"""Per-step transfer counts of a cell (issue 32): what its tp::sim::TransferLog recorded as
transfer.<phase>.* metrics (harness/transfer_metrics.h), as one short line for the report."""
from typing import Any

PREFIX = "transfer."
DIRECTIONS = ("h2d", "d2h", "d2d")


def phase_text(metrics: dict[str, Any], phase: str) -> str:
    """'h2d 2 (960 B, 2 non_blocking), syncs 1 _local_scalar_dense' for one phase; '' if none.
    Directions without a copy and operators without a sync are left out; 'syncs 0' is kept."""
    prefix = f"{PREFIX}{phase}."
    if not any(name.startswith(prefix) for name in metrics):
        return ""
    parts = []
    for direction in DIRECTIONS:
        copies = int(metrics.get(f"{prefix}{direction}.copies", 0))
        if copies:
            size = int(metrics.get(f"{prefix}{direction}.bytes", 0))
            eager = int(metrics.get(f"{prefix}{direction}.non_blocking", 0))
            parts.append(f"{direction} {copies} ({size} B, {eager} non_blocking)")
    syncs = {
        name[len(prefix) + len("sync.") :]: int(value)
        for name, value in metrics.items()
        if name.startswith(prefix + "sync.") and value
    }
    listed = ", ".join(f"{count} {op}" for op, count in sorted(syncs.items()))
    parts.append(f"syncs {sum(syncs.values())}" + (f" ({listed})" if listed else ""))
    return ", ".join(parts)


def cell_text(cell: dict[str, Any]) -> str:
    """'per step: …; after the loop: …' for a cell that counted its transfers, else ''."""
    metrics = cell.get("metrics") or {}
    texts = [
        f"{label}: {text}"
        for label, phase in (("per step", "step"), ("after the loop", "once"))
        if (text := phase_text(metrics, phase))
    ]
    return "; ".join(texts)
