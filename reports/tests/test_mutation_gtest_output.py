#!/usr/bin/env python3
"""A kill set's gtest run (torchplace.mutation.scratch.Scratch.gtest) whatever bytes a mutant
makes it print (seen: bytes that are not UTF-8 stopped the engine on a UnicodeDecodeError), and
whatever children it leaves (seen: forked death-test children of host_read_fault.cpp mutants
spinning for ever, the engine waiting on them), and whatever they write (seen: a 32 GB file that
filled the disk). A shell script stands for the test binary."""
import os
import shutil
import tempfile
import time
import unittest
from pathlib import Path

from unittest import mock

from torchplace.mutation import scope
from torchplace.mutation import scratch as scratch_module
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
        self.binary = binary
        self.scratch = Scratch.__new__(Scratch)  # no scratch copy: only gtest() is used
        self.scratch.build_dir = self.build

    def test_bytes_that_are_not_utf8_are_a_crash_not_an_engine_error(self):
        verdict, detail = self.scratch.gtest(scope.HARNESS_TESTS, "Sim*")
        self.assertEqual((verdict, detail), ("fail", "crashed (exit 134)"))

    def leaves_a_child(self, then: str) -> Path:
        """The stand-in forks a child that outlives it (its pid in a file), then `then`."""
        pid = self.build / "child.pid"
        self.binary.write_text(f"#!/bin/sh\nsleep 300 &\necho $! > {pid}\n{then}\n")
        return pid

    def assert_gone(self, pid_file: Path) -> None:
        pid = int(pid_file.read_text())
        for _ in range(50):  # killed at once; reaped by init a moment later
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return
            time.sleep(0.1)
        os.kill(pid, 9)
        self.fail(f"the child {pid} outlived its kill set's run")

    def test_a_child_left_spinning_is_ended(self):
        pid = self.leaves_a_child("exit 1")
        self.assertEqual(self.scratch.gtest(scope.HARNESS_TESTS, "Sim*")[0], "fail")
        self.assert_gone(pid)

    def test_past_the_deadline_the_whole_group_ends(self):
        pid = self.leaves_a_child("sleep 300")
        started = time.monotonic()
        with mock.patch.object(scratch_module, "TEST_TIMEOUT_S", 1):
            verdict, _ = self.scratch.gtest(scope.HARNESS_TESTS, "Sim*")
        self.assertEqual(verdict, "timeout")
        self.assertLess(time.monotonic() - started, 30)
        self.assert_gone(pid)

    def test_a_file_past_the_limit_stops_its_writer(self):
        written = self.build / "captured_stream"
        self.binary.write_text(f"#!/bin/sh\nhead -c 4096 /dev/zero > {written}\nexit 0\n")
        with mock.patch.object(scratch_module, "FILE_SIZE_LIMIT", 1024):
            verdict, detail = self.scratch.gtest(scope.HARNESS_TESTS, "Sim*")
        self.assertEqual(verdict, "fail")  # no gtest report: a crash
        self.assertEqual(written.stat().st_size, 1024)

    def cuts_its_report_short(self, code: int) -> None:
        """The stand-in writes the start of a gtest JSON report where --gtest_output says."""
        self.binary.write_text(
            "#!/bin/sh\nfor a; do case $a in --gtest_output=json:*) "
            'printf \'{\\n  "testsuites": [{"name": "Si\' > "${a#--gtest_output=json:}";; '
            f"esac; done\nexit {code}\n"
        )

    def test_a_report_cut_short_by_a_crash_is_a_kill(self):
        self.cuts_its_report_short(137)
        verdict, detail = self.scratch.gtest(scope.HARNESS_TESTS, "Sim*")
        self.assertEqual((verdict, detail), ("fail", "crashed (exit 137), its report cut short"))

    def test_a_report_cut_short_without_a_crash_judges_nothing(self):
        self.cuts_its_report_short(0)
        self.assertEqual(self.scratch.gtest(scope.HARNESS_TESTS, "Sim*")[0], "empty")


if __name__ == "__main__":
    unittest.main()
