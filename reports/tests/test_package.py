#!/usr/bin/env python3
"""Tests of the package's own rules (reports/README.md):
  - the exit codes: ci/lib/common.sh's TP_EXIT_* equal torchplace.schema's EXIT_CODES, name for
    name and value for value, so that the shell and the Python cannot drift apart;
  - the outcome categories: harness/scenario.cpp's category_label() table (the definition the
    C++ writes into results.json) equals torchplace.schema's CATEGORIES, value for value;
  - no Python file of the repository edits sys.path (imports go through PYTHONPATH=reports);
  - every module outside torchplace.report imports without matplotlib (a bare GPU runner's
    python3 must still gate), and none of them imports scipy when imported;
  - every `python3 -m` entry point answers bad arguments with 64 (never argparse's 2, which
    reads as a regression), and a new entry point must be listed here.
Standard library only; needs bash for the first."""

import os
import re
import subprocess
import sys
import tempfile
import unittest

import torchplace
from torchplace import schema

COMMON_SH = schema.ROOT / "ci" / "lib" / "common.sh"
SKIPPED_DIRS = {".git", "build", "out", ".deps", "__pycache__"}


def shell_exit_codes():
    """{NAME: value} of every TP_EXIT_NAME that sourcing common.sh defines."""
    script = 'source "$1" && for name in "${!TP_EXIT_@}"; do echo "$name=${!name}"; done'
    done = subprocess.run(
        ["bash", "-c", script, "_", str(COMMON_SH)], capture_output=True, text=True, check=True
    )
    pairs = (line.split("=", 1) for line in done.stdout.split())
    return {name[len("TP_EXIT_") :]: int(value) for name, value in pairs}


def package_modules():
    """Every module of the package but the `python3 -m` shims (__main__ runs on import), found by
    listing its folders: walking by import would run torchplace.sim's load of the sim."""
    root = os.path.dirname(torchplace.__file__)
    found = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if os.path.exists(os.path.join(folder, d, "__init__.py"))]
        parts = [torchplace.__name__, *os.path.relpath(folder, root).split(os.sep)]
        package = ".".join(p for p in parts if p != ".")
        for name in files:
            if name.endswith(".py") and name != "__main__.py":
                stem = name[: -len(".py")]
                found.append(package if stem == "__init__" else f"{package}.{stem}")
    return sorted(found)


def module_file(name):
    """The file of a module package_modules() lists, found without importing it."""
    path = os.path.join(os.path.dirname(torchplace.__file__), *name.split(".")[1:])
    return os.path.join(path, "__init__.py") if os.path.isdir(path) else path + ".py"


def main_shims():
    """Packages run as `python3 -m package` (a __main__.py beside their __init__.py)."""
    root = os.path.dirname(torchplace.__file__)
    found = set()
    for folder, _, files in os.walk(root):
        if "__main__.py" in files:
            parts = [torchplace.__name__, *os.path.relpath(folder, root).split(os.sep)]
            found.add(".".join(p for p in parts if p != "."))
    return found


# The torch side: these load torch (and torchplace.sim loads the sim library) on import; their
# own tests run them under a torch (reports/tests/test_sim_python.py, test_conformance_*.py).
NEEDS_TORCH = ("torchplace.sim", "torchplace.conformance", "torchplace.pytest_plugin")


class ExitCodes(unittest.TestCase):
    def test_shell_and_python_agree(self):
        self.assertEqual(shell_exit_codes(), schema.EXIT_CODES)

    def test_the_codes_the_brief_fixes(self):
        self.assertEqual(
            schema.EXIT_CODES,
            # BUDGET: `run --budget-s` cut (the GPU runner's 5, now the one runner's)
            {
                "OK": 0,
                "FAIL": 1,
                "REGRESSION": 2,
                "ENV": 3,
                "BUILD": 4,
                "BUDGET": 5,
                "USAGE": 64,
                "SKIP": 77,
            },
        )


def harness_category_labels():
    """{category: label} of the table in harness/scenario.cpp's category_label()."""
    source = (schema.ROOT / "harness" / "scenario.cpp").read_text(encoding="utf-8")
    body = re.search(r"category_label\(const std::string& category\) \{(.*?)\n\}", source, re.S)
    if body is None:
        raise AssertionError("harness/scenario.cpp: category_label() not found; update this test")
    return dict(re.findall(r'\{"(\w+)", "([^"]+)"\}', body.group(1)))


