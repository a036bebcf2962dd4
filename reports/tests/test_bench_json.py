#!/usr/bin/env python3
"""`python3 -m torchplace.bench_json errors FILE` (torchplace.bench_json, in process): each
benchmark's real error one a line, planned skips left out, exit 0; an unreadable FILE is one line
saying why; a missing FILE is a usage error (64). `merge WHOLE REST` (REST's benchmarks after
WHOLE's, WHOLE's context kept; bad input exit 3, WHOLE untouched), `is-json FILE` (0 or 3), and
bad arguments (64, the usage on stderr). Benchmark files are synthetic, made here.

  test_bench_json.py      (CTest: report.bench_json)
"""
import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from typing import List, Optional, Tuple

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


class Tool(unittest.TestCase):
    """A temporary folder of synthetic files and main() with its outputs captured."""

    def setUp(self) -> None:
        self.tmp = tempfile.mkdtemp(prefix="torchplace-bench-json-")
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def path(self, name: str, text: Optional[str] = None) -> str:
        path = os.path.join(self.tmp, name)
        if text is not None:
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(text)
        return path

    def main(self, *argv: str) -> Tuple[int, str, str]:
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = bench_json.main(list(argv))
        return code, out.getvalue(), err.getvalue()


def doc(tag: str, *names: str) -> str:
    """A synthetic Google Benchmark document whose context names it."""
    context = {"tag": tag, "torchplace_synthetic": "hand-made test data, not a measurement"}
    return json.dumps({"context": context, "benchmarks": [entry(n) for n in names]})


class Merge(Tool):
    def test_rest_alone_makes_whole(self) -> None:
        whole, rest = self.path("whole.json"), self.path("rest.json", doc("rest", "a", "b"))
        self.assertEqual(self.main("merge", whole, rest), (schema.EXIT_OK, "", ""))
        with open(whole, encoding="utf-8") as handle:
            self.assertEqual(json.load(handle), json.loads(doc("rest", "a", "b")))

    def test_rest_appended_after_whole_with_whole_context(self) -> None:
        whole = self.path("whole.json", doc("whole", "a"))
        rest = self.path("rest.json", doc("rest", "b", "c"))
        self.assertEqual(self.main("merge", whole, rest), (schema.EXIT_OK, "", ""))
        with open(whole, encoding="utf-8") as handle:
            self.assertEqual(json.load(handle), json.loads(doc("whole", "a", "b", "c")))

    def test_bad_input_exits_3_naming_both_and_leaves_whole(self) -> None:
        cases = {  # (WHOLE's text or None for absent, REST's text or None for absent)
            "no REST": (doc("whole", "a"), None),
            "REST not JSON": (doc("whole", "a"), '{"benchmarks": ['),
            "WHOLE without benchmarks": ('{"context": {}}', doc("rest", "b")),
            "WHOLE's benchmarks not a list": ('{"context": {}, "benchmarks": {}}', doc("rest")),
        }
        for case, (whole_text, rest_text) in cases.items():
            with self.subTest(case):
                whole = self.path("whole.json", whole_text)
                rest = self.path(case, rest_text)
                code, out, err = self.main("merge", whole, rest)
                self.assertEqual((code, out), (schema.EXIT_INPUT, ""))
                self.assertTrue(err.startswith(f"bench_json: cannot merge {rest} into {whole}: "))
                with open(whole, encoding="utf-8") as handle:
                    self.assertEqual(handle.read(), whole_text)


class IsJsonAndUsage(Tool):
    def test_is_json(self) -> None:
        self.assertEqual(self.main("is-json", self.path("a.json", "[1]")), (schema.EXIT_OK, "", ""))
        for text in ("[1", None):  # cut short, absent
            with self.subTest(text):
                found = self.main("is-json", self.path("b.json", text))
                self.assertEqual(found, (schema.EXIT_INPUT, "", ""))

    def test_not_utf8_is_not_json(self) -> None:
        path = self.path("c.json")
        with open(path, "wb") as handle:
            handle.write(b'["\xff"]')  # a byte that is not UTF-8
        self.assertIs(bench_json.is_json(path), False)

    def test_bad_arguments_exit_64_with_the_usage(self) -> None:
        wrong = (["merge", "x"], ["is-json"], ["is-json", "x", "y"], ["errors", "x", "y"])
        for argv in ([], ["check", "x"], *wrong):
            with self.subTest(argv):
                code, out, err = self.main(*argv)
                self.assertEqual((code, out), (schema.EXIT_USAGE, ""))
                self.assertEqual(err, bench_json.__doc__ + "\n")

    def test_the_module_as_a_program(self) -> None:
        # python3 -m torchplace.bench_json reads its arguments after the program's name
        path = self.path("d.json", "{")  # not JSON: exit 3
        command = [sys.executable, "-m", "torchplace.bench_json", "is-json", path]
        self.assertEqual(subprocess.run(command).returncode, schema.EXIT_INPUT)


if __name__ == "__main__":
    unittest.main()
