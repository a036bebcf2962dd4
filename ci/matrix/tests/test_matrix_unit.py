#!/usr/bin/env python3
"""The harness unit tests' step in each matrix column (torchplace/matrix/unit.py): how a column's
run.json step and gtest report become its `unit` entry, and the gate's `unit` rule. Synthetic
columns (test_matrix.write_column), as the rest of the matrix tests."""
import json
import os
import tempfile
import unittest

from test_matrix import FIX, cell, write_column
from torchplace.matrix import gate, merge
from torchplace.matrix.unit import column_unit, unit_failures

VERSIONS = [("1.13.1", "host-bookworm"), ("2.14.1", "sid")]


def write_json(path, doc):
    with open(path, "w") as handle:
        json.dump(doc, handle)


def report(*tests):
    """A synthetic gtest JSON report: tests as (suite.name, result, failed)."""
    suites = {}
    for name, result, failed in tests:
        suite, test = name.split(".")
        entry = {"name": test, "status": "NOTRUN" if result == "NOTRUN" else "RUN"}
        entry["result"] = "SUPPRESSED" if result == "NOTRUN" else result
        if failed:
            entry["failures"] = [{"failure": "synthetic"}]
        suites.setdefault(suite, []).append(entry)
    return {"testsuites": [{"name": s, "testsuite": t} for s, t in suites.items()]}


