#!/usr/bin/env python3
"""Tests that kill generated mutants of the behaviour gate's section (what a run adds up to:
cells compared, skipped, new, vanished, the outcome categories it rests on) and of the committed
file it reads, which survived every other test (torchplace.mutation.generated;
ci/mutation/README.md "Generated mutants"). Each names the mutant it was seen to kill. Input files
are made here and say that they are synthetic."""
import tempfile
import unittest

from gate_inputs import (
    judged,
    BROKEN_CPU,
    FIX_CPU,
    FIX_CUDA,
    FIX_SIM,
    WITH_CUDA_CPU,
    expectations,
    passing,
    skipping,
    write_in,
)
from torchplace.gate import behaviour

NEW_CPU = "forgotten_labels/loss=mse/variant=manual_to/device=cpu"  # not committed


class MixedRun(unittest.TestCase):
    """A CPU-only run: two cells hold, one skipped for its absent GPU, one new, one committed
    cell absent (vanished), one that failed."""

    def setUp(self):
        failed = passing(FIX_SIM)
        failed.update(status="fail", category="failed", reason="synthetic: loss did not fall")
        committed = [
            passing(FIX_CPU),
            passing(BROKEN_CPU, "DeviceMismatch"),
            passing(FIX_CUDA),
            passing(WITH_CUDA_CPU),
            passing(FIX_SIM),
        ]
        self.run_cells = [
            failed,
            passing(FIX_CPU),
            passing(BROKEN_CPU, "DeviceMismatch"),
            skipping(FIX_CUDA, "no_cuda_build", reason="synthetic: no CUDA"),
            passing(NEW_CPU),
        ]
        self.section = judged(self.run_cells, committed)

    def test_the_categories_count_each_cell_once_evidence_first(self):
        # kills reports/torchplace/gate/behaviour.py:_category_counts:9a8a5e:const_minus:1 (every
        # count 0: the summary said the run rested on no evidence)
        counts = self.section["categories"]
        self.assertEqual(counts, {"passed": 2, "expected_error": 1, "skipped": 1, "failed": 1})
        self.assertEqual(sum(counts.values()), len(self.run_cells))
        self.assertEqual(list(counts), ["passed", "expected_error", "skipped", "failed"])

    def test_compared_counts_the_committed_cells_that_ran(self):
        # the failed cell, both held cells: not the skipped one, nor the new one
        self.assertEqual(self.section["compared"], 3)

    def test_each_cell_lands_in_one_list(self):
        section = self.section
        self.assertEqual(
            section["skipped"], [{"id": FIX_CUDA, "reason": "synthetic: no CUDA [no_cuda_build]"}]
        )
        self.assertEqual([row["id"] for row in section["new"]], [NEW_CPU])
        self.assertEqual(
            section["new"][0],
            {
                "id": NEW_CPU,
                "expected": {"outcome": "success", "error_class": None, "category": "passed"},
                "observed": "success",
                "category": "passed",
            },
        )
        kinds = sorted((row["id"], row["kind"]) for row in section["regressions"])
        self.assertEqual(kinds, [(WITH_CUDA_CPU, "vanished"), (FIX_SIM, "harness_fail")])
        self.assertTrue(behaviour.regressed(section))


class NothingCompared(unittest.TestCase):
    def test_a_run_of_new_and_skipped_cells_only_cannot_be_judged(self):
        with self.assertRaises(behaviour.InputError) as raised:
            judged(
                [passing(NEW_CPU), skipping(FIX_CUDA, "no_cuda_build")],
                [passing(FIX_CUDA)],
            )
        self.assertIn("none of its 2 cell(s)", str(raised.exception))
        self.assertIn("(1 skipped, 1 new)", str(raised.exception))


class CellTwice(unittest.TestCase):
    def test_a_run_that_lists_a_cell_twice_cannot_be_judged(self):
        # kills reports/torchplace/gate/behaviour.py:_cells_by_id:c6677b:delete_stmt:0 (and its
        # delete_branch:0, :b724ae:delete_stmt:0): the second record silently replaced the
        # first, so a failing run of the cell could hide behind a passing one
        failed = passing(FIX_CPU)
        failed.update(status="fail", category="failed", reason="synthetic: loss did not fall")
        for twice in ([failed, passing(FIX_CPU)], [passing(FIX_CPU), failed]):
            with self.subTest(first=twice[0]["status"]):
                with self.assertRaises(behaviour.InputError) as raised:
                    judged(twice, [passing(FIX_CPU)])
                self.assertIn(f"cell {FIX_CPU!r} appears twice", str(raised.exception))


class UnknownCommittedCategory(unittest.TestCase):
    def test_a_category_outside_the_closed_set_is_named_unknown(self):
        # kills reports/torchplace/gate/behaviour.py:_check_entry:450fc0:delete_stmt:0 (an
        # unknown category reported as one that contradicts the outcome, the closed set unsaid)
        doc = expectations([passing(FIX_CPU)])
        doc["cells"][FIX_CPU]["category"] = "proved"  # synthetic: no such category
        with tempfile.TemporaryDirectory() as folder:
            path = write_in(folder, "expectations.json", doc)
            with self.assertRaises(behaviour.InputError) as raised:
                behaviour.load_expectations(path)
        self.assertIn("unknown outcome category 'proved' (known: passed, ", str(raised.exception))


if __name__ == "__main__":
    unittest.main()
