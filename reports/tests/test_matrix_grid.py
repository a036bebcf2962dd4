#!/usr/bin/env python3
"""torchplace.report.matrix in process: the grid a results.json and a matrix.json become. A cell's
category and hover text (a skip's or failure's stand-in text, the note a passed cell shows), the
column order (cpu, the simulated device, cuda:N, pairs), the rows, and matrix.json's columns per
LibTorch version (a version that did not build, a cell absent from a version). Standard library
only; every input is synthetic, hand-made test data.

  test_matrix_grid.py [CLASS]      (CTest: report.matrix_grid)
"""
import unittest

from torchplace.report import matrix


def result_cell(ident, device="cpu", category="passed", status="pass", **more):
    """A synthetic results.json cell; ident is 'scenario/variant'."""
    scenario, variant = ident.split("/")
    value = {
        "id": ident,
        "scenario": scenario,
        "axes": {"variant": variant},
        "device": device,
        "expected": {"outcome": "success"},
        "observed": {"outcome": "success", "error_class": None},
        "status": status,
        "category": category,
        "reason": "",
        "notes": [],
    }
    value.update(more)
    return value


class Categorise(unittest.TestCase):
    def test_a_skip_without_reason_says_so(self):
        cell = matrix.categorise("skipped", "skip", "", "s/broken")
        self.assertEqual(cell, matrix.Cell(matrix.SKIPPED, "skipped (no reason given)", "s/broken"))

    def test_a_skip_keeps_its_reason(self):
        cell = matrix.categorise("skipped", "skip", "needs CUDA", "s/broken")
        self.assertEqual(cell, matrix.Cell(matrix.SKIPPED, "needs CUDA", "s/broken"))

    def test_a_failure_without_text_shows_its_status(self):
        for category in ("failed", "not_run"):
            cell = matrix.categorise(category, "fail", "", "s/fixed")
            self.assertEqual(cell, matrix.Cell(matrix.UNEXPECTED, "status 'fail'", "s/fixed"))

    def test_a_failure_keeps_its_text(self):
        cell = matrix.categorise("failed", "fail", "AssertionError", "s/fixed")
        self.assertEqual(cell, matrix.Cell(matrix.UNEXPECTED, "AssertionError", "s/fixed"))

    def test_evidence_keeps_its_detail_even_empty(self):
        cell = matrix.categorise("expected_error", "pass", "", "s/broken")
        self.assertEqual(cell, matrix.Cell(matrix.EXPECTED_ERROR, "", "s/broken"))


class FromResults(unittest.TestCase):
    def detail(self, **fields):
        grid = matrix.from_results({"cells": [result_cell("s/fixed", **fields)]})
        return grid.cells[("s · variant=fixed", "cpu")].detail

    def test_the_hover_text_of_a_passed_cell_is_its_note_then_notes(self):
        self.assertEqual(self.detail(notes=["second"]), "second")
        self.assertEqual(self.detail(expected={"note": "first"}), "first")
        both = {"expected": {"note": "first"}, "notes": ["second"]}
        self.assertEqual(self.detail(**both), "first; second")

    def test_a_reason_then_an_error_class_come_before_notes(self):
        observed = {"error_class": "c10::Error"}
        self.assertEqual(self.detail(observed=observed, notes=["n"]), "c10::Error")
        self.assertEqual(self.detail(reason="why", observed=observed), "why")

    def test_columns_cpu_then_simulated_then_cuda_then_pairs(self):
        devices = ["cuda:0+cuda:1", "cuda:1", "sim:0", "cuda:0", "cpu"]
        cells = [result_cell("s/fixed", device=d) for d in devices]
        grid = matrix.from_results({"cells": cells})
        expected = ["cpu", "sim:0 (simulated)", "cuda:0", "cuda:1", "cuda:0+cuda:1"]
        self.assertEqual(grid.columns, expected)
        self.assertEqual(grid.rows, ["s · variant=fixed"])
        self.assertEqual(grid.title, "Scenario outcomes, this run")


VERSIONS = [  # synthetic: one version ran, one did not build, one was not run
    {"version": "1.0.0", "status": "ok", "first_error": None},
    {"version": "2.0.0", "status": "build_failed", "first_error": "error: x"},
    {"version": "3.0.0", "status": "not_run"},
]
ENTRY = {"category": "failed", "status": "fail", "message": "", "observed_class": ""}


def version_cell(ident, device, **by_version):
    scenario, variant = ident.split("/")
    axes = {"variant": variant}
    return {
        "id": ident,
        "scenario": scenario,
        "axes": axes,
        "device": device,
        "by_version": by_version,
    }


