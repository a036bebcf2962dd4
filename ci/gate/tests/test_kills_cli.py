#!/usr/bin/env python3
"""Tests that kill generated mutants of the gate's command line which survived every other test
(torchplace.mutation.generated; ci/mutation/README.md "Generated mutants"). Each names the
mutant it was seen to kill. Input files are made here and say that they are synthetic."""
import contextlib
import io
import json
import os
import signal
import subprocess
import sys
import tempfile
import unittest
from unittest import mock

from gate_inputs import write_in
from torchplace.gate import cli, report


class AsciiStreams(unittest.TestCase):
    def test_a_character_an_ascii_stream_lacks_is_escaped_not_dropped(self):
        # kills reports/torchplace/gate/cli.py:_safe_streams:ee5bcc:delete_stmt:0 (the summary
        # vanished from an ASCII stdout: say() swallowed the UnicodeEncodeError)
        raw = io.BytesIO()
        stream = io.TextIOWrapper(raw, encoding="ascii")
        with mock.patch.object(sys, "stdout", stream), mock.patch.object(sys, "stderr", stream):
            cli._safe_streams()
            cli.say("perte non diminu\u00e9e (synthetic message)")
        stream.flush()
        self.assertIn(b"perte non diminu\\xe9e (synthetic message)", raw.getvalue())

    def test_the_gate_prints_its_summary_on_an_ascii_stdout(self):
        # kills reports/torchplace/gate/cli.py:main:95ff8c:delete_stmt:0 (the summary vanished
        # from an ASCII stdout) and write_outputs:944faa:delete_stmt:0 (no summary printed)
        verdict = {"problems": ["perte non diminu\u00e9e (synthetic)"], "behaviour": None}
        verdict.update(speed=None, exit_code=report.EXIT_INPUT, verdict="synthetic")
        raw = io.BytesIO()
        stream = io.TextIOWrapper(raw, encoding="ascii")
        self.addCleanup(signal.signal, signal.SIGTERM, signal.getsignal(signal.SIGTERM))
        with mock.patch.object(sys, "stdout", stream), mock.patch.object(cli, "judge") as judge:
            judge.return_value = verdict
            code = cli.main(["--results", "synthetic-run"])
        stream.flush()
        self.assertEqual(code, report.EXIT_INPUT)
        self.assertIn(b"- perte non diminu\\xe9e (synthetic)", raw.getvalue())


class ClosedPipe(unittest.TestCase):
    def test_a_reader_gone_keeps_the_verdicts_exit_code(self):
        # `gate | head` with head gone: the summary cannot be written, the exit code stands.
        # Seen red before say() pointed the stream at /dev/null: exit 120 for both ("Exception
        # ignored ... BrokenPipeError" at exit); kills reports/torchplace/gate/cli.py:say:
        # 096c05:bool_flip:0 (flush=False: the error only at exit, as 120)
        fixtures = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "speed")
        env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}  # block buffered
        for candidate, code in (
            ("slower.json", report.EXIT_SPEED),
            ("base.json", report.EXIT_PASS),
        ):
            read_end, write_end = os.pipe()
            os.close(read_end)
            done = subprocess.run(
                [sys.executable, "-m", "torchplace.gate"]
                + ["--policy", os.path.join(fixtures, "policy.json")]
                + ["--baseline", os.path.join(fixtures, "base.json")]
                + ["--candidate", os.path.join(fixtures, candidate)],
                stdout=write_end,
                stderr=subprocess.PIPE,
                env=env,
                timeout=120,
            )
            os.close(write_end)
            with self.subTest(candidate=candidate):
                self.assertEqual(done.returncode, code, done.stderr.decode(errors="replace"))
                self.assertNotIn(b"BrokenPipeError", done.stderr)


class EarlierOutputsFirst(unittest.TestCase):
    def test_the_earlier_verdict_is_gone_while_this_run_judges(self):
        # kills reports/torchplace/gate/cli.py:judge:38bd4e:delete_stmt:0 (an earlier run's
        # verdict stood beside this run while it judged, and stayed if it was killed then)
        seen = []
        with tempfile.TemporaryDirectory() as out:
            write_in(out, "gate.json", {"verdict": "PASS", "about": "an earlier run (synthetic)"})

            def sections(args, verdict):
                seen.append(os.path.exists(os.path.join(out, "gate.json")))
                verdict["problems"].append("synthetic: nothing judged")

            with mock.patch.object(cli, "run_sections", side_effect=sections):
                code = cli.main(["--results", "synthetic-run", "--out", out])
        self.assertEqual(seen, [False])
        self.assertEqual(code, report.EXIT_INPUT)

    def test_earlier_outputs_that_cannot_go_are_exit_3_and_said(self):
        # kills reports/torchplace/gate/cli.py:main:3d703b:delete_stmt:0 (exit 3 in silence)
        stderr = io.StringIO()
        busy = OSError("synthetic: busy")
        with mock.patch.object(cli.schema, "remove_outputs", side_effect=busy):
            with contextlib.redirect_stderr(stderr):
                code = cli.main(["--results", "synthetic-run", "--out", "synthetic-out"])
        self.assertEqual(code, report.EXIT_INPUT)
        self.assertIn(
            "cannot remove the earlier outputs in synthetic-out: synthetic: busy", stderr.getvalue()
        )


