#!/usr/bin/env python3
"""`run`'s arguments and its own folder (torchplace.command.run) in process: what it refuses
(exit 64, naming the problem), the options it keeps, the earlier output it removes, the outcome
it cannot record, and a whole --suite run with a budget (its summary). Fake binaries are shell
scripts made here; paths and output are synthetic.

  test_command_run.py [CLASS]      (CTest: command.run)
"""
import contextlib
import io
import json
import os
import sys
import unittest
from pathlib import Path
from typing import List
from unittest import mock

from command_scratch import Unbuilt
from torchplace import run_record, schema
from torchplace.command import common, gpu, run, steps


def script(path: Path, body: str) -> str:
    path.write_text("#!/bin/sh\n" + body + "\n", encoding="utf-8")
    path.chmod(0o755)
    return str(path)


class Parse(Unbuilt):
    def setUp(self) -> None:
        super().setUp()
        for name in ("TORCHPLACE_BENCH_REPETITIONS", "TORCHPLACE_BENCH_MIN_TIME"):
            os.environ.pop(name, None)
        self.suite = script(Path(self.tmp) / "suite", "exit 0")
        self.bench = script(Path(self.tmp) / "bench", "exit 0")

    def refused(self, args: List[str], words: str) -> None:
        message = self.exits(schema.EXIT_USAGE, run.parse, list(args))
        self.assertIn(words, message)

    def test_the_defaults(self) -> None:
        options = run.parse([])
        self.assertEqual(options, run.Options(common.root() / "out"))
        self.assertEqual((options.repetitions, options.min_time), ("5", "0.1"))

    def test_every_option_is_kept(self) -> None:
        os.environ.pop("TORCHPLACE_NO_INSTALL", None)
        args = [
            "--out",
            "o",
            "--suite",
            self.suite,
            "--bench",
            self.bench,
            "--budget-s",
            "90",
        ]
        options = run.parse(args + ["--no-install"])
        expected = run.Options(Path("o"), Path(self.suite), Path(self.bench), 90)
        self.assertEqual(options, expected)
        self.assertEqual(os.environ["TORCHPLACE_NO_INSTALL"], "1")
        self.assertTrue(run.parse(["--gpu"]).gpu)
        self.assertEqual(run.parse(["--budget-s", "7"]).budget_s, 7)  # one digit is enough

    def test_the_benchmark_settings_come_from_the_environment(self) -> None:
        for repetitions, min_time in (("12", "0.5s"), ("3", ".5"), ("10", "2")):
            os.environ["TORCHPLACE_BENCH_REPETITIONS"] = repetitions
            os.environ["TORCHPLACE_BENCH_MIN_TIME"] = min_time
            options = run.parse([])
            self.assertEqual((options.repetitions, options.min_time), (repetitions, min_time))

    def test_bad_benchmark_settings(self) -> None:
        for repetitions in ("0", "five", "07"):
            os.environ["TORCHPLACE_BENCH_REPETITIONS"] = repetitions
            self.refused(
                [],
                f"TORCHPLACE_BENCH_REPETITIONS must be a whole number >= 1, got "
                f"'{repetitions}'",
            )
        os.environ["TORCHPLACE_BENCH_REPETITIONS"] = "1"
        for min_time in ("fast", "0.1ms", "-1", "s", ""):
            os.environ["TORCHPLACE_BENCH_MIN_TIME"] = min_time
            self.refused([], f"(0.1 or 0.1s), got '{min_time}'")

    def test_refusals(self) -> None:
        self.refused(["--suite"], "run: --suite needs a value")
        self.refused(["--budget-s", "07"], "--budget-s needs whole seconds >= 1, got '07'")
        self.refused(["--fast"], "run: unknown argument '--fast'")
        self.refused(["--bench", self.bench], "run: --bench goes with --suite")
        self.refused(["--gpu", "--suite", self.suite], "run: --gpu builds and tests this tree")
        self.refused(["--suite", self.tmp], f"run: '{self.tmp}' is not an executable file")
        plain = Path(self.tmp) / "plain"
        plain.write_text("synthetic\n", encoding="utf-8")
        self.refused(["--suite", self.suite, "--bench", str(plain)], f"'{plain}' is not an")

    def test_the_installed_command_runs_a_suite_into_the_working_folder(self) -> None:
        with mock.patch.object(common, "is_source_tree", return_value=False):
            self.refused([], "the installed command runs your own suite: give --suite BIN")
            with mock.patch.object(os, "getcwd", return_value="/synthetic/here"):
                options = run.parse(["--suite", self.suite])
        self.assertEqual(options.out, Path("/synthetic/here/out"))


