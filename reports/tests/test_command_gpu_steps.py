#!/usr/bin/env python3
"""`run --gpu`'s steps around the build (torchplace.command.gpu) in process: .deps' libstdc++
check with a fake c++, preflight's refusal and GPU listing with a fake nvidia-smi, the CTest
steps' command, summary and exit, each step's arguments (also through TORCHPLACE_GPU_STEP), and
what the gate prints and packs. Executables are shell scripts made here; logs are synthetic.

  test_command_gpu_steps.py [CLASS]      (CTest: command.gpu_steps)
"""
import io
import os
import sys
import tarfile
import unittest
from pathlib import Path
from typing import IO, List
from unittest import mock

import command_scratch
from torchplace import schema
from torchplace.command import common, gpu, run


class DepsRuntime(command_scratch.Scratch):
    """.deps' libbenchmark (synthetic bytes) against a libstdc++ a fake c++ names."""

    def deps(self, needs: bytes) -> Path:
        lib = Path(self.tmp) / "deps" / "usr" / "lib" / "x86_64-linux-gnu"
        lib.mkdir(parents=True)
        (lib / "libbenchmark.so.1.7.1").write_bytes(b"\0" + needs + b"\0")
        return Path(self.tmp) / "deps"

    def test_the_compilers_libstdcxx_is_read(self) -> None:
        libstdcxx = Path(self.tmp) / "libstdc++.so.6"
        libstdcxx.write_bytes(b"\0GLIBCXX_3.4.29\0")
        self.script(
            "c++",
            f'[ "$1" = -print-file-name=libstdc++.so.6 ] && echo {libstdcxx}\n',
            first_on_path=True,
        )
        message = self.exits(schema.EXIT_ENV, gpu.check_deps_runtime, self.deps(b"GLIBCXX_3.4.30"))
        self.assertIn(f"needs GLIBCXX_3.4.30, which this machine's {libstdcxx} lacks", message)

    def test_no_symbols_or_no_compiler_is_not_judged(self) -> None:
        deps = self.deps(b"no versioned symbols")
        for which, needs in (
            ("/synthetic/c++", b"no versioned symbols"),
            (None, b"GLIBCXX_3.4.30"),
        ):
            (deps / "usr/lib/x86_64-linux-gnu/libbenchmark.so.1.7.1").write_bytes(needs)
            with self.subTest(compiler=which), mock.patch.object(
                gpu.shutil, "which", return_value=which
            ), mock.patch.object(gpu.subprocess, "run", side_effect=AssertionError("c++ asked")):
                gpu.check_deps_runtime(deps)


class Preflight(command_scratch.Scratch):
    def test_no_libtorch_is_refused_first(self) -> None:
        for variable in ("Torch_DIR", "CMAKE_PREFIX_PATH"):
            os.environ.pop(variable, None)
        with mock.patch.object(gpu, "torch_info", return_value=""), mock.patch.object(
            gpu, "find_nvcc", side_effect=AssertionError("nvcc looked for")
        ):
            self.assertIn("no LibTorch", self.exits(schema.EXIT_ENV, gpu.preflight, Path(self.tmp)))

    def test_the_gpus_are_listed_and_flushed(self) -> None:
        self.script(
            "nvidia-smi",
            'echo "name, driver_version, memory.total [MiB]"\necho "$1"\n',
            first_on_path=True,
        )
        os.environ["CMAKE_PREFIX_PATH"] = "/synthetic/libtorch"
        stdout = mock.Mock(spec=io.StringIO(), wraps=io.StringIO())
        with mock.patch.object(common, "root", return_value=Path(self.tmp)), mock.patch.object(
            gpu, "find_nvcc"
        ), mock.patch("sys.stdout", stdout):
            gpu.preflight(Path(self.tmp))
        last = stdout.method_calls[-1]
        listed = "name, driver_version, memory.total [MiB]\n--query-gpu=name,driver_version,"
        self.assertTrue(stdout.getvalue().startswith(listed), stdout.getvalue())
        self.assertEqual(
            (Path(self.tmp) / "gpu.csv").read_text(encoding="utf-8"), stdout.getvalue()
        )
        self.assertEqual(last, mock.call.flush())  # before the steps' output


# CTest's summary lines (its formats), the log synthetic: 17 failed tests and the total.
CTEST_LOG = [f"Test #{n}: synthetic.{n} ...***Failed" for n in range(3)] + [
    *[f"\t{n} - synthetic.{n} (Failed)" for n in range(17)],
    "\t17 - synthetic.17 (Not Run)",
    "50% tests passed, 18 tests failed out of 36",
]


