"""The outcome matrix as a PNG: coloured cells, skip reasons as numbered footnotes."""
from __future__ import annotations

import textwrap
from typing import Tuple

from matplotlib.colors import to_rgb
from matplotlib.patches import Patch

from . import matrix
from .plots import plt, to_png

ROW_HEIGHT = 0.34  # inches
COLUMN_WIDTH = 1.25  # inches


MAX_ROWS = 150  # rows drawn (51 inches at ROW_HEIGHT): beyond, the figure says it is capped
MAX_COLUMNS = 40
MAX_FOOTNOTES = 30


def capped(grid: matrix.Grid) -> matrix.Grid:
    """The grid cut to MAX_ROWS x MAX_COLUMNS, its title saying so (the page's tables list every
    cell): a run with thousands of distinct rows still renders."""
    rows, columns = grid.rows[:MAX_ROWS], grid.columns[:MAX_COLUMNS]
    if (len(rows), len(columns)) == (len(grid.rows), len(grid.columns)):
        return grid
    note = (
        f"{grid.title}\n(capped: the first {len(rows)} of {len(grid.rows)} rows and "
        f"{len(columns)} of {len(grid.columns)} columns; the page lists every cell)"
    )
    keep = {
        (r, c): cell for (r, c), cell in grid.cells.items() if r in set(rows) and c in set(columns)
    }
    return matrix.Grid(note, rows, columns, keep)


def empty(grid: matrix.Grid) -> bytes:
    """A run without cells: a small figure that says so (imshow refuses an empty image)."""
    figure, axis = plt.subplots(figsize=(8, 1.6))
    axis.axis("off")
    axis.text(0.5, 0.5, f"{grid.title}: no cells", ha="center", va="center", fontsize=11)
    return to_png(figure)


def outcome_matrix(grid: matrix.Grid) -> bytes:
    if not grid.rows or not grid.columns:
        return empty(grid)
    grid = capped(grid)
    footnotes = grid.footnotes()
    width = 4.5 + COLUMN_WIDTH * len(grid.columns)
    height = 1.6 + ROW_HEIGHT * len(grid.rows) + 0.17 * min(len(footnotes), MAX_FOOTNOTES + 1)
    figure, axis = plt.subplots(figsize=(max(width, 8), height))
    image = [[_colour(grid, row, column) for column in grid.columns] for row in grid.rows]
    axis.imshow(image, aspect="auto", interpolation="nearest")
    for y, row in enumerate(grid.rows):
        for x, column in enumerate(grid.columns):
            cell = grid.cells.get((row, column))
            if cell and cell.category == matrix.SKIPPED:
                axis.text(x, y, f"[{footnotes[cell.detail]}]", ha="center", va="center", fontsize=9)
            elif cell and cell.category == matrix.UNEXPECTED:
                axis.text(
                    x,
                    y,
                    "✗ unexpected",
                    ha="center",
                    va="center",
                    color="black",
                    fontweight="bold",
                    fontsize=9,
                )
            elif cell and cell.category in matrix.SHORT:
                axis.text(
                    x,
                    y,
                    matrix.SHORT[cell.category],
                    ha="center",
                    va="center",
                    color="black",
                    fontsize=8,
                )
            elif cell and cell.category == matrix.RACE_NOT_SHOWN:
                axis.text(
                    x, y, "race not shown", ha="center", va="center", color="white", fontsize=8
                )
    axis.set_xticks(range(len(grid.columns)), grid.columns)
    axis.set_yticks(range(len(grid.rows)), grid.rows)
    axis.xaxis.tick_top()
    axis.tick_params(axis="x", labelrotation=30 if len(grid.columns) > 3 else 0)
    axis.grid(False)
    axis.set_xticks([x - 0.5 for x in range(1, len(grid.columns))], minor=True)
    axis.set_yticks([y - 0.5 for y in range(1, len(grid.rows))], minor=True)
    axis.grid(which="minor", color="white", linewidth=2, alpha=1.0)
    axis.tick_params(which="minor", length=0)
    axis.set_title(grid.title, pad=12)
    handles = [Patch(color=matrix.COLOURS[c], label=f"{c}: {n}") for c, n in grid.counts().items()]
    axis.legend(
        handles=handles, loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=4, frameon=False
    )
    if footnotes:  # below the legend's two rows: 56 points under the axes
        lines = [textwrap.shorten(f"[{n}] {reason}", 150) for reason, n in footnotes.items()]
        if len(lines) > MAX_FOOTNOTES:
            lines = lines[:MAX_FOOTNOTES] + [
                f"... and {len(lines) - MAX_FOOTNOTES} more " "(every reason is in the page)"
            ]
        axis.annotate(
            "Skipped:\n" + "\n".join(lines),
            xy=(0, 0),
            xycoords="axes fraction",
            xytext=(0, -56),
            textcoords="offset points",
            ha="left",
            va="top",
            fontsize=9,
        )
    return to_png(figure)


def _colour(grid: matrix.Grid, row: str, column: str) -> Tuple[float, float, float]:
    cell = grid.cells.get((row, column))
    return to_rgb(matrix.COLOURS[cell.category]) if cell else (1.0, 1.0, 1.0)
