#!/usr/bin/env python3
"""Tests that kill generated mutants of the behaviour gate and the verdict report which survived
every other test (torchplace.mutation.generated; ci/mutation/README.md "Generated mutants").
Each names the mutant it was seen to kill. Input files are made here and say that they are
synthetic."""
import json
import os
import tempfile
import unittest

from gate_inputs import write_in, CPU_HOST, FIX_CPU, FIX_CUDA, expectations, passing, results
from torchplace.gate import behaviour, report
from torchplace.schema import InputError


class ExpectationsFile(unittest.TestCase):
    CELL = {"outcome": "success", "error_class": None, "category": "passed"}

    def test_a_wrong_schema_is_refused(self):
        # kills reports/torchplace/gate/behaviour.py:load_expectations:784781:delete_branch:0
        # (and its delete_stmt:0)
        with tempfile.TemporaryDirectory() as folder:
            path = write_in(
                folder,
                "expectations.json",
                {
                    "schema": "torchplace.expectations/0",
                    "synthetic": True,
                    "cells": {"demo/device=cpu": self.CELL},
                },
            )
            with self.assertRaises(InputError) as raised:
                behaviour.load_expectations(path)
            self.assertIn("schema", str(raised.exception))

    def test_a_file_without_schema_or_cells_is_bad_input_naming_them(self):
        # kills reports/torchplace/gate/behaviour.py:load_expectations:3cd906:delete_stmt:0 (a
        # KeyError, a tool error, instead)
        with tempfile.TemporaryDirectory() as folder:
            for doc, missing in (({"cells": {}}, "schema"), ({"schema": "x"}, "cells")):
                path = write_in(folder, "expectations.json", dict(doc, synthetic=True))
                with self.subTest(missing=missing), self.assertRaises(InputError) as raised:
                    behaviour.load_expectations(path)
                self.assertIn(f"missing field(s) {missing}", str(raised.exception))

    def test_a_category_that_contradicts_the_outcome_is_refused(self):
        # kills reports/torchplace/gate/behaviour.py:_check_entry:cdfa50:delete_branch:0
        cell = dict(self.CELL, category="expected_error")  # success cannot be an expected error
        with tempfile.TemporaryDirectory() as folder:
            doc = {
                "schema": behaviour.EXPECTATIONS_SCHEMA,
                "synthetic": True,
                "cells": {"demo/device=cpu": cell},
            }
            with self.assertRaises(InputError) as raised:
                behaviour.load_expectations(write_in(folder, "expectations.json", doc))
        self.assertIn(
            "category 'expected_error' contradicts outcome 'success'", str(raised.exception)
        )

    def test_the_right_schema_loads(self):
        with tempfile.TemporaryDirectory() as folder:
            path = write_in(
                folder,
                "expectations.json",
                {
                    "schema": behaviour.EXPECTATIONS_SCHEMA,
                    "synthetic": True,
                    "cells": {"demo/device=cpu": self.CELL},
                },
            )
            self.assertEqual(behaviour.load_expectations(path), {"demo/device=cpu": self.CELL})


class CommittedSkip(unittest.TestCase):
    def test_a_cell_committed_as_skipped_that_ran_is_an_outcome_change(self):
        # kills reports/torchplace/gate/behaviour.py:_observation_problem:a804a5:delete_stmt:0
        committed = {"outcome": "skip", "error_class": None, "category": "skipped"}
        kind, text = behaviour._observation_problem(committed, passing(FIX_CPU))
        self.assertEqual(kind, "outcome_changed")
        self.assertIn("committed as skipped, the cell ran (success)", text)