class Ctest(command_scratch.Scratch):
    def ctest(self, name: str, code: int, log_file: IO[str]) -> List[str]:
        os.environ["TORCHPLACE_BUILD_DIR"] = "/synthetic/build"
        ran: List[List[str]] = []

        def fake(argv: List[str], log: IO[str]) -> int:
            ran.append(argv)
            log.write("\n".join(CTEST_LOG) + "\n")
            return code

        with mock.patch.object(gpu, "run_process", side_effect=fake):
            status = gpu.ctest_step(Path(self.tmp), name, ["-L", "cuda"], log_file)
        self.assertEqual(status, schema.EXIT_OK if code == 0 else schema.EXIT_FAIL)
        self.assertEqual((Path(self.tmp) / f"{name}.log").read_text().splitlines(), CTEST_LOG)
        return ran[0]

    def test_the_command_and_its_junit(self) -> None:
        with mock.patch.object(os, "cpu_count", return_value=4):
            argv = self.ctest("ctest-cuda", 0, io.StringIO())
        head = ["ctest", "--test-dir", "/synthetic/build", "-j", "4", "--no-tests=error"]
        junit = ["--output-junit", f"{self.tmp}/junit-cuda.xml", "-L", "cuda"]
        self.assertEqual(argv, head + junit)
        with mock.patch.object(os, "cpu_count", return_value=None):
            argv = self.ctest("ctest", 8, io.StringIO())
        self.assertEqual(argv[3:5], ["-j", "1"])
        self.assertEqual(argv[6:8], ["--output-junit", f"{self.tmp}/junit.xml"])

    def test_the_last_15_summary_lines_are_shown(self) -> None:
        shown = io.StringIO()
        self.ctest("ctest", 8, shown)
        self.assertEqual(shown.getvalue().splitlines(), CTEST_LOG[-15:])
        with mock.patch("sys.stderr", new_callable=io.StringIO) as stderr:
            self.ctest("ctest", 0, None)  # type: ignore[arg-type]
        self.assertEqual(stderr.getvalue().splitlines(), CTEST_LOG[-15:])


class Actions(command_scratch.Scratch):
    """Each step's action given OUT, the options and the step's log (a synthetic stream)."""

    def test_each_action_gets_its_arguments(self) -> None:
        os.environ.pop("TORCHPLACE_GPU_STEP", None)
        os.environ["TORCHPLACE_BUILD_DIR"] = "/synthetic/build"
        out, log_file = Path(self.tmp), io.StringIO()
        options = run.Options(out)
        actions = {step.name: step.action for step in gpu.plan(options)}
        on_run = {
            f"{name}_step": mock.Mock(return_value=0) for name in ("build", "scenarios", "report")
        }
        on_gpu = {f"{name}_step": mock.Mock(return_value=0) for name in ("probe", "bench_rest")}
        with mock.patch.multiple(run, **on_run), mock.patch.multiple(gpu, **on_gpu):
            for name in ("build", "scenarios", "probe", "report", "bench_rest"):
                self.assertEqual(actions[name](log_file), 0)
        on_run["build_step"].assert_called_once_with(out, log_file)
        scenarios_binary = Path("/synthetic/build/scenarios/torchplace_scenarios")
        on_run["scenarios_step"].assert_called_once_with(scenarios_binary, out, log_file)
        on_gpu["probe_step"].assert_called_once_with(out, log_file)
        on_run["report_step"].assert_called_once_with(out, log_file)
        on_gpu["bench_rest_step"].assert_called_once_with(options, log_file)

    def test_the_probe_is_built_into_the_step_log(self) -> None:
        os.environ["TORCHPLACE_BUILD_DIR"] = "/synthetic/build"
        log_file = io.StringIO()
        with mock.patch.object(gpu, "run_process", return_value=1) as ran:
            self.assertEqual(gpu.probe_step(Path(self.tmp), log_file), 1)
        target = ["cmake", "--build", "/synthetic/build", "--target", "torchplace_message_probe"]
        ran.assert_called_once_with(target, log_file)

    def test_a_hook_runs_every_step(self) -> None:
        hook = self.script(
            "hook", 'echo "step $1 into $2"; [ "$1" != probe ]\n', first_on_path=True
        )
        os.environ["TORCHPLACE_GPU_STEP"] = hook
        plan = gpu.plan(run.Options(Path(self.tmp)))
        self.assertEqual([step.name for step in plan], list(gpu.STEPS))
        self.assertEqual([step.name for step in plan if step.ends_run_on_failure], ["build"])
        self.assertEqual([step.name for step in plan if step.records], [])
        with open(Path(self.tmp) / "hook.log", "w") as log_file:
            codes = [step.action(log_file) for step in plan]
        self.assertEqual(codes, [1 if name == "probe" else 0 for name in gpu.STEPS])
        said = (Path(self.tmp) / "hook.log").read_text().splitlines()
        self.assertEqual(said, [f"step {name} into {self.tmp}" for name in gpu.STEPS])


class Gate(command_scratch.Scratch):
    def test_the_gates_first_lines_are_shown_and_out_packed(self) -> None:
        out = Path(self.tmp)
        (out / "results.json").write_text("{}", encoding="utf-8")  # synthetic: no cells

        def fake(argv: List[str], stdout: IO[str], stderr: IO[str]) -> int:
            stdout.write("".join(f"gate line {n} (synthetic)\n" for n in range(5)))
            return schema.EXIT_OK

        with mock.patch.object(common, "call", side_effect=fake), mock.patch(
            "sys.stdout", new_callable=io.StringIO
        ) as stdout:
            self.assertEqual(gpu.gate(out, schema.EXIT_OK), schema.EXIT_OK)
        shown = [f"gate line {n} (synthetic)" for n in range(3)]
        self.assertEqual(stdout.getvalue().splitlines(), shown)
        with tarfile.open(out / "run.tar.gz") as packed:
            names = [Path(name).name for name in packed.getnames()]
        self.assertIn("gate.log", names)


def main(argv: List[str]) -> None:
    unittest.main(argv=[sys.argv[0], *argv, "-v"])


if __name__ == "__main__":
    main(sys.argv[1:])
