#!/usr/bin/env python3
"""`gate --ab`, the installed command's `gate`, and `explain`'s classifier and Python
(torchplace.command.tools) in process: every refusal is the gate's exit 3 (or explain's 3) with
a line naming the problem, the scratch worktree is removed whatever happens, and the argv each
git, build and interleave call gets. git, the builds and os.execv are mocks; paths are
synthetic.

  test_command_ab.py [CLASS]      (CTest: command.ab)
"""
import contextlib
import io
import os
import subprocess
import sys
import unittest
from pathlib import Path
from typing import List
from unittest import mock

import command_scratch
from torchplace import schema
from torchplace.command import common, tools

PYTHON = "/synthetic/bin/python3"


class Unbuilt(command_scratch.Unbuilt):
    REFUSED = ("build", "ensure_deps", "call")  # nothing here runs a tool either


class GateAb(Unbuilt):
    def setUp(self) -> None:
        super().setUp()
        os.environ["TMPDIR"] = self.tmp
        self.out = Path(self.tmp) / "gate"
        self.ran: List[List[str]] = []

    def git(self, verify: int) -> mock._patch:
        """subprocess.run mocked: `rev-parse --verify` exits `verify`, anything else 0."""

        def run(argv: List[str], **options: object) -> subprocess.CompletedProcess:
            self.ran.append(list(argv))
            return subprocess.CompletedProcess(argv, verify if "rev-parse" in argv else 0)

        return mock.patch.object(subprocess, "run", side_effect=run)

    def test_a_ref_that_is_not_a_commit(self) -> None:
        # kills tools.py:gate_ab:da35a5:arg_swap:0 (the message passed as the exit code)
        with self.git(1), mock.patch.object(tools, "ab_build_and_run") as built:
            message = self.exits(tools.GATE_INPUT, tools.gate_ab, "v9", self.out, PYTHON, [])
        self.assertEqual(
            message,
            "gate --ab: 'v9' is not a commit here (a shallow CI clone needs fetch-depth: 0)",
        )
        tree = str(common.root())
        self.assertEqual(
            self.ran,
            [["git", "-C", tree, "rev-parse", "--verify", "--quiet", "v9^{commit}"]],
        )
        built.assert_not_called()
        self.assertFalse(self.out.exists())

    def test_the_scratch_worktree_is_removed_after_the_runs(self) -> None:
        self.out = Path(self.tmp) / "new" / "gate"  # made with its parent; again: kept
        with self.git(0), mock.patch.object(tools, "ab_build_and_run") as built:
            tools.gate_ab("v9", self.out, PYTHON, ["--rounds", "2"])
            tools.gate_ab("v9", self.out, PYTHON, ["--rounds", "2"])
        ref, out, python, options, scratch = built.call_args[0]
        self.assertEqual((ref, out, python, options), ("v9", self.out, PYTHON, ["--rounds", "2"]))
        self.assertTrue(self.out.is_dir())
        self.assertEqual(built.call_count, 2)
        self.assertEqual(scratch.parent, Path(self.tmp))  # under TMPDIR
        self.assertTrue(scratch.name.startswith("torchplace-ab."))
        self.assertFalse(scratch.exists())
        remove = ["git", "-C", str(common.root()), "worktree", "remove", "--force"]
        self.assertEqual(self.ran[-1], remove + [str(scratch / "base")])

    def test_the_scratch_worktree_is_removed_after_a_failure(self) -> None:
        failed = common.Exit(tools.GATE_INPUT, "synthetic")
        with self.git(0), mock.patch.object(tools, "ab_build_and_run", side_effect=failed):
            self.exits(tools.GATE_INPUT, tools.gate_ab, "v9", self.out, PYTHON, [])
        self.assertEqual(self.ran[-1][3:5], ["worktree", "remove"])
        self.assertEqual([path.name for path in Path(self.tmp).iterdir()], ["gate"])

    def test_an_out_that_cannot_be_made(self) -> None:
        blocker = Path(self.tmp) / "file"
        blocker.write_text("synthetic\n", encoding="utf-8")
        with self.git(0), mock.patch.object(tools, "ab_build_and_run") as built:
            message = self.exits(tools.GATE_INPUT, tools.gate_ab, "v9", blocker / "o", PYTHON, [])
        self.assertEqual(message, f"gate: cannot create {blocker}/o")
        built.assert_not_called()


