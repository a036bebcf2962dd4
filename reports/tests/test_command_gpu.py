#!/usr/bin/env python3
"""`run --gpu`'s preflight, steps and gate (torchplace.command.gpu) in process: which LibTorch and
nvcc it takes or refuses (exit 3, with the reason), .deps' libstdc++ check, the plan's steps and
how the behaviour gate's exit ranks against the run's. Processes, nvcc releases and libraries are
mocked or synthetic; nothing is built or run.

  test_command_gpu.py [CLASS]      (CTest: command.gpu)
"""
import io
import os
import shutil
import subprocess
import sys
import unittest
from pathlib import Path
from typing import Dict, List
from unittest import mock

import command_scratch
from torchplace import schema
from torchplace.command import common, gpu, run

LOCAL = "/usr/local/cuda/bin/nvcc"


class Scratch(command_scratch.Scratch):
    def setUp(self) -> None:
        super().setUp()
        for variable in ("Torch_DIR", "CMAKE_PREFIX_PATH", "CUDACXX", "TORCHPLACE_CMAKE_ARGS"):
            os.environ.pop(variable, None)


class LibTorch(Scratch):
    def test_no_python3_and_a_failed_probe_are_no_torch(self) -> None:
        with mock.patch.object(shutil, "which", return_value=None):
            self.assertEqual(gpu.torch_info("cuda"), "")
        failed = subprocess.CompletedProcess([], 1, stdout="12.4\n")
        with mock.patch.object(subprocess, "run", return_value=failed):
            self.assertEqual(gpu.torch_info("cuda"), "")
        passed = subprocess.CompletedProcess([], 0, stdout="12.4\n")
        with mock.patch.object(subprocess, "run", return_value=passed):
            self.assertEqual(gpu.torch_info("cuda"), "12.4")

    def test_no_libtorch_at_all_is_exit_3(self) -> None:
        with mock.patch.object(gpu, "torch_info", return_value=""):
            message = self.exits(schema.EXIT_ENV, gpu.find_libtorch)
        self.assertIn("no LibTorch", message)
        self.assertNotIn("CMAKE_PREFIX_PATH", os.environ)


class Nvcc(Scratch):
    """find_nvcc with synthetic nvcc paths: `releases` is what each says, `torch` python3's
    torch's CUDA release and CMake prefix."""

    def find(self, releases: Dict[str, str], cuda: str, prefix: str = "/pip") -> mock.Mock:
        info = {"cuda": cuda, "cmake_prefix_path": prefix}
        path_nvcc = "/synthetic/path/nvcc"
        with mock.patch.object(gpu, "torch_info", side_effect=info.get), mock.patch.object(
            gpu, "nvcc_release", side_effect=releases.get
        ), mock.patch.object(
            shutil, "which", return_value=path_nvcc if path_nvcc in releases else None
        ), mock.patch.object(
            os, "access", side_effect=lambda path, _mode: path in releases
        ), mock.patch.object(
            gpu, "toolkit_args", return_value="-DSYNTHETIC=1"
        ) as toolkit:
            gpu.find_nvcc()
        return toolkit

    def test_another_libtorch_is_not_compared(self) -> None:
        os.environ["Torch_DIR"] = "/synthetic/libtorch"  # not python3's torch at /pip
        os.environ["CUDACXX"] = "/synthetic/cudacxx"
        toolkit = self.find({"/synthetic/cudacxx": "12.4"}, cuda="13.0")
        toolkit.assert_called_once_with("/synthetic/cudacxx", False)
        self.assertEqual(os.environ["TORCHPLACE_CMAKE_ARGS"].split(), ["-DSYNTHETIC=1"])

    def test_a_wrong_release_is_passed_over_for_the_right_one(self) -> None:
        os.environ["CMAKE_PREFIX_PATH"] = "/pip"
        releases = {LOCAL: "12.4", "/synthetic/path/nvcc": "13.0"}
        toolkit = self.find(releases, cuda="13.0")
        toolkit.assert_called_once_with("/synthetic/path/nvcc", True)

    def test_a_wrong_cudacxx_is_refused(self) -> None:
        os.environ["CMAKE_PREFIX_PATH"] = "/pip"
        os.environ["CUDACXX"] = "/synthetic/cudacxx"
        releases = {"/synthetic/cudacxx": "12.4", "/synthetic/path/nvcc": "13.0"}
        message = self.exits(schema.EXIT_ENV, self.find, releases, "13.0")
        self.assertIn("CUDACXX=/synthetic/cudacxx is CUDA 12.4", message)

    def test_only_wrong_releases_are_named(self) -> None:
        os.environ["CMAKE_PREFIX_PATH"] = "/pip"
        releases = {LOCAL: "12.4", "/synthetic/path/nvcc": ""}
        message = self.exits(schema.EXIT_ENV, self.find, releases, "13.0")
        self.assertIn("no nvcc of that release was found", message)
        self.assertIn(f"{LOCAL} (CUDA 12.4) /synthetic/path/nvcc (CUDA unknown)", message)

    def test_no_nvcc_is_refused_for_a_cuda_torch_only(self) -> None:
        os.environ["CMAKE_PREFIX_PATH"] = "/pip"
        message = self.exits(schema.EXIT_ENV, self.find, {}, "13.0")
        self.assertIn("no nvcc in CUDACXX", message)
        self.find({}, cuda="").assert_not_called()  # a CPU torch needs none
        self.assertNotIn("TORCHPLACE_CMAKE_ARGS", os.environ)

    def test_a_cpu_torch_gets_only_the_compiler(self) -> None:
        nvcc = Path(self.tmp) / "cuda" / "bin" / "nvcc"  # no headers, no nvrtc beside it
        with mock.patch.object(gpu, "torch_info") as info:
            args = gpu.toolkit_args(str(nvcc), torch_is_cuda=False)
        info.assert_not_called()
        self.assertEqual(
            args, f"-DCMAKE_CUDA_COMPILER={nvcc} -DCUDA_TOOLKIT_ROOT_DIR={Path(self.tmp) / 'cuda'}"
        )


