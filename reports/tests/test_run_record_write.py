#!/usr/bin/env python3
"""torchplace.run_record's writer, in process: `run_record OUT/run.json STEP status=VALUE ...`
(each value's type, the file it writes and merges into, bad arguments exit 64 with the usage or
the bad pair named, a file that is not a run record exits 3 and is left as it is, the module run
as a program), and decide's outcomes beyond the cells (a crashed scenarios step, a bench or
report step that did not run cleanly, other failed steps, the budget, other exit codes). Run
records here are synthetic (made by the test)."""
import contextlib
import io
import json
import os
import runpy
import sys
import tempfile
import unittest
from unittest import mock

from torchplace import run_record, schema


class Folder(unittest.TestCase):
    def setUp(self):
        scratch = tempfile.TemporaryDirectory()
        self.addCleanup(scratch.cleanup)
        self.folder = scratch.name
        self.path = os.path.join(self.folder, "run.json")

    def main(self, *args):
        """(exit, stdout, stderr) of `python3 -m torchplace.run_record ARGS`."""
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = run_record.main(["run_record.py", *args])
        return code, out.getvalue(), err.getvalue()

    def steps(self):
        with open(self.path, encoding="utf-8") as handle:
            return json.load(handle)["steps"]


class Record(Folder):
    def test_each_value_type(self):
        pairs = ["status=ok", "n=-4", "s=12.5", "t=-0.25", "up=true", "down=false"]
        pairs += ["note=", "dash=-", "dot=.5", "end=3.", "word=True"]
        code, out, err = self.main(self.path, "build", *pairs)
        self.assertEqual((code, out, err), (schema.EXIT_OK, "", ""))
        fields = self.steps()["build"]
        expected = {"status": "ok", "n": -4, "s": 12.5, "t": -0.25, "up": True, "down": False}
        expected.update({"note": "", "dash": "-", "dot": ".5", "end": "3.", "word": "True"})
        self.assertEqual(fields, expected)
        self.assertIs(type(fields["n"]), int)
        self.assertIs(type(fields["s"]), float)

    def test_a_one_letter_step_and_key(self):
        self.assertEqual(self.main(self.path, "x", "status=ran", "k=7")[0], schema.EXIT_OK)
        self.assertEqual(self.steps(), {"x": {"status": "ran", "k": 7}})

    def test_steps_merge_and_a_step_is_replaced(self):
        self.main(self.path, "build", "status=failed", "seconds=3")
        self.main(self.path, "bench", "status=ran")
        self.main(self.path, "build", "status=ok")
        self.assertEqual(self.steps(), {"build": {"status": "ok"}, "bench": {"status": "ran"}})
        self.assertEqual(run_record.step_status(self.path, "build"), "ok")

    def test_the_file_is_indented_json_one_space_a_level(self):
        self.main(self.path, "build", "status=ok")
        with open(self.path, encoding="utf-8") as handle:
            lines = handle.read().split("\n")
        self.assertEqual(lines[:3], ["{", ' "schema": "torchplace.run/1",', ' "steps": {'])
        self.assertEqual(lines[3:5], ['  "build": {', '   "status": "ok"'])
        self.assertEqual(lines[-2:], ["}", ""])  # ends with a newline

    def test_a_file_that_is_not_a_run_record_is_left_as_it_is(self):
        with open(self.path, "w", encoding="utf-8") as handle:
            handle.write("not json\n")
        code, _, err = self.main(self.path, "build", "status=ok")
        self.assertEqual(code, schema.EXIT_INPUT)
        self.assertIn(f"torchplace: run_record: run record: {self.path}", err)
        with open(self.path, encoding="utf-8") as handle:
            self.assertEqual(handle.read(), "not json\n")


class Usage(Folder):
    def assert_usage(self, *args):
        code, out, err = self.main(*args)
        self.assertEqual((code, out), (schema.EXIT_USAGE, ""))
        self.assertIn("python3 -m torchplace.run_record OUT/run.json STEP", err)
        self.assertFalse(os.path.exists(self.path))

    def test_too_few_arguments(self):
        self.assert_usage(self.path, "build")
        self.assert_usage("--status", self.path)

    def test_a_step_that_is_not_a_lower_case_word(self):
        for step in ("Build", "1st", "two words", "bench-cpu"):
            with self.subTest(step=step):
                self.assert_usage(self.path, step, "status=ok")

    def assert_bad_pair(self, pairs, message):
        code, out, err = self.main(self.path, "build", *pairs)
        self.assertEqual((code, out), (schema.EXIT_USAGE, ""))
        self.assertEqual(err, f"torchplace: run_record: {message}\n")
        self.assertFalse(os.path.exists(self.path))

    def test_a_bad_pair_is_named(self):
        for pair in ("status", "Status=ok", "=ok", "9=ok"):
            with self.subTest(pair=pair):
                message = f"expected KEY=VALUE with a lower-case key, got {pair!r}"
                self.assert_bad_pair(["status=ok", pair], message)

    def test_a_step_needs_a_status(self):
        self.assert_bad_pair(["seconds=2"], "a step needs status=VALUE")


class Program(Folder):
    def test_run_as_a_program_it_exits_with_mains_code(self):
        for args, code in (([self.path, "build", "status=ok"], 0), ([self.path], 64)):
            with self.subTest(args=args), mock.patch.object(sys, "argv", ["run_record", *args]):
                with contextlib.redirect_stderr(io.StringIO()):
                    with self.assertRaises(SystemExit) as stop:
                        runpy.run_module("torchplace.run_record", run_name="__main__")
                self.assertEqual(stop.exception.code, code)
        self.assertEqual(self.steps(), {"build": {"status": "ok"}})


if __name__ == "__main__":
    unittest.main()
