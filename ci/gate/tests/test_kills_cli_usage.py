#!/usr/bin/env python3
"""Tests that kill generated mutants of the gate's argument handling which survived every other
test (torchplace.mutation.generated; ci/mutation/README.md "Generated mutants"). Each names the
mutant it was seen to kill. Bad arguments are exit 3 with a message, never a pass; a refresh
of the expectations judges nothing. Input files are made here and say that they are synthetic."""
import contextlib
import io
import json
import os
import sys
import tempfile
import unittest
from unittest import mock

from gate_inputs import FIX_CPU, expectations, passing, results, write_in
from torchplace.gate import cli, report


class NothingToGate(unittest.TestCase):
    def test_a_gate_given_nothing_to_judge_is_exit_3_never_a_pass(self):
        # kills reports/torchplace/gate/cli.py:parse:681872:delete_stmt:0 (and its
        # delete_branch:0, parse:890e97:delete_stmt:0): no section ran, no problem, so PASS
        for argv in ([], ["--out", "synthetic-out"], ["--expectations", "synthetic.json"]):
            stderr, stdout = io.StringIO(), io.StringIO()
            with self.subTest(argv=argv), contextlib.redirect_stderr(stderr):
                with contextlib.redirect_stdout(stdout):
                    code = cli.main(argv)
                self.assertEqual(code, report.EXIT_INPUT)
                self.assertIn("nothing to gate: give --results RUN_DIR", stderr.getvalue())
                self.assertNotIn("PASS", stdout.getvalue())


class BaselineAndCandidate(unittest.TestCase):
    def test_one_without_the_other_is_a_usage_error(self):
        # kills reports/torchplace/gate/cli.py:parse:6d91c5:delete_stmt:0
        for args in (["--baseline", "base.json"], ["--candidate", "cand.json"]):
            with self.subTest(args=args), self.assertRaises(cli.UsageError) as raised:
                cli.parse(args)
            self.assertIn("--baseline and --candidate go together", str(raised.exception))


class Help(unittest.TestCase):
    def test_help_says_what_the_gate_is_and_exits_0(self):
        # kills reports/torchplace/gate/cli.py:parse:df03f4:const_minus:0 (the docstring's last
        # paragraph as the description)
        stdout = io.StringIO()
        with contextlib.redirect_stdout(stdout), self.assertRaises(SystemExit) as exited:
            cli.parse(["--help"])
        self.assertEqual(exited.exception.code, 0)
        text = " ".join(stdout.getvalue().split())
        self.assertIn("torchplace gate: the CI regression gate (behaviour and speed), one", text)

    def test_run_reads_the_arguments_it_is_given_before_the_command_line(self):
        # kills reports/torchplace/gate/cli.py:run:620e1e:eq_flip:0 (run(argv) judged
        # sys.argv[1:] instead: here a bad option, exit 3, instead of the help asked for)
        stdout, stderr = io.StringIO(), io.StringIO()
        with mock.patch.object(sys, "argv", ["gate", "--no-such-option-on-the-command-line"]):
            with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
                with self.assertRaises(SystemExit) as exited:
                    cli.run(["--help"])
        self.assertEqual(exited.exception.code, 0, stderr.getvalue())
        self.assertIn("--refresh-expectations", stdout.getvalue())


class UsageMessage(unittest.TestCase):
    def test_a_bad_argument_is_exit_3_and_named(self):
        # kills reports/torchplace/gate/cli.py:main:f93ce4:delete_stmt:0 (exit 3 in silence)
        stderr = io.StringIO()
        with contextlib.redirect_stderr(stderr):
            code = cli.main(["--no-such-option"])
        self.assertEqual(code, report.EXIT_INPUT)
        self.assertIn("--no-such-option", stderr.getvalue())
        self.assertIn("(see ci/torchplace gate --help)", stderr.getvalue())

    def test_require_devices_without_results_is_refused_not_ignored(self):
        # kills reports/torchplace/gate/cli.py:parse:7fd05a:delete_branch:0 (a speed-only run
        # took --require-devices and judged without it)
        stderr = io.StringIO()
        argv = ["--require-devices", "cuda=1", "--baseline", "a.json", "--candidate", "b.json"]
        with contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(io.StringIO()):
            code = cli.main(argv)
        self.assertEqual(code, report.EXIT_INPUT)
        self.assertIn("--require-devices applies to --results only", stderr.getvalue())


class Refresh(unittest.TestCase):
    def test_a_refused_refresh_is_exit_3_naming_why_and_leaves_the_file(self):
        # kills reports/torchplace/gate/cli.py:main:4f630c:delete_stmt:1 (it went on to report
        # a count it never had: an UnboundLocalError, read as a tool error)
        with tempfile.TemporaryDirectory() as folder:
            target = write_in(folder, "expectations.json", expectations([passing(FIX_CPU)]))
            with open(target, encoding="utf-8") as handle:
                before = handle.read()
            write_in(folder, "run/results.json", results([]))  # no cells: refused
            stderr = io.StringIO()
            with contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(io.StringIO()):
                code = cli.main(
                    ["--refresh-expectations", os.path.join(folder, "run")]
                    + ["--expectations", target]
                )
            with open(target, encoding="utf-8") as handle:
                self.assertEqual(handle.read(), before)
        self.assertEqual(code, report.EXIT_INPUT)
        self.assertIn("the run has no cells", stderr.getvalue())
        self.assertNotIn("tool error", stderr.getvalue())

    def test_a_refresh_judges_nothing_and_leaves_no_verdict(self):
        # kills reports/torchplace/gate/cli.py:main:3f8102:delete_stmt:0 (after the refresh it
        # went on to judge nothing: a PASS verdict printed, and written to --out)
        with tempfile.TemporaryDirectory() as folder:
            write_in(folder, "run/results.json", results([passing(FIX_CPU)]))
            target = os.path.join(folder, "expectations.json")
            out = os.path.join(folder, "out")
            stdout = io.StringIO()
            with contextlib.redirect_stdout(stdout):
                code = cli.main(
                    ["--refresh-expectations", os.path.join(folder, "run")]
                    + ["--expectations", target, "--out", out]
                )
            self.assertFalse(os.path.exists(os.path.join(out, "gate.json")))
            with open(target, encoding="utf-8") as handle:
                self.assertEqual(list(json.load(handle)["cells"]), [FIX_CPU])
        self.assertEqual(code, report.EXIT_PASS)
        self.assertIn(f"wrote 1 cell expectations to {target}", stdout.getvalue())
        self.assertNotIn("PASS", stdout.getvalue())


if __name__ == "__main__":
    unittest.main()
