#!/usr/bin/env python3
"""`ci/torchplace matrix` (torchplace.command.matrix) in process with mocks, nothing built: the
known versions from column.sh, --versions chosen oldest first, each option where it goes
(environment, columns made, the merge's and gate's arguments), bad arguments exit 64 and a missing
root, folder or version exit 3, each naming what is wrong; finish's steps and exit code. The
version lists are synthetic. Written to kill generated mutants of command/matrix.py."""
import contextlib
import io
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from torchplace import schema
from torchplace.command import common, matrix

KNOWN = ["1.13.1", "2.6.0", "2.14.1"]
LISTED = "1.13.1 host-bookworm\n\n2.6.0 trixie\n2.14.1 sid\n"  # column.sh --versions (synthetic)


class Versions(unittest.TestCase):
    def listed(self, returncode, stdout=""):
        done = subprocess.CompletedProcess([], returncode, stdout=stdout)
        with mock.patch.object(subprocess, "run", return_value=done) as run:
            versions = matrix.known_versions()
        argv = run.call_args[0][0]
        self.assertEqual(argv[1:], [str(common.root() / "ci/matrix/column.sh"), "--versions"])
        self.assertIs(run.call_args[1]["text"], True)
        return versions

    def test_the_known_versions_are_the_first_word_of_each_line(self):
        self.assertEqual(self.listed(0, LISTED), KNOWN)

    def test_a_list_that_cannot_be_made_is_exit_3(self):
        with self.assertRaises(common.Exit) as caught:
            self.listed(1)
        self.assertEqual(caught.exception.code, schema.EXIT_ENV)
        self.assertIn("cannot list the known LibTorch versions", caught.exception.message)

    def test_chosen_versions_come_oldest_first_commas_or_spaces(self):
        for requested in ("2.14.1,1.13.1", "2.14.1 1.13.1", " 1.13.1, 2.14.1 "):
            with self.subTest(requested=requested):
                self.assertEqual(matrix.chosen_versions(requested, KNOWN), ["1.13.1", "2.14.1"])

    def test_an_unknown_version_is_exit_3_naming_it_and_the_known(self):
        with self.assertRaises(common.Exit) as caught:
            matrix.chosen_versions("1.13.1,9.9.9", KNOWN)
        self.assertEqual(caught.exception.code, schema.EXIT_ENV)
        self.assertEqual(
            caught.exception.message,
            "matrix: unknown LibTorch version '9.9.9' (known: 1.13.1 2.6.0 2.14.1)",
        )

    def test_no_version_is_exit_64(self):
        with self.assertRaises(common.Exit) as caught:
            matrix.chosen_versions(" , ", KNOWN)
        self.assertEqual(caught.exception.code, schema.EXIT_USAGE)
        self.assertEqual(caught.exception.message, "matrix: --versions is empty")