class RegressionRecords(unittest.TestCase):
    def test_a_new_cell_regression_shows_what_the_cell_expects(self):
        # kills reports/torchplace/gate/behaviour.py:_regression:9d0b84:logic_swap:0 (expected
        # None for a cell not committed)
        cell = dict(passing(FIX_CPU), status="fail", category="failed")
        found = behaviour._regression(cell, None, ("new_failing", "synthetic detail"))
        self.assertEqual(found["expected"], behaviour._expected(cell))
        self.assertIsNotNone(found["expected"])
        committed = {"outcome": "success", "error_class": None, "category": "passed"}
        self.assertIs(behaviour._regression(cell, committed, ("x", "y"))["expected"], committed)

    def test_a_refresh_over_a_file_without_cells_keeps_no_codes(self):
        # kills reports/torchplace/gate/behaviour.py:_committed_codes:e14843:delete_stmt:0 (an
        # AttributeError on a file whose cells are not an object)
        with tempfile.TemporaryDirectory() as folder:
            for cells in ([], "x", None):
                path = write_in(folder, "old.json", {"synthetic": True, "cells": cells})
                self.assertEqual(behaviour._committed_codes(path), {}, cells)

    def test_refresh_returns_the_number_of_cells_it_wrote(self):
        # kills reports/torchplace/gate/behaviour.py:refresh:9738ae:return_value:0 ("wrote None
        # cell expectations")
        with tempfile.TemporaryDirectory() as folder:
            os.makedirs(os.path.join(folder, "run"))
            write_in(folder, "run/results.json", results([passing(FIX_CPU), passing(FIX_CUDA)]))
            target = os.path.join(folder, "expectations.json")
            count = behaviour.refresh(os.path.join(folder, "run"), target)
            with open(target, encoding="utf-8") as handle:
                self.assertEqual(count, len(json.load(handle)["cells"]))
        self.assertEqual(count, 2)


class SyntheticRuns(unittest.TestCase):
    def test_the_section_notes_a_synthetic_run_and_only_such_a_run(self):
        # kills reports/torchplace/gate/behaviour.py:compare:7ccccc:negate_if:0
        cells = [passing(FIX_CPU)]
        measured = {k: v for k, v in CPU_HOST.items() if k != "synthetic"}
        with tempfile.TemporaryDirectory() as folder:
            committed = write_in(folder, "expectations.json", expectations(cells))
            notes = []
            for fingerprint in (CPU_HOST, measured):
                write_in(folder, "results.json", results(cells, fingerprint))
                section = behaviour.compare(os.path.join(folder, "results.json"), committed)
                notes.append(section.get("synthetic"))
        self.assertIn("hand-made test data", notes[0])
        self.assertIsNone(notes[1])


class BehaviourSummary(unittest.TestCase):
    # A synthetic behaviour section: one regression, nothing new or skipped.
    SECTION = {
        "results": "out/run/results.json",
        "expectations": "ci/gate/expectations.json",
        "compared": 1,
        "skipped": [],
        "new": [],
        "categories": {"failed": 1},
        "regressions": [
            {
                "id": "demo/case=x/device=cpu",
                "kind": "started_failing",
                "expected": {"outcome": "success", "error_class": None},
                "observed": {"outcome": "success", "error_class": None, "category": "failed"},
                "detail": "synthetic | detail",
            }
        ],
    }

    def test_each_regression_has_its_row(self):
        # kills reports/torchplace/gate/report.py:_behaviour_lines:0cd336:delete_stmt:0 (no rows)
        rows = [
            line
            for line in report._behaviour_lines(self.SECTION)
            if line.startswith("| `demo/case=x/device=cpu` |")
        ]
        self.assertEqual(len(rows), 1)
        self.assertIn("started_failing", rows[0])
        self.assertIn("synthetic \\| detail", rows[0])
        # kills reports/torchplace/gate/report.py:_behaviour_lines:c44147:logic_swap:0 (the
        # observed column showed the record's dict)
        self.assertIn("| success  (failed) |", rows[0])

    def test_skipped_cells_are_listed_only_when_there_are_some(self):
        # kills reports/torchplace/gate/report.py:_behaviour_lines:4699f3:negate_if:0 (the list
        # shown when empty, hidden when not)
        skipped = [{"id": "demo/case=y/device=cuda:0", "reason": "synthetic: no GPU"}]
        lines = report._behaviour_lines(dict(self.SECTION, skipped=skipped))
        self.assertIn("<details><summary>Skipped cells: 1</summary>", lines)
        self.assertIn("- `demo/case=y/device=cuda:0`: synthetic: no GPU", lines)
        plain = report._behaviour_lines(self.SECTION)
        self.assertFalse([line for line in plain if line.startswith("<details>")], plain)

    def test_synthetic_results_say_so_under_the_heading(self):
        # kills reports/torchplace/gate/report.py:_behaviour_lines:c98006:delete_branch:0 (the
        # summary of hand-made results did not say they were hand-made)
        section = dict(self.SECTION, synthetic="made by test_kills_behaviour.py")
        lines = report._behaviour_lines(section)
        self.assertEqual(lines[0], "### Behaviour")
        notes = [line for line in lines if line.startswith("**SYNTHETIC input**")]
        self.assertEqual(len(notes), 1, lines)
        self.assertIn("made by test_kills_behaviour.py", notes[0])
        self.assertFalse(
            [line for line in report._behaviour_lines(self.SECTION) if "SYNTHETIC" in line]
        )


