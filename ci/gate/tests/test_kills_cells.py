#!/usr/bin/env python3
"""Tests that kill generated mutants of the behaviour gate's judgement of one cell (what a run's
cell did against its committed entry) and of the refresh, which survived every other test
(torchplace.mutation.generated; ci/mutation/README.md "Generated mutants"). Each names the
mutant it was seen to kill. Input files are made here and say that they are synthetic."""
import json
import os
import tempfile
import unittest

from behaviour_fixtures import cell
from gate_inputs import judged, Gate, CPU_HOST, FIX_CPU, BROKEN_CPU, expectations, passing, results
from gate_inputs import FIX_CUDA, skipping, write_in
from torchplace.gate import behaviour, report

BAD_ALLOC = "std::bad_alloc (synthetic message)"


def threw(cell_id, error_class=None):
    """A cell whose body threw something that is not a c10::Error (the harness fails it)."""
    one = cell(cell_id, error_class, None, "fail", "threw (synthetic)")
    one["observed"] = {"outcome": "exception", "error_class": None, "message": BAD_ALLOC}
    return one


class NonC10Exception(unittest.TestCase):
    def test_a_cell_that_threw_is_named_an_exception_whatever_it_expected(self):
        # kills reports/torchplace/gate/behaviour.py:_observation_problem:c2cfe3:delete_stmt:0
        # and :bc0f62:delete_stmt:0 (a throw reported as harness_fail, or as error_class_changed
        # for a cell that expects an error: the throw and its message were hidden)
        for cell_id, error_class in ((FIX_CPU, None), (BROKEN_CPU, "DeviceMismatch")):
            with self.subTest(cell=cell_id):
                committed = passing(cell_id, error_class)
                section = judged([threw(cell_id, error_class)], [committed])
                self.assertTrue(behaviour.regressed(section))
                (found,) = section["regressions"]
                self.assertEqual(found["kind"], "exception")
                self.assertIn(BAD_ALLOC, found["detail"])
                self.assertEqual(found["observed"]["outcome"], "exception")


class UnknownStatus(unittest.TestCase):
    # The harness's record starts with an empty status and gets "pass", "fail" or "skip" when
    # its test ends (harness/internal/gtest_main.cpp): "" is a cell that never finished.
    def unfinished(self, status):
        one = passing(FIX_CPU)
        one.update(status=status, category="failed", reason="synthetic: never finished")
        return one

    def test_a_cell_with_a_status_outside_the_closed_set_is_a_regression(self):
        # kills reports/torchplace/gate/behaviour.py:_check_cell:7e4769:delete_stmt:0 (a cell
        # that never finished, its observation unchanged, passed the gate)
        for status in ("", "timeout"):
            with self.subTest(status=status):
                section = judged([self.unfinished(status)], [passing(FIX_CPU)])
                (found,) = section["regressions"]
                self.assertEqual(found["kind"], "unknown_status")
                self.assertIn(repr(status), found["detail"])
                self.assertIn("synthetic: never finished", found["detail"])

    def test_the_gate_exits_2_on_it(self):
        # the same mutant, seen from the command: exit 0 (PASS) instead of 2
        gate = Gate()
        code = gate.run(results([self.unfinished("")]), expectations([passing(FIX_CPU)]))
        self.assertEqual(code, report.EXIT_BEHAVIOUR, gate.output)
        self.assertEqual(gate.kinds(), ["unknown_status"])


def ran(cell_id, expected, seen=None, status="pass", **fields):
    """A cell that ran: expected and observed error classes (None: success); a failed status
    makes it "failed"; fields override the rest (category, reason, observed...)."""
    one = cell(cell_id, expected, seen, status, fields.pop("reason", "synthetic reason"))
    one.update(fields)
    return one


