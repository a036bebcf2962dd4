#!/usr/bin/env python3
"""The command (`ci/torchplace` -> `python3 -m torchplace`, torchplace.command) with fakes, nothing
built: a SIGTERM is a clean exit 3 that ends the suite it ran; a run's steps and outcome land in
run.json (a binary that writes no results, a budget that cuts a step); the installed command's
restrictions; `test` asks tp_ensure_deps for TP_CHECK_PACKAGES; the GPU machine's steps and the
tools' checks, in process with mocks. Fake binaries are shell scripts made here; their output is
synthetic. A test written to kill a generated mutant (ci/mutation/README.md) names it.

  test_command.py [CLASS]      (CTest: command.*)
"""
import contextlib
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path
from typing import Dict, List
from unittest import mock

from torchplace import schema
from torchplace.command import common, conformance, gpu, matrix, run, tools

TORCHPLACE = str(schema.ROOT / "ci" / "torchplace")


# A fake Google Benchmark binary: one synthetic benchmark, written where --benchmark_out says.
FAKE_BENCH = (
    'for arg; do case "$arg" in --benchmark_out=*) out="${arg#--benchmark_out=}";; esac; done\n'
    'echo \'{"context": {"note": "synthetic"}, "benchmarks": [{"name": "%s"}]}\' >"$out"'
)


def write_script(path: str, body: str) -> str:
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("#!/bin/sh\n" + body + "\n")
    os.chmod(path, 0o755)
    return path


class Scratch(unittest.TestCase):
    def setUp(self) -> None:
        self.tmp = tempfile.mkdtemp(prefix="torchplace-command-")
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def command(self, *args: str, timeout: int = 120, **env: str) -> subprocess.CompletedProcess:
        environment = dict(os.environ, TORCHPLACE_NO_INSTALL="1", **env)
        return subprocess.run(
            [TORCHPLACE, *args], capture_output=True, text=True, env=environment, timeout=timeout
        )

    def steps(self, out: str) -> Dict[str, dict]:
        with open(os.path.join(out, "run.json"), encoding="utf-8") as handle:
            return dict(json.load(handle)["steps"])


class Signals(Scratch):
    def test_sigterm_ends_the_suite_and_exits_3(self) -> None:
        marker = os.path.join(self.tmp, "suite.pid")
        suite = write_script(os.path.join(self.tmp, "suite"), f"echo $$ >{marker}; exec sleep 300")
        out = os.path.join(self.tmp, "out")
        child = subprocess.Popen(
            [TORCHPLACE, "run", "--suite", suite, "--out", out],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env=dict(os.environ, TORCHPLACE_NO_INSTALL="1"),
        )
        deadline = time.monotonic() + 60
        while not os.path.exists(marker):
            self.assertIsNone(child.poll(), "the command ended before the suite started")
            self.assertLess(time.monotonic(), deadline, "the suite never started")
            time.sleep(0.05)
        time.sleep(0.2)
        with open(marker, encoding="utf-8") as handle:
            suite_pid = int(handle.read())
        child.send_signal(signal.SIGTERM)
        _, err = child.communicate(timeout=30)
        self.assertEqual(child.returncode, schema.EXIT_ENV, err)
        self.assertIn(b"SIGTERM", err)
        self.assertNotIn(b"Traceback", err)
        time.sleep(0.2)
        alive = (
            os.path.exists(f"/proc/{suite_pid}")
            and b"sleep" in open(f"/proc/{suite_pid}/cmdline", "rb").read()
        )
        if alive:
            os.kill(suite_pid, signal.SIGKILL)
        self.assertFalse(alive, "the suite outlived the command")


