#!/usr/bin/env python3
"""`test`, `mutate` (torchplace.command.build) and `report`, `gate`, `explain`
(torchplace.command.tools) in process: what each refuses, and the argv it hands on, with
torchplace.command.common's builds and calls and os.execv mocked. Paths are synthetic.

  test_command_tools.py [CLASS]      (CTest: command.tools_build)
"""
import os
import subprocess
import sys
import unittest
from pathlib import Path
from typing import List
from unittest import mock

from command_scratch import Scratch, Unbuilt
from torchplace import schema
from torchplace.command import build, common, tools

PYTHON = "/synthetic/bin/python3"


class Test(Scratch):
    def test_ctest_runs_after_the_build_and_its_failure_is_exit_1(self) -> None:
        os.environ["TORCHPLACE_BUILD_DIR"] = self.tmp
        with mock.patch.object(common, "build") as built, mock.patch.object(
            common, "call", return_value=8
        ) as call:
            self.assertEqual(build.test(["--no-install"]), schema.EXIT_FAIL)
        built.assert_called_once_with()
        ctest = call.call_args[0][0]
        self.assertEqual(ctest[:3], ["ctest", "--test-dir", self.tmp])
        self.assertIn("--no-tests=error", ctest)
        self.assertEqual(ctest[-2:], ["--output-junit", f"{self.tmp}/junit.xml"])
        self.assertEqual(os.environ["TORCHPLACE_NO_INSTALL"], "1")
        with mock.patch.object(common, "build"), mock.patch.object(common, "call", return_value=0):
            self.assertEqual(build.test([]), schema.EXIT_OK)

    def test_a_failed_install_stops_before_the_build(self) -> None:
        os.environ["TORCHPLACE_NO_INSTALL"] = "0"
        with mock.patch.object(common, "build") as built, mock.patch.object(
            common, "call", return_value=7
        ):
            self.assertEqual(self.exits(7, build.test, []), "None")
        built.assert_not_called()

    def test_an_install_that_succeeds_goes_on_to_build_and_test(self) -> None:
        os.environ["TORCHPLACE_NO_INSTALL"] = "0"
        with mock.patch.object(common, "build") as built, mock.patch.object(
            common, "call", return_value=0
        ) as call:
            self.assertEqual(build.test([]), schema.EXIT_OK)
        built.assert_called_once_with()
        self.assertEqual([argv[0][0][0] for argv in call.call_args_list], ["bash", "ctest"])

    def test_ctest_runs_one_job_per_cpu_or_one_when_unknown(self) -> None:
        for cpus, jobs in ((6, "6"), (None, "1")):  # os.cpu_count() is None when undetermined
            with self.subTest(cpus=cpus), mock.patch.object(
                os, "cpu_count", return_value=cpus
            ), mock.patch.object(common, "build"), mock.patch.object(
                common, "call", return_value=0
            ) as call:
                build.test(["--no-install"])
                ctest = call.call_args[0][0]
                self.assertEqual(ctest[ctest.index("-j") + 1], jobs)

    def test_an_unknown_argument(self) -> None:
        with mock.patch.object(common, "build"), mock.patch.object(common, "call") as call:
            message = self.exits(schema.EXIT_USAGE, build.test, ["--fast"])
        call.assert_not_called()
        self.assertIn("unknown argument '--fast'", message)


