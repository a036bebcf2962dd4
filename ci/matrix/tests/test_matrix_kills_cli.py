#!/usr/bin/env python3
"""The matrix gate as a command (issue 26: generated mutants no other test killed): its exit 3
messages name the matrix file or the tool error, and once its verdict is reached nothing changes
its exit code: not a SIGTERM, not a stdout that is closed or cannot encode the verdict's text.
The matrices are synthetic (test_matrix_rules.matrix: each column's fingerprint says so).

  test_matrix_kills_cli.py [TestClass[.test] ...]      (CTest: matrix.kills_cli)
"""
import contextlib
import io
import json
import os
import signal
import subprocess
import sys
import unittest
from unittest import mock

from torchplace.matrix import gate as matrix_gate
from test_matrix_rules import INPUT, REGRESSION, MatrixGateCase, matrix

REGRESSING = {"1.13.1": "pass", "2.6.0": "fail"}  # a cell that passed, then failed


class CommandCase(MatrixGateCase):
    def write(self, doc):
        path = os.path.join(self.tmp, "matrix.json")
        with open(path, "w", encoding="utf-8") as handle:
            json.dump(doc, handle)
        return path


class WhatCannotBeJudged(CommandCase):
    def test_bad_input_names_the_matrix_file(self):
        # kills reports/torchplace/matrix/gate.py:main:42a563:const_minus:0 (the message named
        # the gate's own script, not the matrix the user gave it)
        done = self.judged(INPUT, matrix(versions=("2.6.0", "2.6.0"), by_version={"2.6.0": "pass"}))
        path = os.path.join(self.tmp, "matrix.json")
        self.assertIn(f"matrix gate: bad input: {path}: version(s) 2.6.0 listed twice", done.stderr)

    def test_a_tool_error_is_exit_3_and_says_what_failed(self):
        # kills reports/torchplace/matrix/gate.py:main:30ce83:delete_stmt:0 (exit 3 in silence)
        failure = RuntimeError("synthetic tool failure")
        stderr = io.StringIO()
        with mock.patch.object(matrix_gate, "gate", side_effect=failure), mock.patch(
            "signal.signal"
        ), contextlib.redirect_stderr(stderr):
            code = matrix_gate.main(["gate", self.write(matrix())])
        self.assertEqual(code, INPUT)
        self.assertIn(
            "matrix gate: tool error RuntimeError: synthetic tool failure (exit 3)",
            stderr.getvalue(),
        )

    def test_a_sigterm_once_the_verdict_is_reached_changes_nothing(self):
        # kills reports/torchplace/matrix/gate.py:main:e0d327:delete_stmt:0 (a SIGTERM while the
        # verdict was printed stopped the gate: a traceback and exit 1, not the verdict's 2)
        self.addCleanup(signal.signal, signal.SIGTERM, signal.getsignal(signal.SIGTERM))
        printed, print_verdict = io.StringIO(), matrix_gate.print_verdict

        def interrupted(verdict, _stream):
            os.kill(os.getpid(), signal.SIGTERM)  # delivered at once, before the first line
            print_verdict(verdict, printed)

        doc = matrix(versions=("1.13.1", "2.6.0"), by_version=REGRESSING)
        with mock.patch.object(matrix_gate, "print_verdict", side_effect=interrupted):
            code = matrix_gate.main(["gate", self.write(doc)])
        self.assertEqual(code, REGRESSION)
        self.assertEqual(printed.getvalue().splitlines()[-1], "matrix gate: fail")

    def test_a_sigterm_just_after_judging_still_gives_the_verdict(self):
        # the window between the verdict and its file (the behaviour gate's CI red, stop 35):
        # a SIGTERM there was a traceback and exit 1, not the verdict's 2
        self.addCleanup(signal.signal, signal.SIGTERM, signal.getsignal(signal.SIGTERM))
        real_exit_code = matrix_gate.exit_code

        def terminated_then_coded(verdict):
            os.kill(os.getpid(), signal.SIGTERM)  # delivered on the next bytecode, unless held
            return real_exit_code(verdict)

        doc = matrix(versions=("1.13.1", "2.6.0"), by_version=REGRESSING)
        out = os.path.join(os.path.dirname(self.write(doc)), "verdict", "matrix-gate.json")
        with mock.patch.object(matrix_gate, "exit_code", side_effect=terminated_then_coded):
            with contextlib.redirect_stdout(io.StringIO()):
                code = matrix_gate.main(["gate", self.write(doc), "--out", out])
        self.assertEqual(code, REGRESSION)
        with open(out, encoding="utf-8") as handle:
            self.assertEqual(json.load(handle)["verdict"], "fail")
        # the mask as it was found: a child the caller starts later could not be SIGTERMed
        self.assertNotIn(signal.SIGTERM, signal.pthread_sigmask(signal.SIG_BLOCK, []))

    def test_a_second_sigterm_while_it_says_it_stopped_is_held(self):
        # the handler holds SIGTERM back before it raises: a second one while the gate says it
        # stopped was a traceback and exit 1 (a review's find)
        self.addCleanup(signal.signal, signal.SIGTERM, signal.getsignal(signal.SIGTERM))
        say = matrix_gate._say

        def stopped_loading(*_):
            os.kill(os.getpid(), signal.SIGTERM)

        def say_twice(text):
            os.kill(os.getpid(), signal.SIGTERM)
            say(text)

        with mock.patch.object(matrix_gate.data, "load_matrix", side_effect=stopped_loading):
            with mock.patch.object(matrix_gate, "_say", side_effect=say_twice):
                with contextlib.redirect_stderr(io.StringIO()) as stderr:
                    code = matrix_gate.main(["gate", "synthetic-matrix.json"])
        self.assertEqual(code, INPUT)
        self.assertIn("stopped by SIGTERM; nothing judged", stderr.getvalue())
        self.assertNotIn(signal.SIGTERM, signal.pthread_sigmask(signal.SIG_BLOCK, []))

    def test_a_caller_that_blocked_sigterm_gets_it_blocked_back(self):
        self.addCleanup(signal.signal, signal.SIGTERM, signal.getsignal(signal.SIGTERM))
        entry = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
        self.addCleanup(signal.pthread_sigmask, signal.SIG_SETMASK, entry)
        with contextlib.redirect_stdout(io.StringIO()):
            matrix_gate.main(["gate", self.write(matrix())])
        self.assertIn(signal.SIGTERM, signal.pthread_sigmask(signal.SIG_BLOCK, []))