class LateSigterm(unittest.TestCase):
    def test_a_sigterm_while_the_verdict_is_written_changes_no_exit_code(self):
        # kills reports/torchplace/gate/cli.py:main:5ad787:delete_stmt:0 (without --out only
        # that line ignores the SIGTERM held back while the verdict prints: it then raised)
        self.addCleanup(signal.signal, signal.SIGTERM, signal.getsignal(signal.SIGTERM))
        verdict = {"exit_code": report.EXIT_BEHAVIOUR, "verdict": "synthetic"}

        def judged(_args):  # as judge returns: the verdict, with SIGTERM held back
            cli.schema.hold_sigterm()
            return verdict

        def write_outputs(*_):  # a SIGTERM arrives while the verdict is written (held back)
            os.kill(os.getpid(), signal.SIGTERM)

        with mock.patch.object(cli, "judge", side_effect=judged), mock.patch.object(
            cli, "write_outputs", side_effect=write_outputs
        ):
            code = cli.main(["--results", "synthetic-run", "--expectations", "synthetic.json"])
        self.assertEqual(code, report.EXIT_BEHAVIOUR)


class SigtermWhileJudging(unittest.TestCase):
    def test_it_is_exit_3_with_a_verdict_that_judged_nothing(self):
        # kills reports/torchplace/gate/cli.py:main:4f0c60:delete_stmt:0 (no handler of its own:
        # the signal reached whatever was there, here the test's, and no verdict was written)
        self.addCleanup(signal.signal, signal.SIGTERM, signal.getsignal(signal.SIGTERM))

        def not_the_gates(*_):
            raise AssertionError("the SIGTERM reached the test's handler, not the gate's")

        signal.signal(signal.SIGTERM, not_the_gates)

        def sections(*_):  # a SIGTERM while the sections judge
            os.kill(os.getpid(), signal.SIGTERM)

        with tempfile.TemporaryDirectory() as out:
            with mock.patch.object(cli, "run_sections", side_effect=sections):
                with contextlib.redirect_stdout(io.StringIO()):
                    code = cli.main(["--results", "synthetic-run", "--out", out])
            with open(os.path.join(out, "gate.json"), encoding="utf-8") as handle:
                written = json.load(handle)
        self.assertEqual((code, written["exit_code"]), (report.EXIT_INPUT,) * 2)
        self.assertEqual(len(written["problems"]), 1)
        self.assertIn("nothing was judged", written["problems"][0])

    def test_a_second_sigterm_after_the_first_is_held_until_written(self):
        # kills reports/torchplace/gate/cli.py:judge:1a74d9:delete_stmt:0 (the interrupted
        # verdict was not held: a second SIGTERM, as a CI runner sends on cancel, escaped before
        # it was written). Also: the signal mask is left as it was found (a child the caller
        # starts later inherits it, and could not be stopped by SIGTERM).
        self.addCleanup(signal.signal, signal.SIGTERM, signal.getsignal(signal.SIGTERM))
        real_exit_code = cli.exit_code

        def twice(verdict):
            os.kill(os.getpid(), signal.SIGTERM)
            return real_exit_code(verdict)

        def sections(*_):
            os.kill(os.getpid(), signal.SIGTERM)

        with tempfile.TemporaryDirectory() as out:
            with mock.patch.object(cli, "run_sections", side_effect=sections), mock.patch.object(
                cli, "exit_code", side_effect=twice
            ), contextlib.redirect_stdout(io.StringIO()):
                code = cli.main(["--results", "synthetic-run", "--out", out])
            with open(os.path.join(out, "gate.json"), encoding="utf-8") as handle:
                written = json.load(handle)
        self.assertEqual((code, written["exit_code"]), (report.EXIT_INPUT,) * 2)
        self.assertIn("nothing was judged", written["problems"][0])
        self.assertNotIn(signal.SIGTERM, signal.pthread_sigmask(signal.SIG_BLOCK, []))


