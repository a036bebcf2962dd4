#!/usr/bin/env python3
"""The behaviour gate holds a cell's metrics to its committed entry (issue 45, item 4;
torchplace/gate/metrics.py): a metric lost, added or off its value is metrics_changed (exit 2),
durations and CUDA cells by name only, on the LibTorch the entries were refreshed on only. The
run is a real one: cells_amp.json (reports/reference/debian12-libtorch1.13.1/, its README says
how it was recorded); each edit below is synthetic and says what it changes.

  test_metrics.py [TestClass[.test] ...]      (CTest: gate.metrics)
"""
import json
import unittest

from recorded_run import RecordedRun
from torchplace.gate import behaviour, metrics
from torchplace.schema import InputError

SCALER = "amp/variant=grad_scaler/device=cpu"  # seven metrics: losses, ratios, the scale


class Metrics(RecordedRun):
    RECORD = "cells_amp.json"

    def metrics(self, cell_id: str = SCALER) -> dict:
        return self.cell(cell_id)["metrics"]

    def test_a_refresh_keeps_the_metrics_of_the_cells_that_ran(self):
        cells = self.committed()["cells"]
        self.assertEqual(cells[SCALER]["metrics"], self.metrics())
        self.assertEqual(len(cells[SCALER]["metrics"]), 7)
        skipped = [c["id"] for c in self.run_doc["cells"] if c["status"] == "skip"]
        self.assertTrue(skipped)
        self.assertFalse([i for i in skipped if "metrics" in cells[i]])
        self.assertEqual(self.regressions(), [])

    def test_a_lost_or_a_new_metric_is_a_regression(self):
        final_loss = self.metrics().pop("final_loss")
        self.assertEqual(self.regressions(), [(SCALER, "metrics_changed", "lost final_loss")])
        self.metrics()["final_loss"] = final_loss
        self.metrics()["loss"] = final_loss  # a copy under another name, as a slip writes it
        self.assertEqual(self.regressions(), [(SCALER, "metrics_changed", "new loss")])

    def test_a_value_off_its_entry_is_a_regression_within_its_tolerance(self):
        scale = self.metrics()["final_scale"]
        self.metrics()["final_scale"] = scale / 2  # one backoff more
        [(_, kind, detail)] = self.regressions()
        self.assertEqual(
            (kind, detail), ("metrics_changed", f"final_scale {scale!r} -> {scale/2!r}")
        )
        self.metrics()["final_scale"] = scale * (1 + metrics.METRIC_RTOL / 2)
        self.assertEqual(self.regressions(), [])
        self.metrics()["final_scale"] = scale * (1 + metrics.METRIC_RTOL * 2)
        self.assertEqual([r[1] for r in self.regressions()], ["metrics_changed"])
        self.metrics()["final_scale"] = scale
        self.metrics()["final_loss"] *= 1.001  # a loss 0.1 % off is no rounding of the same sum
        self.assertEqual([r[1] for r in self.regressions()], ["metrics_changed"])

    def test_a_zero_is_held_exactly_and_nan_is_never_close(self):
        cell = "amp/variant=fp16_underflow/device=cpu"  # unscaled_grad_abs_max: 0.0 (underflow)
        self.assertEqual(self.metrics(cell)["unscaled_grad_abs_max"], 0.0)
        self.metrics(cell)["unscaled_grad_abs_max"] = 1e-30
        self.assertEqual([r[1] for r in self.regressions()], ["metrics_changed"])
        self.metrics(cell)["unscaled_grad_abs_max"] = float("nan")
        self.assertEqual([r[1] for r in self.regressions()], ["metrics_changed"])

    def test_durations_and_cuda_cells_are_held_by_name(self):
        self.assertTrue(metrics.by_name_only("ddp/variant=x/device=cpu", "peer_wait_ms"))
        self.assertTrue(metrics.by_name_only("ddp/variant=x/devices=cuda:0+cuda:1", "loss"))
        self.assertFalse(metrics.by_name_only("amp/variant=x/device=sim:0", "loss"))
        self.metrics()["final_loss_ms"] = 2029.0  # synthetic: a duration
        self.refresh()
        self.metrics()["final_loss_ms"] = 31.0
        self.assertEqual(self.regressions(), [])

    def test_transfer_counts_stay_with_the_budget(self):
        cell = {
            "id": "x/device=sim:0",
            "status": "pass",
            "metrics": {"transfer.step.h2d.copies": 2},
        }
        self.assertEqual(metrics.entries({cell["id"]: cell}, behaviour.kind_id), {cell["id"]: {}})

    def test_an_empty_entry_holds_that_there_are_none(self):
        # a refresh writes "metrics": {} for a cell that ran without any (67 in the committed file)
        doc = self.committed()
        doc["cells"][SCALER]["metrics"] = {}
        self.expectations.write_text(json.dumps(doc))
        self.metrics().clear()
        self.assertEqual(self.regressions(), [])
        self.metrics()["anything"] = 1.0  # synthetic: a metric the entry does not hold
        self.assertEqual(self.regressions(), [(SCALER, "metrics_changed", "new anything")])

    def test_a_cell_of_transfer_counts_only_has_no_metrics_to_change(self):
        cell = {"id": "x/device=sim:0", "metrics": {"transfer.step.h2d.copies": 2}}
        self.assertIsNone(metrics.problem({"metrics": {}}, cell))

    def test_another_libtorch_computes_other_values(self):
        self.run_doc["fingerprint"]["libtorch_version"] = "2.14.1"  # synthetic: another version
        self.metrics()["final_loss"] += 0.5
        self.assertEqual(self.regressions(), [])

    def test_an_entry_without_metrics_holds_none(self):
        doc = self.committed()
        del doc["cells"][SCALER]["metrics"]
        self.expectations.write_text(json.dumps(doc))
        self.metrics()["anything"] = 1.0
        self.assertEqual(self.regressions(), [])

    def test_metrics_that_are_not_finite_numbers_are_refused(self):
        for bad in ("0.27", True, float("inf")):
            doc = self.committed()
            doc["cells"][SCALER]["metrics"]["final_loss"] = bad
            self.expectations.write_text(json.dumps(doc))
            with self.subTest(bad=bad), self.assertRaises(InputError):
                self.regressions()


if __name__ == "__main__":
    unittest.main()
