"""Figures derived from the benchmarks: bandwidth curves, % of the raw-copy ceiling, ratios.

Every statistic is (median, min, max) over the repetitions (see bench.spread); bandwidth is in
GB/s = 1e9 bytes/s, times in milliseconds unless a name says otherwise.
"""
from __future__ import annotations

from collections import defaultdict
from typing import Any, DefaultDict, Dict, List, Optional, Tuple

from . import bench as benchmod

Spread = Tuple[float, float, float]  # (median, min, max)
Point = Tuple[int, float, float, float]  # (bytes, median, min, max)
Curves = Dict[str, Dict[str, List[Point]]]  # {direction: {strategy: points by size}}
MoverRow = Tuple[int, Optional[Spread], Optional[Spread], Optional[float]]

RAW = "raw_cudamemcpy"  # cudaMemcpyAsync from cudaHostAlloc memory: the machine's ceiling
# The pinned side of the pinned / pageable ratio: the batch already sits in pinned memory (what a
# DataLoader with pin_memory=True delivers); a step is one non_blocking copy and a synchronize.
PINNED = "pinned_resident"
PAGEABLE = "pageable"
STRATEGY_ORDER = (
    "raw_cudamemcpy",
    "pinned_resident",
    "pinned_staging_reuse",
    "prefetch",
    "pin_each_time",
    "pageable_non_blocking",
    "pageable",
    "device_resident",
)
DEVICE_COPY = "device_copy_bytes_per_second"  # the copy alone, timed with CUDA events (bytes/s)
OVERLAP_TARGET = 1.1  # step / max(compute, copy)


def strategy_key(name: str) -> Tuple[int, str]:
    return (STRATEGY_ORDER.index(name) if name in STRATEGY_ORDER else len(STRATEGY_ORDER), name)


def transfer_curves(bench: benchmod.BenchData) -> Curves:
    """{direction: {strategy: [(bytes, median, min, max) GB/s, ...by size]}}."""
    curves: DefaultDict[str, DefaultDict[str, List[Point]]] = defaultdict(lambda: defaultdict(list))
    for m in bench.family("transfer"):
        direction, strategy = m.fields.get("direction", "?"), m.fields.get("strategy", "?")
        curves[direction][strategy].append(
            (int(m.fields.get("bytes", 0)),) + benchmod.spread(m.gbps())
        )
    directions = sorted(curves, key=lambda direction: (direction != "h2d", direction))
    return {d: {s: sorted(points) for s, points in curves[d].items()} for d in directions}


def device_copy_medians(bench: benchmod.BenchData) -> Dict[str, Dict[str, Dict[int, float]]]:
    """{direction: {strategy: {bytes: median GB/s of the device copy alone}}}, for the transfer
    benchmarks that report DEVICE_COPY (the pinned strategies and raw_cudamemcpy)."""
    table: DefaultDict[str, DefaultDict[str, Dict[int, float]]] = defaultdict(
        lambda: defaultdict(dict)
    )
    for m in bench.family("transfer"):
        if m.has_counter(DEVICE_COPY):
            direction, strategy = m.fields.get("direction", "?"), m.fields.get("strategy", "?")
            size = int(m.fields.get("bytes", 0))
            table[direction][strategy][size] = benchmod.spread(m.counter(DEVICE_COPY) / 1e9)[0]
    return {d: dict(by_strategy) for d, by_strategy in table.items()}


def percent_of_raw(curves: Curves) -> Dict[str, Dict[str, Dict[int, float]]]:
    """{direction: {strategy: {bytes: median % of raw_cudamemcpy's median}}} (no raw: empty)."""
    table = {}
    for direction, by_strategy in curves.items():
        ceiling = {size: median for size, median, _, _ in by_strategy.get(RAW, [])}
        table[direction] = {
            strategy: {
                size: 100.0 * median / ceiling[size]
                for size, median, _, _ in points
                if ceiling.get(size)
            }
            for strategy, points in by_strategy.items()
        }
    return table


def pinned_pageable_ratio(curves: Curves) -> Dict[str, List[Point]]:
    """{direction: [(bytes, median ratio, low, high)]}: PINNED / pageable medians.

    The whiskers pair the extremes: low = pinned min / pageable max,
    high = pinned max / pageable min.
    """
    ratios = {}
    for direction, by_strategy in curves.items():
        pageable = {point[0]: point for point in by_strategy.get(PAGEABLE, [])}
        rows = []
        for size, median, low, high in by_strategy.get(PINNED, []):
            if size in pageable and pageable[size][1] > 0:
                _, p_median, p_low, p_high = pageable[size]
                rows.append((size, median / p_median, low / p_high, high / p_low))
        if rows:
            ratios[direction] = rows
    return ratios


