#!/usr/bin/env python3
"""`python3 -m torchplace.torch_info FIELD` (torchplace.torch_info, in process): each field
printed from this Python's torch, exit 0; no torch is exit 3; bad arguments exit 64. torch is a
stand-in module here and the nvidia-* wheels' files are empty files in a temporary
site-packages, so no GPU and no real torch is needed; one test runs the module as a command.

  test_torch_info.py      (CTest: report.torch_info)
"""
import contextlib
import io
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from types import ModuleType, SimpleNamespace
from typing import List, Optional, Tuple
from unittest import mock

from torchplace import schema, torch_info


class TorchInfo(unittest.TestCase):
    def setUp(self) -> None:
        self.site = os.path.realpath(tempfile.mkdtemp(prefix="test-torch-info-"))
        self.addCleanup(shutil.rmtree, self.site)
        self.torch = ModuleType("torch")
        self.torch.__file__ = self.touch("torch/__init__.py")
        self.version = SimpleNamespace(cuda="12.4")
        utils = SimpleNamespace(cmake_prefix_path="/site/torch/share/cmake")
        vars(self.torch).update(utils=utils, version=self.version)

    def touch(self, relative: str) -> str:
        path = os.path.join(self.site, relative)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        open(path, "w", encoding="utf-8").close()
        return path

    def main(self, argv: List[str], torch: Optional[ModuleType]) -> Tuple[int, str, str]:
        """(exit code, stdout, stderr) with `torch` as the importable torch (None: no torch)."""
        out, err = io.StringIO(), io.StringIO()
        with mock.patch.dict(sys.modules, {"torch": torch}):
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                code = torch_info.main(argv)
        return code, out.getvalue(), err.getvalue()

    def test_cmake_prefix_path(self) -> None:
        code, out, _ = self.main(["cmake_prefix_path"], self.torch)
        self.assertEqual((code, out), (schema.EXIT_OK, "/site/torch/share/cmake\n"))

    def test_cuda_release_or_empty(self) -> None:
        self.assertEqual(self.main(["cuda"], self.torch)[:2], (0, "12.4\n"))
        self.version.cuda = None  # a CPU-only wheel
        self.assertEqual(self.main(["cuda"], self.torch)[:2], (0, "\n"))

    def test_nvrtc_prefers_the_versioned_library(self) -> None:
        self.touch("nvidia/cuda_nvrtc/lib/libnvrtc.so")
        self.assertEqual(
            torch_info.nvrtc(self.torch),
            os.path.join(self.site, "nvidia/cuda_nvrtc/lib/libnvrtc.so"),
        )
        versioned = self.touch("nvidia/cuda_nvrtc/lib/libnvrtc.so.12")
        self.touch("nvidia/cuda_nvrtc/lib/libnvrtc.so.13")
        self.assertEqual(self.main(["nvrtc"], self.torch)[:2], (0, versioned + "\n"))

    def test_nvrtc_empty_without_the_wheel(self) -> None:
        self.touch("nvidia/cublas/lib/libcublas.so.12")
        self.assertEqual(self.main(["nvrtc"], self.torch)[:2], (0, "\n"))

    def test_cuda_include_is_the_folder_of_cusparse_h(self) -> None:
        self.assertEqual(torch_info.cuda_include(self.torch), "")
        self.touch("nvidia/cusparse/include/cusparse.h")
        code, out, _ = self.main(["cuda_include"], self.torch)
        self.assertEqual((code, out), (0, os.path.join(self.site, "nvidia/cusparse/include\n")))

    def test_no_torch_exits_3(self) -> None:
        code, out, err = self.main(["cuda"], None)
        self.assertEqual((code, out), (schema.EXIT_ENV, ""))
        self.assertIn(f"no torch in {sys.executable}", err)

    def test_run_as_a_module_reads_its_arguments(self) -> None:
        with open(os.path.join(self.site, "torch/__init__.py"), "w", encoding="utf-8") as stand_in:
            stand_in.write("class version:  # a stand-in torch, synthetic\n    cuda = '12.4'\n")
        reports = os.path.dirname(os.path.dirname(torch_info.__file__))
        path = os.environ.get("PYTHONPATH", "")  # the caller's (a tracer's sitecustomize) kept
        done = subprocess.run(
            [sys.executable, "-m", "torchplace.torch_info", "cuda"],
            env={**os.environ, "PYTHONPATH": os.pathsep.join([self.site, reports, path])},
            capture_output=True,
            text=True,
            check=False,
        )
        self.assertEqual((done.returncode, done.stdout), (schema.EXIT_OK, "12.4\n"), done.stderr)

    def test_bad_arguments_exit_64(self) -> None:
        for argv in ([], ["gpu"], ["cuda", "nvrtc"]):
            with self.subTest(argv=argv):
                code, out, err = self.main(argv, self.torch)
                self.assertEqual((code, out), (schema.EXIT_USAGE, ""))
                self.assertIn("cmake_prefix_path", err)  # the usage


if __name__ == "__main__":
    unittest.main()
