#!/usr/bin/env python3
"""torchplace.schema.load_matrix and check_matrix_entry, in process on synthetic matrix.json
documents: a valid matrix comes back (a column with, without and with a null fingerprint; a cell
that ran and one its column never reached); another schema, a missing or mistyped field and an
entry whose category contradicts its status are refused naming the file, the column or cell and
the field; and torchplace.matrix.status exits 3 on such a matrix.

  test_schema_matrix.py [CLASS]      (CTest: report.schema_matrix)
"""
import contextlib
import copy
import io
import unittest

from schema_cases import SchemaCase, entry, matrix
from torchplace import schema
from torchplace.matrix import status

W = "W"


class Entry(SchemaCase):
    def test_valid_entries(self) -> None:
        valid = [
            dict(entry(), observed_class=None, message="synthetic", reason=""),
            dict(entry("fail", "error", "failed"), observed_class="c10::Error"),
            entry("skip", "not_run", "skipped"),
            entry("fail", "exception", "failed"),
            entry("run_crashed", "not_run", "not_run"),
        ]
        for one in valid:
            self.assertIsNone(schema.check_matrix_entry(one, W))

    def test_each_bad_field_is_named(self) -> None:
        cases = [
            ({"status": "pass"}, "W: missing field(s) observed_outcome, category"),
            (entry(status=5), "W: status must be str, found int"),
            (entry(outcome="weird"), "W: observed_outcome 'weird' is not one of success, error"),
            (
                entry("build_failed", "success", "not_run"),
                "W: observed_outcome 'success' is not one of not_run",
            ),
            (entry(category="bogus"), "W: unknown outcome category 'bogus'"),
            (entry(category="not_run"), "W: category 'not_run' contradicts status 'pass'"),
            (entry("fail", "error"), "W: category 'passed' contradicts status 'fail'"),
            (entry("skip", "not_run"), "W: category 'passed' contradicts status 'skip'"),
            (
                entry("build_failed", "not_run", "failed"),
                "W: category 'failed' contradicts status 'build_failed'",
            ),
            (dict(entry(), observed_class=1), "W: observed_class must be str or null, found int"),
            (dict(entry(), message=None), "W: message must be str, found NoneType"),
            (dict(entry(), reason=2), "W: reason must be str, found int"),
        ]
        for bad, fragment in cases:
            self.refuses(fragment, schema.check_matrix_entry, bad, W)
        self.refuses("(known: passed,", schema.check_matrix_entry, entry(category="bogus"), W)
        self.refuses(", not_run);", schema.check_matrix_entry, entry(category="bogus"), W)


class Matrix(SchemaCase):
    def load(self, doc: dict) -> dict:
        return schema.load_matrix(self.write("matrix.json", doc))

    def test_a_valid_matrix_comes_back(self) -> None:
        self.assertEqual(self.load(matrix()), matrix())

    def test_another_schema_or_a_missing_field_is_refused(self) -> None:
        path = self.path("matrix.json")
        doc = dict(matrix(), schema=schema.RESULTS_SCHEMA)
        message = self.refuses("", self.load, doc)
        self.assertEqual(
            message, f"{path}: schema is 'torchplace.results/1', expected 'torchplace.matrix/1'"
        )
        for key in ("schema", "versions", "cells"):
            doc = matrix()
            del doc[key]
            self.refuses(f"{path}: missing field(s) {key}", self.load, doc)
        self.refuses(
            f"{path}: versions must be a list of objects", self.load, dict(matrix(), versions={})
        )
        self.refuses(f"{path}: cells[0] must be an object", self.load, dict(matrix(), cells=[[]]))
        self.refuses("version matrix: ", schema.load_matrix, self.path("absent.json"))

    def test_each_bad_column_field_is_named(self) -> None:
        where = f"{self.path('matrix.json')}: versions[0]"
        cases = [
            ({}, ": missing field(s) version, status"),
            ({"version": 2.3, "status": "ok"}, ": version must be str, found float"),
            ({"version": "2.3.0", "status": None}, ": status must be str, found NoneType"),
            (
                {"version": "v", "status": "ok", "fingerprint": []},
                ": fingerprint must be dict or null",
            ),
            (
                {"version": "v", "status": "ok", "fingerprint": {"synthetic": "x"}},
                ".fingerprint: missing field(s) libtorch_version",
            ),
            (
                {"version": "v", "status": "ok", "fingerprint": {"libtorch_version": 2}},
                ".fingerprint: libtorch_version must be str",
            ),
            (
                {
                    "version": "v",
                    "status": "ok",
                    "fingerprint": {"libtorch_version": "v", "synthetic": 1},
                },
                ".fingerprint: synthetic must be str",
            ),
        ]
        for version, fragment in cases:
            doc = matrix()
            doc["versions"][0] = version
            self.refuses(where + fragment, self.load, doc)

    def test_each_bad_cell_field_is_named(self) -> None:
        where = f"{self.path('matrix.json')}: cells[0]"
        cases = [
            ("by_version", None, ": missing field(s) by_version"),
            ("id", 1, ": id must be str"),
            ("scenario", 1, ": scenario must be str"),
            ("device", 1, ": device must be str"),
            ("axes", [], ": axes must be dict"),
            ("by_version", [], ": by_version must be dict"),
            (
                "by_version",
                {"2.3.0": entry(category="x")},
                ".by_version['2.3.0']: unknown outcome category 'x'",
            ),
        ]
        for key, value, fragment in cases:
            doc = copy.deepcopy(matrix())
            if value is None:
                del doc["cells"][0][key]
            else:
                doc["cells"][0][key] = value
            self.refuses(where + fragment, self.load, doc)
        doc = matrix()
        del doc["cells"][0]["axes"], doc["cells"][0]["by_version"]  # all named at once
        self.refuses(where + ": missing field(s) axes, by_version", self.load, doc)

    def test_status_exits_3_on_a_matrix_of_another_schema(self) -> None:
        path = self.write("matrix.json", dict(matrix(), schema="torchplace.matrix/0"))
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            code = status.main(["status.py", path])
        self.assertEqual(code, schema.EXIT_INPUT)
        self.assertEqual(code, 3)  # "3 unreadable or malformed input" (status.py's usage)
        self.assertIn("schema is 'torchplace.matrix/0'", err.getvalue())


if __name__ == "__main__":
    unittest.main()
