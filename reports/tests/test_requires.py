#!/usr/bin/env python3
"""torchplace.requires, the shell's interpreter probe (torchplace.command.common.python_with):
exit 0 when every module imports, 3 naming the missing ones in order, with the Debian packages
that bring them; a module whose import raises ImportError (a broken install) counts as missing.
The modules probed here are standard ones, made-up names and a synthetic broken package."""
import contextlib
import io
import os
import subprocess
import sys
import tempfile
import unittest

from torchplace import requires
from torchplace.schema import EXIT_ENV, EXIT_OK

ABSENT = ("torchplace_no_such_module_a", "torchplace_no_such_module_b")


class Requires(unittest.TestCase):
    def main(self, *modules):
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            code = requires.main(list(modules))
        return code, err.getvalue()

    def test_present_modules_exit_0_saying_nothing(self):
        self.assertEqual(self.main("json", "unittest"), (EXIT_OK, ""))
        self.assertEqual(self.main(), (EXIT_OK, ""))

    def test_the_missing_ones_in_order(self):
        self.assertEqual(requires.missing([ABSENT[1], "json", ABSENT[0]]), [ABSENT[1], ABSENT[0]])

    def test_missing_modules_exit_3_naming_them_and_their_packages(self):
        code, err = self.main(ABSENT[0], "json", ABSENT[1])
        self.assertEqual(code, EXIT_ENV)
        self.assertEqual(
            err,
            f"torchplace: {sys.executable} lacks {ABSENT[0]}, {ABSENT[1]} "
            f"(apt-get install python3-{ABSENT[0]} python3-{ABSENT[1]})\n",
        )

    def test_a_package_whose_import_fails_is_missing(self):
        with tempfile.TemporaryDirectory() as shadow:
            os.makedirs(os.path.join(shadow, "torchplace_broken"))
            with open(os.path.join(shadow, "torchplace_broken", "__init__.py"), "w") as handle:
                handle.write("raise ImportError('synthetic: a broken install')\n")
            # the command as the shell's probe runs it, the shadow first on its PYTHONPATH
            path = os.pathsep.join(filter(None, [shadow, os.environ.get("PYTHONPATH", "")]))
            done = subprocess.run(
                [sys.executable, "-m", "torchplace.requires", "torchplace_broken"],
                env=dict(os.environ, PYTHONPATH=path),
                capture_output=True,
                text=True,
            )
        self.assertEqual(done.returncode, EXIT_ENV, done.stderr)
        self.assertIn("lacks torchplace_broken ", done.stderr)


if __name__ == "__main__":
    unittest.main()
