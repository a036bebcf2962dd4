#!/usr/bin/env python3
"""What a mutant's tests leave in the checkout outside the mutated file is put back
(torchplace.mutation.strays): a tracked file rewritten is checked out, a new file removed, the
mutated file and what was there before the mutant left alone. A temporary git repository with
synthetic files."""
import os
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from torchplace.mutation import strays
from torchplace.mutation.run import CannotJudge


def git(tree: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=tree, check=True, capture_output=True)


class Strays(unittest.TestCase):
    def setUp(self):
        self.tree = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, self.tree)
        git(self.tree, "init", "-q")
        (self.tree / "fixtures").mkdir()
        for name, text in (("code.py", "x = 1\n"), ("fixtures/input.json", "{}\n")):
            (self.tree / name).write_text(text)
        git(self.tree, "add", "-A")
        git(self.tree, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "synthetic")
        (self.tree / "notes.txt").write_text("there before the mutant\n")

    def test_what_the_tests_left_is_put_back(self):
        before = strays.state(self.tree)
        (self.tree / "code.py").write_text("x = 2\n")  # the mutant
        (self.tree / "fixtures/input.json").write_text('{"rewritten": true}\n')
        (self.tree / "fixtures/report.html").write_text("<p>written by a test</p>\n")
        (self.tree / "out").mkdir()  # a new folder: its files are named one by one
        (self.tree / "out/figure.png").write_text("synthetic\n")
        put_back = strays.undo(self.tree, before, "code.py")
        expected = ["fixtures/input.json", "fixtures/report.html", "out/figure.png"]
        self.assertEqual(sorted(put_back), expected)
        self.assertFalse((self.tree / "out/figure.png").exists())
        self.assertEqual((self.tree / "fixtures/input.json").read_text(), "{}\n")
        self.assertFalse((self.tree / "fixtures/report.html").exists())
        self.assertEqual((self.tree / "code.py").read_text(), "x = 2\n")  # the caller's to restore
        self.assertTrue((self.tree / "notes.txt").exists())

    def test_a_git_that_fails_a_moment_is_asked_again_then_named(self):
        stubs = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, stubs)
        real, count = shutil.which("git"), stubs / "count"
        stub = stubs / "git"  # synthetic: fails its first call, as a git holding the index would
        stub.write_text(
            f"#!/bin/sh\nif [ ! -e {count} ]; then touch {count}; echo lock >&2; exit 128; fi\n"
            f'exec {real} "$@"\n'
        )
        stub.chmod(0o755)
        path = f"{stubs}:{os.environ['PATH']}"
        with mock.patch.dict(os.environ, {"PATH": path}), mock.patch("time.sleep"):
            self.assertIn("?? notes.txt", strays.state(self.tree))
            stub.write_text("#!/bin/sh\necho 'fatal: synthetic' >&2\nexit 128\n")
            with self.assertRaisesRegex(CannotJudge, "fatal: synthetic"):
                strays.state(self.tree)

    def test_a_tree_that_is_no_checkout_is_not_compared(self):
        shutil.rmtree(self.tree / ".git")
        self.assertEqual(strays.state(self.tree), set())
        (self.tree / "new.txt").write_text("synthetic\n")
        self.assertEqual(strays.undo(self.tree, set(), "code.py"), [])


if __name__ == "__main__":
    unittest.main()
