#!/usr/bin/env python3
"""torchplace.command.common's helpers in process: call() with real short-lived children (the
exit code, the step's deadline cutting a child, an exception stopping it first), Exit's text,
log lines flushed at once, the source tree, the build folder, PYTHONPATH, take_value, the
build's defaults (source, folder, cores, where the output goes), a recorded step and the
report's Python. Folders and environment values are synthetic.

  test_command_common_calls.py [CLASS]      (CTest: command.common_calls)
"""
import io
import os
import signal
import subprocess
import sys
import time
import unittest
from pathlib import Path
from typing import List
from unittest import mock

from command_scratch import Scratch
from torchplace import schema
from torchplace.command import common

SLEEPER = [sys.executable, "-c", "import time; time.sleep(30)"]


class Call(Scratch):
    def setUp(self) -> None:
        super().setUp()
        self.addCleanup(common.DEADLINE.__setitem__, 0, None)

    def test_the_childs_exit_code_without_and_before_a_deadline(self) -> None:
        exit_7 = [sys.executable, "-c", "import sys; sys.exit(7)"]
        self.assertEqual(common.call(exit_7), 7)
        common.DEADLINE[0] = time.monotonic() + 60
        self.assertEqual(common.call(exit_7), 7)

    def stopped(self, error: type) -> "subprocess.Popen[bytes]":
        """The child that call() stopped while raising `error`."""
        with mock.patch.object(common, "stop", wraps=common.stop) as stop:
            with self.assertRaises(error):
                common.call(SLEEPER)
        stop.assert_called_once()
        return stop.call_args[0][0]

    def test_the_deadline_stops_the_child_and_cuts_the_step(self) -> None:
        for left in (0.3, -5.0):  # still ahead, already past
            with self.subTest(left=left):
                common.DEADLINE[0] = time.monotonic() + left
                started = time.monotonic()
                child = self.stopped(common.BudgetCut)
                self.assertEqual(child.returncode, -signal.SIGTERM)
                took = time.monotonic() - started  # the cut comes at the deadline, not later
                self.assertLess(took, 3)
                self.assertGreaterEqual(took, max(0.0, left) - 0.05)

    def test_any_other_exception_stops_the_child_first(self) -> None:
        common.DEADLINE[0] = time.monotonic() + 60
        with mock.patch.object(common.time, "monotonic", side_effect=KeyboardInterrupt):
            child = self.stopped(KeyboardInterrupt)
        self.assertEqual(child.returncode, -signal.SIGTERM)


class Small(Scratch):
    def test_exit_text(self) -> None:
        self.assertEqual((str(common.Exit(4)), common.Exit(4).message), ("exit 4", None))
        self.assertEqual(str(common.Exit(3, "no LibTorch")), "no LibTorch")

    def test_a_log_line_reaches_the_file_at_once(self) -> None:
        path = os.path.join(self.tmp, "log.txt")
        with open(path, "w", encoding="utf-8", buffering=8192) as stream:
            with mock.patch("sys.stderr", stream):
                common.log("step", 3, Path("/synthetic"))
            with open(path, encoding="utf-8") as reader:  # before the stream closes
                self.assertEqual(reader.read(), "torchplace: step 3 /synthetic\n")

    def test_the_source_tree_has_cmakelists(self) -> None:
        with mock.patch.object(schema, "ROOT", Path(self.tmp)):
            self.assertIs(common.is_source_tree(), False)
            Path(self.tmp, "CMakeLists.txt").write_text("# synthetic\n", encoding="utf-8")
            self.assertIs(common.is_source_tree(), True)

    def test_the_build_folder(self) -> None:
        os.environ.pop("TORCHPLACE_BUILD_DIR", None)
        self.assertEqual(common.build_dir(), schema.ROOT / "build" / "ci")
        os.environ["TORCHPLACE_BUILD_DIR"] = ""
        self.assertEqual(common.build_dir(), schema.ROOT / "build" / "ci")
        os.environ["TORCHPLACE_BUILD_DIR"] = "/synthetic/build"
        self.assertEqual(common.build_dir(), Path("/synthetic/build"))

    def test_reports_goes_first_on_pythonpath_once(self) -> None:
        reports = str(schema.ROOT / "reports")
        os.environ.pop("PYTHONPATH", None)
        common.export_pythonpath()
        self.assertEqual(os.environ["PYTHONPATH"], reports)
        for before, after in (
            (os.pathsep.join(["/a", "", "/b"]), [reports, "/a", "/b"]),
            (os.pathsep.join(["/a", reports]), ["/a", reports]),
        ):
            with self.subTest(before=before):
                os.environ["PYTHONPATH"] = before
                common.export_pythonpath()
                self.assertEqual(os.environ["PYTHONPATH"], os.pathsep.join(after))

    def test_take_value(self) -> None:
        args = ["v", "w"]
        self.assertEqual(common.take_value(args, "--x needs a value"), "v")
        self.assertEqual(args, ["w"])
        self.assertEqual(
            self.exits(schema.EXIT_USAGE, common.take_value, [], "--x what"), "--x what"
        )

    def test_a_step_is_recorded(self) -> None:
        path = Path(self.tmp) / "run.json"
        common.record(path, "bench", status="ran", seconds=2.5)
        self.assertEqual(
            schema.load_run(str(path))["steps"],
            {"bench": {"status": "ran", "seconds": 2.5}},
        )