class ColumnUnit(unittest.TestCase):
    """column_unit(): the entry from the step and the report."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def entry(self, doc, step=None):
        if doc is not None:
            write_json(os.path.join(self.dir, "unit.json"), doc)
        return column_unit(self.dir, {"unit": step or {"status": "ok", "exit": 0}})

    def test_skipped_and_disabled_tests_do_not_count_as_run(self):
        doc = report(("A.Runs", "COMPLETED", False), ("A.Skips", "SKIPPED", False))
        doc["testsuites"][0]["testsuite"].append({"name": "Off", "status": "NOTRUN"})
        tests = {"A.Runs": "pass", "A.Skips": "skip", "A.Off": "skip"}
        self.assertEqual(self.entry(doc), {"status": "ok", "ran": 1, "failed": [], "tests": tests})

    def test_only_skips_is_no_test_run(self):
        entry = self.entry(report(("A.Skips", "SKIPPED", False)))
        self.assertEqual((entry["status"], entry["ran"], entry["failed"]), ("failed", 0, []))
        self.assertEqual(entry["note"], "no test ran (unit.json)")

    def test_a_report_that_is_not_gtest_s_is_a_failure_naming_it(self):
        for doc in ([], {"tests": 3}, {"testsuites": {}}):
            with self.subTest(doc=doc):
                entry = self.entry(doc, {"status": "failed", "exit": 1})
                self.assertEqual(entry["status"], "failed")
                self.assertEqual((entry["ran"], entry["failed"]), (0, []))
                self.assertIn("not a gtest report", entry["note"])
                self.assertIn("exited 1", entry["note"])

    def test_failure_counts_that_agree_with_the_tests_pass(self):
        doc = report(("A.Holds", "COMPLETED", False), ("A.Also", "COMPLETED", False))
        doc["failures"], doc["testsuites"][0]["failures"] = 0, 0  # as gtest writes them
        self.assertEqual(self.entry(doc)["status"], "ok")

    def test_a_failure_count_that_lists_no_failing_test_is_not_a_pass(self):
        for where in ("report", "suite"):
            with self.subTest(where):
                doc = report(("A.Holds", "COMPLETED", False))
                (doc if where == "report" else doc["testsuites"][0])["failures"] = 1
                entry = self.entry(doc)
                self.assertEqual(entry["status"], "failed")
                self.assertIn("failure", entry["note"])

    def test_a_failing_test_is_named_and_needs_no_note(self):
        doc = report(("A.Holds", "COMPLETED", False), ("B.Breaks", "COMPLETED", True))
        entry = self.entry(doc, {"status": "failed", "exit": 1})
        tests = {"A.Holds": "pass", "B.Breaks": "fail"}
        self.assertEqual(
            entry, {"status": "failed", "ran": 2, "failed": ["B.Breaks"], "tests": tests}
        )

    def test_a_non_zero_exit_with_every_test_passing_is_a_failure(self):
        entry = self.entry(report(("A.Holds", "COMPLETED", False)), {"status": "ok", "exit": 134})
        self.assertEqual(entry["status"], "failed")
        self.assertEqual(entry["note"], "the binary exited 134 though no test in its report failed")
        entry = self.entry(
            report(("A.Holds", "COMPLETED", False)), {"status": "failed", "exit": 124}
        )
        self.assertEqual(
            entry["note"], "the binary timed out (900 s) though no test in its report failed"
        )

    def test_an_ok_step_without_an_exit_is_no_pass(self):
        entry = self.entry(report(("A.Holds", "COMPLETED", False)), {"status": "ok", "exit": None})
        self.assertEqual(entry["status"], "failed")

    def test_a_step_that_ran_and_left_no_report_failed(self):
        entry = self.entry(None, {"status": "failed", "exit": 139})
        self.assertEqual(entry["status"], "failed", "absent means no unit step, not no report")
        self.assertIn("exited 139", entry["note"])

    def test_an_absent_step_keeps_its_reason(self):
        step = {"status": "absent", "note": "synthetic: not built"}
        self.assertEqual(
            column_unit(self.dir, {"unit": step}), {"status": "absent", "note": step["note"]}
        )
        self.assertEqual(
            column_unit(self.dir, {}),
            {"status": "absent", "note": "run.json records no unit step"},
        )


def column(version, tests, status="ok"):
    """A synthetic matrix.json column whose unit entry has `tests` (name -> pass, fail, skip)."""
    failed = [name for name, state in tests.items() if state == "fail"]
    unit = {"status": status, "ran": len(tests), "failed": failed, "tests": tests}
    return {"version": version, "status": "ok", "unit": unit}


class LostTests(unittest.TestCase):
    """unit_failures(): a test lost is judged against the last column whose tests were ok."""

    def test_each_column_is_compared_with_the_previous_ok_one_not_the_first(self):
        versions = [
            column("1.13.1", {"S.X": "pass"}),
            column("2.6.0", {"S.X": "pass", "S.Y": "pass"}),
            column("2.14.1", {"S.X": "pass"}),
        ]
        details = [f["detail"] for f in unit_failures(versions)]
        self.assertEqual(details, ["passed on 2.6.0, skipped or gone here: S.Y"])

    def test_a_failed_column_is_not_the_reference_for_the_next(self):
        versions = [
            column("1.13.1", {"S.X": "pass"}),
            column("2.6.0", {"S.X": "fail"}, status="failed"),
            column("2.14.1", {"S.Z": "pass"}),
        ]
        details = [f["detail"] for f in unit_failures(versions)]
        self.assertEqual(details, ["failed: S.X", "passed on 1.13.1, skipped or gone here: S.X"])

    def test_a_column_whose_tests_did_not_run_is_named_with_its_note(self):
        # kills reports/torchplace/matrix/unit.py:unit_failures:4293ae:arg_swap:0 (the detail
        # read as the word "note"); no unit entry at all reads as the gate's own note
        crashed = column("2.6.0", {})
        crashed["unit"].update(status="failed", note="synthetic: the binary exited 134")
        versions = [crashed, {"version": "2.14.1", "status": "ok"}]
        details = [(f["status"], f["detail"]) for f in unit_failures(versions)]
        expected = [("failed", "synthetic: the binary exited 134")]
        self.assertEqual(details, expected + [("absent", "matrix.json records no unit")])


class UnitRule(unittest.TestCase):
    """The gate's `unit` rule over merged synthetic columns."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.out = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def unit_verdict(self, unit, change=None):
        """Both columns' cells pass; the newer one's unit tests are `unit` (failed names, or
        "absent"); change(column_dir) alters its files before the merge."""
        write_column(self.out, "1.13.1", "ok", [cell(FIX)])
        write_column(self.out, "2.14.1", "ok", [cell(FIX)], unit=unit)
        if change:
            change(os.path.join(self.out, "2.14.1"))
        return gate.gate(merge.merge(self.out, VERSIONS))

    def test_a_unit_test_failing_on_one_version_fails_the_gate_naming_it(self):
        verdict = self.unit_verdict(["SimDevices.OutputsLandOnTheInputsDevice"])
        self.assertEqual(verdict["verdict"], "fail")
        self.assertEqual(
            [(f["kind"], f["id"], f["detail"]) for f in verdict["failures"]],
            [("unit", "<2.14.1 unit tests>", "failed: SimDevices.OutputsLandOnTheInputsDevice")],
        )
        self.assertEqual(verdict["pairs"][0]["regressions"], [], "the cells are still compared")

    def test_unit_tests_that_did_not_run_fail_the_gate(self):
        def unreadable(column):
            with open(os.path.join(column, "unit.json"), "w") as handle:
                handle.write("{")

        def no_test(column):
            with open(os.path.join(column, "unit.json"), "w") as handle:
                json.dump({"testsuites": []}, handle)

        def no_step(column):
            run = os.path.join(column, "run.json")
            with open(run) as handle:
                record = json.load(handle)
            del record["steps"]["unit"]
            with open(run, "w") as handle:
                json.dump(record, handle)

        cases = {"absent": ("absent", None), "unreadable": ((), unreadable)}
        cases |= {"no test ran": ((), no_test), "no step": ((), no_step)}
        for name, (unit, change) in cases.items():
            with self.subTest(name):
                self.tearDown()
                self.setUp()
                verdict = self.unit_verdict(unit, change)
                self.assertEqual(verdict["verdict"], "fail")
                self.assertEqual([f["kind"] for f in verdict["failures"]], ["unit"])

    def test_unit_tests_that_passed_everywhere_pass(self):
        verdict = self.unit_verdict(())
        self.assertEqual(verdict["verdict"], "pass")
        versions = merge.merge(self.out, VERSIONS)
        unit = versions["versions"][1]["unit"]
        self.assertEqual((unit["status"], unit["ran"], unit["failed"]), ("ok", 1, []))

    def test_a_long_list_of_failures_names_the_first_ten_and_counts_the_rest(self):
        for count, shown, more in ((12, 10, " and 2 more"), (10, 10, ""), (9, 9, "")):
            with self.subTest(count=count):
                self.tearDown()
                self.setUp()
                names = [f"Synthetic.Fails{index:02d}" for index in range(count)]
                detail = self.unit_verdict(names)["failures"][0]["detail"]
                self.assertEqual(detail, "failed: " + ", ".join(names[:shown]) + more)


if __name__ == "__main__":
    unittest.main()