class BuildAndRun(Unbuilt):
    """ab_build_and_run: the worktree, both builds, both binaries, the interleaved runs."""

    def setUp(self) -> None:
        super().setUp()
        self.scratch = Path(self.tmp) / "ab"
        self.stderr = io.StringIO()
        self.build = Path(self.tmp) / "build"
        os.environ["TORCHPLACE_BUILD_DIR"] = str(self.build)
        for folder in (self.scratch / "build", self.build):
            (folder / "scenarios").mkdir(parents=True)
            binary = folder / "scenarios" / "torchplace_bench"
            binary.write_text("#!/bin/sh\n", encoding="utf-8")
            binary.chmod(0o755)

    def ab(self, calls: List[int], builds: List[object], options: List[str]) -> mock.Mock:
        """Runs it with common.call exiting `calls` in turn and common.build raising `builds`."""
        with mock.patch.object(common, "call", side_effect=calls) as call, mock.patch.object(
            common, "build", side_effect=builds
        ) as build, mock.patch.object(common, "ensure_deps") as deps, contextlib.redirect_stderr(
            self.stderr
        ):
            try:
                tools.ab_build_and_run("v9", Path("/synthetic/out"), PYTHON, options, self.scratch)
            finally:
                self.built = build.call_args_list
                self.deps = deps.call_args_list
        return call

    def test_both_sides_are_built_and_run_interleaved(self) -> None:
        call = self.ab([0, 0], [None, None], ["--rounds", "2"])
        add, interleave = (one[0][0] for one in call.call_args_list)
        tree = str(common.root())
        base = str(self.scratch / "base")
        self.assertEqual(add, ["git", "-C", tree, "worktree", "add", "--detach", base, "v9"])
        self.assertEqual(call.call_args_list[0][1], {"stdout": 2})  # git's output to stderr
        self.assertEqual(self.built, [mock.call(Path(base), self.scratch / "build"), mock.call()])
        self.assertEqual(self.deps, [mock.call()])  # the packages both builds need
        self.assertEqual(
            self.stderr.getvalue(),
            f"torchplace: building the baseline (v9) in {self.scratch}/build\n"
            f"torchplace: building the candidate (this tree) in {self.build}\n",
        )
        self.assertEqual(
            interleave,
            [PYTHON, "-m", "torchplace.gate.interleave"]
            + ["--baseline-bin", f"{self.scratch}/build/scenarios/torchplace_bench"]
            + ["--candidate-bin", f"{self.build}/scenarios/torchplace_bench"]
            + ["--out-baseline", "/synthetic/out/ab-baseline.json"]
            + ["--out-candidate", "/synthetic/out/ab-candidate.json", "--rounds", "2"],
        )

    def test_each_failure_names_itself(self) -> None:
        failed = common.Exit(schema.EXIT_BUILD, "synthetic")
        cases = (
            ([1], [], "gate --ab: git worktree add failed for v9"),
            ([0], [failed], "gate --ab: the baseline (v9) does not build"),
            ([0], [None, failed], "gate --ab: the candidate does not build"),
            ([0, 2], [None, None], "gate --ab: running the benchmarks failed"),
        )
        for calls, builds, message in cases:
            with self.subTest(message=message):
                self.assertEqual(self.exits(tools.GATE_INPUT, self.ab, calls, builds, []), message)

    def test_a_candidate_without_a_benchmark_binary(self) -> None:
        (self.build / "scenarios" / "torchplace_bench").unlink()
        message = self.exits(tools.GATE_INPUT, self.ab, [0], [None, None], [])
        self.assertEqual(message, "gate --ab: this tree built no torchplace_bench")


class Installed(Unbuilt):
    """The installed command (no source tree): what `gate` refuses, and what it lets through."""

    def gate(self, args: List[str]) -> List[str]:
        with mock.patch.object(common, "is_source_tree", return_value=False), mock.patch.object(
            common, "python_with", return_value=PYTHON
        ), mock.patch.object(os, "execv") as execv:
            tools.gate(list(args))
        return list(execv.call_args[0][1][3:])

    def refused(self, args: List[str]) -> str:
        with mock.patch.object(common, "is_source_tree", return_value=False):
            return self.exits(tools.GATE_INPUT, tools.gate, list(args))

    def test_refusals(self) -> None:
        self.assertIn("the installed command cannot", self.refused(["--ab", "v9"]))
        for judged in ("--results", "--refresh-expectations"):
            message = self.refused([judged, "r"])
            self.assertIn("gate: give --expectations FILE (your project's own;", message)

    def test_what_it_lets_through(self) -> None:
        args = ["--results", "r", "--expectations", "e.json"]
        self.assertEqual(self.gate(args), args)
        self.assertEqual(self.gate(["--baseline", "b"]), ["--baseline", "b"])

    def test_help_is_printed_and_nothing_runs(self) -> None:
        with mock.patch("builtins.print") as printed, mock.patch.object(
            common, "python_with"
        ) as python, mock.patch.object(os, "execv") as execv:
            self.assertEqual(tools.gate(["-h", "--baseline", "b"]), schema.EXIT_OK)
        printed.assert_called_once_with(tools.GATE_HELP)
        python.assert_not_called()
        execv.assert_not_called()

    def test_every_ab_option_reaches_the_runs(self) -> None:
        args = ["--ab", "v9", "--rounds", "3", "--batch", "2", "--filter", "Copy", "--out", "o"]
        with mock.patch.object(tools, "gate_ab") as ab, mock.patch.object(
            common, "python_with", return_value=PYTHON
        ), mock.patch.object(os, "execv"):
            tools.gate(args + ["--min-time", "0.2"])  # in the source tree
        options = ["--rounds", "3", "--batch", "2", "--filter", "Copy", "--min-time", "0.2"]
        ab.assert_called_once_with("v9", Path("o"), PYTHON, options)

    def test_no_install_is_taken_not_passed_on(self) -> None:
        os.environ.pop("TORCHPLACE_NO_INSTALL", None)
        self.assertEqual(self.gate(["--no-install", "--baseline", "b"]), ["--baseline", "b"])
        self.assertEqual(os.environ["TORCHPLACE_NO_INSTALL"], "1")