class DepsRuntime(Scratch):
    """.deps' libbenchmark against this machine's libstdc++ (both synthetic byte strings)."""

    def check(self, needs: bytes, has: bytes) -> None:
        lib = Path(self.tmp) / "usr" / "lib" / "x86_64-linux-gnu"
        lib.mkdir(parents=True)
        (lib / "libbenchmark.so.1.8").write_bytes(b"\0" + needs + b"\0")
        libstdcxx = Path(self.tmp) / "libstdc++.so.6"
        libstdcxx.write_bytes(b"\0" + has + b"\0")
        printed = subprocess.CompletedProcess([], 0, stdout=f"{libstdcxx}\n".encode())
        with mock.patch.object(shutil, "which", return_value="/synthetic/c++"), mock.patch.object(
            subprocess, "run", return_value=printed
        ):
            gpu.check_deps_runtime(Path(self.tmp))

    def test_the_newest_symbol_is_compared_by_number(self) -> None:
        needs = b"GLIBCXX_3.4.9\0GLIBCXX_3.4.30\0GLIBCXX_3.4.29"
        message = self.exits(schema.EXIT_ENV, self.check, needs, b"GLIBCXX_3.4.9\0GLIBCXX_3.4.29")
        self.assertIn("needs GLIBCXX_3.4.30", message)
        self.assertIn("prepare-deps.sh", message)

    def test_a_new_enough_libstdcxx_passes(self) -> None:
        self.check(b"GLIBCXX_3.4.9\0GLIBCXX_3.4.30", b"GLIBCXX_3.4.9\0GLIBCXX_3.4.30")

    def test_what_cannot_be_judged_is_not_refused(self) -> None:
        with mock.patch.object(shutil, "which") as which:
            gpu.check_deps_runtime(Path(self.tmp))  # no .deps: the compiler is not asked
        which.assert_not_called()
        with mock.patch.object(Path, "is_file", return_value=False) as is_file:
            self.check(b"GLIBCXX_3.4.30", b"")  # the compiler names no libstdc++ file
        is_file.assert_called_once_with()


class Preflight(Scratch):
    def test_deps_join_the_prefix_and_the_gpus_are_listed(self) -> None:
        root = Path(self.tmp)
        (root / ".deps" / "usr").mkdir(parents=True)
        os.environ["CMAKE_PREFIX_PATH"] = "/synthetic/libtorch"
        smi = subprocess.CompletedProcess([], 0, stdout="name\nSynthetic GPU\n")
        with mock.patch.object(common, "root", return_value=root), mock.patch.object(
            gpu, "find_nvcc"
        ) as nvcc, mock.patch.object(gpu, "check_deps_runtime") as deps, mock.patch.object(
            shutil, "which", return_value="/synthetic/nvidia-smi"
        ), mock.patch.object(
            subprocess, "run", return_value=smi
        ), mock.patch(
            "sys.stdout", new_callable=io.StringIO
        ):
            gpu.preflight(root)
        self.assertEqual(os.environ["CMAKE_PREFIX_PATH"], f"/synthetic/libtorch:{root}/.deps/usr")
        nvcc.assert_called_once_with()
        deps.assert_called_once_with(root / ".deps")
        self.assertEqual((root / "gpu.csv").read_text(encoding="utf-8"), smi.stdout)