class Mutate(Unbuilt):  # a refusal that slips goes no further than ensure_deps
    def run_mutate(self, args: List[str]) -> List[str]:
        with mock.patch.object(common, "ensure_deps") as ensured, mock.patch.object(
            common, "call", return_value=5
        ) as call:
            self.assertEqual(build.mutate(args), 5)  # the engine's exit is the command's
        ensured.assert_called_once_with()  # the packages are checked before the engine runs
        return list(call.call_args[0][0])

    def test_values_are_forwarded_and_generated_picks_the_module(self) -> None:
        argv = self.run_mutate(["--generated", "--sample", "7", "--list", "--no-install"])
        self.assertEqual(
            argv,
            [sys.executable, "-m", "torchplace.mutation.generated"] + ["--sample", "7", "--list"],
        )
        self.assertEqual(os.environ["TORCHPLACE_NO_INSTALL"], "1")
        self.assertEqual(
            self.run_mutate(["--only", "a,b"])[2:], ["torchplace.mutation", "--only", "a,b"]
        )

    def test_every_value_is_forwarded_in_order(self) -> None:
        argv = self.run_mutate(["--generated", "--files", "a.py", "--budget-s", "60", "--list"])
        self.assertEqual(argv[3:], ["--files", "a.py", "--budget-s", "60", "--list"])

    def test_refusals(self) -> None:
        self.assertIn(
            "--shard needs a value", self.exits(schema.EXIT_USAGE, build.mutate, ["--shard"])
        )
        self.assertIn("unknown argument '-x'", self.exits(schema.EXIT_USAGE, build.mutate, ["-x"]))


class Report(Scratch):
    def test_the_report_is_execed_with_out_and_gate(self) -> None:
        args = [self.tmp, "--gate", "g.json"]
        with mock.patch.object(common, "report_python", return_value=PYTHON), mock.patch.object(
            os, "execv"
        ) as execv:
            tools.report(list(args))
            tools.report(["--out", "o", self.tmp])
        first, second = (call[0][1] for call in execv.call_args_list)
        self.assertEqual(
            first[2:], ["torchplace.report", self.tmp, "--out", self.tmp, "--gate", "g.json"]
        )
        self.assertEqual(second[2:], ["torchplace.report", self.tmp, "--out", "o"])

    def test_refusals(self) -> None:
        missing = os.path.join(self.tmp, "missing")
        with mock.patch.object(common, "report_python", return_value=PYTHON), mock.patch.object(
            os, "execv"
        ) as execv:
            self.assertIn("is not a folder", self.exits(schema.EXIT_ENV, tools.report, [missing]))
        execv.assert_not_called()
        self.assertIn("usage", self.exits(schema.EXIT_USAGE, tools.report, []))
        self.assertIn("unknown option", self.exits(schema.EXIT_USAGE, tools.report, ["-o"]))
        with mock.patch.object(common, "report_python", return_value=None):
            self.assertIn("matplotlib", self.exits(schema.EXIT_ENV, tools.report, [self.tmp]))


