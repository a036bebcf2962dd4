#!/usr/bin/env python3
"""Tests that kill generated mutants of the gate's summary (summary.md, the CI step summary and
PR comment) which survived every other test (torchplace.mutation.generated; ci/mutation/README.md
"Generated mutants"). Each names the mutant it was seen to kill. The gate runs here as a command
on input files made here, which say that they are synthetic."""
import os
import unittest

from gate_inputs import Gate, FIX_CPU, expectations, passing, results, write_in
from torchplace.gate import report


def summary(gate):
    with open(os.path.join(gate.out, "summary.md"), encoding="utf-8") as handle:
        return handle.read().splitlines()


def section(lines, heading):
    """The lines under `heading` up to the next heading (AssertionError when it is absent)."""
    if heading not in lines:
        raise AssertionError(f"no {heading!r} in the summary: {lines}")
    body = lines[lines.index(heading) + 1 :]
    ends = [index for index, line in enumerate(body) if line.startswith("#")]
    return body[: ends[0]] if ends else body


class ProblemsSection(unittest.TestCase):
    def test_what_the_gate_could_not_judge_is_listed_under_its_heading(self):
        # kills reports/torchplace/gate/report.py:markdown:34999b:delete_stmt:0 (the problems
        # of an exit 3 ran on under the title, with no heading saying what they are)
        gate = Gate()
        missing = os.path.join(gate.root, "no-such-expectations.json")
        run_dir = os.path.join(gate.root, "run")
        write_in(run_dir, "results.json", results([passing(FIX_CPU)]))
        code = gate.command(["--results", run_dir, "--expectations", missing, "--out", gate.out])
        self.assertEqual(code, report.EXIT_INPUT, gate.output)
        lines = summary(gate)
        self.assertEqual(lines[0], f"## torchplace gate: {report.VERDICTS[report.EXIT_INPUT]}")
        problems = section(lines, "### Problems (the gate fails closed on these)")
        named = [line for line in problems if line.startswith("- ") and missing in line]
        self.assertEqual(len(named), 1, problems)
        self.assertEqual(gate.verdict["problems"], [named[0][2:]])

    def test_a_verdict_without_problems_has_no_problems_heading(self):
        gate = Gate()
        code = gate.run(results([passing(FIX_CPU)]), expectations([passing(FIX_CPU)]))
        self.assertEqual(code, report.EXIT_PASS, gate.output)
        self.assertFalse([line for line in summary(gate) if "Problems" in line])


class SyntheticBehaviourSummary(unittest.TestCase):
    def test_the_synthetic_note_leaves_the_counts_of_the_run(self):
        # kills reports/torchplace/gate/report.py:_behaviour_lines:a38f5c:const_plus:1 (the note
        # replaced the line that says how many cells were compared and how many regressed)
        broken = passing(FIX_CPU)
        broken.update(status="fail", category="failed", reason="synthetic: loss did not fall")
        gate = Gate()
        code = gate.run(results([broken]), expectations([passing(FIX_CPU)]))
        self.assertEqual(code, report.EXIT_BEHAVIOUR, gate.output)
        lines = section(summary(gate), "### Behaviour")
        notes = [index for index, line in enumerate(lines) if "SYNTHETIC input" in line]
        counts = [index for index, line in enumerate(lines) if "cells compared" in line]
        self.assertEqual((len(notes), len(counts)), (1, 1), lines)
        self.assertIn("1 cells compared, 1 regression(s), 0 skipped", lines[counts[0]])
        # read before the figures, a paragraph of its own (kills :a38f5c:const_plus:0, the note
        # glued to the end of the paragraph of counts)
        self.assertLess(notes[0], counts[0])
        self.assertEqual(lines[notes[0] + 1], "")
        self.assertTrue([line for line in lines if line.startswith(f"| `{FIX_CPU}` |")], lines)


if __name__ == "__main__":
    unittest.main()