class Steps(Scratch):
    def test_the_probe_runs_only_when_it_built(self) -> None:
        os.environ["TORCHPLACE_BUILD_DIR"] = "/synthetic/build"
        out = Path(self.tmp)
        with mock.patch.object(gpu, "run_process", side_effect=[0, 6]) as ran:
            self.assertEqual(gpu.probe_step(out, None), 6)
        probe = ran.call_args_list[1][0][0]
        self.assertEqual(
            probe, ["/synthetic/build/ci/torchplace_message_probe", f"{out}/messages.json"]
        )
        with mock.patch.object(gpu, "run_process", side_effect=[2]) as ran:
            self.assertEqual(gpu.probe_step(out, None), 2)
        self.assertEqual(ran.call_count, 1, "a probe that did not build is not run")

    def test_rest_benchmarks_that_cannot_be_merged_fail_the_step(self) -> None:
        out = Path(self.tmp)
        (out / "bench.json").write_text('{"benchmarks": []}', encoding="utf-8")
        (out / "bench-rest.json").write_text("not json (synthetic)", encoding="utf-8")
        with mock.patch.object(run, "bench_step", return_value=0), mock.patch.object(
            gpu, "log"
        ) as logged:
            self.assertEqual(gpu.bench_rest_step(run.Options(out), None), schema.EXIT_FAIL)
        self.assertIn("cannot merge", logged.call_args[0][0])

    def test_the_plan(self) -> None:
        os.environ.pop("TORCHPLACE_GPU_STEP", None)
        options = run.Options(Path(self.tmp))
        plan = gpu.plan(options)
        self.assertEqual([step.name for step in plan], list(gpu.STEPS))
        self.assertEqual([step.name for step in plan if step.ends_run_on_failure], ["build"])
        recorded = [step.name for step in plan if step.records]
        self.assertEqual(recorded, ["build", "scenarios", "bench", "report", "bench_rest"])
        actions = {step.name: step.action for step in plan}
        with mock.patch.object(gpu, "ctest_step", return_value=0) as ctest:
            actions["cuda_tests"](None)
            actions["tests"](None)
        self.assertEqual(
            [call[0][1:3] for call in ctest.call_args_list],
            [("ctest-cuda", ["-L", "cuda"]), ("ctest", ["-LE", "bench|cuda|mutation"])],
        )
        with mock.patch.object(run, "bench_step", return_value=0) as bench:
            actions["bench"](None)
        self.assertEqual(bench.call_args[0][1:4], (options, "bench", gpu.REDUCED))


class Gate(Scratch):
    def gate(self, status: int, gate_status: int) -> List[str]:
        out = Path(self.tmp)
        (out / "results.json").write_text("{}", encoding="utf-8")  # synthetic: no cells
        with mock.patch.object(common, "call", return_value=gate_status) as call, mock.patch.object(
            gpu.steps, "pack"
        ), mock.patch("sys.stdout", new_callable=io.StringIO):
            self.assertEqual(gpu.gate(out, status), self.expected)
        return list(call.call_args[0][0])

    def test_no_results_no_gate(self) -> None:
        with mock.patch.object(common, "call") as call:
            self.assertEqual(gpu.gate(Path(self.tmp), schema.EXIT_BUILD), schema.EXIT_BUILD)
        call.assert_not_called()

    def test_what_outranks_what(self) -> None:
        ranks = [
            (schema.EXIT_ENV, schema.EXIT_REGRESSION, schema.EXIT_ENV),
            (schema.EXIT_BUILD, schema.EXIT_REGRESSION, schema.EXIT_BUILD),
            (schema.EXIT_FAIL, schema.EXIT_OK, schema.EXIT_FAIL),
            (schema.EXIT_BUDGET, schema.EXIT_OK, schema.EXIT_BUDGET),
            (schema.EXIT_FAIL, schema.EXIT_REGRESSION, schema.EXIT_REGRESSION),
            (schema.EXIT_BUDGET, schema.EXIT_REGRESSION, schema.EXIT_REGRESSION),
            (schema.EXIT_OK, schema.EXIT_ENV, schema.EXIT_ENV),
        ]
        for status, gate_status, self.expected in ranks:
            with self.subTest(status=status, gate=gate_status):
                self.gate(status, gate_status)

    def test_the_gpus_required(self) -> None:
        self.expected = schema.EXIT_OK
        os.environ.pop("TORCHPLACE_REQUIRE_GPUS", None)
        argv = self.gate(schema.EXIT_OK, schema.EXIT_OK)
        self.assertEqual(argv[argv.index("--require-devices") + 1], "cuda=1")
        os.environ["TORCHPLACE_REQUIRE_GPUS"] = "8"
        argv = self.gate(schema.EXIT_OK, schema.EXIT_OK)
        self.assertEqual(argv[argv.index("--require-devices") + 1], "cuda=8")
        self.assertEqual(argv[1:3], ["-m", "torchplace.gate"])


def main(argv: List[str]) -> None:
    unittest.main(argv=[sys.argv[0], *argv, "-v"])


if __name__ == "__main__":
    main(sys.argv[1:])