class Gate(Scratch):
    def gate(self, args: List[str], *modules: str) -> List[str]:
        with mock.patch.object(
            common, "python_with", return_value=PYTHON
        ) as python, mock.patch.object(os, "execv") as execv:
            tools.gate(args)
        python.assert_called_once_with(modules)
        return list(execv.call_args[0][1][2:])

    def test_the_behaviour_gate_needs_no_scipy_the_speed_gate_does(self) -> None:
        self.assertEqual(
            self.gate(["--results", "r", "--out", "o"]),
            ["torchplace.gate", "--results", "r", "--out", "o"],
        )
        self.assertEqual(
            self.gate(["--baseline", "b", "--candidate", "c"], "scipy")[1:3], ["--baseline", "b"]
        )

    def test_ab_gets_its_runs_and_ab_options_need_ab(self) -> None:
        with mock.patch.object(tools, "gate_ab") as ab:
            argv = self.gate(["--ab", "HEAD~1", "--rounds", "3", "--out", self.tmp], "scipy")
        ab.assert_called_once_with("HEAD~1", Path(self.tmp), PYTHON, ["--rounds", "3"])
        self.assertEqual(
            argv[1:],
            [
                "--baseline",
                f"{self.tmp}/ab-baseline.json",
                "--candidate",
                f"{self.tmp}/ab-candidate.json",
                "--out",
                self.tmp,
            ],
        )
        with mock.patch.object(common, "python_with", return_value=PYTHON):
            message = self.exits(tools.GATE_INPUT, tools.gate, ["--results", "r", "--rounds", "3"])
        self.assertIn("applies to --ab only", message)

    def test_ab_without_out_writes_under_the_tree_and_keeps_the_gates_options(self) -> None:
        root = Path("/synthetic/tree")
        with mock.patch.object(tools, "gate_ab") as ab, mock.patch.object(
            common, "is_source_tree", return_value=True
        ), mock.patch.object(common, "root", return_value=root):
            argv = self.gate(["--policy", "p.json", "--ab", "v9"], "scipy")
        out = root / "out" / "gate"
        ab.assert_called_once_with("v9", out, PYTHON, [])
        baseline, candidate = f"{out}/ab-baseline.json", f"{out}/ab-candidate.json"
        self.assertEqual(
            argv,
            ["torchplace.gate", "--policy", "p.json", "--baseline", baseline]
            + ["--candidate", candidate, "--out", str(out)],
        )

    def test_a_scratch_already_gone_does_not_hide_the_failure(self) -> None:
        os.environ["TMPDIR"] = self.tmp

        def fails(ref: str, out: Path, python: str, options: List[str], scratch: Path) -> None:
            scratch.rmdir()  # synthetic: the scratch folder is removed under it, then it fails
            raise common.Exit(tools.GATE_INPUT, "synthetic failure")

        done = subprocess.CompletedProcess([], 0)
        with mock.patch.object(subprocess, "run", return_value=done), mock.patch.object(
            tools, "ab_build_and_run", side_effect=fails
        ):
            message = self.exits(tools.GATE_INPUT, tools.gate_ab, "v9", Path(self.tmp), PYTHON, [])
        self.assertEqual(message, "synthetic failure")

    def test_help_and_no_scipy(self) -> None:
        with mock.patch("builtins.print") as printed:
            self.assertEqual(tools.gate(["--results", "r", "--help"]), schema.EXIT_OK)
        printed.assert_called_once_with(tools.GATE_HELP)
        with mock.patch.object(common, "python_with", return_value=None):
            self.assertIn("scipy", self.exits(tools.GATE_INPUT, tools.gate, ["--baseline", "b"]))


class Explain(Scratch):
    def test_the_classifier_is_built_when_not_installed(self) -> None:
        os.environ["TORCHPLACE_BUILD_DIR"] = self.tmp
        with mock.patch.object(common, "root", return_value=Path(self.tmp)), mock.patch.object(
            common, "is_source_tree", return_value=True
        ), mock.patch.object(common, "call", return_value=0) as call:
            found = tools.explain_classifier()
        self.assertEqual(found, f"{self.tmp}/harness/torchplace_classify")
        configure, target = (one[0][0] for one in call.call_args_list)
        self.assertEqual(configure[:2], ["cmake", "-S"])
        self.assertEqual(target[-2:], ["--target", "torchplace_classify"])
        with mock.patch.object(common, "root", return_value=Path(self.tmp)), mock.patch.object(
            common, "is_source_tree", return_value=True
        ), mock.patch.object(common, "call", side_effect=[0, 2]):
            self.assertIsNone(tools.explain_classifier())  # a failed build is no classifier

    def test_the_environment_carries_the_classifier(self) -> None:
        os.environ.pop("TORCHPLACE_CLASSIFY", None)
        os.environ["TORCHPLACE_PYTHON"] = sys.executable
        with mock.patch.object(
            tools, "explain_classifier", return_value="/synthetic/classify"
        ), mock.patch.object(os, "execv") as execv:
            tools.explain(["log.txt"])
        self.assertEqual(os.environ["TORCHPLACE_CLASSIFY"], "/synthetic/classify")
        execv.assert_called_once_with(
            sys.executable, [sys.executable, "-m", "torchplace.explain", "log.txt"]
        )
        with mock.patch.object(tools, "explain_classifier", return_value=None):
            os.environ.pop("TORCHPLACE_CLASSIFY")
            self.assertIn("no torchplace_classify", self.exits(schema.EXIT_ENV, tools.explain, []))


def main(argv: List[str]) -> None:
    unittest.main(argv=[sys.argv[0], *argv, "-v"])


if __name__ == "__main__":
    main(sys.argv[1:])
