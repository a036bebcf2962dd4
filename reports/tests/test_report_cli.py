#!/usr/bin/env python3
"""The report's command line (torchplace.report.cli and torchplace.report.__main__) in process:
--help's description, a field of the wrong type met while analysing (bad input, not a tool
error), a tool error (a stand-in render that raises), no matplotlib, SIGTERM raising Terminated
once main runs, and __main__'s message when SIGTERM stops the report. SIGTERM goes to this
process with a recording handler in place of the default (as test_schema_signals.py does).
Input: the cpu_only fixture's results.json, changed here (synthetic).

  test_report_cli.py [CLASS]      (CTest: report.cli)
"""
import contextlib
import io
import json
import os
import runpy
import shutil
import signal
import sys
import tempfile
import time
import unittest
from unittest import mock

from torchplace import schema
from torchplace.report import cli

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURE = os.path.join(HERE, "fixtures", "cpu_only", "results.json")
TERM = signal.SIGTERM


def send_and_wait() -> None:
    """SIGTERM to this process, then time for its Python handler to run (it may raise)."""
    os.kill(os.getpid(), TERM)
    for _ in range(50):
        time.sleep(0.002)


class CliCase(unittest.TestCase):
    def setUp(self) -> None:
        self.tmp = tempfile.mkdtemp(prefix="report-cli-")
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.run_dir = os.path.join(self.tmp, "run")
        self.out = os.path.join(self.tmp, "out")
        os.makedirs(self.run_dir)
        handler, mask = signal.getsignal(TERM), signal.pthread_sigmask(signal.SIG_BLOCK, [])
        self.addCleanup(signal.signal, TERM, handler)  # last: after a pending one is dropped
        self.addCleanup(signal.pthread_sigmask, signal.SIG_SETMASK, mask)
        self.addCleanup(signal.signal, TERM, signal.SIG_IGN)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {TERM})
        self.received: list = []
        signal.signal(TERM, lambda signum, _frame: self.received.append(signum))

    def write_results(self, change=None) -> None:
        with open(FIXTURE, encoding="utf-8") as handle:
            doc = json.load(handle)
        doc["about"] = "synthetic: the cpu_only fixture changed by test_report_cli.py"
        if change:
            change(doc)
        with open(os.path.join(self.run_dir, "results.json"), "w", encoding="utf-8") as handle:
            json.dump(doc, handle)

    def main(self, *extra):
        """(exit code, stdout, stderr) of cli.main on the run folder, --out self.out."""
        stdout, stderr = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            code = cli.main([self.run_dir, "--out", self.out, *extra])
        return code, stdout.getvalue(), stderr.getvalue()


class Arguments(CliCase):
    def test_help_says_what_the_report_does(self):
        stdout = io.StringIO()
        with contextlib.redirect_stdout(stdout), self.assertRaises(SystemExit) as exited:
            cli.parse_args(["--help"])
        self.assertEqual(exited.exception.code, 0)
        text = " ".join(stdout.getvalue().split())  # argparse wraps to the terminal's width
        self.assertIn("Renders the torchplace report of a run folder from its JSON.", text)


class Refusals(CliCase):
    def test_a_field_of_the_wrong_type_met_while_analysing_is_bad_input(self):
        # expected.note an int passes the reader and breaks analyse's "; ".join
        self.write_results(lambda doc: doc["cells"][0]["expected"].update(note=3))
        code, stdout, stderr = self.main()
        self.assertEqual((code, stdout), (schema.EXIT_INPUT, ""))
        self.assertEqual(
            stderr,
            f"torchplace report: bad input, nothing written: {self.run_dir}: unexpected content "
            "(TypeError: sequence item 0: expected str instance, int found)\n",
        )
        self.assertFalse(os.path.exists(self.out))

    def test_a_tool_error_is_exit_3_with_its_message_once(self):
        self.write_results()
        failing = mock.patch.object(cli, "render", side_effect=RuntimeError("synthetic failure"))
        with failing:
            code, stdout, stderr = self.main()
        self.assertEqual((code, stdout), (schema.EXIT_INPUT, ""))
        said = "torchplace report: tool error, nothing written: RuntimeError: synthetic failure\n"
        self.assertEqual(stderr, said)
        self.assertFalse(os.path.exists(self.out))

    def test_no_matplotlib_says_how_to_install_it_and_stops(self):
        self.write_results()
        with mock.patch.dict(sys.modules, {"matplotlib": None}):  # `import matplotlib` fails
            code, stdout, stderr = self.main()
        hint = cli.INSTALL_HINT.format(python=sys.executable)
        self.assertEqual((code, stdout), (schema.EXIT_INPUT, ""))
        self.assertEqual(stderr, f"torchplace report: {hint}\n")
        self.assertFalse(os.path.exists(self.out))


class Sigterm(CliCase):
    def test_main_makes_sigterm_raise_terminated(self):
        def stopped(*_args):
            send_and_wait()
            raise AssertionError("SIGTERM did not stop the report")

        self.write_results()
        with mock.patch.object(cli, "render", side_effect=stopped):
            with self.assertRaises(schema.Terminated):
                self.main()
        self.assertEqual(self.received, [])
        self.assertFalse(os.path.exists(self.out))

    def test_the_module_says_it_was_stopped_and_exits_3(self):
        def stopped(_argv):
            send_and_wait()
            return schema.EXIT_OK  # not reached when __main__ made SIGTERM raise

        stderr = io.StringIO()
        argv = mock.patch.object(sys, "argv", ["torchplace.report", self.run_dir])
        with argv, mock.patch.object(cli, "main", side_effect=stopped):
            with contextlib.redirect_stderr(stderr), self.assertRaises(SystemExit) as exited:
                runpy.run_module("torchplace.report.__main__", run_name="__main__")
        self.assertEqual(exited.exception.code, schema.EXIT_INPUT)
        self.assertEqual(
            stderr.getvalue(), "torchplace report: stopped by SIGTERM; nothing written (exit 3)\n"
        )
        self.assertEqual(self.received, [])


if __name__ == "__main__":
    unittest.main(verbosity=2)
