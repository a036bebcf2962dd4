#!/usr/bin/env python3
"""The behaviour gate's transfer budgets (issue 32), on synthetic input (gate_inputs.py) through
`python3 -m torchplace.gate`: a passing cell whose copies, bytes or forced synchronisations per
step grow beyond its committed "transfers" is exit 2 naming the count and the operator; a budget
the run did not record is exit 2; fewer is listed, not failed; a malformed budget is exit 3; a
refresh writes the budget from the cells' metrics.

Every count here is synthetic, made by these functions (the shape of harness/transfer_metrics.h),
never recorded from a run.

  test_transfers.py [TestClass[.test] ...]      (CTest: gate.transfers)
"""
import copy
import json
import os
import shutil
import unittest
from typing import Any, Optional

from gate_inputs import CPU_HOST, Gate, expectations, passing, results

PASS, REGRESSION, INPUT = 0, 2, 3
SIM_FIX = "transfer_budget/case=metric_once/device=sim:0"
SIM_BROKEN = "transfer_budget/case=item_every_step/device=sim:0"

# A synthetic budget: the fix's step moves two tensors (960 B) and waits for nothing.
SYNTHETIC_STEP = {
    "transfer.step.h2d.copies": 2,
    "transfer.step.h2d.bytes": 960,
    "transfer.step.h2d.non_blocking": 2,
    "transfer.step.d2h.copies": 0,
    "transfer.step.d2h.bytes": 0,
    "transfer.step.d2h.non_blocking": 0,
    "transfer.step.d2d.copies": 0,
    "transfer.step.d2d.bytes": 0,
    "transfer.step.d2d.non_blocking": 0,
    "transfer.step.sync._local_scalar_dense": 0,
    "transfer.step.sync.nonzero": 0,
}


def counted(cell_id: str, counts: Optional[dict[str, int]] = None) -> dict[str, Any]:
    """A passing sim:0 cell with these transfer metrics (the synthetic budget by default)."""
    cell = passing(cell_id)
    cell["metrics"] = dict(SYNTHETIC_STEP if counts is None else counts)
    return cell


def with_budget(cells: list[dict[str, Any]]) -> dict[str, Any]:
    """Expectations of these cells, each holding its own metrics as its committed budget."""
    doc = expectations(cells)
    for cell in cells:
        doc["cells"][cell["id"]]["transfers"] = dict(cell["metrics"])
    return doc


def changed(**counts: int) -> dict[str, int]:
    """The synthetic budget with some counts changed (keys without the 'transfer.step.')."""
    out = dict(SYNTHETIC_STEP)
    for key, value in counts.items():
        out["transfer.step." + key.replace("__", ".")] = value
    return out


class TransferCase(unittest.TestCase):
    def setUp(self) -> None:
        self.gate = Gate()
        self.addCleanup(shutil.rmtree, self.gate.root, True)
        self.committed = with_budget([counted(SIM_FIX), counted(SIM_BROKEN)])

    def judge(self, cells: list[dict[str, Any]], committed: Optional[dict[str, Any]] = None) -> int:
        code = self.gate.run(results(cells, CPU_HOST), committed or self.committed)
        self.assertNotIn("Traceback", self.gate.output)
        return code

    def regressions(self) -> list[dict[str, Any]]:
        return self.gate.verdict["behaviour"]["regressions"]


