#!/usr/bin/env python3
"""What the outcome matrix figure (torchplace.report.matrix_figure) shows a reader: each cell's
colour and mark, the row and column labels, the white lines between cells, the legend's counts,
the numbered skip reasons, the caps on rows, columns and footnotes, and the figure of a grid
without cells. Read from the matplotlib Figure (to_png replaced); every grid is synthetic."""
import unittest
from unittest import mock

from figure_helpers import FigureCase
from matplotlib.colors import to_rgb

from torchplace.report import matrix, matrix_figure

A, B, C = "scenario_a · variant=broken", "scenario_b", "scenario_c"  # synthetic rows
ONE, TWO = "needs CUDA (synthetic reason)", "no second device (synthetic reason)"
CELLS = {  # (row, column): (category, detail); (A, sim:0) and (C, cpu) have no cell
    (A, "cpu"): (matrix.SKIPPED, ONE),
    (A, "cuda:0"): (matrix.UNEXPECTED, "AssertionError"),
    (B, "cpu"): (matrix.UNEXERCISED, ""),
    (B, "cuda:0"): (matrix.LATENT, ""),
    (B, "sim:0"): (matrix.RACE_NOT_SHOWN, ""),
    (C, "cuda:0"): (matrix.SKIPPED, TWO),
    (C, "sim:0"): (matrix.SKIPPED, ONE),
}


def grid_of(cells, rows=(A, B, C), columns=("cpu", "cuda:0", "sim:0"), title="synthetic outcomes"):
    made = {
        key: matrix.Cell(category, detail, "/".join(key))
        for key, (category, detail) in cells.items()
    }
    return matrix.Grid(title, list(rows), list(columns), made)


def skipped_rows(count, reason="synthetic reason {}"):
    """A one-column grid of `count` skipped cells, each with a reason of its own."""
    rows = [f"row_{i}" for i in range(count)]
    return grid_of(
        {(r, "cpu"): (matrix.SKIPPED, reason.format(i)) for i, r in enumerate(rows)}, rows, ["cpu"]
    )


