"""The figures, each rendered to PNG bytes (Agg backend; nothing is written here).

Points are medians over the repetitions; whiskers span the minimum to the maximum repetition.
"""
from __future__ import annotations

import io
from typing import TYPE_CHECKING, Any, Dict, Iterable, List, Tuple

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)
from matplotlib.ticker import (  # noqa: E402
    FixedLocator,
    FuncFormatter,
    LogLocator,
    NullFormatter,  # noqa: E402
    NullLocator,
)

from . import tables  # noqa: E402

if TYPE_CHECKING:  # matplotlib 3.6 has no type hints: these read as Any to mypy
    from matplotlib.axes import Axes
    from matplotlib.container import ErrorbarContainer
    from matplotlib.figure import Figure

DPI = 110
plt.rcParams.update(
    {
        "font.size": 11,
        "axes.titlesize": 13,
        "axes.labelsize": 11,
        "legend.fontsize": 10,
        "axes.grid": True,
        "grid.alpha": 0.3,
    }
)
DIRECTION_TITLES = {"h2d": "host → device", "d2h": "device → host"}
# One colour and marker per strategy, the same in every panel (Paul Tol's bright scheme; its
# seven colours are taken, so pinned_resident borrows indigo from his muted scheme).
STRATEGY_STYLES: Dict[str, Dict[str, Any]] = {
    "raw_cudamemcpy": dict(color="black", linestyle="--", linewidth=2.2, marker="D", zorder=3),
    "pinned_resident": dict(color="#332288", marker="P", linewidth=2.0),
    "pinned_staging_reuse": dict(color="#4477AA", marker="o"),
    "prefetch": dict(color="#66CCEE", marker="^"),
    "pin_each_time": dict(color="#AA3377", marker="v"),
    "pageable_non_blocking": dict(color="#CCBB44", marker="s"),
    "pageable": dict(color="#EE6677", marker="o"),
    "device_resident": dict(color="#228833", marker="x"),
}


def to_png(figure: Figure) -> bytes:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=DPI, bbox_inches="tight")
    plt.close(figure)
    return buffer.getvalue()


def _size_axis(axis: Axes, sizes: Iterable[int]) -> None:
    """A log2 x axis ticked at the measured sizes, labelled 4 KiB, 64 MiB, ..."""
    axis.set_xscale("log", base=2)
    axis.xaxis.set_major_locator(FixedLocator(sorted(set(sizes))))
    axis.xaxis.set_minor_locator(NullLocator())
    axis.xaxis.set_major_formatter(FuncFormatter(lambda value, _: tables.human_bytes(int(value))))
    axis.tick_params(axis="x", labelrotation=45)
    axis.set_xlabel("transfer size (bytes, log scale)")


def _log_y(axis: Axes, label: str) -> None:
    """A log y axis ticked at 1-2-5 steps and labelled with plain numbers (0.5, 2, 50)."""
    axis.set_yscale("log")
    axis.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    axis.yaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
    axis.yaxis.set_minor_formatter(NullFormatter())
    axis.set_ylabel(label)


def _errorbar(axis: Axes, points: List[tables.Point], **style: Any) -> ErrorbarContainer:
    """points: [(x, median, min, max)]."""
    xs = [p[0] for p in points]
    medians = [p[1] for p in points]
    errors = [[p[1] - p[2] for p in points], [p[3] - p[1] for p in points]]
    style = {"marker": "o", "linewidth": 1.5, **style}
    return axis.errorbar(xs, medians, yerr=errors, capsize=3, markersize=5, **style)


def transfer_bandwidth(curves: tables.Curves) -> bytes:
    """Bandwidth against size, one panel per direction, raw_cudamemcpy as the ceiling line."""
    figure, axes = plt.subplots(
        1, len(curves), figsize=(6.5 * len(curves), 5.2), squeeze=False, sharey=True
    )
    legend = {}
    directions = sorted(curves, key=lambda d: (d != "h2d", d))
    for axis, direction in zip(axes[0], directions):
        by_strategy = curves[direction]
        sizes = [p[0] for points in by_strategy.values() for p in points]
        for strategy in sorted(by_strategy, key=tables.strategy_key):
            label = f"{strategy} (ceiling)" if strategy == tables.RAW else strategy
            legend[label] = _errorbar(
                axis, by_strategy[strategy], label=label, **STRATEGY_STYLES.get(strategy, {})
            )
        _log_y(axis, "bandwidth (GB/s, log scale)")
        _size_axis(axis, sizes)
        axis.set_title(f"{DIRECTION_TITLES.get(direction, direction)} bandwidth")
        axis.yaxis.set_tick_params(labelleft=True)
    figure.legend(
        list(legend.values()),
        list(legend),
        loc="upper center",
        bbox_to_anchor=(0.5, 0.0),
        ncol=min(4, len(legend)),
        frameon=False,
    )
    figure.suptitle("Transfer bandwidth by strategy (median, whiskers: min–max of repetitions)")
    figure.tight_layout()
    return to_png(figure)


