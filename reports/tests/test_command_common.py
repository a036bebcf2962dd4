#!/usr/bin/env python3
"""What every subcommand shares (torchplace.command.common) and the dispatch (cli) in process:
a stopped child that ignores SIGTERM is killed, tp_ensure_deps' failure is the command's exit,
configure fails with 3 and the build with 4, a step that cannot be recorded is logged, and the
usage, refusals and exits of `python3 -m torchplace`. Processes and commands are mocks; paths
are synthetic.

  test_command_common.py [CLASS]      (CTest: command.common)
"""
import io
import os
import shutil
import signal
import subprocess
import sys
import unittest
from pathlib import Path
from typing import List
from unittest import mock

from command_scratch import Scratch
from torchplace import schema
from torchplace.command import cli, common


class Processes(Scratch):
    def test_a_child_deaf_to_sigterm_is_killed(self) -> None:
        child = mock.Mock(spec=subprocess.Popen)
        child.wait.side_effect = [subprocess.TimeoutExpired("synthetic", 10), -9]
        common.stop(child)
        child.send_signal.assert_called_once_with(signal.SIGTERM)
        child.kill.assert_called_once_with()
        child.wait.assert_any_call(timeout=10)  # "SIGKILL 10 s later" (ci/gpu/README.md)
        self.assertEqual(child.wait.call_count, 2)

    def test_bash_lib_sources_common_sh_strictly(self) -> None:
        with mock.patch.object(common, "call", return_value=7) as call:
            self.assertEqual(common.bash_lib("tp_synthetic", "one", "two"), 7)
        argv = call.call_args[0][0]
        self.assertEqual(argv[:2], ["bash", "-c"])
        self.assertIn("set -euo pipefail", argv[2])
        common_sh = str(schema.ROOT / "ci" / "lib" / "common.sh")
        self.assertEqual(argv[3:], ["_", common_sh, "tp_synthetic", "one", "two"])

    def test_ensure_deps_failure_is_the_commands_exit(self) -> None:
        os.environ["TORCHPLACE_NO_INSTALL"] = "1"
        with mock.patch.object(common, "bash_lib") as bash_lib:
            common.ensure_deps(["extra"])
        bash_lib.assert_not_called()
        os.environ["TORCHPLACE_NO_INSTALL"] = "0"
        with mock.patch.object(common, "bash_lib", return_value=100) as bash_lib:
            self.assertEqual(self.exits(100, common.ensure_deps, ["extra"]), "None")
        bash_lib.assert_called_once_with("tp_ensure_deps", "extra", log=None)
        with mock.patch.object(common, "bash_lib", return_value=0):
            common.ensure_deps()

    def test_python_with_skips_a_python_without_the_modules(self) -> None:
        os.environ["TORCHPLACE_PYTHON"] = "/synthetic/python"
        probes = [subprocess.CompletedProcess([], 1), subprocess.CompletedProcess([], 0)]
        with mock.patch.object(shutil, "which", side_effect=lambda name: name), mock.patch.object(
            subprocess, "run", side_effect=probes
        ) as ran:
            self.assertEqual(common.python_with(("scipy",)), "/usr/bin/python3")
        self.assertEqual(ran.call_args_list[0][0][0][1:], ["-m", "torchplace.requires", "scipy"])
        with mock.patch.object(shutil, "which", return_value=None):
            self.assertIsNone(common.python_with(("scipy",)))

    def test_environment_adds_to_a_copy(self) -> None:
        os.environ["SYNTHETIC_A"] = "a"
        made = common.environment(SYNTHETIC_B="b", SYNTHETIC_A="over")
        self.assertEqual((made["SYNTHETIC_A"], made["SYNTHETIC_B"]), ("over", "b"))
        self.assertEqual(os.environ["SYNTHETIC_A"], "a")


class Build(Scratch):
    def test_configure_args_take_torch_dir_and_the_extra_args(self) -> None:
        os.environ.pop("Torch_DIR", None)
        os.environ["TORCHPLACE_CMAKE_ARGS"] = " -DA=1  -DB=2 "
        args = common.cmake_configure_args(Path("/src"), Path("/b"))
        self.assertEqual(
            args, ["cmake", "-S", "/src", "--preset", "ci", "-B", "/b", "-DA=1", "-DB=2"]
        )
        os.environ["Torch_DIR"] = "/synthetic/libtorch"
        args = common.cmake_configure_args(Path("/src"), Path("/b"))
        self.assertEqual(args[7:], ["-DTorch_DIR=/synthetic/libtorch", "-DA=1", "-DB=2"])

    def build(self, codes: List[int]) -> mock.Mock:
        os.environ.pop("CMAKE_GENERATOR", None)
        with mock.patch.object(common, "call", side_effect=codes) as call, mock.patch.object(
            shutil, "which", return_value="/synthetic/make"
        ):
            common.build(Path("/src"), Path(self.tmp), log=io.StringIO())
        return call

    def test_configure_fails_with_3_the_build_with_4(self) -> None:
        self.assertIn("configure failed", self.exits(schema.EXIT_ENV, self.build, [1]))
        self.assertIn("build failed", self.exits(schema.EXIT_BUILD, self.build, [0, 2]))
        call = self.build([0, 0])
        self.assertEqual(call.call_args[0][0][:3], ["cmake", "--build", self.tmp])
        self.assertNotIn("CMAKE_GENERATOR", os.environ)  # make is there

    def test_ninja_without_make(self) -> None:
        os.environ.pop("CMAKE_GENERATOR", None)
        which = {"ninja": "/synthetic/ninja"}.get
        with mock.patch.object(common, "call", return_value=0), mock.patch.object(
            shutil, "which", side_effect=which
        ):
            common.build(Path("/src"), Path(self.tmp), log=io.StringIO())
        self.assertEqual(os.environ.get("CMAKE_GENERATOR"), "Ninja")