class OutcomeMatrix(FigureCase):
    def draw(self, grid):
        figure = self.figure_of(matrix_figure, matrix_figure.outcome_matrix, grid)
        return figure, figure.axes[0]

    def test_each_cell_coloured_and_marked_by_its_category(self):
        figure, axis = self.draw(grid_of(CELLS))
        (image,) = axis.images
        for y, row in enumerate((A, B, C)):
            for x, column in enumerate(("cpu", "cuda:0", "sim:0")):
                cell = CELLS.get((row, column))
                colour = to_rgb(matrix.COLOURS[cell[0]]) if cell else (1.0, 1.0, 1.0)
                self.assertEqual(tuple(image.get_array()[y][x]), colour, (row, column))
        marks = {t.get_position(): t for t in axis.texts if not t.get_text().startswith("Skipped:")}
        expected = {
            (0, 0): ("[1]", "black"),
            (1, 0): ("✗ unexpected", "black"),
            (0, 1): ("ran, unexercised", "black"),
            (1, 1): ("latent, unexercised", "black"),
            (2, 1): ("race not shown", "white"),  # light on the dark purple
            (1, 2): ("[2]", "black"),
            (2, 2): ("[1]", "black"),
        }
        self.assertEqual({p: (t.get_text(), t.get_color()) for p, t in marks.items()}, expected)
        self.assertEqual(marks[(1, 0)].get_fontweight(), "bold")
        self.assertTrue(
            all((t.get_ha(), t.get_va()) == ("center", "center") for t in marks.values())
        )

    def test_rows_and_columns_labelled_with_white_lines_between_cells(self):
        figure, axis = self.draw(grid_of(CELLS))
        self.drawn(figure)
        self.assertEqual([t.get_text() for t in axis.get_xticklabels()], ["cpu", "cuda:0", "sim:0"])
        self.assertEqual(list(axis.get_xticks()), [0, 1, 2])
        self.assertEqual([t.get_text() for t in axis.get_yticklabels()], [A, B, C])
        self.assertEqual(list(axis.get_yticks()), [0, 1, 2])
        self.assertEqual(axis.xaxis.get_ticks_position(), "top")
        self.assertEqual({t.get_rotation() for t in axis.get_xticklabels()}, {0.0})  # three: level
        self.assertEqual(axis.get_title(), "synthetic outcomes")
        for ax in (axis.xaxis, axis.yaxis):
            self.assertEqual(list(ax.get_minorticklocs()), [0.5, 1.5])
            self.assertFalse([t for t in ax.get_major_ticks() if t.gridline.get_visible()])
            for tick in ax.get_minor_ticks():
                self.assertTrue(tick.gridline.get_visible())
                self.assertEqual(to_rgb(tick.gridline.get_color()), (1.0, 1.0, 1.0))
                self.assertEqual(tick.tick1line.get_markersize(), 0)  # lines, no tick marks

    def test_four_columns_or_more_tilt_their_labels(self):
        columns = ("cpu", "cuda:0", "sim:0", "cuda:1")
        figure, axis = self.draw(grid_of(CELLS, columns=columns))
        self.drawn(figure)
        (angle,) = {t.get_rotation() for t in axis.get_xticklabels()}
        self.assertTrue(15 <= angle <= 60, angle)

    def test_each_mark_fits_in_its_cell_however_many_columns(self):
        columns = [f"cuda:0 · libtorch {v}.0.0" for v in range(8)]  # synthetic version columns
        cells = {(A, c): (matrix.LATENT, "") for c in columns}
        cells.update({(B, c): (matrix.UNEXPECTED, "AssertionError") for c in columns})
        figure, axis = self.draw(grid_of(cells, [A, B], columns))
        renderer = self.drawn(figure)
        for mark in axis.texts:
            x, y = mark.get_position()
            left, right = (axis.transData.transform((x + dx, y))[0] for dx in (-0.5, 0.5))
            box = mark.get_window_extent(renderer)
            self.assertTrue(left < box.x0 < box.x1 < right, (mark.get_text(), left, right))

    def test_legend_counts_every_category(self):
        figure, axis = self.draw(grid_of(CELLS))
        legend = axis.get_legend()
        counts = dict.fromkeys(matrix.CATEGORIES, 0)
        for category, _ in CELLS.values():
            counts[category] += 1
        self.assertEqual(
            [t.get_text() for t in legend.get_texts()], [f"{c}: {n}" for c, n in counts.items()]
        )
        for category, handle in zip(
            counts,
            legend.legend_handles if hasattr(legend, "legend_handles") else legend.legendHandles,
        ):
            self.assertEqual(to_rgb(handle.get_facecolor()), to_rgb(matrix.COLOURS[category]))
        self.assertEqual(self.legend_columns(legend), 4)  # the eight categories in two rows
        self.assertFalse(legend.get_frame_on())

    def test_skip_reasons_listed_once_each_in_number_order(self):
        figure, axis = self.draw(grid_of(CELLS))
        (notes,) = [t for t in axis.texts if t.get_text().startswith("Skipped:")]
        self.assertEqual(notes.get_text(), f"Skipped:\n[1] {ONE}\n[2] {TWO}")
        renderer = self.drawn(figure)  # right under the legend (test_render.py: not over it)
        legend = axis.get_legend().get_window_extent(renderer)
        self.assertLess(legend.y0 - notes.get_window_extent(renderer).y1, legend.height)
        _, without = self.draw(grid_of({k: v for k, v in CELLS.items() if v[0] != matrix.SKIPPED}))
        self.assertFalse([t for t in without.texts if "Skipped" in t.get_text()])

    def test_thirty_footnotes_then_a_count_of_the_rest(self):
        for count, more in ((30, []), (31, ["... and 1 more (every reason is in the page)"])):
            _, axis = self.draw(skipped_rows(count))
            (notes,) = [t for t in axis.texts if t.get_text().startswith("Skipped:")]
            lines = notes.get_text().split("\n")[1:]
            self.assertEqual(lines, [f"[{i + 1}] synthetic reason {i}" for i in range(30)] + more)

    def test_a_long_reason_shortened_to_150_characters(self):
        word = "abcd "  # "[1] " + 29 words of 4 letters and a space: 149 characters, then one more
        for extra, shortened in (("x", False), ("xy", True)):
            reason = (word * 29).strip() + " " + extra
            _, axis = self.draw(skipped_rows(1, reason))
            (notes,) = [t for t in axis.texts if t.get_text().startswith("Skipped:")]
            line = notes.get_text().split("\n")[1]
            self.assertLessEqual(len(line), 150)
            self.assertEqual(line.endswith("[...]"), shortened, len(f"[1] {reason}"))

    def test_a_grid_over_the_caps_is_drawn_capped(self):
        with mock.patch.object(matrix_figure, "MAX_ROWS", 2):
            _, axis = self.draw(grid_of(CELLS))
        self.assertEqual([t.get_text() for t in axis.get_yticklabels()], [A, B])
        self.assertTrue(
            axis.get_title().startswith("synthetic outcomes\n(capped: the first 2 of 3 rows")
        )
        self.assertEqual(axis.images[0].get_array().shape[:2], (2, 3))

    def test_a_grid_without_rows_or_columns_says_it_has_no_cells(self):
        for rows, columns in (((A,), ()), ((), ("cpu",))):
            figure = self.figure_of(
                matrix_figure, matrix_figure.outcome_matrix, grid_of({}, rows, columns)
            )
            (axis,) = figure.axes
            (text,) = axis.texts
            self.assertEqual(text.get_text(), "synthetic outcomes: no cells")
            self.assertEqual(
                (text.get_position(), text.get_ha(), text.get_va()),
                ((0.5, 0.5), "center", "center"),
            )
            self.assertFalse(axis.axison, "no empty frame or ticks around the sentence")
            self.assertFalse(axis.images)


class Capped(unittest.TestCase):
    """capped() on synthetic grids at and over MAX_ROWS x MAX_COLUMNS (nothing drawn)."""

    def square(self, rows, columns):
        names = [f"row_{i}" for i in range(rows)], [f"col_{j}" for j in range(columns)]
        cells = {(r, c): (matrix.PASSED, "") for r in names[0] for c in names[1]}
        return grid_of(cells, *names)

    def test_a_grid_at_the_caps_is_kept_whole(self):
        grid = self.square(150, 40)
        self.assertIs(matrix_figure.capped(grid), grid)

    def test_one_row_and_column_over_are_cut_and_said(self):
        grid = self.square(151, 41)
        cut = matrix_figure.capped(grid)
        self.assertEqual((cut.rows, cut.columns), (grid.rows[:150], grid.columns[:40]))
        self.assertEqual(set(cut.cells), {(r, c) for r in cut.rows for c in cut.columns})
        self.assertEqual(
            cut.title,
            "synthetic outcomes\n(capped: the first 150 of 151 rows and 40 of 41 columns; "
            "the page lists every cell)",
        )


if __name__ == "__main__":
    unittest.main(verbosity=2)
