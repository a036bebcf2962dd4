#!/usr/bin/env python3
"""`python3 -m torchplace.bench_json errors FILE` (torchplace.bench_json, in process): each
benchmark's real error one a line, planned skips left out, exit 0; an unreadable FILE is one line
saying why; a missing FILE is a usage error (64). Benchmark files are synthetic, made here.

  test_bench_json.py      (CTest: report.bench_json)
"""
import contextlib
import io
import json
import os
import shutil
import tempfile
import unittest
from typing import List, Tuple

from torchplace import bench_json, schema


def entry(name: str, **fields: object) -> dict:
    """One synthetic repetition of Google Benchmark's JSON."""
    return {"name": name, "run_name": name, "run_type": "iteration", **fields}


class Errors(unittest.TestCase):
    def setUp(self) -> None:
        self.tmp = tempfile.mkdtemp(prefix="torchplace-bench-json-")
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def write(self, benchmarks: list) -> str:
        path = os.path.join(self.tmp, "bench.json")
        context = {"torchplace_synthetic": "hand-made test data, not a measurement"}
        with open(path, "w", encoding="utf-8") as handle:
            json.dump({"context": context, "benchmarks": benchmarks}, handle)
        return path

    def errors(self, *args: str) -> Tuple[int, List[str]]:
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            code = bench_json.main(["errors", *args])
        return code, out.getvalue().splitlines()

    # kills reports/torchplace/bench_json.py:main:23cca3:const_minus:0 (`errors FILE` taken for
    # bad arguments: exit 64, nothing printed)
    def test_real_errors_are_printed_and_planned_skips_left_out(self) -> None:
        path = self.write(
            [
                entry("measured", real_time=1.0, time_unit="ns"),
                entry("broken", error_occurred=True, error_message="CUDA error (synthetic)"),
                entry("planned", error_occurred=True, error_message="skip: no GPU (synthetic)"),
                entry("silent", error_occurred=True),
            ]
        )
        code, lines = self.errors(path)
        self.assertEqual(code, schema.EXIT_OK)
        self.assertEqual(
            lines, ["broken: CUDA error (synthetic)", "silent: error without a message"]
        )

    def test_an_unreadable_file_is_one_line_naming_it(self) -> None:
        path = os.path.join(self.tmp, "bench.json")
        with open(path, "w", encoding="utf-8") as handle:
            handle.write('{"benchmarks": [')  # cut short
        code, lines = self.errors(path)
        self.assertEqual(code, schema.EXIT_OK)
        self.assertEqual(len(lines), 1, lines)
        self.assertIn(path, lines[0])

    def test_errors_without_a_file_is_a_usage_error(self) -> None:
        self.assertEqual(self.errors(), (schema.EXIT_USAGE, []))


if __name__ == "__main__":
    unittest.main()