class PValueColumn(unittest.TestCase):
    def test_a_missing_p_reads_n_a_and_a_value_two_digits(self):
        # kills reports/torchplace/gate/report.py:_p:3f95dd:delete_stmt:0 (the summary said "None")
        self.assertEqual(report._p(None), "n/a")
        self.assertEqual(report._p(0.01234), "0.012")

    def test_a_duration_reads_in_the_unit_that_keeps_it_short(self):
        # kills reports/torchplace/gate/report.py:_duration:f4b9af:delete_stmt:0 (every time
        # in ns: "3.41e+06 ns")
        self.assertEqual(report._duration(2.5), "2.5 s")
        self.assertEqual(report._duration(3.41e-3), "3.41 ms")
        self.assertEqual(report._duration(812e-9), "812 ns")


class SpeedSummary(unittest.TestCase):
    @staticmethod
    def row(name, informational):  # a synthetic benchmark row, not a measurement
        return {
            "name": name,
            "outcome": "SAME",
            "informational": informational,
            "ratio": 1.0,
            "median_baseline_s": 1e-3,
            "median_candidate_s": 1e-3,
            "p_adjusted": 0.5,
            "reps_baseline": 5,
            "reps_candidate": 5,
            "note": "",
        }

    def test_the_holm_correction_counts_the_gated_benchmarks_only(self):
        # kills reports/torchplace/gate/report.py:_speed_lines:4f6673:const_minus:0 (it said
        # "over 0 gated benchmark(s)")
        section = {
            "candidate": "synthetic-candidate.json",
            "baseline": "synthetic-baseline.json",
            "alpha": 0.05,
            "policy": "synthetic-policy.json",
            "benchmarks": [self.row("a", False), self.row("b", False), self.row("c", True)],
        }
        section.update({key: [] for key in ("skipped", "new", "notes")})
        text = "\n".join(report._speed_lines(section))
        self.assertIn("Holm-corrected over 2 gated benchmark(s)", text)
        # kills reports/torchplace/gate/report.py:_speed_lines:66350d:negate_if:0 (the AMBIGUOUS
        # note on every summary but those with an AMBIGUOUS benchmark)
        note = "AMBIGUOUS benchmarks do not fail the gate"
        self.assertNotIn(note, text)
        section["benchmarks"][1]["outcome"] = "AMBIGUOUS"
        self.assertIn(note, "\n".join(report._speed_lines(section)))


class PowerLine(unittest.TestCase):
    def test_the_power_line_when_checked_and_none_when_not(self):
        # kills reports/torchplace/gate/report.py:_power_lines:66861d:negate_if:0
        check = {"gated": 2, "min_p": 0.1, "alpha": 0.05, "enough": False, "without": ["BM_a"]}
        self.assertEqual(
            report._power_lines(check)[0],
            "Power: 2 gated x worst smallest attainable p 0.1 = 0.2 against alpha 0.05: "
            "1 gated benchmark(s) can NEVER be SLOWER.",
        )
        self.assertEqual(report._power_lines(None), [])


if __name__ == "__main__":
    unittest.main()