class Pythons(Scratch):
    def test_the_first_python_that_has_the_modules(self) -> None:
        os.environ.pop("TORCHPLACE_PYTHON", None)
        ok = subprocess.CompletedProcess([], 0)
        with mock.patch.object(common.shutil, "which", side_effect=lambda name: name):
            with mock.patch.object(subprocess, "run", return_value=ok) as ran:
                self.assertEqual(common.python_with(("scipy",)), "/usr/bin/python3")
        ran.assert_called_once()

    def test_the_report_needs_matplotlib_and_scipy(self) -> None:
        with mock.patch.object(common, "python_with", return_value="/synthetic/python") as found:
            self.assertEqual(common.report_python(), "/synthetic/python")
        found.assert_called_once_with(("matplotlib", "scipy"))


class BuildDefaults(Scratch):
    def build(self, cores: object, **options: object) -> List[mock._Call]:
        os.environ["TORCHPLACE_BUILD_DIR"] = "/synthetic/build"
        with mock.patch.object(common, "call", return_value=0) as call, mock.patch.object(
            common.os, "cpu_count", return_value=cores
        ), mock.patch.object(common.shutil, "which", return_value="/synthetic/make"):
            common.build(**options)  # type: ignore[arg-type]
        return call.call_args_list

    def test_the_source_tree_into_the_build_folder_on_every_core(self) -> None:
        err = io.StringIO()
        with mock.patch("sys.stderr", err):
            configure, make = self.build(6)
        self.assertEqual(configure[0][0][:3], ["cmake", "-S", str(schema.ROOT)])
        self.assertEqual(configure[0][0][5:7], ["-B", "/synthetic/build"])
        self.assertEqual(make[0][0], ["cmake", "--build", "/synthetic/build", "-j", "6"])
        for one in (configure, make):  # the output goes to stderr
            self.assertEqual(one[1], {"stdout": err, "stderr": err})

    def test_one_job_when_the_cores_are_unknown_and_output_to_the_log(self) -> None:
        log = io.StringIO()
        configure, make = self.build(None, source=Path("/src"), directory=Path("/b"), log=log)
        self.assertEqual(configure[0][0][:3], ["cmake", "-S", "/src"])
        self.assertEqual(configure[0][0][5:7], ["-B", "/b"])
        self.assertEqual(make[0][0][3:], ["-j", "1"])
        self.assertEqual(make[1], {"stdout": log, "stderr": log})


def main(argv: List[str]) -> None:
    unittest.main(argv=[sys.argv[0], *argv, "-v"])


if __name__ == "__main__":
    main(sys.argv[1:])