class VerdictStands(CommandCase):
    """What stdout cannot take of the printed verdict does not change its exit code."""

    def failing_everywhere_cut(self):
        """A cell failing on both versions with a reason longer than a printed line: the line is
        cut and ends in an ellipsis, a character ASCII has not."""
        doc = matrix(versions=("1.13.1", "2.6.0"), by_version={"1.13.1": "fail", "2.6.0": "fail"})
        for result in doc["cells"][0]["by_version"].values():
            result["reason"] = "synthetic reason " * 20
        return self.write(doc)

    def test_an_ascii_stdout_keeps_the_exit_code(self):
        path = self.failing_everywhere_cut()
        env = dict(os.environ, PYTHONIOENCODING="ascii:strict")
        done = subprocess.run(
            [sys.executable, "-m", "torchplace.matrix.gate", path],
            capture_output=True,
            env=env,
            timeout=120,
        )
        self.assertEqual(done.returncode, REGRESSION, done.stderr)
        self.assertNotIn(b"Traceback", done.stderr)

    def test_a_closed_stdout_keeps_the_exit_code(self):
        read_end, write_end = os.pipe()
        os.close(read_end)  # every write to stdout is EPIPE
        try:
            done = subprocess.run(
                [sys.executable, "-m", "torchplace.matrix.gate", self.failing_everywhere_cut()],
                stdout=write_end,
                stderr=subprocess.PIPE,
                timeout=120,
                env={k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"},  # buffered
            )
        finally:
            os.close(write_end)
        self.assertEqual(done.returncode, REGRESSION, done.stderr)
        self.assertNotIn(b"Traceback", done.stderr)


if __name__ == "__main__":
    unittest.main()
