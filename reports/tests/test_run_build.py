#!/usr/bin/env python3
"""`torchplace run` without --suite builds this tree first (torchplace.command.run, in process):
run.json records the build step ok or failed with its exit, a failed build ends the run with
that exit and runs nothing else, and the scenarios then come from the build folder. Nothing is
built: tp_ensure_deps and the build are mocks, and so are the steps after the build.

  test_run_build.py      (CTest: command.run_build)
"""
import contextlib
import io
import json
import shutil
import tempfile
import unittest
from pathlib import Path
from typing import Optional, Tuple
from unittest import mock

from torchplace import schema
from torchplace.command import common, run


class BuildStep(unittest.TestCase):
    def setUp(self) -> None:
        self.tmp = Path(tempfile.mkdtemp(prefix="torchplace-run-build-"))
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.out = self.tmp / "out"

    def run_without_suite(self, build_error: Optional[common.Exit] = None) -> Tuple[int, dict]:
        """`run --out OUT` with the build mocked (raising build_error); (exit, run.json's steps)."""
        later = {
            name: mock.patch.object(run, name, return_value=schema.EXIT_OK)
            for name in ("scenarios_step", "bench_step", "report_step")
        }
        with contextlib.ExitStack() as stack:
            stack.enter_context(contextlib.redirect_stderr(io.StringIO()))
            stack.enter_context(mock.patch.object(common, "build_dir", return_value=self.tmp))
            stack.enter_context(mock.patch.object(common, "ensure_deps"))
            stack.enter_context(mock.patch.object(common, "build", side_effect=build_error))
            self.later = {name: stack.enter_context(patch) for name, patch in later.items()}
            code = run.command(["--out", str(self.out)])
        with open(self.out / "run.json", encoding="utf-8") as handle:
            return code, json.load(handle)["steps"]

    # kills reports/torchplace/command/run.py:steps_of:047a77:arg_swap:2 (the build step given
    # the log for the output folder: nothing recorded, the run stops on a TypeError)
    def test_a_build_that_works_is_recorded_ok(self) -> None:
        code, steps = self.run_without_suite()
        self.assertEqual(code, schema.EXIT_OK)
        self.assertEqual(steps["build"]["status"], "ok")
        suite = self.later["scenarios_step"].call_args[0][0]
        self.assertEqual(suite, self.tmp / "scenarios" / "torchplace_scenarios")
        bench = self.later["bench_step"].call_args[0][0]  # the benchmarks from the build too
        self.assertEqual(bench, self.tmp / "scenarios" / "torchplace_bench")

    def test_a_failed_build_is_recorded_and_ends_the_run(self) -> None:
        failed = common.Exit(schema.EXIT_BUILD, "the build failed (synthetic)")
        code, steps = self.run_without_suite(failed)
        self.assertEqual(code, schema.EXIT_BUILD)
        self.assertEqual(steps["build"], {"status": "failed", "exit": schema.EXIT_BUILD})
        self.assertEqual(steps["scenarios"]["status"], "not_run")
        self.assertFalse(self.later["scenarios_step"].called, "nothing runs after a failed build")


if __name__ == "__main__":
    unittest.main()