class EveryVerdictOfACell(unittest.TestCase):
    """Each rule of the behaviour gate's docstring, one cell against its committed entry: the
    kind it names, and what the text must hold for a reader to act on it."""

    def test_each_case_gets_its_kind_and_says_why(self):
        # kills reports/torchplace/gate/behaviour.py:_check_cell:4ce1aa:delete_branch:0 (a skip
        # judged as if it ran), :ebf12d:*, :1592fc:delete_stmt:0, :96eb9d:delete_stmt:0 and
        # :a4c8ee:delete_stmt:0
        error = behaviour._expected(passing(BROKEN_CPU, "DeviceMismatch"))
        success = behaviour._expected(passing(FIX_CPU))
        skip = {"outcome": "skip", "error_class": None, "category": "skipped"}
        ran_anyway = ran(FIX_CPU, None, category="passed")
        ran_anyway["expected"] = dict(skip, note="")
        cases = (  # (committed, cell, kind or None, what the text holds)
            (error, passing(BROKEN_CPU, "DeviceMismatch"), None, ""),
            (success, passing(FIX_CPU), None, ""),
            (
                error,
                ran(BROKEN_CPU, "DeviceMismatch", None, "fail"),
                "stopped_raising",
                "expected DeviceMismatch, the cell now succeeds",
            ),
            (
                success,
                ran(
                    FIX_CPU,
                    None,
                    "DeviceMismatch",
                    "fail",
                    observed=dict(
                        outcome="error", error_class="DeviceMismatch", message="synthetic mismatch"
                    ),
                ),
                "started_failing",
                "now raises DeviceMismatch: synthetic mismatch",
            ),
            (
                error,
                ran(BROKEN_CPU, "DeviceMismatch", "BackendUnavailable", "fail"),
                "error_class_changed",
                "raises BackendUnavailable instead of DeviceMismatch",
            ),
            (
                success,
                ran(FIX_CPU, None, None, "fail", reason="synthetic: loss did not fall"),
                "harness_fail",
                "synthetic: loss did not fall",
            ),
            (
                success,
                ran(FIX_CPU, None, category="race_not_shown", notes=["synthetic note"]),
                "race_not_shown",
                "synthetic note",
            ),
            (skip, ran_anyway, "outcome_changed", "committed as skipped, the cell ran (success)"),
            (
                dict(success, category="race_shown"),
                passing(FIX_CPU),
                "expectation_changed",
                "refresh",
            ),
            (
                None,
                ran(FIX_CPU, None, None, "fail", reason="synthetic: new and failing"),
                "new_cell_failed",
                "synthetic: new and failing",
            ),
            (None, ran(FIX_CPU, None, category="race_not_shown"), "race_not_shown", "race"),
            (None, passing(FIX_CPU), None, ""),
            (success, skipping(FIX_CUDA, "no_cuda_build"), "skipped", "reason [no_cuda_build]"),
            (success, skipping(FIX_CPU, "device_unusable"), "unexplained_skip", "device_unusable"),
        )
        for committed, one, kind, says in cases:
            with self.subTest(kind=kind, committed=committed):
                found = behaviour._check_cell(committed, one, CPU_HOST)
                if kind is None:
                    self.assertIsNone(found)
                else:
                    self.assertEqual(found[0], kind, found)
                    self.assertIn(says, found[1])


