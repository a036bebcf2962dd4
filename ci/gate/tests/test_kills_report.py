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


def speed_row(name, outcome):  # a synthetic benchmark row, not a measurement
    return {
        "name": name,
        "outcome": outcome,
        "informational": False,
        "ratio": 1.2,
        "median_baseline_s": 1e-3,
        "median_candidate_s": 1.2e-3,
        "p_adjusted": 0.2,
        "reps_baseline": 5,
        "reps_candidate": 5,
        "note": "synthetic",
    }


class Tables(unittest.TestCase):
    # GitHub's Markdown (GFM) continues a table on every following line until a blank line or
    # another block: a line of text right after the rows would render as one more row.
    BEHAVIOUR = {
        "results": "synthetic/results.json",
        "expectations": "synthetic/expectations.json",
        "compared": 1,
        "categories": {"failed": 1},
        "regressions": [
            {
                "id": FIX_CPU,
                "kind": "harness_fail",
                "expected": {"outcome": "success", "error_class": None},
                "observed": {"outcome": "success", "error_class": None, "category": "failed"},
                "detail": "synthetic: loss did not fall",
            }
        ],
        "skipped": [{"id": "synthetic/device=cuda:0", "reason": "synthetic: no GPU"}],
        "new": [{"id": "synthetic/device=sim:0", "expected": {"outcome": "success"}}],
        "transfers_below_budget": [{"id": FIX_CPU, "detail": "synthetic: 2 -> 1"}],
    }
    SPEED = {
        "candidate": "synthetic-candidate.json",
        "baseline": "synthetic-baseline.json",
        "alpha": 0.05,
        "policy": "synthetic-policy.json",
        "benchmarks": [speed_row("BM_a", "SAME"), speed_row("BM_b", "AMBIGUOUS")],
        "skipped": [],
        "new": [],
        "notes": ["synthetic note"],
    }

    def test_every_table_ends_at_a_blank_line(self):
        # kills reports/torchplace/gate/report.py:_behaviour_lines:799c68:delete_stmt:0, its
        # 7ef4fa:delete_stmt:0 (no header: the rows were no table) and
        # _speed_lines:799c68:delete_stmt:0 (the next line ran on as a row of the table)
        verdict = {
            "exit_code": report.EXIT_BEHAVIOUR,
            "problems": [],
            "behaviour": self.BEHAVIOUR,
            "speed": self.SPEED,
        }
        lines = report.markdown(verdict).splitlines()
        rows = [index for index, line in enumerate(lines) if line.startswith("|")]
        self.assertEqual(len(rows), 2 + 1 + 2 + 2, lines)  # header, rule and rows of each
        ends = [index for index in rows if index + 1 not in rows]
        self.assertEqual(len(ends), 2, lines)
        for end in ends:
            self.assertEqual(lines[end + 1 : end + 2], [""], lines[end - 2 : end + 3])

    def test_every_folded_list_closes_before_the_next_one(self):
        # kills reports/torchplace/gate/report.py:_behaviour_lines:e0e05a:delete_stmt:0 (the
        # first list never closed: the rest of the summary folded into it)
        verdict = {"exit_code": report.EXIT_BEHAVIOUR, "problems": [], "behaviour": self.BEHAVIOUR}
        verdict["speed"] = self.SPEED
        lines = report.markdown(verdict).splitlines()
        opened = [line for line in lines if line.startswith("<details>")]
        self.assertEqual(len(opened), 3, lines)  # new, skipped, transfers below budget
        depth = 0
        for line in lines:
            depth += line.startswith("<details>") - (line == "</details>")
            self.assertIn(depth, (0, 1), lines)
            if line.startswith("#"):
                self.assertEqual(depth, 0, f"{line!r} inside a folded list")
        self.assertEqual(depth, 0)


class Columns(unittest.TestCase):
    def test_a_long_detail_keeps_its_first_200_characters_in_one_cell(self):
        # kills reports/torchplace/gate/report.py:_behaviour_lines:d1148f:const_minus:0 (199)
        detail = "synthetic | detail\n" + "x" * 300
        section = dict(Tables.BEHAVIOUR, skipped=[], new=[], transfers_below_budget=[])
        section["regressions"] = [dict(section["regressions"][0], detail=detail)]
        (row,) = [line for line in report._behaviour_lines(section) if FIX_CPU in line]
        shown = row.split(" | ")[-1][: -len(" |")]
        self.assertEqual(shown, detail.replace("|", "\\|").replace("\n", " ")[:200])
        self.assertEqual(len(shown), 200)

    def test_a_time_on_a_unit_boundary_reads_in_that_unit(self):
        # kills reports/torchplace/gate/report.py:_duration:4b372b:rel_flip:0 (1 ms read
        # "1e+03 us", 1 s "1e+03 ms")
        self.assertEqual(report._duration(1.0), "1 s")
        self.assertEqual(report._duration(1e-3), "1 ms")
        self.assertEqual(report._duration(1e-6), "1 us")


if __name__ == "__main__":
    unittest.main()
