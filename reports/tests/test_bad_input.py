#!/usr/bin/env python3
"""Tests of the report (torchplace.report) on bad input: exit 3, a message naming the file and the
problem, no traceback, and nothing written (a previous report stays whole).

usage: test_bad_input.py [TestClass ...]   (CTest runs it as report.BadInput)
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

from render_helpers import load
from test_render import FIXTURES, RENDER, TempDirs, render
from torchplace.schema import EXIT_INPUT

BAD_CASES = (  # (fixture under bad/, the file it replaces, words the message must hold)
    ("malformed.json", "results.json", "is not valid JSON"),
    ("empty.json", "results.json", "is empty"),
    ("missing_fields.json", "results.json", "missing field(s) status, reason"),
    ("cell_without_category.json", "results.json", "cells[1]: missing field(s) category"),
    ("unknown_category.json", "results.json", "cells[1]: unknown outcome category 'fix_passed'"),
    ("other_tool.json", "bench.json", "not Google Benchmark JSON"),
    ("other_gbench.json", "bench.json", "not from torchplace's benchmarks"),
    ("bench_missing_fields.json", "bench.json", "missing field(s) real_time"),
    ("bench_run_name_not_a_string.json", "bench.json", "run_name must be a string, found int"),
    ("malformed.json", "bench.json", "is not valid JSON"),
    ("empty.json", "matrix.json", "is empty"),
    ("matrix_missing_fields.json", "matrix.json", "missing field(s) cells"),
    ("not_utf8.json", "results.json", "is not UTF-8 text (byte 0xe9 at offset 195"),
    ("not_utf8.json", "bench.json", "is not UTF-8 text (byte 0xe9"),
    ("cells_not_a_list.json", "results.json", "cells must be a list of objects, found int"),
    ("cell_not_an_object.json", "results.json", "cells[0] must be an object, found str"),
    (
        "benchmarks_not_a_list.json",
        "bench.json",
        "benchmarks must be a list of objects, found " "dict",
    ),
    ("matrix_cells_not_a_list.json", "matrix.json", "cells must be a list of objects, found str"),
    ("matrix_versions_not_a_list.json", "matrix.json", "versions must be a list of objects"),
)
PREVIOUS_REPORT = {"index.html": "<p>previous report</p>", "summary.md": "## previous\n"}


class BadInput(TempDirs):
    def bad_run_dir(self, bad_name, replaces):
        """A copy of the cpu_only run with one file bad, in a folder of its own (a failed subtest
        leaves its files, and the next one starts clean)."""
        run_dir = os.path.join(tempfile.mkdtemp(dir=self.tmp), "run")
        shutil.copytree(os.path.join(FIXTURES, "cpu_only"), run_dir)
        shutil.copy(os.path.join(FIXTURES, "bad", bad_name), os.path.join(run_dir, replaces))
        return run_dir

    def test_bad_input_fails_clearly_and_writes_nothing(self):
        for bad_name, replaces, words in BAD_CASES:
            with self.subTest(bad=bad_name, replaces=replaces):
                run_dir = self.bad_run_dir(bad_name, replaces)
                out = os.path.join(os.path.dirname(run_dir), "out")
                done = render(run_dir, out)
                self.assertEqual(done.returncode, EXIT_INPUT, done.stderr)
                self.assertIn(os.path.join(run_dir, replaces), done.stderr)
                self.assertIn(words, done.stderr)
                self.assertNotIn("Traceback", done.stderr)
                self.assertFalse(os.path.exists(out), "nothing may be written on bad input")

    def check_previous_report_kept(self, run_dir, out, problem):
        """Renders run_dir into out, which holds PREVIOUS_REPORT: exit 3, out left as it was."""
        done = render(run_dir, out)
        self.assertEqual(done.returncode, EXIT_INPUT, done.stderr)
        self.assertIn(problem, done.stderr)
        self.assertNotIn("Traceback", done.stderr)
        self.assertEqual(set(os.listdir(out)), set(PREVIOUS_REPORT))
        for name, text in PREVIOUS_REPORT.items():
            with open(os.path.join(out, name), encoding="utf-8") as handle:
                self.assertEqual(handle.read(), text, name)

    def test_bad_input_keeps_the_previous_report(self):
        for bad_name, replaces, words in BAD_CASES:
            with self.subTest(bad=bad_name, replaces=replaces):
                run_dir = self.bad_run_dir(bad_name, replaces)
                out = os.path.join(os.path.dirname(run_dir), "out")
                os.makedirs(out)
                for name, text in PREVIOUS_REPORT.items():
                    with open(os.path.join(out, name), "w", encoding="utf-8") as handle:
                        handle.write(text)
                self.check_previous_report_kept(run_dir, out, words)

    def test_unreadable_file_is_bad_input(self):
        run_dir = os.path.join(self.tmp, "run")
        shutil.copytree(os.path.join(FIXTURES, "cpu_only"), run_dir)
        results = os.path.join(run_dir, "results.json")
        os.unlink(results)
        os.makedirs(results)  # a folder where the file should be: open() raises an OSError
        for name, text in PREVIOUS_REPORT.items():
            with open(os.path.join(run_dir, name), "w", encoding="utf-8") as handle:
                handle.write(text)
        done = render(run_dir)
        self.assertEqual(done.returncode, EXIT_INPUT, done.stderr)
        self.assertIn(f"{results} cannot be read (Is a directory)", done.stderr)
        self.assertNotIn("Traceback", done.stderr)
        self.assertEqual(
            set(os.listdir(run_dir)), {"results.json", "bench.json"} | set(PREVIOUS_REPORT)
        )

    def test_a_bad_run_leaves_the_previous_report_whole(self):
        run_dir = self.bad_run_dir("missing_fields.json", "results.json")
        with open(os.path.join(run_dir, "index.html"), "w", encoding="utf-8") as page:
            page.write("<p>previous report</p>")
        done = render(run_dir)
        self.assertEqual(done.returncode, EXIT_INPUT, done.stderr)
        with open(os.path.join(run_dir, "index.html"), encoding="utf-8") as page:
            self.assertEqual(page.read(), "<p>previous report</p>")
        self.assertEqual(set(os.listdir(run_dir)), {"results.json", "bench.json", "index.html"})

    def test_device_copy_counter_on_some_repetitions_only(self):
        run_dir = os.path.join(self.tmp, "run")
        shutil.copytree(os.path.join(FIXTURES, "synthetic_gpu"), run_dir)
        bench = load(os.path.join(run_dir, "bench.json"))
        entry = next(
            e
            for e in bench["benchmarks"]
            if "device_copy_bytes_per_second" in e
            and e["run_type"] == "iteration"
            and "pinned_resident" in e["name"]
        )
        del entry["device_copy_bytes_per_second"]
        with open(os.path.join(run_dir, "bench.json"), "w", encoding="utf-8") as handle:
            json.dump(bench, handle)
        done = render(run_dir)
        self.assertEqual(done.returncode, EXIT_INPUT, done.stderr)
        self.assertIn(
            f"{entry['name']}: missing field(s) device_copy_bytes_per_second", done.stderr
        )
        self.assertEqual(set(os.listdir(run_dir)), {"results.json", "bench.json"})

    def test_missing_results_json(self):
        os.makedirs(os.path.join(self.tmp, "run"))
        done = render(os.path.join(self.tmp, "run"))
        self.assertEqual(done.returncode, EXIT_INPUT)
        self.assertIn("results.json does not exist", done.stderr)

    def test_bad_arguments_exit_64(self):
        done = subprocess.run([sys.executable, *RENDER], capture_output=True)
        self.assertEqual(done.returncode, 64)
        done = subprocess.run([sys.executable, *RENDER, self.tmp, "--colour"], capture_output=True)
        self.assertEqual(done.returncode, 64)

    def test_missing_matplotlib_says_what_to_install(self):
        shadow = os.path.join(self.tmp, "shadow", "matplotlib")
        os.makedirs(shadow)
        with open(os.path.join(shadow, "__init__.py"), "w", encoding="utf-8") as module:
            module.write("raise ImportError('No module named matplotlib (test shadow)')\n")
        path = [os.path.dirname(shadow), os.environ.get("PYTHONPATH", "")]  # shadow first
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, path)))
        done = render(os.path.join(FIXTURES, "cpu_only"), os.path.join(self.tmp, "out"), env)
        self.assertEqual(done.returncode, EXIT_INPUT)
        self.assertIn("apt-get install python3-matplotlib python3-scipy", done.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.tmp, "out")))


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1] + sys.argv[1:], verbosity=2)
