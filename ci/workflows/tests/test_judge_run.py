#!/usr/bin/env python3
"""`torchplace run` decides its outcome once, into RUN_DIR/run.json (torchplace.run_record.decide,
from the steps it recorded), and ci/workflows/judge_run.sh reads that outcome, not the files: a
crashed scenario binary, a failed benchmark step or a failed report is exit 1 even where the files
look fine, and a run folder without a readable run.json, or without the outcome of a run of that
exit, is exit 3. Run folders here are synthetic (made by this test); each is decided as `run`
decides, then judged.

  test_judge_run.py      (CTest: command.judge_run)
"""
import json
import os
import shutil
import subprocess
import tempfile
import unittest

from torchplace import run_record

HERE = os.path.dirname(os.path.abspath(__file__))
JUDGE = os.path.join(HERE, "..", "judge_run.sh")
BENCH = {
    "context": {
        "about": "synthetic",
        "torchplace_synthetic": "hand-made test data, not a measurement: the judge's tests",
    },
    "benchmarks": [],
}


class JudgeRun(unittest.TestCase):
    def run_dir(self, steps=None, files=("bench.json", "index.html")):
        folder = tempfile.mkdtemp(prefix="judge-run-")
        self.addCleanup(shutil.rmtree, folder, True)
        if steps is not None:
            record = {
                "schema": "torchplace.run/1",
                "steps": {name: {"status": status} for name, status in steps.items()},
            }
            with open(os.path.join(folder, "run.json"), "w", encoding="utf-8") as handle:
                json.dump(record, handle)
        for name in files:
            with open(os.path.join(folder, name), "w", encoding="utf-8") as handle:
                handle.write(json.dumps(BENCH) if name == "bench.json" else "<p>synthetic</p>")
        return folder

    def judge(self, status, folder, decided=None):
        """Decides the run's outcome as `run` does (as if it exited `decided`, default
        `status`), then runs the judge on `status`."""
        record = os.path.join(folder, "run.json")
        decided = status if decided is None else decided
        if os.path.exists(record) and decided.isdigit():
            run_record.decide(record, folder, int(decided))
        done = subprocess.run(["bash", JUDGE, status, folder], capture_output=True, text=True)
        self.message = done.stderr
        return done.returncode

    GOOD = {"build": "ok", "scenarios": "cells_failed", "bench": "ran", "report": "ok"}

    def test_failed_cells_only(self):
        self.assertEqual(self.judge("1", self.run_dir(self.GOOD)), 0, self.message)

    def test_a_crashed_scenario_binary(self):
        steps = dict(self.GOOD, scenarios="crashed")
        self.assertEqual(self.judge("1", self.run_dir(steps)), 1, self.message)
        self.assertIn("crashed", self.message)

    def test_a_failed_bench_step_beside_a_clean_bench_json(self):
        steps = dict(self.GOOD, bench="failed")
        self.assertEqual(self.judge("1", self.run_dir(steps)), 1, self.message)

    def test_a_failed_report_step(self):
        steps = dict(self.GOOD, report="failed")
        self.assertEqual(self.judge("1", self.run_dir(steps)), 1, self.message)

    def test_a_report_step_ok_without_index_html(self):
        folder = self.run_dir(self.GOOD, files=("bench.json",))
        self.assertEqual(self.judge("1", folder), 1, self.message)

    def test_no_run_record(self):
        self.assertEqual(self.judge("1", self.run_dir(None)), 3, self.message)

    def test_an_outcome_of_another_exit(self):
        folder = self.run_dir(self.GOOD)
        self.assertEqual(self.judge("1", folder, decided="0"), 3, self.message)

    def test_no_outcome_recorded(self):
        folder = self.run_dir(self.GOOD)
        self.assertEqual(self.judge("1", folder, decided=""), 3, self.message)
        self.assertIn("records no outcome", self.message)

    def test_a_cut_gpu_step_beside_failed_cells(self):
        steps = dict(self.GOOD, cuda_tests="failed")
        self.assertEqual(self.judge("1", self.run_dir(steps)), 1, self.message)
        self.assertIn("cuda_tests", self.message)

    def test_other_codes(self):
        folder = self.run_dir(self.GOOD)
        self.assertEqual(self.judge("0", folder), 0)
        self.assertEqual(self.judge("", folder), 3)
        self.assertEqual(self.judge("4", folder), 4)


if __name__ == "__main__":
    unittest.main()
