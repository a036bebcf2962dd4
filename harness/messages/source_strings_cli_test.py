#!/usr/bin/python3
"""source_strings.py over SYNTHETIC source trees made in a temp folder (LibTorch's layout, not its
text: every message here is made up): which files it reads, the rows and files it writes, and
its exit codes (--check, bad arguments, a missing tree)."""
import contextlib
import gzip
import io
import json
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path
from unittest import mock

import source_strings
from torchplace.schema import EXIT_ENV, EXIT_FAIL, EXIT_OK, EXIT_SKIP, EXIT_USAGE

DEVICE = 'TORCH_CHECK(a.device() == b.device(), "synthetic: a and b on two devices: ", a);\n'
LONG = "a.device() == b.device() && " * 8
# A source tree: the C++ folders and torch/'s Python; tests, third_party and other suffixes out.
TREE = {
    "aten/src/ATen/a.cpp": DEVICE,
    "aten/src/ATen/notes.txt": DEVICE,
    "c10/core/b.h": f'TORCH_CHECK({LONG}ok, "synthetic: a long condition");\n',
    "torch/csrc/c.cu": 'AT_ERROR("synthetic: a message from a .cu file");\n',
    "caffe2/serialize/d.cc": 'AT_ERROR("synthetic: a message from a .cc file");\n',
    "tools/e.cpp": DEVICE,
    "tools/gen.py": 'raise ValueError("synthetic: a build script")\n',
    "torch/nn/f.py": 'def f(x):\n    raise ValueError("synthetic: a python message")\n',
    "torch/test/g.py": 'raise ValueError("synthetic: a test")\n',
    "torch/nn/third_party/h.py": 'raise ValueError("synthetic: vendored")\n',
    "aten/src/ATen/test/i.cpp": DEVICE,  # C++ tests are left out too
    "torch/csrc/jit/codegen/cuda/test/j.cpp": DEVICE,
}
# A wheel: torch/include's headers and torch's Python (none under include/).
WHEEL = {
    "include/ATen/a.h": DEVICE,
    "include/c10/b.hpp": 'AT_ERROR("synthetic: a c10 header");\n',
    "include/other/c.h": DEVICE,
    "include/c10/test/k.h": DEVICE,
    "include/torch/csrc/api.py": 'raise ValueError("synthetic: under include")\n',
    "nn/f.py": '\n\nraise ValueError("synthetic: a wheel python message")\n',
}


def make(root: Path, tree: dict) -> Path:
    for name, text in tree.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


class Trees(unittest.TestCase):
    def setUp(self):
        folder = tempfile.TemporaryDirectory()
        self.addCleanup(folder.cleanup)
        self.tmp = Path(folder.name)
        self.tree = make(self.tmp / "src", TREE)
        self.wheel = make(self.tmp / "site" / "torch", WHEEL)

    def test_files_read_from_a_source_tree(self):
        got = [(p.relative_to(self.tree).as_posix(), k) for p, k in source_strings.files(self.tree)]
        self.assertEqual(
            got,
            [
                ("aten/src/ATen/a.cpp", "cxx"),
                ("c10/core/b.h", "cxx"),
                ("torch/csrc/c.cu", "cxx"),
                ("caffe2/serialize/d.cc", "cxx"),
                ("torch/nn/f.py", "py"),
            ],
        )

    def test_files_read_from_a_wheel(self):
        self.assertTrue(source_strings.is_wheel(self.wheel))
        self.assertFalse(source_strings.is_wheel(self.tree))
        got = [
            (p.relative_to(self.wheel).as_posix(), k) for p, k in source_strings.files(self.wheel)
        ]
        self.assertEqual(
            got, [("include/ATen/a.h", "cxx"), ("include/c10/b.hpp", "cxx"), ("nn/f.py", "py")]
        )

    def test_rows_name_version_place_macro_class_and_a_cut_expression(self):
        rows = source_strings.strings("9.9", self.tree)
        self.assertEqual(rows[0]["at"], "aten/src/ATen/a.cpp:1")
        self.assertEqual(
            rows[0],
            {
                "v": "9.9",
                "at": "aten/src/ATen/a.cpp:1",
                "by": "TORCH_CHECK",
                "template": "synthetic: a and b on two devices: {}",
                "expr": "a.device() == b.device()",
                "class": "DeviceMismatch",
            },
        )
        self.assertEqual(rows[1]["expr"], (LONG + "ok")[:160])
        self.assertEqual(rows[-1]["at"], "torch/nn/f.py:2")
        self.assertEqual(rows[-1]["by"], "ValueError")

    def test_a_tree_without_aten_or_include_is_no_wheel(self):
        # Only torch/'s Python: read as a source tree, its paths from the tree's root.
        python_only = make(self.tmp / "py", {"torch/nn/f.py": TREE["torch/nn/f.py"]})
        self.assertFalse(source_strings.is_wheel(python_only))
        rows = source_strings.strings("9.9", python_only)
        self.assertEqual([r["at"] for r in rows], ["torch/nn/f.py:2"])

    def test_wheel_rows_are_placed_under_torch(self):
        rows = source_strings.strings("9.9", self.wheel)
        self.assertEqual(
            [r["at"] for r in rows],
            ["torch/include/ATen/a.h:1", "torch/include/c10/b.hpp:1", "torch/nn/f.py:3"],
        )

    def test_render_is_reproducible_and_holds_the_header_and_every_row(self):
        roots = {"9.9": self.tree, "9.10": self.wheel}
        data, families = source_strings.render(roots)
        self.assertEqual(source_strings.render(roots), (data, families))
        self.assertEqual(data[4:8], bytes(4))  # gzip's MTIME: none, so the same bytes each run
        lines = gzip.decompress(data).decode().splitlines()
        header = json.loads(lines[0])
        self.assertEqual(header["schema"], "torchplace.source_strings/1")
        self.assertEqual(
            header["versions"], {"9.9": source_strings.TREE, "9.10": source_strings.WHEEL}
        )
        for line in lines:  # keys sorted: the same bytes whatever order the code builds them in
            self.assertEqual(line, json.dumps(json.loads(line), sort_keys=True))
        rows = [json.loads(line) for line in lines[1:]]
        self.assertEqual([r["v"] for r in rows], ["9.9"] * 5 + ["9.10"] * 3)
        self.assertIn("synthetic: a and b on two devices: ", families)
        self.assertIn("kDeviceMismatch", families)


