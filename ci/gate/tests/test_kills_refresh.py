#!/usr/bin/env python3
"""Tests that kill generated mutants of the expectations refresh (behaviour.refresh: the committed
file rewritten from a run) which survived every other test (torchplace.mutation.generated;
ci/mutation/README.md "Generated mutants"). Each names the mutant it was seen to kill. Input
files are made here and say that they are synthetic."""
import json
import os
import tempfile
import unittest

from gate_inputs import CPU_HOST, GPU_HOST, FIX_CPU, FIX_CUDA, FIX_SIM, passing, results, skipping
from gate_inputs import write_in
from torchplace.gate import behaviour

FIX_CUDA1 = FIX_CUDA.replace("cuda:0", "cuda:1")
TWO_GPUS = dict(GPU_HOST, cuda=dict(GPU_HOST["cuda"], device_count=2))  # gpus[] lists one: unread


def refreshed(run_cells, target_name="expectations.json", fingerprint=TWO_GPUS):
    """The cells of the file a refresh from run_cells writes in a fresh folder."""
    with tempfile.TemporaryDirectory() as folder:
        write_in(folder, "run/results.json", results(run_cells, fingerprint))
        target = os.path.join(folder, target_name)
        count = behaviour.refresh(os.path.join(folder, "run"), target)
        with open(target, encoding="utf-8") as handle:
            cells = json.load(handle)["cells"]
    assert count == len(cells), (count, cells)
    return cells


class FirstRefresh(unittest.TestCase):
    def test_a_first_refresh_makes_the_file_and_its_folder(self):
        # kills reports/torchplace/gate/behaviour.py:refresh:82749e:delete_stmt:0 (no folder
        # made: a project without ci/gate/ could never write its first expectations) and
        # _committed_codes:cb4dd2:* (no earlier file read as an error)
        cells = refreshed([passing(FIX_CPU)], os.path.join("ci", "gate", "expectations.json"))
        self.assertEqual(list(cells), [FIX_CPU])
        self.assertEqual(cells[FIX_CPU]["outcome"], "success")


class OneEntryPerKind(unittest.TestCase):
    def test_cells_on_other_gpus_fold_into_their_cuda0_entry(self):
        # kills reports/torchplace/gate/behaviour.py:_kind_entries:1b5cef:eq_flip:1 (two GPUs that
        # agree refused) and :1b5cef:logic_swap:0
        cells = refreshed([passing(FIX_CUDA), passing(FIX_CUDA1)])
        self.assertEqual(list(cells), [FIX_CUDA])

    def test_a_gpu_that_expects_otherwise_than_its_kind_is_refused(self):
        # kills reports/torchplace/gate/behaviour.py:_kind_entries:1b5cef:delete_stmt:0 (one of
        # the two expectations silently kept)
        with self.assertRaises(behaviour.InputError) as raised:
            refreshed([passing(FIX_CUDA), passing(FIX_CUDA1, "DeviceMismatch")])
        self.assertIn(f"{FIX_CUDA1} expects", str(raised.exception))
        self.assertIn(f"its kind {FIX_CUDA} expects", str(raised.exception))


class NewerLibTorchNeeded(unittest.TestCase):
    def test_the_entry_holds_the_version_the_skip_waits_for(self):
        # the gate refuses a needs_newer_libtorch skip that waits for another version than this
        # (skips.skip_problem); a refresh that dropped it would refuse every such skip
        waiting = dict(skipping(FIX_SIM, "needs_newer_libtorch"), needs_libtorch="99.4")
        entry = refreshed([passing(FIX_CPU), waiting], fingerprint=CPU_HOST)[FIX_SIM]
        self.assertEqual(entry["skip_codes"], ["needs_newer_libtorch"])
        self.assertEqual(entry["needs_libtorch"], "99.4")
        self.assertNotIn(
            "needs_libtorch", refreshed([passing(FIX_CPU)], fingerprint=CPU_HOST)[FIX_CPU]
        )


class TransferBudgets(unittest.TestCase):
    def test_only_cells_that_counted_transfers_get_a_budget(self):
        # kills reports/torchplace/gate/behaviour.py:_transfer_budgets:d3871f:logic_swap:0 (an
        # empty budget written for every passing cell)
        # and :transfers_of:73ecb8:logic_swap:0 (the cell's other metrics counted as transfers)
        counts = {"transfer.step.h2d.copies": 2, "transfer.step.sync.nonzero": 0}
        counting = passing(FIX_CUDA)
        counting["metrics"] = dict(counts, loss_first=2.5, steps=3)  # synthetic values
        cells = refreshed([counting, passing(FIX_CPU)])
        self.assertEqual(cells[FIX_CUDA]["transfers"], counts)
        self.assertNotIn("transfers", cells[FIX_CPU])


class TransfersBelowBudget(unittest.TestCase):
    def test_only_counts_below_their_budget_are_listed(self):
        # kills reports/torchplace/gate/behaviour.py:_transfers_below:97d575:rel_flip:0 (a count
        # at its budget listed as a gain) and :b3077e:eq_flip:0
        budget = {"transfer.step.h2d.copies": 2, "transfer.step.d2h.copies": 1}
        one = passing(FIX_CPU)
        one["metrics"] = {"transfer.step.h2d.copies": 1, "transfer.step.d2h.copies": 1}
        committed = dict(behaviour._expected(one), transfers=budget)
        self.assertEqual(
            behaviour._transfers_below(committed, one), ["step: host-to-device copies 2 -> 1"]
        )
        failed = dict(one, status="fail", category="failed")
        self.assertEqual(behaviour._transfers_below(committed, failed), [])


if __name__ == "__main__":
    unittest.main()
