#!/usr/bin/env python3
"""A mutant's build runs in a process group of its own (torchplace.mutation.run.run_group): a
timeout or an interruption kills every process of it, the compilers under make included, before
the mutated file is restored. A compiler left running wrote a mutated object after the restore,
newer than its source, so later builds linked it (seen in a scratch build: a kill set red
unmutated). Here a shell stands for make and a background sleep for its compiler: synthetic."""
import signal
import subprocess
import tempfile
import time
import unittest
from pathlib import Path

from torchplace.mutation.run import run_group

WRITES_LATE = "(sleep 1.5; echo mutated > {mark}) & wait"  # the "compiler" writes after 1.5 s


class RunGroup(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.mark = Path(self.dir.name) / "object.o"

    def tearDown(self):
        self.dir.cleanup()

    def test_a_timeout_kills_the_grandchildren(self):
        with self.assertRaises(subprocess.TimeoutExpired):
            run_group(["sh", "-c", WRITES_LATE.format(mark=self.mark)], timeout_s=0.3)
        time.sleep(2.0)
        self.assertFalse(self.mark.exists(), "a compiler outlived its build's timeout")

    def test_an_interruption_kills_the_grandchildren(self):
        with self.assertRaises(KeyboardInterrupt):
            self._interrupted_build()
        time.sleep(2.0)
        self.assertFalse(self.mark.exists(), "a compiler outlived an interrupted build")

    def _interrupted_build(self):
        signal.signal(signal.SIGALRM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
        signal.setitimer(signal.ITIMER_REAL, 0.3)
        try:
            run_group(["sh", "-c", WRITES_LATE.format(mark=self.mark)])
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, signal.SIG_DFL)

    def test_the_output_and_the_exit_code_come_back(self):
        code, output = run_group(["sh", "-c", "echo built; echo warned >&2; exit 4"])
        self.assertEqual(code, 4)
        self.assertIn("built", output)
        self.assertIn("warned", output)


if __name__ == "__main__":
    unittest.main()