class Command(unittest.TestCase):
    """matrix.command(args) with the known versions, root and column.sh mocked."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="torchplace-matrix-command-")
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.out = os.path.join(self.tmp, "out")
        self.finish = self.patch(mock.patch.object(matrix, "finish", return_value=7))
        self.call = self.patch(mock.patch.object(common, "call", return_value=0))
        self.patch(mock.patch.object(matrix, "known_versions", return_value=list(KNOWN)))
        self.patch(mock.patch.object(os, "geteuid", return_value=0))
        self.patch(mock.patch.dict(os.environ))

    def patch(self, patcher):
        started = patcher.start()
        self.addCleanup(patcher.stop)
        return started

    def run_command(self, *args):
        """(exit code, or the Exit's code and message)."""
        try:
            return matrix.command(list(args))
        except common.Exit as stop:
            return stop.code, stop.message

    def made(self):
        return [arguments[0][2] for arguments, _ in self.call.call_args_list]

    def test_a_whole_run_makes_each_column_then_finishes_with_the_gate(self):
        code = self.run_command("--versions", "2.6.0,1.13.1", "--out", self.out, "--gate")
        self.assertEqual(code, 7)  # finish's
        self.assertEqual(self.made(), ["1.13.1", "2.6.0"])
        folder = Path(self.out).resolve()
        self.assertTrue(folder.is_dir())
        self.assertEqual(self.call.call_args[0][0][3], str(folder))
        self.finish.assert_called_once_with(folder, True, ["1.13.1", "2.6.0"])

    def test_without_versions_every_known_one_is_made_and_no_gate(self):
        self.assertEqual(self.run_command("--out", self.out), 7)
        self.assertEqual(self.made(), KNOWN)
        self.finish.assert_called_once_with(Path(self.out).resolve(), False, KNOWN)

    def test_without_out_the_columns_are_under_the_checkout_s_out_matrix(self):
        self.patch(mock.patch.object(common, "root", return_value=Path(self.tmp)))
        os.makedirs(os.path.join(self.tmp, "out", "matrix"))
        self.assertEqual(self.run_command("--merge-only"), 7)
        folder = (Path(self.tmp) / "out" / "matrix").resolve()
        self.finish.assert_called_once_with(folder, False, KNOWN)

    def test_a_column_that_fails_ends_the_run_with_its_code(self):
        self.call.side_effect = [0, 5, 0]
        self.assertEqual(self.run_command("--out", self.out), (5, None))
        self.assertEqual(self.made(), ["1.13.1", "2.6.0"])
        self.finish.assert_not_called()

    def test_the_environment_options(self):
        code = self.run_command("--roots", "/r", "--fresh", "--bookworm-root", "--out", self.out)
        self.assertEqual(code, 7)
        for name, value in (("ROOTS", "/r"), ("MATRIX_FRESH", "1"), ("MATRIX_NO_HOST", "1")):
            self.assertEqual(os.environ.get(f"TORCHPLACE_{name}"), value)

    def test_merge_only_merges_what_is_there_and_expects_the_cuda_column(self):
        os.makedirs(self.out)
        code = self.run_command("--merge-only", "--out", self.out, "--cuda-compile", "--gate")
        self.assertEqual(code, 7)
        self.assertEqual(self.made(), [])  # no column made
        flags = [*KNOWN, "--require-cuda-compile"]
        self.finish.assert_called_once_with(Path(self.out).resolve(), True, flags)
        self.run_command("--merge-only", "--out", self.out, "--versions", "2.6.0")
        self.finish.assert_called_with(Path(self.out).resolve(), False, ["2.6.0"])

    def test_what_stops_it_before_any_column_is_made(self):
        missing = os.path.join(self.tmp, "absent")
        cases = [
            (["--bogus"], (64, "matrix: unknown argument '--bogus' (see ci/matrix/README.md)")),
            (["--out"], (64, "matrix: --out needs a folder")),
            (["--versions"], (64, "matrix: --versions needs a list, e.g. 1.13.1,2.14.1")),
            (["--roots"], (64, "matrix: --roots needs a folder")),
            (
                ["--columns-only", "--merge-only"],
                (64, "matrix: --columns-only and --merge-only " "exclude each other"),
            ),
            (["--cuda-only"], (64, "matrix: --cuda-only goes with --columns-only")),
            (
                ["--merge-only", "--out", missing],
                (3, f"matrix: --merge-only: no columns folder " f"{missing}"),
            ),
            (
                ["--versions", "1.0.0"],
                (3, "matrix: unknown LibTorch version '1.0.0' (known: " "1.13.1 2.6.0 2.14.1)"),
            ),
        ]
        for args, expected in cases:
            with self.subTest(args=args):
                self.assertEqual(self.run_command(*args), expected)
        self.assertEqual(self.made(), [])

    def test_it_needs_root_and_a_folder_it_can_make(self):
        with mock.patch.object(os, "geteuid", return_value=1000):
            code = self.run_command("--out", self.out)
        self.assertEqual(code, (3, "matrix: needs root (debootstrap, chroot, mount)"))
        blocker = os.path.join(self.tmp, "a-file")
        Path(blocker).touch()
        code = self.run_command("--out", os.path.join(blocker, "out"))
        self.assertEqual(code, (3, f"matrix: cannot create {os.path.join(blocker, 'out')}"))
        self.assertEqual(self.made(), [])

    def test_columns_only_makes_the_columns_and_says_so(self):
        os.makedirs(self.out)  # a folder already there is used as it is
        with contextlib.redirect_stderr(io.StringIO()) as stderr:
            code = self.run_command("--columns-only", "--out", self.out, "--versions", "2.6.0")
        self.assertEqual(code, schema.EXIT_OK)
        self.assertEqual(self.made(), ["2.6.0"])
        self.finish.assert_not_called()
        folder = Path(self.out).resolve()
        self.assertIn(
            f"matrix: columns made in {folder} (merge them with --merge-only)", stderr.getvalue()
        )


class Finish(unittest.TestCase):
    """finish(): merge, report, gate, status; each a mocked command that exits as told."""

    def finish(self, codes, gate, python="/synthetic/python"):
        """(finish's exit code, stderr); the commands it ran in self.calls."""
        self.calls = []

        def call(argv):
            self.calls.append(argv)
            return codes.get(argv[2], 0)

        with mock.patch.object(common, "call", side_effect=call), mock.patch.object(
            common, "report_python", return_value=python
        ), contextlib.redirect_stderr(io.StringIO()) as stderr:
            code = matrix.finish(Path("/m"), gate, ["1.13.1", "--require-cuda-compile"])
        return code, stderr.getvalue()

    def test_each_step_in_order_and_the_status_check_s_exit(self):
        code, stderr = self.finish({"torchplace.matrix.status": 1}, True)
        self.assertEqual(code, 1)
        self.assertEqual(
            self.calls,
            [
                [
                    "/synthetic/python",
                    "-m",
                    "torchplace.matrix.merge",
                    "/m",
                    "1.13.1",
                    "--require-cuda-compile",
                ],
                ["/synthetic/python", "-m", "torchplace", "report", "/m"],
                [
                    "/synthetic/python",
                    "-m",
                    "torchplace.matrix.gate",
                    "/m/matrix.json",
                    "--out",
                    "/m/matrix-gate.json",
                ],
                ["/synthetic/python", "-m", "torchplace.matrix.status", "/m/matrix.json"],
            ],
        )
        self.assertIn("torchplace: matrix: /m/matrix.json and /m/matrix.md", stderr)
        self.assertNotIn("could not be rendered", stderr)

    def test_a_regression_is_the_gate_s_exit_and_no_status_check(self):
        code, _ = self.finish({"torchplace.matrix.gate": 2}, True)
        self.assertEqual(code, 2)
        self.assertEqual([argv[2] for argv in self.calls][-1], "torchplace.matrix.gate")

    def test_without_the_gate_or_a_report_python(self):
        code, _ = self.finish({}, False, python=None)
        self.assertEqual(code, 0)
        self.assertEqual([argv[0] for argv in self.calls], [sys.executable] * 3)
        self.assertNotIn("torchplace.matrix.gate", [argv[2] for argv in self.calls])

    def test_a_merge_that_fails_is_exit_3_and_nothing_follows(self):
        with self.assertRaises(common.Exit) as caught:
            self.finish({"torchplace.matrix.merge": 3}, True)
        self.assertEqual(caught.exception.code, schema.EXIT_ENV)
        self.assertEqual(len(self.calls), 1)
        self.assertIn("matrix: merging the columns failed", caught.exception.message)


if __name__ == "__main__":
    unittest.main()
