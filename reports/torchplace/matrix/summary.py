"""A plain-text (Markdown) view of matrix.json: the columns, the grid of cells, and every
difference between versions. The full report (ci/torchplace report) draws the same data."""
from __future__ import annotations

from typing import List, Optional

from torchplace.schema import JsonObject


def _cell_text(entry: Optional[JsonObject]) -> str:
    if entry is None:
        return "absent"
    text = f"{entry['status']} {entry.get('category', '?')}"
    if entry.get("observed_class"):
        text += f" {entry['observed_class']}"
    return text


def _unit_text(unit: Optional[JsonObject]) -> str:
    if not unit:
        return "-"
    if unit["status"] == "ok":
        return f"ok ({unit['ran']})"
    failed = unit.get("failed") or []
    return f"{unit['status']}: " + (", ".join(failed[:3]) or unit.get("note", ""))


def _columns(matrix: JsonObject) -> List[str]:
    lines = [
        "| LibTorch | root | status | root s | install s | build s | run s | bench | unit tests "
        "| first error |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for v in matrix["versions"]:
        t = v["timings_s"]
        root = f"{t.get('root', '-')}" + (" (cached)" if v.get("root_cached") else "")
        lines.append(
            f"| {v['version']} | {v['root']} | {v['status']} | {root} | {t.get('install', '-')} "
            f"| {t.get('build', '-')} | {t.get('run', '-')} | {v.get('bench', '-')} "
            f"| {_unit_text(v.get('unit'))} | {v['first_error'] or ''} |"
        )
    cuda = matrix.get("cuda_compile")
    if cuda:
        lines += [
            "",
            f"CUDA compile-only cell (LibTorch 2.6.0 + CUDA 12.4, trixie, built, never run): "
            f"{cuda['status']}" + (f" ({cuda['first_error']})" if cuda["first_error"] else ""),
        ]
    return lines


def _grid(matrix: JsonObject) -> List[str]:
    versions = [v["version"] for v in matrix["versions"]]
    lines = ["| cell | " + " | ".join(versions) + " |", "|---|" + "---|" * len(versions)]
    for cell in matrix["cells"]:
        row = [_cell_text(cell["by_version"].get(v)) for v in versions]
        simulated = " (simulated)" if cell.get("device", "").startswith("sim:") else ""
        lines.append(f"| {cell['id']}{simulated} | " + " | ".join(row) + " |")
    return lines


def _differences(matrix: JsonObject) -> List[str]:
    if not matrix["differences"]:
        return ["No cell differs between the versions that ran."]
    lines = []
    for diff in matrix["differences"]:
        lines.append(f"- {diff['id']} ({diff['kind']}):")
        for version, value in diff["versions"].items():
            lines.append(f"  - {version}: {value!r}" if value != "" else f"  - {version}: (none)")
    return lines


def render(matrix: JsonObject) -> str:
    parts = [
        "# LibTorch version matrix",
        "",
        "## Columns",
        "",
        *_columns(matrix),
        "",
        "## Cells (status, outcome category, class)",
        "",
        *_grid(matrix),
        "",
        "## Differences between versions",
        "",
        *_differences(matrix),
        "",
    ]
    return "\n".join(parts)