class Grows(TransferCase):
    def test_one_more_item_names_local_scalar_dense(self) -> None:
        run = [counted(SIM_FIX, changed(sync___local_scalar_dense=1)), counted(SIM_BROKEN)]
        self.assertEqual(self.judge(run), REGRESSION, self.gate.output)
        (regression,) = self.regressions()
        self.assertEqual((regression["id"], regression["kind"]), (SIM_FIX, "transfers_grew"))
        self.assertIn("synchronisations by _local_scalar_dense 0 -> 1", regression["detail"])

    def test_more_bytes_alone(self) -> None:
        run = [counted(SIM_FIX, changed(h2d__bytes=978)), counted(SIM_BROKEN)]
        self.assertEqual(self.judge(run), REGRESSION, self.gate.output)
        self.assertIn("host-to-device bytes 960 -> 978", self.regressions()[0]["detail"])

    def test_each_direction_and_field(self) -> None:
        for key in SYNTHETIC_STEP:
            with self.subTest(key=key):
                counts = dict(SYNTHETIC_STEP, **{key: SYNTHETIC_STEP[key] + 1})
                self.assertEqual(self.judge([counted(SIM_FIX, counts), counted(SIM_BROKEN)]), 2)
                self.assertEqual([r["kind"] for r in self.regressions()], ["transfers_grew"])

    def test_an_operator_the_budget_never_listed(self) -> None:
        run = [counted(SIM_FIX, dict(SYNTHETIC_STEP, **{"transfer.step.sync.unique": 1}))]
        self.assertEqual(self.judge(run + [counted(SIM_BROKEN)]), REGRESSION, self.gate.output)
        self.assertIn("synchronisations by unique 0 -> 1", self.regressions()[0]["detail"])

    def test_unrecorded_budget(self) -> None:
        run = [counted(SIM_FIX, {}), counted(SIM_BROKEN)]
        self.assertEqual(self.judge(run), REGRESSION, self.gate.output)
        self.assertEqual(self.regressions()[0]["kind"], "transfers_unrecorded")


class Holds(TransferCase):
    def test_the_same_counts_pass(self) -> None:
        self.assertEqual(
            self.judge([counted(SIM_FIX), counted(SIM_BROKEN)]), PASS, self.gate.output
        )

    def test_fewer_are_listed_not_failed(self) -> None:
        run = [counted(SIM_FIX, changed(h2d__copies=1)), counted(SIM_BROKEN)]
        self.assertEqual(self.judge(run), PASS, self.gate.output)
        (below,) = self.gate.verdict["behaviour"]["transfers_below_budget"]
        self.assertEqual(below["id"], SIM_FIX)
        self.assertIn("host-to-device copies 2 -> 1", below["detail"])

    def test_a_cell_without_a_budget_is_not_judged_on_counts(self) -> None:
        committed = expectations([counted(SIM_FIX), counted(SIM_BROKEN)])  # no "transfers"
        run = [counted(SIM_FIX, changed(sync__nonzero=5)), counted(SIM_BROKEN)]
        self.assertEqual(self.judge(run, committed), PASS, self.gate.output)


class BadBudgets(TransferCase):
    def test_malformed_budgets_are_exit_3(self) -> None:
        for bad in (
            {"transfer.step.h2d.copies": -1},
            {"transfer.step.h2d.copies": 1.5},
            {"transfer.step.h2d.copies": True},
            {"copies": 1},
            [],
        ):
            with self.subTest(bad=bad):
                committed = copy.deepcopy(self.committed)
                committed["cells"][SIM_FIX]["transfers"] = bad
                self.assertEqual(self.judge([counted(SIM_FIX), counted(SIM_BROKEN)], committed), 3)


class Refresh(TransferCase):
    def test_refresh_writes_each_cells_budget(self) -> None:
        run_dir = os.path.join(self.gate.root, "refresh-run")
        os.makedirs(run_dir)
        cells = [counted(SIM_FIX), counted(SIM_BROKEN, changed(sync___local_scalar_dense=1))]
        with open(os.path.join(run_dir, "results.json"), "w", encoding="utf-8") as handle:
            json.dump(results(cells, CPU_HOST), handle)
        target = os.path.join(self.gate.root, "refreshed.json")
        code = self.gate.command(["--refresh-expectations", run_dir, "--expectations", target])
        self.assertEqual(code, PASS, self.gate.output)
        with open(target, encoding="utf-8") as handle:
            refreshed = json.load(handle)["cells"]
        self.assertEqual(refreshed[SIM_FIX]["transfers"], SYNTHETIC_STEP)
        self.assertEqual(
            refreshed[SIM_BROKEN]["transfers"]["transfer.step.sync._local_scalar_dense"], 1
        )


if __name__ == "__main__":
    unittest.main()
