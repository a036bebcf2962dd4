#!/usr/bin/env python3
"""The report at its limits (issue 25): a run of 0 cells and one of 5,000 distinct rows render
(the matrix figure capped, saying so); a lone surrogate is encoded before anything is written;
bad fields are exit 3 with a message, not a traceback; a folder it cannot write is exit 3 with a
message; new figures never stand beside an earlier index.html. Input: the cpu_only fixture's
results.json, changed here (synthetic).

  test_report_limits.py [TestClass ...]      (CTest: report.Limits)
"""
import copy
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURE = os.path.join(HERE, "fixtures", "cpu_only", "results.json")
PASS, INPUT = 0, 3


def base():
    with open(FIXTURE, encoding="utf-8") as handle:
        doc = json.load(handle)
    doc["about"] = "synthetic: the cpu_only fixture changed by test_report_limits.py"
    return doc


def distinct_rows(count):
    doc = base()
    template = next(c for c in doc["cells"] if c["status"] == "pass")
    cells = []
    for index in range(count):
        one = copy.deepcopy(template)
        one["scenario"] = f"synthetic_{index:04d}"
        one["id"] = f"synthetic_{index:04d}/device=cpu"
        one["axes"] = {}
        cells.append(one)
    doc["cells"] = cells
    return doc


class ReportCase(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="report-limits-")
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.run_dir = os.path.join(self.tmp, "run")
        os.makedirs(self.run_dir)

    def render(self, doc, out=None, env=None):
        with open(os.path.join(self.run_dir, "results.json"), "w", encoding="utf-8") as handle:
            json.dump(doc, handle)
        args = [
            sys.executable,
            "-m",
            "torchplace.report",
            self.run_dir,
            "--out",
            out or os.path.join(self.tmp, "out"),
        ]
        done = subprocess.run(
            args, capture_output=True, timeout=600, env=dict(os.environ, **(env or {}))
        )
        self.output = (done.stdout + done.stderr).decode("utf-8", "backslashreplace")
        self.assertNotIn("Traceback", self.output)
        return done.returncode

    def page(self):
        with open(os.path.join(self.tmp, "out", "index.html"), encoding="utf-8") as handle:
            return handle.read()


class Renders(ReportCase):
    def test_zero_cells(self):
        doc = base()
        doc["cells"] = []
        self.assertEqual(self.render(doc), PASS, self.output)
        self.assertIn("outcome_matrix.png", os.listdir(os.path.join(self.tmp, "out")))

    def test_five_thousand_distinct_rows(self):
        self.assertEqual(self.render(distinct_rows(5000)), PASS, self.output)
        self.assertIn("synthetic_4999", self.page())  # the page lists every cell

    def test_a_lone_surrogate(self):
        doc = base()
        doc["cells"][0]["reason"] = "reason \ud800 (synthetic)"
        doc["cells"][0]["observed"]["message"] = "message \udfff (synthetic)"
        self.assertEqual(self.render(doc, env={"PYTHONIOENCODING": "ascii"}), PASS, self.output)


class Refuses(ReportCase):
    """Bad fields: exit 3 naming the problem, nothing written."""

    def refused(self, change, out=None):
        doc = base()
        change(doc)
        self.assertEqual(self.render(doc, out), INPUT, self.output)
        self.assertFalse(os.path.exists(os.path.join(self.tmp, "out")))

    def test_reason_null(self):
        self.refused(lambda doc: doc["cells"][0].update(reason=None))

    def test_id_int(self):
        self.refused(lambda doc: doc["cells"][0].update(id=12))

    def test_fingerprint_string(self):
        self.refused(lambda doc: doc.update(fingerprint="x86_64"))

    def test_an_unwritable_out(self):
        blocker = os.path.join(self.tmp, "a_file")
        open(blocker, "w").close()
        self.assertEqual(self.render(base(), os.path.join(blocker, "out")), INPUT, self.output)
        self.assertIn("cannot write", self.output)


class AsASet(unittest.TestCase):
    """A write that stops after the first figure leaves no earlier index.html beside it."""

    def test_earlier_page_removed_before_new_figures(self):
        from torchplace import schema
        from torchplace.report import cli

        out = tempfile.mkdtemp(prefix="report-set-")
        self.addCleanup(shutil.rmtree, out, True)
        for name in cli.PAGES:
            with open(os.path.join(out, name), "w", encoding="utf-8") as handle:
                handle.write("an earlier report (synthetic)")
        written, original = [], schema.write_atomically

        def stop_after_one(path, data, mode="w"):
            if written:
                raise OSError(28, "No space left on device (synthetic)", path)
            written.append(path)
            original(path, data, mode)

        schema.write_atomically = stop_after_one
        self.addCleanup(setattr, schema, "write_atomically", original)
        with self.assertRaises(OSError):
            cli.write(
                out, {"a.png": b"new", "b.png": b"new", "summary.md": "new", "index.html": "new"}
            )
        self.assertEqual(sorted(os.listdir(out)), ["a.png"])


if __name__ == "__main__":
    unittest.main()