class Folder(Unbuilt):
    def test_only_the_earlier_runs_files_are_removed(self) -> None:
        out = Path(self.tmp)
        for name in (
            "results.json",
            "bench.json.partial",
            "run.json",
            "cells.png",
            "keep.txt",
        ):
            (out / name).write_text("synthetic\n", encoding="utf-8")
        (out / "old.png").symlink_to(out / "gone")  # a dangling link goes too
        (out / "index.html").mkdir()  # a folder of that name is not a file: kept
        run.remove_earlier_output(out)
        self.assertEqual(sorted(path.name for path in out.iterdir()), ["index.html", "keep.txt"])

    def test_an_earlier_file_that_cannot_be_removed(self) -> None:
        out = Path(self.tmp)
        (out / "summary.md").write_text("synthetic\n", encoding="utf-8")
        with mock.patch.object(Path, "unlink", side_effect=PermissionError("synthetic")):
            message = self.exits(schema.EXIT_ENV, run.remove_earlier_output, out)
        self.assertEqual(message, f"cannot remove the earlier {out}/summary.md")

    def test_an_out_that_cannot_be_made(self) -> None:
        blocker = Path(self.tmp) / "file"
        blocker.write_text("synthetic\n", encoding="utf-8")
        message = self.exits(schema.EXIT_ENV, run.command, ["--out", f"{blocker}/out"])
        self.assertEqual(message, f"cannot create {blocker}/out")

    def test_an_outcome_that_cannot_be_recorded_is_logged(self) -> None:
        failure = schema.InputError("synthetic: not a run record")
        with mock.patch.object(run_record, "decide", side_effect=failure) as decide:
            with contextlib.redirect_stderr(io.StringIO()) as stderr:
                run.decide(Path(self.tmp), schema.EXIT_FAIL)
        decide.assert_called_once_with(f"{self.tmp}/run.json", self.tmp, schema.EXIT_FAIL)
        self.assertIn(
            f"could not record the outcome in {self.tmp}/run.json: synthetic: not a run record",
            stderr.getvalue(),
        )


class WholeRun(Unbuilt):
    def test_a_suite_run_with_a_budget_prints_its_summary(self) -> None:
        # synthetic: a suite that writes one empty results file per process and passes
        suite = script(Path(self.tmp) / "suite", 'echo \'{"cells": []}\' >"${1#*=}"')
        out = Path(self.tmp) / "out"
        stdout, stderr = io.StringIO(), io.StringIO()
        with mock.patch.object(common, "report_python", return_value=None):
            with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
                code = run.command(["--suite", suite, "--out", str(out), "--budget-s", "300"])
        self.assertEqual(code, schema.EXIT_OK, stderr.getvalue())
        with open(out / "run.json", encoding="utf-8") as handle:
            steps = json.load(handle)["steps"]
        self.assertEqual(steps["scenarios"]["status"], "ok")
        self.assertEqual(steps["bench"], {"status": "absent"})
        self.assertEqual(steps["report"], {"status": "ok"})
        self.assertEqual(steps["outcome"]["exit"], schema.EXIT_OK)
        self.assertIn("render it elsewhere from the JSON: ci/torchplace report", stderr.getvalue())
        self.assertIn(" of a 300 s budget):\nscenarios", stdout.getvalue())
        self.assertTrue(stdout.getvalue().endswith("every step ran\nrun: exit 0\n"))
        self.assertTrue((out / "run.tar.gz").is_file())

    def test_without_a_budget_no_summary_and_no_trace(self) -> None:
        suite = script(Path(self.tmp) / "suite", 'echo \'{"cells": []}\' >"${1#*=}"')
        out = Path(self.tmp) / "out"
        out.mkdir()  # an earlier run's folder: used, less the earlier run's own files
        (out / "bench.json").write_text("{}")  # synthetic: this run has no benchmarks
        (out / "mine.txt").write_text("kept")
        stdout = io.StringIO()
        with mock.patch.object(common, "report_python", return_value=None):
            # the suite's own output goes to stderr: a real file, not a StringIO
            with open(Path(self.tmp) / "stderr", "w", encoding="utf-8") as stderr:
                with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
                    self.assertEqual(run.command(["--suite", suite, "--out", str(out)]), 0)
        self.assertEqual(stdout.getvalue(), "")
        self.assertFalse((out / "steps.txt").exists())
        self.assertFalse(
            (out / "bench.json").exists(), "an earlier run's benchmarks shown as this one's"
        )
        self.assertEqual((out / "mine.txt").read_text(), "kept")

    def test_gpu_runs_its_own_plan_and_its_gate_decides_the_exit(self) -> None:
        out = Path(self.tmp) / "out"
        plan = [steps.Step("probe", lambda log: 0)]  # synthetic: one step that passes
        calls: List[str] = []
        planned, gate = mock.Mock(return_value=plan), mock.Mock(return_value=schema.EXIT_REGRESSION)
        with mock.patch.multiple(
            gpu,
            prepare_environment=mock.Mock(side_effect=lambda: calls.append("prepare")),
            preflight=mock.Mock(side_effect=lambda where: calls.append(f"preflight {where}")),
            plan=planned,
            gate=gate,
        ), contextlib.redirect_stdout(io.StringIO()) as stdout:
            code = run.command(["--gpu", "--out", f"{self.tmp}/x/../out"])  # resolved
        self.assertEqual(code, schema.EXIT_REGRESSION)
        self.assertEqual(calls, ["prepare", f"preflight {out}"])
        gate.assert_called_once_with(out, schema.EXIT_OK)
        self.assertEqual(planned.call_args[0][0].out, out)
        self.assertTrue((out / "logs" / "probe.log").is_file())  # the GPU run is traced
        self.assertTrue(stdout.getvalue().endswith("run: exit 2\n"))
        with open(out / "run.json", encoding="utf-8") as handle:
            outcome = json.load(handle)["steps"]["outcome"]
        self.assertEqual(outcome["exit"], schema.EXIT_REGRESSION)


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0], *sys.argv[1:], "-v"])
