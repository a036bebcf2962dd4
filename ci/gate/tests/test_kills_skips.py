#!/usr/bin/env python3
"""Tests that kill generated mutants of the behaviour gate's skip rules (skips.py: the closed set
of skip codes, each true only where the run and the cell's device make it so) which survived
every other test (torchplace.mutation.generated; ci/mutation/README.md "Generated mutants"). Each
names the mutant it was seen to kill. Input files are made here and say that they are synthetic."""
import unittest

from gate_inputs import Gate, CPU_HOST, FIX_CPU, FIX_CUDA, expectations, passing, results, skipping
from torchplace.gate import report, skips


class SkipWithoutCode(unittest.TestCase):
    # A results.json from before skip codes has no skip_code field ("absent" leaves it out).
    def test_the_problem_named_is_the_missing_code(self):
        # kills reports/torchplace/gate/skips.py:skip_problem:2c3a8b:delete_stmt:0 (a missing
        # code reported as the unknown code None)
        cell = skipping(FIX_CPU, "absent", reason="synthetic: skipped by hand")
        problem = skips.skip_problem(cell, passing(FIX_CPU)["expected"], CPU_HOST)
        self.assertIn("skipped with no skip_code", problem)
        self.assertIn("'synthetic: skipped by hand'", problem)
        self.assertNotIn("None", problem)

    def test_the_gate_exits_2_naming_it(self):
        gate = Gate()
        run = results([skipping(FIX_CPU, "absent", reason="synthetic: skipped by hand")])
        code = gate.run(run, expectations([passing(FIX_CPU)]))
        self.assertEqual(code, report.EXIT_BEHAVIOUR, gate.output)
        (found,) = gate.verdict["behaviour"]["regressions"]
        self.assertEqual(found["kind"], "unexplained_skip")
        self.assertIn("no skip_code", found["detail"])


class AcceptedSkip(unittest.TestCase):
    def test_a_gpu_cell_skipped_on_a_host_without_cuda_passes(self):
        gate = Gate()
        run = results([passing(FIX_CPU), skipping(FIX_CUDA, "no_cuda_build")])
        code = gate.run(run, expectations([passing(FIX_CPU), passing(FIX_CUDA)]))
        self.assertEqual(code, report.EXIT_PASS, gate.output)
        self.assertEqual([row["id"] for row in gate.verdict["behaviour"]["skipped"]], [FIX_CUDA])


if __name__ == "__main__":
    unittest.main()
