"""summary.md: a few lines for a CI step summary or a pull-request comment."""
from __future__ import annotations

from typing import List

from . import html_page, tables
from .analysis import Analysis

MAX_LISTED = 8  # failures listed one by one; the rest are counted


def render(result: Analysis) -> str:
    lines = _synthetic_line(result)
    lines += ["## torchplace report", ""] + _run_lines(result)
    lines += _gate_lines(result)
    lines += _failures(result)
    lines += _transfers(result)
    if result.version_grid is not None:
        doc = result.inputs.matrix
        assert doc is not None  # a version grid is drawn from matrix.json
        lines.append(
            f"- Version matrix: {len(doc['versions'])} LibTorch versions, "
            f"{len(doc.get('differences', []))} difference(s) between them."
        )
    lines += ["", "Full report: index.html (plots, every cell with its raw message, skip reasons)."]
    return "\n".join(lines) + "\n"


def _synthetic_line(result: Analysis) -> List[str]:
    """The first line when any input is hand-made test data: it is not a measurement."""
    sources = html_page.synthetic_sources(result.inputs.results, result.inputs.matrix, result.bench)
    if not sources:
        return []
    why = "; ".join(f"{where}: {reason}" for where, reason in sources)
    return [f"**SYNTHETIC: hand-made test data, not a measurement** ({why})", ""]


def _run_lines(result: Analysis) -> List[str]:
    """The machine line and the outcome counts of results.json, or why there are none."""
    results = result.inputs.results
    if results is None:
        return [
            "No results.json in this folder: no single-run results are present "
            "(a version matrix folder).",
            "",
        ]
    assert result.grid is not None  # analyse() draws it from every results.json
    counts = result.grid.counts()
    proved, ran = result.grid.evidence()
    return [
        html_page.machine_line(results["fingerprint"]),
        "",
        "| " + " | ".join(counts) + " |",
        "|" + "---|" * len(counts),
        "| " + " | ".join(str(n) for n in counts.values()) + " |",
        "",
        f"Evidence: {proved} of the {ran} cells that ran proved their claim (passed, expected "
        "error, race shown); the rest ran without exercising it.",
        "",
    ]


def _gate_lines(result: Analysis) -> List[str]:
    """The gate's verdict on these results (--gate), each behaviour regression by its cell: a
    cell that passed but whose transfers grew is listed here, not left green."""
    gate = result.inputs.gate
    if gate is None:
        return []
    regressions = result.regressions()
    lines = [f"- Gate: {gate.get('verdict', '?')}; {len(regressions)} behaviour regression(s)."]
    lines += [
        f"- **regression** `{cell_id}`: {kind}: {detail.splitlines()[0][:160] if detail else ''}"
        for cell_id, (kind, detail) in list(regressions.items())[:MAX_LISTED]
    ]
    if len(regressions) > MAX_LISTED:
        lines.append(f"- … and {len(regressions) - MAX_LISTED} more regressions")
    return lines


def _failures(result: Analysis) -> List[str]:
    failed = result.failed_cells()
    lines = [f"- **unexpected** `{c['id']}`: {c['reason'][:160]}" for c in failed[:MAX_LISTED]]
    if len(failed) > MAX_LISTED:
        lines.append(f"- … and {len(failed) - MAX_LISTED} more unexpected cells")
    results = result.inputs.results or {"cells": []}
    unshown = [c for c in results["cells"] if c["category"] == "race_not_shown"]
    lines += [
        f"- **race not shown** `{c['id']}`: {'; '.join(c.get('notes', []))[:160]}"
        for c in unshown[:MAX_LISTED]
    ]
    if result.bench is not None:
        lines += [
            f"- **benchmark failed** `{name}`: {message[:160]}"
            for name, message in result.bench.failures[:MAX_LISTED]
        ]
    return lines


def _transfers(result: Analysis) -> List[str]:
    if result.bench is None:
        return ["- Benchmarks: no bench.json in this run."]
    lines = []
    for direction, by_strategy in result.curves.items():
        raw = by_strategy.get(tables.RAW)
        pinned = by_strategy.get(tables.PINNED)
        if pinned:
            size, median = pinned[-1][0], pinned[-1][1]
            share = result.percent.get(direction, {}).get(tables.PINNED, {}).get(size)
            text = (
                f"- {direction} pinned ({tables.PINNED}) at {tables.human_bytes(size)}: "
                f"{median:.1f} GB/s"
            )
            if share and raw:
                text += f" ({share:.0f}% of raw_cudamemcpy {raw[-1][1]:.1f} GB/s)"
            over = dict((r[0], r[1]) for r in result.ratios.get(direction, []))
            text += f", {over[size]:.1f}× pageable" if size in over else ""
            alone = result.device_copy.get(direction, {}).get(tables.PINNED, {}).get(size)
            text += f"; device copy alone {alone:.1f} GB/s" if alone else ""
            lines.append(text + ".")
    for row in result.prefetch:
        verdict = "meets" if row["meets_target"] else "misses"
        lines.append(
            f"- prefetch overlap on {row['device']}: {row['overlap_ratio']:.2f} "
            f"({verdict} ≤ {tables.OVERLAP_TARGET})."
        )
    if not result.curves:
        lines.append(
            f"- Transfers: none measured ({len(result.bench.skips)} benchmarks skipped; "
            "reasons in index.html)."
        )
    for count, mover, loop, ratio in result.mover_rows[-1:]:
        lines.append(
            f"- batch mover / loop of .to() at {count} tensors: {ratio:.2f}×."
            if ratio
            else f"- batch mover at {count} tensors: no loop to compare."
        )
    sizes = [size for _, percent in result.cpu_percent.values() for size in percent]
    if sizes:
        size = max(sizes)
        shares = ", ".join(
            f"{path} {p[size]:.0f}% of {like}"
            for path, (like, p) in result.cpu_percent.items()
            if size in p
        )
        lines.append(f"- CPU copies at {tables.human_bytes(size)} against the same work: {shares}.")
    return lines