class OutputsThatCannotBeWritten(unittest.TestCase):
    def judged(self, reached_code):
        verdict = {
            "problems": [],
            "behaviour": None,
            "speed": None,
            "exit_code": reached_code,
            "verdict": report.VERDICTS[reached_code],
        }
        failing = OSError("synthetic: no space left")
        with tempfile.TemporaryDirectory() as out, contextlib.redirect_stderr(io.StringIO()):
            with mock.patch.object(cli, "judge", return_value=verdict), mock.patch.object(
                cli, "write_outputs", side_effect=failing
            ):
                code = cli.main(["--results", "synthetic-run", "--out", out])
            with open(os.path.join(out, "gate.json"), encoding="utf-8") as handle:
                return code, json.load(handle)

    def test_a_regression_stays_one_and_the_error_is_written(self):
        # kills reports/torchplace/gate/cli.py:write_tool_error:51daaa:negate_if:0 (no gate.json
        # when the outputs failed once)
        code, written = self.judged(report.EXIT_BEHAVIOUR)
        self.assertEqual((code, written["exit_code"]), (report.EXIT_BEHAVIOUR,) * 2)
        self.assertIn("tool error OSError: synthetic: no space left", written["problems"])

    def test_a_pass_that_cannot_be_written_is_exit_3(self):
        code, written = self.judged(report.EXIT_PASS)
        self.assertEqual((code, written["exit_code"]), (report.EXIT_INPUT,) * 2)

    def test_a_second_failure_is_said_and_the_exit_code_kept(self):
        # kills reports/torchplace/gate/cli.py:write_tool_error:8f3f01:delete_stmt:0 (silence)
        stderr = io.StringIO()
        with mock.patch.object(cli.schema, "write_set", side_effect=OSError("synthetic: again")):
            with contextlib.redirect_stderr(stderr):
                code = cli.write_tool_error(OSError("synthetic: first"), "synthetic-out")
        self.assertEqual(code, report.EXIT_INPUT)
        self.assertIn("cannot write to synthetic-out: synthetic: again", stderr.getvalue())
        self.assertIn("tool error OSError: synthetic: first (exit 3)", stderr.getvalue())


class SectionThatCannotJudge(unittest.TestCase):
    def test_it_is_emptied_and_named_as_a_problem(self):
        # kills reports/torchplace/gate/cli.py:_section:dc34d6:delete_stmt:1 (a tool error left
        # what the section held before standing) and :delete_stmt:0 (the same, for bad input)
        for error, words in (
            (cli.InputError("synthetic: bad input"), "speed gate: synthetic: bad input"),
            (KeyError("synthetic"), "speed gate: tool error KeyError: 'synthetic'"),
        ):
            verdict = {"problems": [], "speed": {"benchmarks": [], "about": "stale (synthetic)"}}
            with self.subTest(error=error):
                cli._section(verdict, "speed", mock.Mock(side_effect=error))
                self.assertIsNone(verdict["speed"])
                self.assertEqual(len(verdict["problems"]), 1)
                self.assertIn(words, verdict["problems"][0])


class ToolErrorOutsideMain(unittest.TestCase):
    def test_it_exits_3_and_says_what_failed(self):
        # kills reports/torchplace/gate/cli.py:run:3d703b:delete_stmt:0 (the message dropped)
        stderr = io.StringIO()
        failing = mock.patch.object(cli, "main", side_effect=RuntimeError("synthetic failure"))
        with failing, contextlib.redirect_stderr(stderr), self.assertRaises(SystemExit) as exited:
            cli.run([])
        self.assertEqual(exited.exception.code, report.EXIT_INPUT)
        self.assertIn("tool error RuntimeError: synthetic failure (exit 3", stderr.getvalue())
        self.assertNotIn("Traceback", stderr.getvalue())

    def test_the_traceback_is_printed_when_asked_for(self):
        # kills reports/torchplace/gate/cli.py:run:244ac6:delete_stmt:0 (TORCHPLACE_GATE_TRACEBACK
        # printed nothing more)
        stderr = io.StringIO()
        failing = mock.patch.object(cli, "main", side_effect=RuntimeError("synthetic failure"))
        asked = mock.patch.dict(os.environ, {"TORCHPLACE_GATE_TRACEBACK": "1"})
        with failing, asked, contextlib.redirect_stderr(stderr), self.assertRaises(
            SystemExit
        ) as exited:
            cli.run([])
        self.assertEqual(exited.exception.code, report.EXIT_INPUT)
        self.assertIn("Traceback (most recent call last)", stderr.getvalue())
        self.assertIn("RuntimeError: synthetic failure\n", stderr.getvalue())


if __name__ == "__main__":
    unittest.main()