class FromVersionMatrix(unittest.TestCase):
    def grid(self, *cells):
        return matrix.from_version_matrix({"versions": VERSIONS, "cells": list(cells)})

    def test_columns_rows_and_title(self):
        grid = self.grid(
            version_cell("s/fixed", "sim:0", **{"1.0.0": ENTRY}),
            version_cell("s/fixed", "cpu", **{"1.0.0": ENTRY}),
            version_cell("t/broken", "cpu", **{"1.0.0": ENTRY}),
        )
        self.assertEqual(grid.title, "Scenario outcomes by LibTorch version")
        self.assertEqual(grid.rows, ["s · variant=fixed", "t · variant=broken"])
        devices = ("cpu", "sim:0 (simulated)")
        expected = [f"{v} · {d}" for v in ("1.0.0", "2.0.0", "3.0.0") for d in devices]
        self.assertEqual(grid.columns, expected)
        self.assertEqual(len(grid.cells), 9)

    def test_a_version_without_the_cell_is_skipped_with_its_status(self):
        grid = self.grid(version_cell("s/fixed", "cpu", **{"1.0.0": ENTRY}))
        row = "s · variant=fixed"
        failed = matrix.Cell(matrix.SKIPPED, "LibTorch 2.0.0: build_failed (error: x)", "s/fixed")
        self.assertEqual(grid.cells[(row, "2.0.0 · cpu")], failed)
        absent = matrix.Cell(matrix.SKIPPED, "LibTorch 3.0.0: not_run", "s/fixed")
        self.assertEqual(grid.cells[(row, "3.0.0 · cpu")], absent)

    def test_an_entry_is_categorised_with_its_message_or_class(self):
        with_both = dict(ENTRY, message="boom", observed_class="c10::Error")
        only_class = dict(ENTRY, observed_class="c10::Error")
        passed = dict(ENTRY, category="passed", status="pass")
        grid = self.grid(
            version_cell("s/fixed", "cpu", **{"1.0.0": with_both, "2.0.0": only_class}),
            version_cell("t/fixed", "cpu", **{"1.0.0": ENTRY, "2.0.0": passed}),
        )
        s, t = "s · variant=fixed", "t · variant=fixed"
        found = {key: (c.category, c.detail, c.cell_id) for key, c in grid.cells.items()}
        self.assertEqual(found[(s, "1.0.0 · cpu")], (matrix.UNEXPECTED, "boom", "s/fixed"))
        self.assertEqual(found[(s, "2.0.0 · cpu")], (matrix.UNEXPECTED, "c10::Error", "s/fixed"))
        self.assertEqual(found[(t, "1.0.0 · cpu")], (matrix.UNEXPECTED, "status 'fail'", "t/fixed"))
        self.assertEqual(found[(t, "2.0.0 · cpu")], (matrix.PASSED, "", "t/fixed"))


def grid_of(*cells):
    """A synthetic grid of (row, column, category, detail); rows and columns in the order given."""
    rows = sorted({c[0] for c in cells})
    columns = sorted({c[1] for c in cells})
    made = {(r, c): matrix.Cell(category, detail, f"{r}/{c}") for r, c, category, detail in cells}
    return matrix.Grid("synthetic", rows, columns, made)


class GridTotals(unittest.TestCase):
    def test_footnotes_number_distinct_skip_reasons_row_by_row(self):
        grid = grid_of(
            ("r2", "c1", matrix.SKIPPED, "second"),
            ("r1", "c2", matrix.SKIPPED, "first"),
            ("r1", "c1", matrix.PASSED, "not a skip"),
            ("r2", "c2", matrix.SKIPPED, "first"),
            ("r3", "c1", matrix.SKIPPED, "third"),
        )  # (r3, c2) has no cell
        self.assertEqual(grid.footnotes(), {"first": 1, "second": 2, "third": 3})

    def test_counts_every_category_and_evidence(self):
        kinds = [matrix.EXPECTED_ERROR] * 2 + [matrix.PASSED, matrix.RACE_SHOWN]
        kinds += [matrix.UNEXERCISED, matrix.LATENT, matrix.RACE_NOT_SHOWN]
        kinds += [matrix.SKIPPED, matrix.SKIPPED, matrix.UNEXPECTED, matrix.UNEXPECTED]
        grid = grid_of(*[(f"r{i}", "cpu", kind, "") for i, kind in enumerate(kinds)])
        expected = dict.fromkeys(matrix.CATEGORIES, 1)
        expected.update({matrix.EXPECTED_ERROR: 2, matrix.SKIPPED: 2, matrix.UNEXPECTED: 2})
        self.assertEqual(grid.counts(), expected)
        self.assertEqual(grid.evidence(), (4, 7))

    def test_an_empty_grid_counts_zero(self):
        grid = grid_of()
        self.assertEqual(grid.counts(), dict.fromkeys(matrix.CATEGORIES, 0))
        self.assertEqual(grid.evidence(), (0, 0))
        self.assertEqual(grid.footnotes(), {})


if __name__ == "__main__":
    unittest.main()
