#!/usr/bin/env python3
"""`run --gpu`'s view of python3's torch and of the CUDA toolkit (torchplace.command.gpu) in
process: the environment it sets, torch_info and nvcc_release through fake executables (shell
scripts made here), major.minor, the CMake arguments of a toolkit with or without cusparse.h and
libnvrtc (folders made here), and what find_nvcc prints. Everything here is synthetic.

  test_command_gpu_toolkit.py [CLASS]      (CTest: command.gpu_toolkit)
"""
import io
import os
import shutil
import sys
import unittest
from pathlib import Path
from typing import List
from unittest import mock

import command_scratch
from torchplace.command import gpu

# The shape of `nvcc --version` (the release line as gpu.major_minor's docstring quotes it).
NVCC_VERSION = """nvcc: NVIDIA (R) Cuda compiler driver
Copyright (c) 2005-2024 NVIDIA Corporation
Built on Thu_Mar_28_02:18:24_PDT_2024
Cuda compilation tools, release 12.4, V12.4.131
Build cuda_12.4.r12.4/compiler.34097967_0
"""


class Environment(command_scratch.Scratch):
    def test_nothing_is_installed_and_the_build_folder_defaults(self) -> None:
        os.environ.pop("TORCHPLACE_BUILD_DIR", None)
        os.environ["TORCHPLACE_NO_INSTALL"] = "0"
        gpu.prepare_environment()
        self.assertEqual(os.environ["TORCHPLACE_NO_INSTALL"], "1")
        self.assertEqual(os.environ["TORCHPLACE_BUILD_DIR"], "/tmp/torchplace-build")
        os.environ["TORCHPLACE_BUILD_DIR"] = "/synthetic/build"
        gpu.prepare_environment()
        self.assertEqual(os.environ["TORCHPLACE_BUILD_DIR"], "/synthetic/build")

    def test_torch_info_asks_python3_on_path(self) -> None:
        # a fake python3 that answers only `-m torchplace.torch_info WHAT`, on stdout
        self.script("python3", '[ "$1 $2" = "-m torchplace.torch_info" ] || exit 9\necho " $3 "\n')
        os.environ["PATH"] = str(Path(self.tmp) / "bin")
        self.assertEqual(gpu.torch_info("cuda"), "cuda")

    def test_major_minor_needs_both_numbers(self) -> None:
        self.assertEqual(gpu.major_minor("release 12.4, V12.4.131"), "12.4")
        self.assertEqual(gpu.major_minor("13.0"), "13.0")
        for text in ("12", "12.", ".4", ""):
            with self.subTest(text=text):
                self.assertEqual(gpu.major_minor(text), "")


class NvccRelease(command_scratch.Scratch):
    def test_the_release_line_is_read(self) -> None:
        nvcc = self.script(
            "nvcc", f'[ "$1" = --version ] || exit 9\ncat <<EOF\n{NVCC_VERSION}EOF\n'
        )
        self.assertEqual(gpu.nvcc_release(nvcc), "12.4")

    def test_no_release_line_is_unknown(self) -> None:
        nvcc = self.script("nvcc", "echo 'nvcc: NVIDIA (R) Cuda compiler driver 1.2'\n")
        self.assertEqual(gpu.nvcc_release(nvcc), "")