class Record(Scratch):
    def test_a_step_that_cannot_be_recorded_is_logged(self) -> None:
        path = Path(self.tmp) / "run.json"
        path.write_text("not json (synthetic)", encoding="utf-8")
        with mock.patch.object(common, "log") as logged:
            common.record(path, "bench", status="ran")
        self.assertIn("could not record step bench", logged.call_args[0][0])


class Cli(Scratch):
    """cli.main with the commands mocked: nothing runs but the dispatch."""

    def main(self, argv: List[str], **table: mock.Mock) -> "tuple[int, str, str]":
        out, err = io.StringIO(), io.StringIO()
        with mock.patch.object(cli, "commands", return_value=table), mock.patch.object(
            schema, "exit_cleanly_on_sigterm"
        ), mock.patch("sys.stdout", out), mock.patch("sys.stderr", err):
            code = cli.main(argv)
        return code, out.getvalue(), err.getvalue()

    def test_help_is_usage_on_stdout_and_exit_0(self) -> None:
        for word in ("help", "-h", "--help"):
            with self.subTest(word=word):
                self.assertEqual(self.main([word]), (schema.EXIT_OK, cli.USAGE + "\n", ""))

    def test_no_command_is_usage_on_stderr_and_64(self) -> None:
        self.assertEqual(self.main([]), (schema.EXIT_USAGE, "", cli.USAGE + "\n"))

    def test_sigterm_is_3(self) -> None:
        stopped = mock.Mock(side_effect=schema.Terminated("synthetic SIGTERM"))
        code, _, err = self.main(["run"], run=stopped)
        self.assertEqual(code, schema.EXIT_ENV)
        self.assertIn("synthetic SIGTERM; the command stopped its children and exits 3", err)

    def test_an_unknown_command_is_64(self) -> None:
        code, _, err = self.main(["frobnicate"], run=mock.Mock())
        self.assertEqual(code, schema.EXIT_USAGE)
        self.assertIn("torchplace: unknown command 'frobnicate'", err)
        self.assertIn("usage:", err)

    def test_the_installed_command_refuses_source_tree_commands(self) -> None:
        mutate, report = mock.Mock(return_value=0), mock.Mock(return_value=0)
        with mock.patch.object(common, "is_source_tree", return_value=False):
            code, _, err = self.main(["mutate"], mutate=mutate, report=report)
            self.assertEqual(code, schema.EXIT_USAGE)
            self.assertIn("'mutate' needs the torchplace source tree", err)
            self.assertEqual(self.main(["report", "IN"], mutate=mutate, report=report)[0], 0)
        mutate.assert_not_called()
        report.assert_called_once_with(["IN"])

    def test_console_passes_the_arguments(self) -> None:
        with mock.patch.object(sys, "argv", ["torchplace", "run", "--gpu"]), mock.patch.object(
            cli, "main", return_value=5
        ) as main:
            self.assertEqual(cli.console(), 5)
        main.assert_called_once_with(["run", "--gpu"])

    def test_the_command_runs_with_reports_first_on_pythonpath(self) -> None:
        # the `python3 -m torchplace.*` children it starts import this checkout's package
        seen: List[str] = []
        run = mock.Mock(side_effect=lambda _: seen.append(os.environ["PYTHONPATH"]) or 0)
        os.environ["PYTHONPATH"] = "/synthetic/lib"
        self.assertEqual(self.main(["run"], run=run)[0], 0)
        reports = str(common.root() / "reports")
        self.assertEqual(seen, [os.pathsep.join([reports, "/synthetic/lib"])])

    def test_an_interrupt_is_3_and_a_closed_pipe_1(self) -> None:
        code, _, err = self.main(["run"], run=mock.Mock(side_effect=KeyboardInterrupt))
        self.assertEqual((code, err), (schema.EXIT_ENV, "torchplace: interrupted\n"))
        with mock.patch.object(schema, "to_devnull") as devnull:
            code, _, err = self.main(["run"], run=mock.Mock(side_effect=BrokenPipeError))
        self.assertEqual((code, err), (schema.EXIT_FAIL, ""))
        devnull.assert_called_once()


def main(argv: List[str]) -> None:
    unittest.main(argv=[sys.argv[0], *argv, "-v"])


if __name__ == "__main__":
    main(sys.argv[1:])