class CategoryLabels(unittest.TestCase):
    def test_harness_and_python_agree(self):
        labels = harness_category_labels()
        self.assertGreaterEqual(len(labels), 8, labels)
        self.assertEqual(labels, schema.CATEGORIES)


class NoPathHacks(unittest.TestCase):
    EDIT = re.compile(r"sys\.path\s*(\.\s*(insert|append|extend)|\[|=|\+=)")

    def test_no_python_file_edits_sys_path(self):
        offenders = []
        for folder, dirs, files in os.walk(schema.ROOT):
            dirs[:] = [d for d in dirs if d not in SKIPPED_DIRS and not d.startswith("build")]
            for name in (f for f in files if f.endswith(".py")):
                path = os.path.join(folder, name)
                with open(path, encoding="utf-8") as handle:
                    for number, line in enumerate(handle, 1):
                        if self.EDIT.search(line):
                            offenders.append(f"{os.path.relpath(path, schema.ROOT)}:{number}")
        self.assertEqual(offenders, [])


def entry_points():
    """Modules run as `python3 -m`: a package with __main__, a module with a __main__ block."""
    found = set()
    for name in package_modules():
        with open(module_file(name), encoding="utf-8") as handle:
            if 'if __name__ == "__main__":' in handle.read():
                found.add(name)
    found |= main_shims()
    return found


class EntryPoints(unittest.TestCase):
    # entry point -> bad arguments (none of them may start work: --list, a real file, ...)
    BAD = {
        "torchplace": ["--colour"],
        "torchplace.report": ["--colour"],
        "torchplace.gate.calibrate": ["--colour"],
        "torchplace.gate.interleave": ["--colour"],
        "torchplace.mutation": ["--colour"],
        "torchplace.mutation.generated": ["--colour"],
        "torchplace.matrix.merge": [],
        "torchplace.matrix.gate": [],
        "torchplace.matrix.corpus": [],
        "torchplace.matrix.status": [],
        "torchplace.apt_log": [],
        "torchplace.bench_json": ["frobnicate"],
        "torchplace.run_record": [],
        "torchplace.explain": ["--colour"],
        "torchplace.sim_verdicts": ["--colour"],
        "torchplace.torch_info": ["colour"],
        "torchplace.conformance": ["--colour"],
        "torchplace.conformance.environment": ["--colour"],
        "torchplace.conformance.worker": ["--colour"],
        "torchplace.conformance.versus": ["--colour"],
    }
    # documented otherwise: the gate's usage errors are its exit 3 (ci/torchplace gate --help);
    # every argument of requires is a module name to probe
    OTHER = {"torchplace.gate": (["--colour"], schema.EXIT_INPUT), "torchplace.requires": None}

    def test_every_entry_point_is_listed(self):
        self.assertEqual(entry_points(), set(self.BAD) | set(self.OTHER))

    def test_bad_arguments_exit_64(self):
        cases = {name: (args, schema.EXIT_USAGE) for name, args in self.BAD.items()}
        cases["torchplace.gate"] = self.OTHER["torchplace.gate"]
        for name, (args, code) in cases.items():
            with self.subTest(entry_point=name, args=args):
                done = subprocess.run(
                    [sys.executable, "-m", name, *args], capture_output=True, text=True, timeout=60
                )
                self.assertEqual(done.returncode, code, done.stdout + done.stderr)
                self.assertNotIn("Traceback", done.stderr)


class ImportsWithoutMatplotlib(unittest.TestCase):
    """Imports each module in a child whose matplotlib (and scipy) raise on import."""

    def test_every_module_but_the_report_imports_bare(self):
        modules = [
            m
            for m in package_modules()
            if not m.startswith("torchplace.report") and not m.startswith(NEEDS_TORCH)
        ]
        self.assertIn("torchplace.gate.cli", modules)
        with tempfile.TemporaryDirectory() as shadow:
            for name in ("matplotlib", "scipy"):
                os.makedirs(os.path.join(shadow, name))
                with open(os.path.join(shadow, name, "__init__.py"), "w") as handle:
                    handle.write(f"raise ImportError('{name} shadowed by test_package.py')\n")
            path = [shadow, os.environ.get("PYTHONPATH", "")]
            env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, path)))
            code = "import importlib, sys\nfor name in sys.argv[1:]: importlib.import_module(name)"
            done = subprocess.run(
                [sys.executable, "-c", code, *modules], capture_output=True, text=True, env=env
            )
        self.assertEqual(done.returncode, 0, done.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
