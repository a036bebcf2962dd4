#!/usr/bin/env python3
"""python3 -m torchplace.sim_verdicts on small results files: agreement, a disagreement, nothing
to judge."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

SCRIPT = ["-m", "torchplace.sim_verdicts"]


def cell(device, outcome, error_class=None, status="pass"):
    return {
        "id": f"forgotten_labels/variant=broken/device={device}",
        "device": device,
        "status": status,
        "reason": "device absent" if status == "skip" else "",
        "observed": {"outcome": outcome, "error_class": error_class, "message": ""},
    }


class CompareVerdictsTest(unittest.TestCase):
    def run_on(self, cells):
        with tempfile.TemporaryDirectory() as scratch:
            path = os.path.join(scratch, "results.json")
            with open(path, "w", encoding="utf-8") as handle:
                json.dump({"schema": "torchplace.results/1", "cells": cells}, handle)
            return subprocess.run([sys.executable, *SCRIPT, path], capture_output=True, text=True)

    def test_agreement_passes(self):
        done = self.run_on(
            [cell("sim:0", "error", "DeviceMismatch"), cell("cuda:0", "error", "DeviceMismatch")]
        )
        self.assertEqual(done.returncode, 0, done.stdout)

    def test_disagreement_fails_and_names_the_cell(self):
        done = self.run_on([cell("sim:0", "success"), cell("cuda:0", "error", "DeviceMismatch")])
        self.assertEqual(done.returncode, 1, done.stdout)
        self.assertIn("DIFFERS: forgotten_labels/variant=broken/device=sim:0", done.stdout)

    def test_both_raise_but_a_different_class_fails(self):
        # Synthetic: both cells raise, only the class differs (no real run's pair does so).
        done = self.run_on(
            [cell("sim:0", "error", "DtypeMismatch"), cell("cuda:0", "error", "DeviceMismatch")]
        )
        self.assertEqual(done.returncode, 1, done.stdout)
        self.assertIn(
            "DIFFERS: forgotten_labels/variant=broken/device=sim:0: "
            "sim ('error', 'DtypeMismatch') vs cuda ('error', 'DeviceMismatch')",
            done.stdout,
        )

    def test_no_cuda_cell_is_not_a_pass(self):
        done = self.run_on(
            [cell("sim:0", "error", "DeviceMismatch"), cell("cuda:0", "skipped", status="skip")]
        )
        self.assertEqual(done.returncode, 3, done.stdout)
        self.assertIn("cuda:0 skipped: device absent", done.stdout)


if __name__ == "__main__":
    unittest.main(verbosity=2)