class Main(unittest.TestCase):
    def setUp(self):
        folder = tempfile.TemporaryDirectory()
        self.addCleanup(folder.cleanup)
        self.tmp = Path(folder.name)
        self.tree = make(self.tmp / "src", TREE)
        # The committed files stay untouched: main writes and checks these instead.
        self.data, self.families = self.tmp / "source_strings.jsonl.gz", self.tmp / "fam.inc"
        for name, path in (("DATA", self.data), ("FAMILIES", self.families)):
            patch = mock.patch.object(source_strings, name, path)
            patch.start()
            self.addCleanup(patch.stop)

    def main(self, *argv: str):
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = source_strings.main(list(argv))
        return code, out.getvalue(), err.getvalue()

    def test_arguments(self):
        self.assertEqual(
            source_strings.parse([]), (False, {v: Path(r) for v, r in source_strings.ROOTS.items()})
        )
        self.assertEqual(source_strings.parse(["a=b=c", "--check"]), (True, {"a": Path("b=c")}))
        code, _, err = self.main("--check", str(self.tree))
        self.assertEqual(code, EXIT_USAGE)
        self.assertIn("arguments are --check and VERSION=ROOT", err)

    def test_a_missing_tree_skips_the_check_and_fails_a_write(self):
        absent = self.tmp / "absent"
        code, _, err = self.main("--check", f"9.9={self.tree}", f"9.8={absent}")
        self.assertEqual(code, EXIT_SKIP)
        self.assertIn(f"SKIP: no source tree for 9.8 ({absent})", err)
        self.assertNotIn("9.9", err)
        self.assertEqual(self.main(f"9.8={absent}")[0], EXIT_ENV)
        self.assertFalse(self.data.exists())

    def test_write_then_check(self):
        self.assertEqual(self.main(f"9.9={self.tree}"), (EXIT_OK, "", ""))  # a write: no check
        data, families = source_strings.render({"9.9": self.tree})
        self.assertEqual(self.data.read_bytes(), data)
        self.assertEqual(self.families.read_text(), families)
        code, out, _ = self.main("--check", f"9.9={self.tree}")
        self.assertEqual(code, EXIT_OK)
        self.assertIn("the committed data equals the tool's output", out)

    def test_check_names_each_stale_or_missing_file(self):
        self.main(f"9.9={self.tree}")
        self.families.write_text(self.families.read_text() + "// edited\n")
        code, _, err = self.main("--check", f"9.9={self.tree}")
        self.assertEqual(code, EXIT_FAIL)
        self.assertIn("fam.inc differ from the tool's output", err)
        self.data.unlink()
        code, _, err = self.main("--check", f"9.9={self.tree}")
        self.assertEqual(code, EXIT_FAIL)
        self.assertIn("source_strings.jsonl.gz, fam.inc differ", err)

    def test_run_as_a_script(self):
        # Its exit code is main()'s on the arguments after the script's name (a skip here).
        absent = self.tmp / "absent"
        run = subprocess.run(
            [sys.executable, source_strings.__file__, "--check", f"9.9={absent}"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        self.assertEqual(run.returncode, EXIT_SKIP)
        self.assertIn(f"SKIP: no source tree for 9.9 ({absent})", run.stderr)


if __name__ == "__main__":
    unittest.main()
