#!/usr/bin/env python3
"""A kill set's gtest run (torchplace.mutation.scratch.Scratch.gtest) whatever bytes a mutant
makes it print: seen, a mutant of harness/sim/kernels.cpp printed bytes that are not UTF-8, and
the engine stopped on a UnicodeDecodeError. A shell script stands for the test binary."""
import shutil
import tempfile
import unittest
from pathlib import Path

from torchplace.mutation import scope
from torchplace.mutation.scratch import Scratch

CRASHES = "#!/bin/sh\nprintf 'before \\340\\200 after\\n'\nexit 134\n"  # synthetic


class GtestOutput(unittest.TestCase):
    def setUp(self):
        self.build = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, self.build)
        binary = self.build / scope.BINARIES[scope.HARNESS_TESTS] / scope.HARNESS_TESTS
        binary.parent.mkdir(parents=True)
        binary.write_text(CRASHES)
        binary.chmod(0o755)
        self.scratch = Scratch.__new__(Scratch)  # no scratch copy: only gtest() is used
        self.scratch.build_dir = self.build

    def test_bytes_that_are_not_utf8_are_a_crash_not_an_engine_error(self):
        verdict, detail = self.scratch.gtest(scope.HARNESS_TESTS, "Sim*")
        self.assertEqual((verdict, detail), ("fail", "crashed (exit 134)"))


if __name__ == "__main__":
    unittest.main()
