#!/usr/bin/env python3
"""The gate's SIGTERM contract in process (torchplace.schema.stops_cleanly), found by a review of
the fix for CI's red at stop 35: a second SIGTERM is held from the moment the first is handled;
the caller's signal mask comes back on every way out, an exception's included. Inputs are
synthetic: no run is read, every section is mocked.

  test_kills_signals.py [TestClass[.test] ...]      (CTest: gate.kills.signals)
"""
import contextlib
import io
import os
import signal
import tempfile
import unittest
from unittest import mock

from torchplace import schema
from torchplace.gate import cli, report


def blocked() -> bool:
    return signal.SIGTERM in signal.pthread_sigmask(signal.SIG_BLOCK, [])


class SignalCase(unittest.TestCase):
    def setUp(self):
        self.addCleanup(signal.signal, signal.SIGTERM, signal.getsignal(signal.SIGTERM))
        entry = signal.pthread_sigmask(signal.SIG_BLOCK, [])
        self.addCleanup(signal.pthread_sigmask, signal.SIG_SETMASK, entry)

    def gate(self, out):
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            return cli.main(["--results", "synthetic-run", "--out", out])


class SecondSigterm(SignalCase):
    def test_the_handler_holds_a_second_one_back(self):
        # a second SIGTERM at once after the first (a runner's cancel, then its group kill)
        # escaped the except branch before the interrupted verdict was written
        schema.exit_cleanly_on_sigterm()
        with self.assertRaises(schema.Terminated):
            os.kill(os.getpid(), signal.SIGTERM)
        self.assertTrue(blocked())
        os.kill(os.getpid(), signal.SIGTERM)  # pending, not raised
        signal.signal(signal.SIGTERM, signal.SIG_IGN)

    def test_one_during_the_interrupted_verdict_still_leaves_it_written(self):
        def sections(*_):
            os.kill(os.getpid(), signal.SIGTERM)

        markdown = report.markdown

        def summary(verdict):  # the second, while the interrupted verdict is rendered
            os.kill(os.getpid(), signal.SIGTERM)
            return markdown(verdict)

        with tempfile.TemporaryDirectory() as out:
            with mock.patch.object(cli, "run_sections", side_effect=sections), mock.patch.object(
                cli.report, "markdown", side_effect=summary
            ):
                code = self.gate(out)
            self.assertEqual(sorted(os.listdir(out)), ["gate.json", "summary.md"])
        self.assertEqual(code, report.EXIT_INPUT)
        self.assertFalse(blocked())


class CallersMask(SignalCase):
    def test_a_caller_that_blocked_sigterm_gets_it_blocked_back(self):
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
        with tempfile.TemporaryDirectory() as out:
            with mock.patch.object(cli, "run_sections"):
                self.gate(out)
        self.assertTrue(blocked())

    def test_an_exception_after_judging_leaves_the_mask_as_it_was(self):
        failure = KeyError("synthetic failure after the hold")
        with tempfile.TemporaryDirectory() as out:
            with mock.patch.object(cli, "run_sections"), mock.patch.object(
                cli, "exit_code", side_effect=failure
            ):
                with self.assertRaises(KeyError):
                    self.gate(out)
        self.assertFalse(blocked())


if __name__ == "__main__":
    unittest.main()