class RunRecord(Scratch):
    def test_a_suite_without_results(self) -> None:
        suite = write_script(os.path.join(self.tmp, "suite"), "exit 0")
        out = os.path.join(self.tmp, "out")
        done = self.command("run", "--suite", suite, "--out", out)
        self.assertEqual(done.returncode, schema.EXIT_FAIL, done.stderr)
        self.assertIn("did not write", done.stderr)
        steps = self.steps(out)
        self.assertEqual(steps["scenarios"]["status"], "no_results")
        self.assertEqual(steps["bench"]["status"], "absent")
        self.assertEqual(steps["outcome"]["status"], "failed")
        self.assertIn("no_results", steps["outcome"]["problems"])

    def test_a_crash_keeps_its_code(self) -> None:
        # writes a (synthetic, empty) results file, then dies as a segfault would report
        body = 'echo "{}" >"${1#--torchplace_results=}"; exit 139'
        suite = write_script(os.path.join(self.tmp, "suite"), body)
        out = os.path.join(self.tmp, "out")
        self.command("run", "--suite", suite, "--out", out)
        steps = self.steps(out)
        self.assertEqual(steps["scenarios"]["exit"], 139)
        self.assertEqual(steps["scenarios"]["status"], "crashed")
        self.assertIn("crashed", steps["outcome"]["problems"])

    def test_the_cuda_cells_run_in_a_process_of_their_own(self) -> None:
        # a synthetic suite: one cell per process, named after the filter it was given
        body = (
            'case "$3" in --gtest_filter=-*) id=cpu;; --gtest_filter=*cuda*) id=cuda:0;; esac; '
            'echo "{\\"cells\\": [{\\"id\\": \\"$id\\"}]}" >"${1#--torchplace_results=}"'
        )
        suite = write_script(os.path.join(self.tmp, "suite"), body)
        out = os.path.join(self.tmp, "out")
        self.command("run", "--suite", suite, "--out", out)
        with open(os.path.join(out, "results.json"), encoding="utf-8") as handle:
            cells = [cell["id"] for cell in json.load(handle)["cells"]]
        self.assertEqual(cells, ["cpu", "cuda:0"])
        self.assertFalse(os.path.exists(os.path.join(out, "results-cuda.json")))

    def test_failed_cells_only(self) -> None:
        body = 'echo "{}" >"${1#--torchplace_results=}"; exit 1'
        suite = write_script(os.path.join(self.tmp, "suite"), body)
        out = os.path.join(self.tmp, "out")
        done = self.command("run", "--suite", suite, "--out", out)
        self.assertEqual(done.returncode, schema.EXIT_FAIL, done.stderr)
        steps = self.steps(out)
        self.assertEqual(steps["scenarios"]["status"], "cells_failed")
        # the report of an empty results file fails, so the outcome names the report, not cells
        self.assertEqual(steps["outcome"]["status"], "failed")
        self.assertNotIn("scenarios", steps["outcome"]["problems"])

    def test_a_budget_cuts_the_suite(self) -> None:
        suite = write_script(os.path.join(self.tmp, "suite"), "exec sleep 60")
        bench = write_script(os.path.join(self.tmp, "bench"), "exit 0")
        out = os.path.join(self.tmp, "out")
        start = time.monotonic()
        done = self.command(
            "run", "--suite", suite, "--bench", bench, "--out", out, "--budget-s", "6"
        )
        self.assertLess(time.monotonic() - start, 40, "the run outlived its budget")
        self.assertEqual(done.returncode, schema.EXIT_BUDGET, done.stdout + done.stderr)
        steps = self.steps(out)
        self.assertEqual(steps["scenarios"]["status"], "cut")
        self.assertEqual(steps["bench"]["status"], "not_run")
        self.assertEqual(steps["report"]["status"], "not_run")
        self.assertEqual(steps["outcome"]["exit"], schema.EXIT_BUDGET)
        self.assertEqual(steps["outcome"]["status"], "cut")
        self.assertIn("scenarios, bench, report cut or not run", steps["outcome"]["problems"])
        with open(os.path.join(out, "not_run.txt"), encoding="utf-8") as handle:
            self.assertIn("scenarios: cut by the budget", handle.read())

    def test_a_bench_that_ran_is_recorded(self) -> None:
        # kills reports/torchplace/command/run.py:bench_step:0e327a:delete_stmt:0 (the bench
        # step's record in run.json not written)
        body = 'echo \'{"cells": []}\' >"${1#--torchplace_results=}"'  # synthetic: no cells
        suite = write_script(os.path.join(self.tmp, "suite"), body)
        bench = write_script(os.path.join(self.tmp, "bench"), FAKE_BENCH % "synthetic/one")
        out = os.path.join(self.tmp, "out")
        done = self.command("run", "--suite", suite, "--bench", bench, "--out", out)
        self.assertTrue(os.path.isfile(os.path.join(out, "bench.json")), done.stderr)
        bench_step = self.steps(out).get("bench", {})
        self.assertEqual(bench_step.get("status"), "ran", done.stderr)
        self.assertEqual(bench_step.get("exit"), 0, done.stderr)

    def test_bad_budgets(self) -> None:
        for budget in ("0", "ten", "-5"):
            with self.subTest(budget=budget):
                done = self.command("run", "--suite", "/bin/true", "--budget-s", budget)
                self.assertEqual(done.returncode, schema.EXIT_USAGE, done.stderr)


