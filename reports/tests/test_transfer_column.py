#!/usr/bin/env python3
"""The report's per-step transfer counts beside each cell (issue 32): the text made from a
cell's transfer.* metrics (torchplace.report.transfer_budget) and its column in "All cells".
The cells here are synthetic, made below, never recorded from a run."""
import unittest
from typing import Any

from torchplace.report import html_page, transfer_budget

SYNTHETIC_METRICS = {  # hand-made: the shape of harness/transfer_metrics.h, not a measurement
    "transfer.step.h2d.copies": 2.0,
    "transfer.step.h2d.bytes": 960.0,
    "transfer.step.h2d.non_blocking": 2.0,
    "transfer.step.d2h.copies": 0.0,
    "transfer.step.d2h.bytes": 0.0,
    "transfer.step.d2h.non_blocking": 0.0,
    "transfer.step.sync._local_scalar_dense": 1.0,
    "transfer.step.sync.nonzero": 0.0,
    "transfer.once.d2h.copies": 1.0,
    "transfer.once.d2h.bytes": 1152.0,
    "transfer.once.d2h.non_blocking": 0.0,
    "transfer.once.sync.copy_to_host": 1.0,
}


def synthetic_cell(metrics: dict[str, float]) -> dict[str, Any]:
    return {
        "id": "transfer_budget/case=item_every_step/device=sim:0",
        "expected": {"outcome": "success", "error_class": None},
        "observed": {"outcome": "success", "error_class": None, "message": ""},
        "status": "pass",
        "category": "passed",
        "reason": "synthetic cell (reports/tests/test_transfer_column.py)",
        "metrics": metrics,
    }


class TransferColumn(unittest.TestCase):
    def test_text_per_phase(self) -> None:
        self.assertEqual(
            transfer_budget.cell_text(synthetic_cell(SYNTHETIC_METRICS)),
            "per step: h2d 2 (960 B, 2 non_blocking), syncs 1 (1 _local_scalar_dense); "
            "after the loop: d2h 1 (1152 B, 0 non_blocking), syncs 1 (1 copy_to_host)",
        )

    def test_no_sync_is_syncs_0_and_no_metrics_is_empty(self) -> None:
        quiet = {k: v for k, v in SYNTHETIC_METRICS.items() if "sync" not in k and "step" in k}
        self.assertEqual(
            transfer_budget.cell_text(synthetic_cell(quiet)),
            "per step: h2d 2 (960 B, 2 non_blocking), syncs 0",
        )
        self.assertEqual(transfer_budget.cell_text(synthetic_cell({"other": 1.0})), "")

    def test_beside_each_cell(self) -> None:
        page = html_page.cells_section({"cells": [synthetic_cell(SYNTHETIC_METRICS)]})
        self.assertIn("<th>transfers (sim, per step)</th>", page)
        self.assertIn("per step: h2d 2 (960 B, 2 non_blocking), syncs 1", page)


if __name__ == "__main__":
    unittest.main()