class ToolkitArgs(command_scratch.Scratch):
    """toolkit_args for a CUDA torch, the toolkit a folder made here; torch_info's answers are
    synthetic paths."""

    def args(self, files: List[str], answers: dict) -> str:
        toolkit = Path(self.tmp) / "cuda"
        for name in files:
            (toolkit / name).parent.mkdir(parents=True, exist_ok=True)
            (toolkit / name).write_bytes(b"")  # synthetic: empty
        self.printed = io.StringIO()
        with mock.patch.object(gpu, "torch_info", side_effect=answers.get) as info, mock.patch(
            "sys.stdout", self.printed
        ):
            args = gpu.toolkit_args(str(toolkit / "bin" / "nvcc"), torch_is_cuda=True)
        self.asked = [call[0][0] for call in info.call_args_list]
        self.plain = f"-DCMAKE_CUDA_COMPILER={toolkit}/bin/nvcc -DCUDA_TOOLKIT_ROOT_DIR={toolkit}"
        return args

    def test_a_whole_toolkit_needs_nothing_from_the_wheels(self) -> None:
        for files in (
            ["include/cusparse.h", "lib64/libnvrtc.so.12"],
            ["targets/x86_64-linux/include/cusparse.h", "targets/x86_64-linux/lib/libnvrtc.so"],
            ["include/cusparse.h", "lib/libnvrtc.so.13"],
        ):
            with self.subTest(files=files):
                self.assertEqual(self.args(files, {}), self.plain)
                self.assertEqual(self.asked, [])
                self.assertEqual(self.printed.getvalue(), "")
            shutil.rmtree(Path(self.tmp) / "cuda")

    def test_the_wheels_fill_in_headers_and_nvrtc(self) -> None:
        os.environ["CPATH"] = "/synthetic/cpath"
        answers = {"cuda_include": "/synthetic/wheel/include", "nvrtc": "/synthetic/libnvrtc.so"}
        args = self.args([], answers)
        self.assertEqual(args, f"{self.plain} -DCUDA_nvrtc_LIBRARY=/synthetic/libnvrtc.so")
        self.assertEqual(self.asked, ["cuda_include", "nvrtc"])
        self.assertEqual(os.environ["CPATH"], "/synthetic/cpath:/synthetic/wheel/include")
        toolkit = Path(self.tmp) / "cuda"
        self.assertEqual(
            self.printed.getvalue().splitlines(),
            [
                f"cusparse.h: not in {toolkit}; /synthetic/wheel/include",
                f"nvrtc: {toolkit} has none; /synthetic/libnvrtc.so",
            ],
        )

    def test_wheels_without_them_add_nothing(self) -> None:
        os.environ.pop("CPATH", None)
        self.assertEqual(self.args(["lib64/libnvrtc.so.12"], {}), self.plain)
        self.assertNotIn("CPATH", os.environ)
        self.assertEqual(self.asked, ["cuda_include"])
        toolkit = Path(self.tmp) / "cuda"
        expected = f"cusparse.h: not in {toolkit}; python3 torch ships none either\n"
        self.assertEqual(self.printed.getvalue(), expected)
        shutil.rmtree(toolkit)  # now no nvrtc either, and the wheels ship headers only
        self.assertEqual(self.args([], {"cuda_include": "/synthetic/include"}), self.plain)
        self.assertEqual(os.environ["CPATH"], "/synthetic/include")
        said = f"nvrtc: {toolkit} has none; python3 torch ships none either"
        self.assertIn(said, self.printed.getvalue())


class FindNvccSays(command_scratch.Scratch):
    """What find_nvcc prints about the nvcc it takes (synthetic paths and releases)."""

    def find(self, cuda: str) -> List[str]:
        info = {"cuda": cuda, "cmake_prefix_path": "/pip"}
        printed = io.StringIO()
        with mock.patch.object(gpu, "torch_info", side_effect=info.get), mock.patch.object(
            gpu, "nvcc_release", return_value="12.4"
        ), mock.patch.object(gpu, "toolkit_args", return_value="-DSYNTHETIC=1"), mock.patch.object(
            os, "access", side_effect=lambda path, _mode: path == "/synthetic/cudacxx"
        ), mock.patch(
            "sys.stdout", printed
        ):
            gpu.find_nvcc()
        return printed.getvalue().splitlines()

    def test_the_nvcc_taken_is_named(self) -> None:
        os.environ["CUDACXX"] = "/synthetic/cudacxx"
        os.environ["CMAKE_PREFIX_PATH"] = "/pip"
        said = self.find("12.4")
        self.assertEqual(said, ["nvcc: /synthetic/cudacxx, CUDA 12.4 (python3's torch: CUDA 12.4)"])

    def test_another_libtorch_is_said_to_be_not_compared(self) -> None:
        os.environ["CUDACXX"] = "/synthetic/cudacxx"
        os.environ["Torch_DIR"] = "/synthetic/libtorch"
        os.environ.pop("CMAKE_PREFIX_PATH", None)
        said = self.find("13.0")
        self.assertEqual(
            said,
            [
                "nvcc: the LibTorch used is not python3's torch: its CUDA release is not compared",
                "nvcc: /synthetic/cudacxx, CUDA 12.4 (python3's torch: CUDA none or absent)",
            ],
        )


def main(argv: List[str]) -> None:
    unittest.main(argv=[sys.argv[0], *argv, "-v"])


if __name__ == "__main__":
    main(sys.argv[1:])