class Installed(Scratch):
    """The installed layout (share/torchplace: ci/torchplace and reports/torchplace, no source
    tree) refuses what needs the tree."""

    def setUp(self) -> None:
        super().setUp()
        share = os.path.join(self.tmp, "share", "torchplace")
        os.makedirs(os.path.join(share, "ci"))
        shutil.copy(TORCHPLACE, os.path.join(share, "ci", "torchplace"))
        shutil.copytree(
            schema.ROOT / "reports" / "torchplace",
            os.path.join(share, "reports", "torchplace"),
            ignore=shutil.ignore_patterns("__pycache__"),
        )
        self.installed = os.path.join(share, "ci", "torchplace")

    def installed_command(self, *args: str) -> subprocess.CompletedProcess:
        env = dict(os.environ, TORCHPLACE_NO_INSTALL="1", PYTHONPATH="")
        return subprocess.run(
            [self.installed, *args], capture_output=True, text=True, env=env, timeout=60
        )

    def test_the_source_tree_commands(self) -> None:
        for name in ("test", "matrix", "mutate"):
            with self.subTest(command=name):
                done = self.installed_command(name)
                self.assertEqual(done.returncode, schema.EXIT_USAGE, done.stderr)
                self.assertIn("needs the torchplace source tree", done.stderr)

    def test_run_needs_a_suite(self) -> None:
        done = self.installed_command("run")
        self.assertEqual(done.returncode, schema.EXIT_USAGE, done.stderr)
        self.assertIn("give --suite BIN", done.stderr)

    def test_gate_refuses_ab_and_wants_expectations(self) -> None:
        done = self.installed_command("gate", "--ab", "HEAD")
        self.assertEqual(done.returncode, schema.EXIT_INPUT, done.stderr)
        done = self.installed_command("gate", "--results", self.tmp)
        self.assertEqual(done.returncode, schema.EXIT_INPUT, done.stderr)
        self.assertIn("give --expectations FILE", done.stderr)