def pinned_pageable(ratios: Dict[str, List[tables.Point]]) -> bytes:
    """tables.PINNED (pinned_resident) / pageable bandwidth against size."""
    figure, axis = plt.subplots(figsize=(8, 4.6))
    sizes = []
    for direction, rows in ratios.items():
        _errorbar(axis, rows, label=DIRECTION_TITLES.get(direction, direction), linewidth=1.6)
        sizes += [row[0] for row in rows]
    axis.axhline(1.0, color="grey", linewidth=1, linestyle=":")
    _size_axis(axis, sizes)
    axis.set_ylabel("pinned / pageable bandwidth (×)")
    axis.set_title(f"Pinned ({tables.PINNED}) over pageable bandwidth")
    axis.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return to_png(figure)


def small_tensors(groups: Dict[str, Dict[str, tables.Spread]]) -> bytes:
    """One horizontal bar chart per many-small-tensors case: time per batch by strategy."""
    figure, axes = plt.subplots(
        len(groups), 1, figsize=(8.5, 1.2 + 2.6 * len(groups)), squeeze=False
    )
    for axis, (label, by_strategy) in zip(axes[:, 0], groups.items()):
        names = sorted(by_strategy, key=tables.strategy_key)
        medians = [by_strategy[n][0] for n in names]
        errors = [
            [by_strategy[n][0] - by_strategy[n][1] for n in names],
            [by_strategy[n][2] - by_strategy[n][0] for n in names],
        ]
        colours = [STRATEGY_STYLES.get(n, {}).get("color", "#4477AA") for n in names]
        axis.barh(names, medians, xerr=errors, capsize=3, color=colours)
        axis.invert_yaxis()
        axis.set_xlabel("time per batch (ms), lower is better")
        axis.set_title(label)
        for y, (value, high) in enumerate(zip(medians, (by_strategy[n][2] for n in names))):
            axis.annotate(
                f"{value:.3g} ms",
                (high, y),
                xytext=(6, 0),
                textcoords="offset points",
                va="center",
                fontsize=9,
            )  # right of the whisker, never inside a bar
        axis.set_xlim(0, max(by_strategy[n][2] for n in names) * 1.15)
    figure.tight_layout()
    return to_png(figure)


def cpu_copy(curves: Dict[str, List[tables.Point]]) -> bytes:
    """CPU copy bandwidth against size, one line per path."""
    figure, axis = plt.subplots(figsize=(8, 4.8))
    sizes = []
    baselines = {
        "memcpy": {"color": "black", "linestyle": "--", "linewidth": 2},
        "alloc_memcpy": {"color": "dimgray", "linestyle": ":", "linewidth": 2},
    }
    for path in sorted(curves, key=lambda name: (name not in baselines, name)):
        points = curves[path]
        style = baselines.get(path, {})
        _errorbar(axis, points, label=path, **style)
        sizes += [p[0] for p in points]
    _log_y(axis, "bandwidth (GB/s, log scale)")
    _size_axis(axis, sizes)
    axis.set_xlabel("copy size (bytes, log scale)")
    axis.set_title("CPU copy baselines (memcpy dashed, alloc_memcpy dotted)")
    axis.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return to_png(figure)


def batch_mover(rows: List[tables.MoverRow]) -> bytes:
    """Batch mover against a plain loop of .to(), time per call by tensor count."""
    figure, axis = plt.subplots(figsize=(8, 4.6))
    width = 0.38
    for offset, (index, name, colour) in zip(
        (-width / 2, width / 2), ((1, "mover", "#4477AA"), (2, "loop", "#CCBB44"))
    ):
        # row[1] and row[2] are the (median, min, max) of the mover and the loop
        present: List[Tuple[int, Any]] = [
            (i, row[index]) for i, row in enumerate(rows) if row[index]
        ]
        xs = [i + offset for i, _ in present]
        medians = [stat[0] for _, stat in present]
        errors = [[s[0] - s[1] for _, s in present], [s[2] - s[0] for _, s in present]]
        bars = axis.bar(xs, medians, width, yerr=errors, capsize=3, label=name, color=colour)
        axis.bar_label(bars, [f"{m:.3g} µs" for m in medians], padding=8, fontsize=9)
    labels = [
        f"{row[0]} tensors" + (f"\nmover / loop = {row[3]:.2f}×" if row[3] else "") for row in rows
    ]
    axis.set_xticks(range(len(rows)), labels)
    axis.grid(axis="x", visible=False)
    axis.margins(y=0.15)
    _log_y(axis, "time per call (µs, log scale)")
    axis.set_title("tp::fixes::to_device (mover) against a loop of .to()")
    axis.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return to_png(figure)
