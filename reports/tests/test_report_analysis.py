#!/usr/bin/env python3
"""torchplace.report.analysis in process: what analyse computes from each input (the grids, the
small-tensor bars, every bench table empty without bench.json) and which figures `figures`
draws, with stand-in drawers in place of matplotlib (matrix_figure and plots replaced). Every
input is synthetic, hand-made test data, not a measurement."""
import sys
import types
import unittest
from unittest import mock

import torchplace.report
from report_inputs import MIB, analyse, cell, entry, load_bench, reps, results
from torchplace.report import analysis, matrix, tables

BENCH_FIELDS = {  # each bench-derived field of Analysis and its empty value
    "curves": {},
    "percent": {},
    "device_copy": {},
    "ratios": {},
    "small": {},
    "prefetch": [],
    "cpu_curves": {},
    "cpu_percent": {},
    "mover_rows": [],
}
MATRIX = {  # a synthetic matrix.json: one version, one cell
    "versions": [{"version": "1.0.0", "status": "ok"}],
    "cells": [cell("s/fixed", by_version={"1.0.0": {"category": "passed", "status": "pass"}})],
}


class Analyse(unittest.TestCase):
    def test_without_bench_every_bench_table_is_empty(self):
        result = analyse(results([cell("s/fixed")]))
        self.assertEqual(result.grid.rows, ["s · variant=fixed"])
        self.assertIsNone(result.version_grid)
        for name, empty in BENCH_FIELDS.items():
            self.assertEqual(getattr(result, name), empty, name)

    def test_a_matrix_only_folder_has_a_version_grid_only(self):
        result = analyse(matrix=MATRIX)
        self.assertIsNone(result.grid)
        self.assertEqual(result.version_grid.columns, ["1.0.0 · cpu"])

    def test_small_tensor_bars_in_milliseconds_per_batch(self):
        name = "small_tensors/direction:h2d/strategy:loop/count:1000/bytes:4096"
        result = analyse(bench_data=load_bench([entry(name, real_time=2e6)]))  # 2e6 ns = 2 ms
        self.assertEqual(list(result.small), ["small_tensors, h2d: 1000 tensors × 4 KiB"])
        (spread,) = result.small.values()
        self.assertEqual(list(spread), ["loop"])
        for value in spread["loop"]:
            self.assertAlmostEqual(value, 2.0)

    def test_each_bench_table_from_bench_json(self):
        bench = load_bench(bench_entries())
        result = analyse(bench_data=bench)
        self.assertIs(result.bench, bench)
        self.assertEqual(result.curves, tables.transfer_curves(bench))
        self.assertEqual(result.percent, tables.percent_of_raw(result.curves))
        self.assertEqual(result.device_copy, tables.device_copy_medians(bench))
        self.assertEqual(result.ratios, tables.pinned_pageable_ratio(result.curves))
        self.assertEqual(result.prefetch, tables.prefetch_rows(bench))
        self.assertEqual(result.cpu_curves, tables.cpu_copy_curves(bench))
        self.assertEqual(result.cpu_percent, tables.cpu_copy_percent(result.cpu_curves))
        self.assertEqual(result.mover_rows, tables.batch_mover_rows(bench))
        for name in BENCH_FIELDS:
            self.assertTrue(getattr(result, name) or name == "small", name)

    def test_failed_cells_are_those_with_status_fail(self):
        cells = [
            cell("s/fixed"),
            cell("s/broken", status="fail"),
            cell("t/fixed", status="skip"),
        ]
        self.assertEqual(analyse(results(cells)).failed_cells(), [cells[1]])
        self.assertEqual(analyse().failed_cells(), [])


PREFETCH = {"compute_ms": 2.0, "copy_ms": 1.5, "step_ms": 2.1, "overlap_ratio": 1.2}


def bench_entries():
    """Synthetic bench.json entries that fill every bench table but the small-tensor bars."""
    bps, device = "bytes_per_second", "device_copy_bytes_per_second"
    transfer = "transfer/direction:h2d/strategy:{}/bytes:%d/device:cuda:0" % MIB
    return (
        reps(transfer.format("raw_cudamemcpy"), bps, [20e9])
        + reps(transfer.format("pinned_resident"), bps, [10e9], **{device: 30e9})
        + reps(transfer.format("pageable"), bps, [5e9])
        + reps("prefetch_overlap/device:cuda:0", "iterations", [10], **PREFETCH)
        + reps("cpu_copy/path:memcpy/bytes:4096", bps, [10e9])
        + reps("cpu_copy/path:copy_/bytes:4096", bps, [8e9])
        + reps("batch_mover/tensors:10/impl:mover", "real_time", [2000.0])
        + reps("batch_mover/tensors:10/impl:loop", "real_time", [8000.0])
    )


def drawer(name):
    """A stand-in drawer: the PNG it returns names it and the values it was given."""
    return lambda values: (name, values)


class Figures(unittest.TestCase):
    def figures_of(self, result):
        plots = types.SimpleNamespace(
            **{n: drawer(n) for n in ("transfer_bandwidth", "pinned_pageable", "small_tensors")},
            cpu_copy=drawer("cpu_copy"),
            batch_mover=drawer("batch_mover"),
        )
        figure = types.SimpleNamespace(outcome_matrix=drawer("outcome_matrix"))
        stand_ins = {"plots": plots, "matrix_figure": figure}
        modules = {f"torchplace.report.{n}": m for n, m in stand_ins.items()}
        with mock.patch.dict(sys.modules, modules):
            with mock.patch.multiple(torchplace.report, create=True, **stand_ins):
                return analysis.figures(result)

    def test_nothing_to_draw(self):
        self.assertEqual(self.figures_of(analyse()), {})

    def test_each_figure_drawn_from_its_values(self):
        result = analyse(results([cell("s/fixed")]), matrix=MATRIX)
        values = {n: [n] for n in ("curves", "ratios", "small", "cpu_curves", "mover_rows")}
        for name, value in values.items():
            setattr(result, name, value)
        expected = {
            "outcome_matrix.png": ("outcome_matrix", result.grid),
            "version_matrix.png": ("outcome_matrix", result.version_grid),
            "transfer_bandwidth.png": ("transfer_bandwidth", ["curves"]),
            "pinned_pageable_ratio.png": ("pinned_pageable", ["ratios"]),
            "small_tensors.png": ("small_tensors", ["small"]),
            "cpu_copy.png": ("cpu_copy", ["cpu_curves"]),
            "batch_mover.png": ("batch_mover", ["mover_rows"]),
        }
        self.assertEqual(self.figures_of(result), expected)

    def test_only_the_figures_with_values(self):
        result = analyse()
        result.version_grid = matrix.Grid("synthetic", [], [], {})
        result.small = {"synthetic": {}}
        expected = {
            "version_matrix.png": ("outcome_matrix", result.version_grid),
            "small_tensors.png": ("small_tensors", result.small),
        }
        self.assertEqual(self.figures_of(result), expected)


if __name__ == "__main__":
    unittest.main()