class TestDeps(Scratch):
    """`test` gives tp_ensure_deps the lint tools and hypothesis (TP_CHECK_PACKAGES): with every
    package reported missing and apt failing, the packages it wanted are named."""

    def test_check_packages_are_asked_for(self) -> None:
        fakes = os.path.join(self.tmp, "bin")
        os.makedirs(fakes)
        write_script(os.path.join(fakes, "dpkg-query"), "exit 1")
        write_script(
            os.path.join(fakes, "apt-get"), "echo 'E: synthetic apt failure' >&2; exit 100"
        )
        env = dict(os.environ, PATH=f"{fakes}:{os.environ['PATH']}")
        env.pop("TORCHPLACE_NO_INSTALL", None)
        child = subprocess.Popen(
            [TORCHPLACE, "test"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            start_new_session=True,  # on a timeout, the whole group goes (a build, were it to run)
        )
        try:
            _, stderr = child.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            os.killpg(child.pid, signal.SIGKILL)
            child.communicate()
            self.fail("`test` went on past a failed apt-get (no pipefail?)")
        done = subprocess.CompletedProcess(child.args, child.returncode, "", stderr)
        self.assertEqual(done.returncode, schema.EXIT_ENV, done.stderr)
        for package in ("libtorch-dev", "clang-format", "shellcheck", "black", "flake8", "mypy"):
            self.assertIn(package, done.stderr)
        self.assertIn("python3-hypothesis", done.stderr)


class GpuSteps(Scratch):
    """`run --gpu`'s own steps (torchplace.command.gpu), in process: the environment patched and
    restored, the benchmark binary a fake."""

    def test_a_named_libtorch_is_kept(self) -> None:
        # kills reports/torchplace/command/gpu.py:find_libtorch:019f85:delete_stmt:0 (python3's
        # pip torch asked for and put over the LibTorch the caller named)
        for name in ("Torch_DIR", "CMAKE_PREFIX_PATH"):
            with self.subTest(named=name), mock.patch.dict(os.environ):
                for variable in ("Torch_DIR", "CMAKE_PREFIX_PATH"):
                    os.environ.pop(variable, None)
                os.environ[name] = "/synthetic/libtorch"
                with mock.patch.object(gpu, "torch_info", return_value="/synthetic/pip") as info:
                    gpu.find_libtorch()
                info.assert_not_called()
                self.assertEqual(os.environ[name], "/synthetic/libtorch")
                if name == "Torch_DIR":
                    self.assertNotIn("CMAKE_PREFIX_PATH", os.environ)

    def test_without_a_named_libtorch_pips_prefix_is_the_cmake_prefix_path(self) -> None:
        # a helper's hand-made slip survived: the pip torch's prefix put in Torch_DIR instead
        with mock.patch.dict(os.environ):
            for variable in ("Torch_DIR", "CMAKE_PREFIX_PATH"):
                os.environ.pop(variable, None)
            with mock.patch.object(gpu, "torch_info", return_value="/synthetic/pip/share/cmake"):
                gpu.find_libtorch()
            self.assertEqual(os.environ.get("CMAKE_PREFIX_PATH"), "/synthetic/pip/share/cmake")
            self.assertNotIn("Torch_DIR", os.environ)

    def test_the_rest_benchmarks_are_merged_into_bench_json(self) -> None:
        # kills reports/torchplace/command/gpu.py:bench_rest_step:925787:delete_branch:0
        # (bench-rest.json left beside bench.json, not merged into it)
        build = os.path.join(self.tmp, "build")
        os.makedirs(os.path.join(build, "scenarios"))
        write_script(os.path.join(build, "scenarios", "torchplace_bench"), FAKE_BENCH % "rest")
        out = Path(self.tmp) / "out"
        out.mkdir()
        headline = {"context": {"note": "synthetic"}, "benchmarks": [{"name": "headline"}]}
        (out / "bench.json").write_text(json.dumps(headline), encoding="utf-8")
        with open(os.path.join(self.tmp, "bench-rest.log"), "w") as log_file, mock.patch.dict(
            os.environ, TORCHPLACE_BUILD_DIR=build
        ):
            code = gpu.bench_rest_step(run.Options(out), log_file)
        self.assertEqual(code, schema.EXIT_OK)
        with open(out / "bench.json", encoding="utf-8") as handle:
            names = [row["name"] for row in json.load(handle)["benchmarks"]]
        self.assertEqual(names, ["headline", "rest"])
        self.assertEqual(self.steps(str(out))["bench_rest"]["status"], "ran")


class Checks(Scratch):
    """`conformance` and `matrix`: what they refuse or do before any tool runs, in process."""

    def test_conformance_without_the_build_says_build_first(self) -> None:
        # kills reports/torchplace/command/conformance.py:command:da35a5:arg_swap:0 (the message
        # passed as the exit code: exit 1, not 3)
        with mock.patch.object(common, "build_dir", return_value=Path(self.tmp)):
            with self.assertRaises(common.Exit) as caught:
                conformance.command([])
        self.assertEqual(caught.exception.code, schema.EXIT_ENV)
        self.assertIn("is missing: build first", str(caught.exception.message))

    def test_conformance_options_go_to_the_environment_not_the_sweep(self) -> None:
        # --torch and --packages make the venv (environment.py); the sweep gets the rest, and the
        # venv's installed torchplace is run, not this checkout's (PYTHONPATH dropped)
        python = "/synthetic/torch-2.13.0/bin/python"
        made = subprocess.CompletedProcess([], 0, stdout=f"a log line\n{python}\n")
        with mock.patch.dict(os.environ, TORCHPLACE_VENVS=self.tmp, PYTHONPATH="/synthetic"):
            with mock.patch.object(
                subprocess, "run", return_value=made
            ) as made_by, mock.patch.object(os, "execv") as execv:
                conformance.command(["--torch", "2.13.0", "--ops", "--packages", "tv==0.29.1"])
            self.assertNotIn("PYTHONPATH", os.environ)
        argv = made_by.call_args[0][0]
        self.assertEqual(argv[3], os.path.join(self.tmp, "torch-2.13.0"))
        self.assertEqual(argv[4:], ["--torch", "2.13.0", "--packages", "tv==0.29.1"])
        execv.assert_called_once_with(python, [python, "-m", "torchplace.conformance", "--ops"])

    def test_matrix_columns_only_makes_each_chosen_column(self) -> None:
        # kills reports/torchplace/command/matrix.py:command:e5cb99:delete_stmt:0 (no column made)
        out = os.path.join(self.tmp, "columns")
        with mock.patch.object(os, "geteuid", return_value=0), mock.patch.object(
            common, "call", return_value=0
        ) as call:
            code = matrix.command(
                ["--versions", "1.13.1", "--cuda-compile", "--columns-only", "--out", out]
            )
        self.assertEqual(code, schema.EXIT_OK)
        made = [arguments[0][2] for arguments, _ in call.call_args_list]
        self.assertEqual(made, ["1.13.1", "cuda"])

    def test_matrix_says_when_its_report_could_not_be_rendered(self) -> None:
        # kills reports/torchplace/command/matrix.py:finish:35291f:delete_stmt:0: the report's
        # failure does not change the exit (the status check's), so the line is all a user sees
        codes = {"torchplace.matrix.merge": 0, "torchplace": 5, "torchplace.matrix.status": 0}
        with mock.patch.object(
            common, "call", side_effect=lambda argv: codes[argv[2]]
        ), contextlib.redirect_stderr(io.StringIO()) as stderr:
            code = matrix.finish(Path(self.tmp), False, ["1.13.1"])
        self.assertEqual(code, schema.EXIT_OK)
        self.assertIn("matrix: the report could not be rendered (exit 5)", stderr.getvalue())

    def test_matrix_cuda_only_makes_the_cuda_column_alone(self) -> None:
        # a helper's hand-made slip survived: --cuda-only that forgot to set cuda made no column
        out = os.path.join(self.tmp, "cuda")
        with mock.patch.object(os, "geteuid", return_value=0), mock.patch.object(
            common, "call", return_value=0
        ) as call:
            code = matrix.command(
                ["--versions", "1.13.1", "--cuda-only", "--columns-only", "--out", out]
            )
        self.assertEqual(code, schema.EXIT_OK)
        self.assertEqual([arguments[0][2] for arguments, _ in call.call_args_list], ["cuda"])


class Tools(Scratch):
    """`report` and `gate --ab` (torchplace.command.tools): their checks before any tool runs."""

    def test_report_takes_one_in_dir(self) -> None:
        # kills reports/torchplace/command/tools.py:report:1956c1:delete_stmt:0 (a second IN_DIR
        # silently ignored)
        first, second = os.path.join(self.tmp, "first"), os.path.join(self.tmp, "second")
        os.makedirs(first)
        os.makedirs(second)
        done = self.command("report", first, second)
        self.assertEqual(done.returncode, schema.EXIT_USAGE, done.stderr)
        self.assertIn("one IN_DIR only", done.stderr)

    def test_ab_without_a_baseline_benchmark_binary(self) -> None:
        # kills reports/torchplace/command/tools.py:ab_build_and_run:156661:delete_branch:0 (a
        # baseline that built no torchplace_bench compared all the same)
        build = os.path.join(self.tmp, "build")
        os.makedirs(os.path.join(build, "scenarios"))
        write_script(os.path.join(build, "scenarios", "torchplace_bench"), "exit 0")
        scratch = Path(self.tmp) / "ab"  # its build/scenarios/torchplace_bench is missing
        with mock.patch.dict(os.environ, TORCHPLACE_BUILD_DIR=build), mock.patch.object(
            common, "call", return_value=0
        ) as call, mock.patch.object(common, "ensure_deps"), mock.patch.object(common, "build"):
            with self.assertRaises(common.Exit) as caught:
                tools.ab_build_and_run("HEAD", Path(self.tmp), sys.executable, [], scratch)
        self.assertEqual(caught.exception.code, tools.GATE_INPUT)
        self.assertIn("has no torchplace_bench", str(caught.exception.message))
        self.assertEqual(call.call_count, 1, "only `git worktree add` may run, no benchmarks")


def main(argv: List[str]) -> None:
    unittest.main(argv=[sys.argv[0], *argv, "-v"])


if __name__ == "__main__":
    main(sys.argv[1:])
