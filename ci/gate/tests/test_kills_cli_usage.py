#!/usr/bin/env python3
"""Tests that kill generated mutants of the gate's argument handling which survived every other
test (torchplace.mutation.generated; ci/mutation/README.md "Generated mutants"). Each names the
mutant it was seen to kill. Bad arguments are exit 3 with a message, never a pass."""
import contextlib
import io
import unittest

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


if __name__ == "__main__":
    unittest.main()
