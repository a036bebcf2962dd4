"""The command tests' base case (test_command_*.py): a scratch folder, the environment restored
after each test, `exits` for what a command refuses with common.Exit, and `script` for a
stand-in executable (synthetic)."""
import os
import shutil
import tempfile
import unittest
from unittest import mock

from torchplace.command import common


class Scratch(unittest.TestCase):
    def setUp(self) -> None:
        self.tmp = tempfile.mkdtemp(prefix="torchplace-command-")
        self.addCleanup(shutil.rmtree, self.tmp, True)
        environ = mock.patch.dict(os.environ)  # what a command sets is undone
        environ.start()
        self.addCleanup(environ.stop)

    def exits(self, code: int, function, *args) -> str:  # type: ignore[no-untyped-def]
        with self.assertRaises(common.Exit) as caught:
            function(*args)
        self.assertEqual(caught.exception.code, code)
        return str(caught.exception.message)

    def script(self, name: str, body: str, first_on_path: bool = False) -> str:
        """An executable shell script TMP/bin/NAME; TMP/bin put first on PATH if asked."""
        path = os.path.join(self.tmp, "bin", name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as handle:
            handle.write("#!/bin/sh\n" + body)
        os.chmod(path, 0o755)
        if first_on_path:
            os.environ["PATH"] = f"{os.path.dirname(path)}:{os.environ['PATH']}"
        return path


class Unbuilt(Scratch):
    """Scratch where the command's build, its packages and REFUSED fail the test if they run: a
    slip that tries to build builds nothing (a test patches over what it needs)."""

    REFUSED = ("build", "ensure_deps")

    def setUp(self) -> None:
        super().setUp()
        for name in self.REFUSED:
            refused = mock.patch.object(common, name, side_effect=AssertionError(f"{name} ran"))
            refused.start()
            self.addCleanup(refused.stop)
