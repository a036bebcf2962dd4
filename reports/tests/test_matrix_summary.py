#!/usr/bin/env python3
"""torchplace.matrix.summary in process: the Markdown view of matrix.json (OUT/matrix.md): its
sections in order, a column's row (timings, a cached root, the bench, the unit tests, the first
error), the CUDA compile-only cell, the grid (a cell absent from a version, a missing category,
the class, the simulated mark) and the differences (each value, an empty one, None, or none at
all). The matrices are synthetic.

  test_matrix_summary.py [CLASS]      (CTest: report.matrix_summary)
"""
import unittest
from typing import Any, Dict, List

from torchplace.matrix import summary

OLD = {  # a column that built and ran, its root from the cache
    "version": "1.13.1",
    "root": "/opt/libtorch-1.13.1",
    "status": "ok",
    "timings_s": {"root": 2.5, "install": 1, "build": 30, "run": 4.25},
    "root_cached": True,
    "bench": "ran",
    "unit": {"status": "ok", "ran": 12, "failed": []},
    "first_error": None,
}
NEW = {  # a column whose build failed: no install, run or bench; unit tests failed
    "version": "2.6.0",
    "root": "/opt/libtorch-2.6.0",
    "status": "build_failed",
    "timings_s": {"build": 7},
    "unit": {"status": "failed", "ran": 5, "failed": ["a", "b", "c", "d"]},
    "first_error": "error: 'x' was not declared",
}


def cell(ident: str, device: str, **by_version: Dict[str, Any]) -> Dict[str, Any]:
    return {"id": ident, "device": device, "by_version": by_version}


def matrix(**fields: Any) -> Dict[str, Any]:
    doc: Dict[str, Any] = {"versions": [OLD, NEW], "cells": [], "differences": []}
    doc.update(fields)
    return doc


def section(text: str, title: str) -> List[str]:
    """The lines of one `## title` section, without its heading and blank lines around it."""
    lines = text.split("\n")
    start = lines.index(f"## {title}") + 2
    end = next((i for i in range(start, len(lines)) if lines[i].startswith("## ")), len(lines))
    return lines[start : end - 1]


class Columns(unittest.TestCase):
    def test_the_sections_in_order(self) -> None:
        text = summary.render(matrix())
        lines = text.split("\n")
        self.assertEqual(lines[:4], ["# LibTorch version matrix", "", "## Columns", ""])
        headings = [line for line in lines if line.startswith("#")]
        self.assertEqual(
            headings,
            [
                "# LibTorch version matrix",
                "## Columns",
                "## Cells (status, outcome category, class)",
                "## Differences between versions",
            ],
        )
        self.assertEqual(lines[-2:], ["No cell differs between the versions that ran.", ""])

    def test_a_row_per_column(self) -> None:
        rows = section(summary.render(matrix()), "Columns")
        self.assertEqual(len(rows), 4)
        self.assertEqual(rows[0].count("|"), 11)
        self.assertEqual(rows[1], "|---|---|---|---|---|---|---|---|---|---|")
        self.assertEqual(
            rows[2],
            "| 1.13.1 | /opt/libtorch-1.13.1 | ok | 2.5 (cached) | 1 | 30 | 4.25 | ran "
            "| ok (12) |  |",  # no first error: an empty cell
        )
        self.assertEqual(
            rows[3],
            "| 2.6.0 | /opt/libtorch-2.6.0 | build_failed | - | - | 7 | - | - | failed: a, b, c "
            "| error: 'x' was not declared |",
        )

    def test_unit_tests(self) -> None:
        for unit, text in (
            (None, "-"),
            ({}, "-"),
            (
                {"status": "failed", "ran": 0, "failed": [], "note": "no unit binary"},
                "failed: no unit binary",
            ),
            (
                {"status": "absent", "note": "run.json records no unit step"},
                "absent: run.json records no unit step",
            ),
            ({"status": "failed", "failed": ["one"], "note": "unused"}, "failed: one"),
            ({"status": "absent"}, "absent: "),
        ):
            with self.subTest(unit=unit):
                column = dict(OLD, unit=unit)
                row = section(summary.render(matrix(versions=[column])), "Columns")[2]
                self.assertEqual(row.split(" | ")[8], text)

    def test_the_cuda_compile_only_cell(self) -> None:
        about = "CUDA compile-only cell (LibTorch 2.6.0 + CUDA 12.4, trixie, built, never run): "
        for cuda, said in (
            ({"status": "compiled", "first_error": None}, "compiled"),
            (
                {"status": "build_failed", "first_error": "nvcc: fatal"},
                "build_failed (nvcc: fatal)",
            ),
        ):
            with self.subTest(cuda=cuda):
                rows = section(summary.render(matrix(cuda_compile=cuda)), "Columns")
                self.assertEqual(rows[4:], ["", about + said])
        self.assertEqual(len(section(summary.render(matrix(cuda_compile=None)), "Columns")), 4)


class Cells(unittest.TestCase):
    def test_the_grid(self) -> None:
        cells = [
            cell(
                "amp/variant=targets_on_cpu/device=sim:0",
                "sim:0",
                **{
                    "1.13.1": {
                        "status": "pass",
                        "category": "expected_error",
                        "observed_class": "DeviceMismatch",
                    }
                },
            ),
            cell(
                "add/device=cpu",
                "cpu",
                **{"2.6.0": {"status": "fail", "observed_class": None}},
            ),
            cell(
                "copy/device=cuda:0",
                "cuda:0",
                **{"1.13.1": {"status": "skip", "category": "skipped"}},
            ),
        ]
        rows = section(
            summary.render(matrix(cells=cells)),
            "Cells (status, outcome category, class)",
        )
        self.assertEqual(
            rows,
            [
                "| cell | 1.13.1 | 2.6.0 |",
                "|---|---|---|",
                "| amp/variant=targets_on_cpu/device=sim:0 (simulated) | pass expected_error "
                "DeviceMismatch | absent |",
                "| add/device=cpu | absent | fail ? |",
                "| copy/device=cuda:0 | skip skipped | absent |",
            ],
        )

    def test_a_cell_without_a_device_is_not_simulated(self) -> None:
        one = {"id": "x", "by_version": {}}
        rows = section(
            summary.render(matrix(cells=[one])),
            "Cells (status, outcome category, class)",
        )
        self.assertEqual(rows[2], "| x | absent | absent |")


class Differences(unittest.TestCase):
    def test_each_value_or_none(self) -> None:
        found = [
            {
                "id": "amp/device=sim:0",
                "kind": "outcome",
                "versions": {"1.13.1": "error", "2.6.0": "success"},
            },
            {
                "id": "add/device=cpu",
                "kind": "message",
                "versions": {"1.13.1": "it's", "2.6.0": ""},
            },
            {  # a class on one version, none raised on the other: its None is shown
                "id": "add/device=cpu",
                "kind": "error_class",
                "versions": {"1.13.1": "DeviceMismatch", "2.6.0": None},
            },
        ]
        rows = section(summary.render(matrix(differences=found)), "Differences between versions")
        self.assertEqual(
            rows,
            [
                "- amp/device=sim:0 (outcome):",
                "  - 1.13.1: 'error'",
                "  - 2.6.0: 'success'",
                "- add/device=cpu (message):",
                '  - 1.13.1: "it\'s"',
                "  - 2.6.0: (none)",
                "- add/device=cpu (error_class):",
                "  - 1.13.1: 'DeviceMismatch'",
                "  - 2.6.0: None",
            ],
        )


if __name__ == "__main__":
    unittest.main()
