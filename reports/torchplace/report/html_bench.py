"""The benchmark sections of index.html: transfers, many small tensors, prefetch, CPU baselines."""
from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence

from . import tables
from .html_page import image, section, table

if TYPE_CHECKING:
    from .analysis import Analysis

LISTED_SKIPS = 20  # more skipped benchmarks than this fold into a <details>
DEVICE_COPY_LABEL = "device copy alone"
DEVICE_COPY_NOTE = (
    '<p class="note">Every strategy is timed on the host clock, synchronize '
    "included. Rows marked <i>device copy alone</i> give the copy by itself, timed "
    "with CUDA events (median of <code>device_copy_bytes_per_second</code>): the "
    "gap to the row above is host-side work and launch and synchronize "
    "overhead.</p>"
)
SPREAD_NOTE = (
    '<p class="note">Points and bars are medians over the repetitions; whiskers span '
    "the slowest to the fastest repetition (min–max). "
    "GB/s = 10<sup>9</sup> bytes/s.</p>"
)


def transfer_section(result: Analysis, figures: Dict[str, bytes]) -> str:
    bench = result.bench
    if bench is None:
        body = (
            "<p>No bench.json in this folder: the benchmarks did not run or were not saved, so "
            "there are no transfer measurements.</p>"
        )
        return section("transfers", "Transfers", body)
    if not result.curves:
        rows = [
            (escape(name), escape(reason)) for name, reason in bench.skips if "device:cuda" in name
        ]
        body = (
            f"<p>No transfer measurements: {len(rows)} CUDA benchmarks were skipped, each with "
            "its reason below. The CPU baselines still ran.</p>"
        )
        listing = table(("skipped benchmark", "reason"), rows)
        if len(rows) > LISTED_SKIPS:
            listing = (
                f"<details><summary>all {len(rows)} skipped benchmarks</summary>{listing}</details>"
            )
        body += listing
        return section("transfers", "Transfers", body)
    body = SPREAD_NOTE + image(figures["transfer_bandwidth.png"], "transfer bandwidth")
    body += "<h3>Median bandwidth and its share of the raw_cudamemcpy ceiling</h3>"
    if result.device_copy:
        body += DEVICE_COPY_NOTE
    body += "".join(_percent_table(direction, result) for direction in result.curves)
    if "pinned_pageable_ratio.png" in figures:
        body += image(figures["pinned_pageable_ratio.png"], "pinned over pageable ratio")
    if "small_tensors.png" in figures:
        body += "<h3>Many small tensors</h3>" + image(figures["small_tensors.png"], "small tensors")
    body += _prefetch_table(result.prefetch)
    return section("transfers", "Transfers", body)


def _percent_table(direction: str, result: Analysis) -> str:
    """One row per strategy (median GB/s and % of raw_cudamemcpy), each followed by a row of its
    device copy alone where the strategy reports one."""
    by_strategy = result.curves[direction]
    sizes = sorted({p[0] for points in by_strategy.values() for p in points})
    device_copy = result.device_copy.get(direction, {})
    rows = []
    for strategy in sorted(by_strategy, key=tables.strategy_key):
        medians = {p[0]: p[1] for p in by_strategy[strategy]}
        percent = result.percent.get(direction, {}).get(strategy, {})
        rows.append(
            [escape(strategy)]
            + [
                (f"{medians[s]:.3g} GB/s" + (f" ({percent[s]:.0f}%)" if s in percent else ""))
                if s in medians
                else "–"
                for s in sizes
            ]
        )
        if strategy in device_copy:
            alone = device_copy[strategy]
            rows.append(
                [f"{escape(strategy)} · {DEVICE_COPY_LABEL}"]
                + [f"{alone[s]:.3g} GB/s" if s in alone else "–" for s in sizes]
            )
    header = [f"{escape(direction)} strategy"] + [tables.human_bytes(s) for s in sizes]
    return table(header, rows, numeric=range(1, len(sizes) + 1))


def _prefetch_table(rows: List[Dict[str, Any]]) -> str:
    if not rows:
        return ""
    body = [
        (
            escape(r["device"]),
            f"{r['compute_ms']:.3g}",
            f"{r['copy_ms']:.3g}",
            f"{r['step_ms']:.3g}",
            f"{r['overlap_ratio']:.3f}",
            "yes" if r["meets_target"] else '<span class="bad">no</span>',
        )
        for r in rows
    ]
    header = (
        "device",
        "compute (ms)",
        "copy (ms)",
        "step (ms)",
        "overlap ratio",
        f"≤ {tables.OVERLAP_TARGET}",
    )
    return (
        "<h3>Prefetch overlap</h3><p>overlap ratio = step / max(compute, copy): 1.0 means the "
        "copy hides fully behind compute (medians).</p>" + table(header, body, (1, 2, 3, 4))
    )


def cpu_section(result: Analysis, figures: Dict[str, bytes]) -> str:
    if not result.cpu_curves and not result.mover_rows:
        return ""
    body = SPREAD_NOTE
    if result.cpu_curves:
        body += image(figures["cpu_copy.png"], "CPU copy baselines")
        sizes = sorted({p[0] for points in result.cpu_curves.values() for p in points})
        rows: Sequence[Sequence[str]] = [
            [escape(path), escape(like)]
            + [f"{percent[s]:.0f}%" if s in percent else "–" for s in sizes]
            for path, (like, percent) in result.cpu_percent.items()
        ]
        body += (
            "<h3>CPU copies as % of the memcpy doing the same work (medians)</h3>"
            "<p>memcpy writes into a buffer allocated once (the like of copy_); alloc_memcpy "
            "allocates its destination each time, as clone and .to(dtype) do.</p>"
        )
        body += table(
            ["path", "against"] + [tables.human_bytes(s) for s in sizes],
            rows,
            range(2, len(sizes) + 2),
        )
    if result.mover_rows:
        body += image(figures["batch_mover.png"], "batch mover against a loop")
        rows = [
            (str(count), _us(mover), _us(loop), f"{ratio:.2f}×" if ratio else "–")
            for count, mover, loop, ratio in result.mover_rows
        ]
        body += table(
            ("tensors", "mover (µs)", "loop of .to() (µs)", "mover / loop"), rows, (0, 1, 2, 3)
        )
    return section("cpu", "CPU baselines", body)


def _us(stat: Optional[tables.Spread]) -> str:
    return f"{stat[0]:.3g}" if stat else "–"


def failures_section(result: Analysis) -> str:
    if result.bench is None or not result.bench.failures:
        return ""
    rows = [
        (escape(name), f'<div class="msg">{escape(message)}</div>')
        for name, message in result.bench.failures
    ]
    return section(
        "bench-failures",
        f"Benchmark failures ({len(rows)})",
        '<p class="bad">These benchmarks stopped with an error that is not a planned '
        "skip.</p>" + table(("benchmark", "error message"), rows),
    )