class RefreshOverABrokenFile(unittest.TestCase):
    # Entries an expectations file should not hold; a refresh must replace them, not crash on
    # them (the refresh is how such a file gets mended).
    BROKEN = {
        "synthetic": "hand-made broken expectations (test_kills_cells.py)",
        "cells": {
            "a/device=cpu": ["not", "an", "object"],
            "b/device=cpu": "needs_cuda",
            "c/device=cpu": {"outcome": "success", "skip_codes": None},
            "d/device=cpu": {"outcome": "success", "skip_codes": ["needs_cuda", "bogus"]},
        },
    }

    def test_the_codes_kept_are_those_of_well_formed_entries_only(self):
        # kills reports/torchplace/gate/behaviour.py:_committed_codes:d3471c:logic_swap:0 (an
        # AttributeError on an entry that is not an object, a TypeError on skip_codes null)
        with tempfile.TemporaryDirectory() as folder:
            path = write_in(folder, "old.json", self.BROKEN)
            self.assertEqual(behaviour._committed_codes(path), {"d/device=cpu": ["needs_cuda"]})

    def test_the_refresh_command_mends_the_file_and_exits_0(self):
        # the same mutant, seen from the command: exit 3 (tool error), the file left broken
        gate = Gate()
        run_dir = os.path.join(gate.root, "run")
        write_in(run_dir, "results.json", results([passing(FIX_CPU)]))
        old = write_in(gate.root, "expectations.json", self.BROKEN)
        code = gate.command(["--refresh-expectations", run_dir, "--expectations", old])
        self.assertEqual(code, report.EXIT_PASS, gate.output)
        with open(old, encoding="utf-8") as handle:
            self.assertEqual(list(json.load(handle)["cells"]), [FIX_CPU])


class TransferBudgetKeys(unittest.TestCase):
    # harness/transfer_metrics.h: transfer.<phase>.{h2d,d2h,d2d}.<what>, transfer.<phase>.sync.<op>
    def committed(self, transfers):
        entry = dict(behaviour._expected(passing(FIX_CPU)), transfers=transfers)
        doc = dict(expectations([passing(FIX_CPU)]), cells={FIX_CPU: entry})
        with tempfile.TemporaryDirectory() as folder:
            return behaviour.load_expectations(write_in(folder, "expectations.json", doc))

    def test_a_key_that_is_not_transfer_phase_kind_what_is_refused(self):
        # kills reports/torchplace/gate/behaviour.py:_check_transfers:1042e7:logic_swap:0 and
        # :1042e7:const_minus:0 (a budget key the run can never record was accepted: its cell
        # then failed as transfers_unrecorded, or never matched)
        for key in ("transfer.step.h2d", "transfer.step", "counts.step.h2d.copies"):
            with self.subTest(key=key):
                with self.assertRaises(behaviour.InputError) as raised:
                    self.committed({key: 1})
                self.assertIn(
                    f"transfers key {key!r} is not transfer.<phase>.", str(raised.exception)
                )
        budget = {"transfer.step.h2d.copies": 1, "transfer.step.sync.nonzero": 0}
        self.assertEqual(self.committed(budget)[FIX_CPU]["transfers"], budget)

    def test_a_count_its_budget_lacks_grew_only_when_above_zero(self):
        # kills reports/torchplace/gate/behaviour.py:_transfer_problem:59be46:const_minus:0 (a
        # new count of 0, a synchronisation the step never made, failed the cell as grown)
        budget = {"transfer.step.h2d.copies": 1}
        for extra, kind in ((0, None), (1, "transfers_grew")):
            one = passing(FIX_CPU)
            one["metrics"] = {"transfer.step.h2d.copies": 1, "transfer.step.sync.nonzero": extra}
            committed = dict(behaviour._expected(one), transfers=budget)
            with self.subTest(extra=extra):
                found = behaviour._check_cell(committed, one, CPU_HOST)
                self.assertEqual(found and found[0], kind, found)
        self.assertIn("step: synchronisations by nonzero 0 -> 1", found[1])

    def test_what_is_the_rest_of_the_name(self):
        # kills reports/torchplace/gate/behaviour.py:describe_transfer:d3ffe6:const_plus:0 (a
        # ValueError, exit 3, on an operator name with a dot)
        self.assertEqual(
            behaviour.describe_transfer("transfer.step.sync.aten.nonzero"),
            "step: synchronisations by aten.nonzero",
        )
        self.assertEqual(
            behaviour.describe_transfer("transfer.step.h2d.non_blocking"),
            "step: host-to-device non-blocking",
        )


if __name__ == "__main__":
    unittest.main()
