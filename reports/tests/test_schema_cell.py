#!/usr/bin/env python3
"""torchplace.schema.check_cell, in process on synthetic results.json cells: the cells the harness
writes pass (success, expected error, skip, fail, a cell that never finished), and each field of
the wrong type, outside its closed set or contradicting another (the category and the status, the
expected category and the expected outcome, a passing cell and what it observed) is refused with
an InputError naming the cell and the field.

  test_schema_cell.py [CLASS]      (CTest: report.schema_cell)
"""
import unittest

from schema_cases import SchemaCase, cell
from torchplace import schema

WHERE = "synthetic.json: cells[0]"
ERROR = {"outcome": "error", "error_class": "c10::Error", "category": "expected_error"}
SKIP = {"outcome": "skip", "error_class": None, "category": "skipped"}


class Valid(SchemaCase):
    def test_the_harness_cells_pass_and_come_back(self) -> None:
        cells = [
            cell(),  # no message, skip_code nor notes: all optional
            cell(expected={**cell()["expected"], "category": "race_shown"}, category="race_shown"),
            cell(
                expected=ERROR,
                observed={"outcome": "error", "error_class": "c10::Error", "message": "boom"},
                category="expected_error",
                notes=["synthetic note"],
                skip_code=None,
            ),
            cell(
                expected=SKIP,
                observed={"outcome": "not_run", "error_class": None},
                status="skip",
                category="skipped",
                skip_code="no_cuda",
            ),
            cell(
                expected=SKIP,
                observed={"outcome": "not_run", "error_class": None},
                status="skip",
                category="skipped",
                skip_code="needs_newer_libtorch",
                needs_libtorch="2.0",
            ),
            cell(
                observed={"outcome": "error", "error_class": "c10::Error"},
                status="fail",
                category="failed",
            ),
            cell(
                observed={"outcome": "exception", "error_class": None},
                status="timeout",  # any status but pass and skip: a failed cell
                category="failed",
            ),
        ]
        for valid in cells:
            self.assertIs(schema.check_cell(valid, WHERE), valid)


class Refused(SchemaCase):
    def check(self, fragment: str, **fields: object) -> None:
        message = self.refuses(fragment, schema.check_cell, cell(**fields), WHERE)
        self.assertTrue(message.startswith(WHERE), message)

    def test_missing_and_mistyped_fields(self) -> None:
        missing = cell()
        del missing["reason"], missing["category"]  # all named at once
        self.refuses(
            f"{WHERE}: missing field(s) reason, category", schema.check_cell, missing, WHERE
        )
        self.check(": id is empty", id="")
        self.check(": id must be str, found int", id=5)
        for key in ("scenario", "device", "status", "reason"):
            self.check(f": {key} must be str, found int", **{key: 5})
        self.check(": axes must be dict", axes=["cpu"])
        self.check(".axes: placement must be str, found int", axes={"placement": 1})
        self.check(": expected must be dict", expected="success")
        self.check(": observed must be dict", observed=None)
        self.check(": skip_code must be str or null", skip_code=7)
        self.check(": needs_libtorch must be str or null", needs_libtorch=2.0)
        self.check(": notes must be list", notes="one")
        self.check(": notes[1] must be str, found int", notes=["one", 2])

    def test_expected(self) -> None:
        base = cell()["expected"]
        self.check(
            ".expected: outcome 'maybe' is not one of success, error, skip",
            expected={**base, "outcome": "maybe"},
        )
        self.check(
            ".expected: error_class must be str, found NoneType",
            expected={**ERROR, "error_class": None},
        )
        self.check(
            ".expected: error_class must be null, found str",
            expected={**base, "error_class": "c10::Error"},
        )
        self.check(
            ".expected: unknown outcome category 'bogus'", expected={**base, "category": "bogus"}
        )
        self.check(
            ".expected: unknown outcome category None",
            expected={"outcome": "success", "error_class": None},
        )
        self.check(
            ".expected: category 'expected_error' contradicts outcome 'success'",
            expected={**base, "category": "expected_error"},
        )

    def test_observed(self) -> None:
        self.check(
            ".observed: outcome 'weird' is not one of success, error, exception, not_run",
            observed={"outcome": "weird", "error_class": None},
        )
        self.check(
            ".observed: error_class must be str, found NoneType",
            observed={"outcome": "error", "error_class": None},
            status="fail",
            category="failed",
        )
        self.check(
            ".observed: error_class must be str or null, found int",
            observed={"outcome": "success", "error_class": 3},
        )
        self.check(
            ".observed: message must be str, found int",
            observed={"outcome": "success", "error_class": None, "message": 3},
        )

    def test_category_against_status(self) -> None:
        self.check(": unknown outcome category 'bogus'", category="bogus")
        self.check(
            ": category 'passed' contradicts status 'skip' (a 'skip' cell is skipped)",
            status="skip",
        )
        self.check(
            ": category 'passed' contradicts status 'fail' (a 'fail' cell is failed)", status="fail"
        )
        self.check(
            ": category 'failed' contradicts status 'pass' (a 'pass' cell is passed or",
            category="failed",
        )

    def test_a_passing_cell_and_what_it_observed(self) -> None:
        self.check(
            ": a passing cell that observed 'error' cannot be 'passed'",
            observed={"outcome": "error", "error_class": "c10::Error"},
        )
        self.check(
            ": a passing cell that observed 'success' cannot be 'expected_error'",
            expected=ERROR,
            category="expected_error",
        )
        for seen in ("exception", "not_run"):
            self.check(
                f": a passing cell cannot have observed {seen!r}",
                observed={"outcome": seen, "error_class": None},
            )


if __name__ == "__main__":
    unittest.main()
