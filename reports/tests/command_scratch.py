"""The command tests' base case (test_command_*.py): a scratch folder, the environment restored
after each test, and `exits` for what a command refuses with common.Exit."""
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
