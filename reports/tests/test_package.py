#!/usr/bin/env python3
"""Tests of the package's own rules (reports/README.md):
  - the exit codes: ci/lib/common.sh's TP_EXIT_* equal torchplace.schema's EXIT_CODES, name for
    name and value for value, so that the shell and the Python cannot drift apart;
  - no Python file of the repository edits sys.path (imports go through PYTHONPATH=reports);
  - every module outside torchplace.report imports without matplotlib (a bare GPU runner's
    python3 must still gate), and none of them imports scipy when imported.
Standard library only; needs bash for the first."""
import os
import pkgutil
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
    done = subprocess.run(["bash", "-c", script, "_", str(COMMON_SH)], capture_output=True,
                          text=True, check=True)
    pairs = (line.split("=", 1) for line in done.stdout.split())
    return {name[len("TP_EXIT_"):]: int(value) for name, value in pairs}


def package_modules():
    """Every module of the package but the `python3 -m` shims (__main__ runs on import)."""
    prefix = torchplace.__name__ + "."
    return sorted(info.name for info in pkgutil.walk_packages(torchplace.__path__, prefix)
                  if not info.name.endswith(".__main__"))


class ExitCodes(unittest.TestCase):
    def test_shell_and_python_agree(self):
        self.assertEqual(shell_exit_codes(), schema.EXIT_CODES)

    def test_the_codes_the_brief_fixes(self):
        self.assertEqual(schema.EXIT_CODES, {"OK": 0, "FAIL": 1, "REGRESSION": 2, "ENV": 3,
                                             "BUILD": 4, "USAGE": 64, "SKIP": 77})


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


class ImportsWithoutMatplotlib(unittest.TestCase):
    """Imports each module in a child whose matplotlib (and scipy) raise on import."""

    def test_every_module_but_the_report_imports_bare(self):
        modules = [m for m in package_modules() if not m.startswith("torchplace.report")]
        self.assertIn("torchplace.gate.cli", modules)
        with tempfile.TemporaryDirectory() as shadow:
            for name in ("matplotlib", "scipy"):
                os.makedirs(os.path.join(shadow, name))
                with open(os.path.join(shadow, name, "__init__.py"), "w") as handle:
                    handle.write(f"raise ImportError('{name} shadowed by test_package.py')\n")
            path = [shadow, os.environ.get("PYTHONPATH", "")]
            env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, path)))
            code = "import importlib, sys\nfor name in sys.argv[1:]: importlib.import_module(name)"
            done = subprocess.run([sys.executable, "-c", code, *modules], capture_output=True,
                                  text=True, env=env)
        self.assertEqual(done.returncode, 0, done.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