class Explain(Unbuilt):
    def setUp(self) -> None:
        super().setUp()
        self.root = Path(self.tmp)
        os.environ["TORCHPLACE_BUILD_DIR"] = str(self.root / "build")

    def classifier(self, source_tree: bool, calls: List[int]) -> "tuple[object, list]":
        with mock.patch.object(common, "root", return_value=self.root), mock.patch.object(
            common, "is_source_tree", return_value=source_tree
        ), mock.patch.object(common, "call", side_effect=calls) as call:
            found = tools.explain_classifier()
        return found, call.call_args_list

    def test_an_installed_classifier_is_used_as_it_is(self) -> None:
        installed = self.root / "bin" / "torchplace_classify"
        installed.parent.mkdir()
        installed.write_text("#!/bin/sh\n", encoding="utf-8")
        installed.chmod(0o755)
        self.assertEqual(self.classifier(True, []), (str(installed), []))

    def test_without_a_source_tree_there_is_none(self) -> None:
        self.assertEqual(self.classifier(False, []), (None, []))

    def test_a_configured_build_is_not_configured_again(self) -> None:
        (self.root / "build").mkdir()
        (self.root / "build" / "CMakeCache.txt").write_text("synthetic\n", encoding="utf-8")
        found, argvs = self.classifier(True, [0])
        self.assertEqual(found, f"{self.root}/build/harness/torchplace_classify")
        target = ["cmake", "--build", f"{self.root}/build", "--target", "torchplace_classify"]
        self.assertEqual(argvs, [mock.call(target, stdout=2)])  # cmake's output to stderr

    def test_a_failed_configure_is_no_classifier(self) -> None:
        found, argvs = self.classifier(True, [1])
        self.assertIsNone(found)
        configure = ["cmake", "-S", self.tmp, "--preset", "ci", "-B", f"{self.root}/build"]
        self.assertEqual(argvs, [mock.call(configure, stdout=2)])

    def test_no_python(self) -> None:
        os.environ["TORCHPLACE_PYTHON"] = "/synthetic/missing/python3"
        with mock.patch.object(tools.shutil, "which", return_value=None), mock.patch.object(
            os, "execv"
        ) as execv:
            message = self.exits(schema.EXIT_ENV, tools.explain, ["log.txt"])
        self.assertEqual(message, "explain: no python3 found (set TORCHPLACE_PYTHON)")
        execv.assert_not_called()

    def test_python3_on_the_path_when_there_is_no_other(self) -> None:
        os.environ["TORCHPLACE_CLASSIFY"] = "/synthetic/classify"
        os.environ["TORCHPLACE_PYTHON"] = "/synthetic/missing/python3"
        found = {"python3": "/synthetic/path/python3"}
        with mock.patch.object(tools.shutil, "which", side_effect=found.get), mock.patch.object(
            os, "execv"
        ) as execv:
            tools.explain([])
        python = "/synthetic/path/python3"
        execv.assert_called_once_with(python, [python, "-m", "torchplace.explain"])

    def test_a_given_classifier_is_not_looked_for(self) -> None:
        os.environ["TORCHPLACE_CLASSIFY"] = "/synthetic/classify"
        os.environ.pop("TORCHPLACE_PYTHON", None)
        with mock.patch.object(tools, "explain_classifier") as look, mock.patch.object(
            tools.shutil, "which", side_effect=lambda name: f"/found{name}"
        ), mock.patch.object(os, "execv") as execv:
            tools.explain(["log.txt"])
        look.assert_not_called()
        python = "/found/usr/bin/python3"
        execv.assert_called_once_with(python, [python, "-m", "torchplace.explain", "log.txt"])


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0], *sys.argv[1:], "-v"])
