#!/usr/bin/env python3
"""torchplace.schema's SIGTERM helpers, in process (SIGTERM sent to this process, a recording
handler in place of the default so that a broken helper cannot kill the test): stops_cleanly (the
first raises Terminated, a second is held, on the way out it is dropped and the caller's mask comes
back), sigterm_deferred, hold_sigterm; ArgumentParser's exit code on bad arguments (64); the exit
codes (reports/README.md's table) and ROOT.

  test_schema_signals.py [CLASS]      (CTest: report.schema_signals)
"""
import contextlib
import io
import os
import signal
import time
import unittest

from torchplace import schema

TERM = signal.SIGTERM


def blocked() -> set:
    return set(signal.pthread_sigmask(signal.SIG_BLOCK, []))


def send_and_wait() -> None:
    """SIGTERM to this process, then time for its Python handler to run (it may raise)."""
    os.kill(os.getpid(), TERM)
    for _ in range(50):
        time.sleep(0.002)


class Signals(unittest.TestCase):
    def setUp(self) -> None:
        handler, mask = signal.getsignal(TERM), signal.pthread_sigmask(signal.SIG_BLOCK, [])
        self.addCleanup(signal.signal, TERM, handler)  # last: after a pending one is dropped
        self.addCleanup(signal.pthread_sigmask, signal.SIG_SETMASK, mask)
        self.addCleanup(signal.signal, TERM, signal.SIG_IGN)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {TERM})  # as a tool starts
        self.received: list = []
        signal.signal(TERM, lambda signum, _frame: self.received.append(signum))

    def test_stops_cleanly(self) -> None:
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR2})  # the caller's own mask
        callers = blocked()
        with schema.stops_cleanly():
            with self.assertRaises(schema.Terminated) as caught:
                send_and_wait()
            self.assertEqual(str(caught.exception), f"stopped by signal {int(TERM)} (SIGTERM)")
            self.assertIn(TERM, blocked())  # held back by the handler
            send_and_wait()  # a second one waits
            self.assertIn(TERM, signal.sigpending())
        self.assertIs(signal.getsignal(TERM), signal.SIG_IGN)
        self.assertEqual(blocked(), callers)
        self.assertEqual((signal.sigpending(), self.received), (set(), []))

    def test_stops_cleanly_without_a_signal(self) -> None:
        with schema.stops_cleanly():
            self.assertTrue(callable(signal.getsignal(TERM)))
        self.assertIs(signal.getsignal(TERM), signal.SIG_IGN)
        self.assertNotIn(TERM, blocked())

    def test_exit_cleanly_on_sigterm(self) -> None:
        schema.exit_cleanly_on_sigterm()
        with self.assertRaises(schema.Terminated):
            send_and_wait()

    def test_sigterm_deferred_until_the_end(self) -> None:
        with schema.sigterm_deferred():
            send_and_wait()
            self.assertEqual(self.received, [])
            self.assertIn(TERM, signal.sigpending())
        self.assertEqual(self.received, [TERM])
        self.assertNotIn(TERM, blocked())

    def test_hold_sigterm(self) -> None:
        schema.hold_sigterm()
        self.assertIn(TERM, blocked())
        send_and_wait()
        self.assertEqual(self.received, [])


class Contracts(unittest.TestCase):
    def test_bad_arguments_exit_64_naming_the_problem(self) -> None:
        parser = schema.ArgumentParser(prog="synthetic")
        parser.add_argument("--count", type=int)
        err = io.StringIO()
        with contextlib.redirect_stderr(err), self.assertRaises(SystemExit) as caught:
            parser.parse_args(["--count", "many"])
        self.assertEqual(caught.exception.code, schema.EXIT_USAGE)
        self.assertEqual(caught.exception.code, os.EX_USAGE)
        lines = err.getvalue().splitlines()
        self.assertTrue(lines[0].startswith("usage: synthetic"), lines)
        self.assertEqual(lines[-1], "synthetic: error: argument --count: invalid int value: 'many'")

    def test_exit_codes(self) -> None:
        documented = {"OK": 0, "FAIL": 1, "REGRESSION": 2, "ENV": 3, "BUILD": 4, "BUDGET": 5}
        documented.update(USAGE=64, SKIP=77)  # sysexits' EX_USAGE, CTest's SKIP_RETURN_CODE
        self.assertEqual(schema.EXIT_CODES, documented)
        for name, code in documented.items():
            self.assertEqual(getattr(schema, f"EXIT_{name}"), code)
        self.assertEqual(schema.EXIT_INPUT, schema.EXIT_ENV)

    def test_root_is_the_repository(self) -> None:
        here = schema.ROOT / "reports" / "torchplace" / "schema.py"
        self.assertTrue(here.samefile(schema.__file__))


if __name__ == "__main__":
    unittest.main()