def small_tensor_bars(bench: benchmod.BenchData) -> Dict[str, Dict[str, Spread]]:
    """{"small_tensors, h2d: 1000 tensors × 4 KiB": {strategy: (median, min, max) ms per batch}}."""
    groups: DefaultDict[str, Dict[str, Spread]] = defaultdict(dict)
    for family in ("small_tensors", "nested_batch"):
        for m in bench.family(family):
            f = m.fields
            size = tables_size(f.get("bytes"))
            label = f"{family}, {f.get('direction', '?')}: {f.get('count', '?')} tensors × {size}"
            groups[label][f.get("strategy", "?")] = benchmod.spread(m.seconds() * 1e3)
    return dict(groups)  # small_tensors first: the many-small-tensors case


def tables_size(text: Optional[str]) -> str:
    return human_bytes(int(text)) if text and text.isdigit() else "? bytes"


def prefetch_rows(bench: benchmod.BenchData) -> List[Dict[str, Any]]:
    """[{device, compute_ms, copy_ms, step_ms, overlap_ratio, meets_target}] medians."""
    rows = []
    for m in bench.family("prefetch_overlap"):
        row: Dict[str, Any] = {"device": m.fields.get("device", "?")}
        for name in ("compute_ms", "copy_ms", "step_ms", "overlap_ratio"):
            row[name] = benchmod.spread(m.counter(name))[0]
        row["meets_target"] = row["overlap_ratio"] <= OVERLAP_TARGET
        rows.append(row)
    return rows


def cpu_copy_curves(bench: benchmod.BenchData) -> Dict[str, List[Point]]:
    """{path: [(bytes, median, min, max) GB/s]} for the CPU copy baselines."""
    curves: DefaultDict[str, List[Point]] = defaultdict(list)
    for m in bench.family("cpu_copy"):
        curves[m.fields.get("path", "?")].append(
            (int(m.fields.get("bytes", 0)),) + benchmod.spread(m.gbps())
        )
    return {path: sorted(points) for path, points in sorted(curves.items())}


# Each CPU copy path against the memcpy that does the same work: into a destination allocated
# once, or into one allocated by that call (whose page faults then count on both sides).
CPU_LIKE = {"copy_": "memcpy", "clone": "alloc_memcpy", "to_dtype": "alloc_memcpy"}
CPU_BASELINES = ("memcpy", "alloc_memcpy")


def cpu_copy_percent(curves: Dict[str, List[Point]]) -> Dict[str, Tuple[str, Dict[int, float]]]:
    """{path: (baseline, {bytes: median % of the baseline's median})} for each path of CPU_LIKE
    measured with its baseline; a path whose baseline is missing gets (baseline, {})."""
    percent = {}
    for path in sorted(set(curves) - set(CPU_BASELINES)):
        like = CPU_LIKE.get(path, "memcpy")
        base = {size: median for size, median, _, _ in curves.get(like, [])}
        percent[path] = (
            like,
            {
                size: 100.0 * median / base[size]
                for size, median, _, _ in curves[path]
                if base.get(size)
            },
        )
    return percent


def batch_mover_rows(bench: benchmod.BenchData) -> List[MoverRow]:
    """[(tensors, mover (median, min, max) us, loop (median, min, max) us, mover/loop)] by count."""
    by_count: DefaultDict[int, Dict[str, Spread]] = defaultdict(dict)
    for m in bench.family("batch_mover"):
        by_count[int(m.fields.get("tensors", 0))][m.fields.get("impl", "?")] = benchmod.spread(
            m.seconds() * 1e6
        )
    rows = []
    for count, impls in sorted(by_count.items()):
        mover, loop = impls.get("mover"), impls.get("loop")
        ratio = mover[0] / loop[0] if mover and loop and loop[0] > 0 else None
        rows.append((count, mover, loop, ratio))
    return rows


def human_bytes(size: float) -> str:
    """4096 -> '4 KiB', 67108864 -> '64 MiB'."""
    for unit in ("B", "KiB", "MiB"):
        if size < 1024:
            return f"{size:.3g} {unit}"
        size /= 1024
    return f"{size:.3g} GiB"
