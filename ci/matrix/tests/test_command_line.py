#!/usr/bin/env python3
"""The version matrix's commands (python3 -m torchplace.matrix.*) as `ci/torchplace matrix`
(torchplace.command.matrix) runs them: bad arguments are exit 64 (never 2, the gate's
"regression", nor 3, bad input), and torchplace.matrix.status says what is not ok in a merged
matrix (exit 1) or that all is (exit 0)."""
import json
import os
import tempfile
import unittest

from test_matrix import BROKEN, EXPECTED_ERROR, FIX, cell, command, write_column
from torchplace import schema
from torchplace.matrix import merge, status


class BadArguments(unittest.TestCase):
    CASES = {
        "merge": [[], ["OUT"], ["OUT", "--bogus"], ["OUT", "=root"], ["OUT", "1.13.1="]],
        "gate": [[], ["A.json", "--colour", "B"], ["A.json", "B.json"]],
        "corpus": [[], ["OUT", "CORPUS", "EXTRA"]],
        "status": [[], ["A.json", "B.json"]],
    }

    def test_every_command_exits_64_with_its_usage(self):
        for name, calls in self.CASES.items():
            for args in calls:
                with self.subTest(command=name, args=args):
                    run = command(name, *args)
                    self.assertEqual(run.returncode, schema.EXIT_USAGE, run.stdout + run.stderr)
                    self.assertIn(f"torchplace.matrix.{name}", run.stderr)
                    self.assertNotIn("Traceback", run.stderr)


class Status(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.out = self.tmp.name
        self.addCleanup(self.tmp.cleanup)

    def merged(self, columns):
        for version, column_status, cells in columns:
            write_column(
                self.out, version, column_status, cells, build_log="x.cpp:1: error: boom\n"
            )
        matrix = merge.merge(self.out, [(version, "root") for version, _, _ in columns])
        path = os.path.join(self.out, "matrix.json")
        with open(path, "w", encoding="utf-8") as handle:
            json.dump(matrix, handle)
        return matrix, path

    def test_all_ok_is_exit_0(self):
        matrix, path = self.merged([("1.13.1", "ok", [cell(FIX), cell(BROKEN, **EXPECTED_ERROR)])])
        self.assertEqual(status.not_ok(matrix), [])
        run = command("status", path)
        self.assertEqual(run.returncode, schema.EXIT_OK, run.stderr)

    def test_a_failed_build_and_a_failed_cell_are_named(self):
        matrix, path = self.merged(
            [("1.13.1", "ok", [cell(FIX, status="fail")]), ("2.14.1", "build_failed", [])]
        )
        self.assertEqual(status.not_ok(matrix), ["2.14.1: build_failed", f"{FIX} on 1.13.1"])
        run = command("status", path)
        self.assertEqual(run.returncode, schema.EXIT_FAIL, run.stderr)
        self.assertIn(f"torchplace: matrix: not ok: {FIX} on 1.13.1", run.stderr)

    def test_a_cuda_column_that_did_not_compile_is_named(self):
        matrix, _ = self.merged([("1.13.1", "ok", [cell(FIX)])])
        matrix["cuda_compile"] = {"status": "build_failed", "first_error": "a.cu:1: error: x"}
        self.assertEqual(
            status.not_ok(matrix), ["CUDA compile-only cell: build_failed (a.cu:1: error: x)"]
        )

    def test_unreadable_matrix_is_exit_3(self):
        run = command("status", os.path.join(self.out, "absent.json"))
        self.assertEqual(run.returncode, schema.EXIT_INPUT, run.stderr)
        self.assertIn("absent.json does not exist", run.stderr)


if __name__ == "__main__":
    unittest.main()
