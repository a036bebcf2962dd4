#!/usr/bin/env python3
"""`python3 -m torchplace.gate.calibrate evaluate` (torchplace.gate.calibrate, in process):
re-scoring saved runs - false alarms over A/A, detection over A/B, per repetition count, each
count scored on the first N repetitions of each side; the injected steps and the A/B and A/A
ratios of medians; bad arguments exit 64. The runs are synthetic, made here (no benchmark ran).

  test_calibrate.py      (CTest: report.calibrate)
"""
import contextlib
import io
import json
import os
import shutil
import tempfile
import unittest
from typing import List

from torchplace import schema
from torchplace.gate import calibrate

BENCH = "bm/copy"
BASE = [100, 101, 102, 103, 104, 105, 106, 107]  # ns, repetitions 0..7
# The A/B candidate is slow in its first 4 repetitions only: SLOWER on 4 a side, overlapping
# (AMBIGUOUS) on all 8 - which tells whether a count was scored on the first N repetitions.
AB_CAND = [150, 151, 152, 153, 100, 101, 102, 103]
AA_CAND = [t + 1 for t in BASE]  # the same binary: 1 % apart, below max_ratio


def run_doc(times: List[int], extra: float = 0.0) -> dict:
    """A synthetic Google Benchmark run of one benchmark, one entry a repetition."""
    entries = []
    for index, time in enumerate(times):
        entry = {"name": BENCH, "run_name": BENCH, "run_type": "iteration"}
        entry.update(repetitions=len(times), repetition_index=index, real_time=time)
        entry.update(time_unit="ns", family_index=0, per_family_instance_index=0)
        if extra:
            entry["torchplace_extra_ratio"] = extra
        entries.append(entry)
    context = {"num_cpus": 2, "library_build_type": "release"}
    if extra:
        context["torchplace_extra_work"] = "0.2"
    return {"context": context, "benchmarks": entries}


POLICY = {
    "schema": "torchplace.gate-policy/1",
    "alpha": 0.05,
    "default": {"max_ratio": 1.10, "min_abs_ns": 0, "min_reps": 2, "informational": False},
}


class Evaluate(unittest.TestCase):
    def setUp(self) -> None:
        self.out = tempfile.mkdtemp(prefix="test-calibrate-")
        self.addCleanup(shutil.rmtree, self.out)
        self.runs = os.path.join(self.out, "runs")
        os.makedirs(self.runs)
        self.policy = os.path.join(self.out, "policy.json")
        self.write(self.policy, POLICY)
        for index in range(2):  # two comparisons of each kind
            self.write(self.saved(f"aa-{index:02d}-baseline"), run_doc(BASE))
            self.write(self.saved(f"aa-{index:02d}-candidate"), run_doc(AA_CAND))
            self.write(self.saved(f"ab-{index:02d}-baseline"), run_doc(BASE))
            self.write(self.saved(f"ab-{index:02d}-candidate"), run_doc(AB_CAND, extra=0.2))

    def saved(self, stem: str) -> str:
        return os.path.join(self.runs, stem + ".json")

    @staticmethod
    def write(path: str, doc: dict) -> None:
        with open(path, "w", encoding="utf-8") as handle:
            json.dump(doc, handle)

    def evaluate(self, *extra: str) -> dict:
        argv = ["evaluate", "--runs", self.out, "--policy", self.policy, *extra]
        with contextlib.redirect_stdout(io.StringIO()) as printed:
            self.assertEqual(calibrate.main(argv), schema.EXIT_OK)
        with open(os.path.join(self.out, "calibration.md"), encoding="utf-8") as handle:
            self.assertEqual(handle.read(), printed.getvalue())
        with open(os.path.join(self.out, "calibration.json"), encoding="utf-8") as handle:
            return json.load(handle)

    def test_counts_default_to_those_up_to_the_saved_runs(self) -> None:
        figures = self.evaluate()
        self.assertEqual(list(figures["by_reps"]), ["4", "8"])
        self.assertEqual(figures["alpha"], 0.05)
        self.assertEqual(figures["extra_work"], "0.2")

    def test_a_a_comparisons_raise_no_false_alarm(self) -> None:
        aa = self.evaluate("--reps", "4,8")["by_reps"]["8"]["aa"]
        self.assertEqual((aa["comparisons"], aa["failed"], aa["refused"]), (2, 0, 0))
        self.assertEqual(aa["outcomes"], {"SAME": 2, "FASTER": 0, "SLOWER": 0, "AMBIGUOUS": 0})
        # Clopper-Pearson, 0 of 2: 1 - 0.05 ** (1 / 2)
        self.assertAlmostEqual(aa["failed_upper95"], 1 - 0.05**0.5, places=6)

    def test_each_count_scores_the_first_repetitions(self) -> None:
        by_reps = self.evaluate("--reps", "4,8")["by_reps"]
        four, eight = by_reps["4"]["ab"], by_reps["8"]["ab"]
        self.assertEqual((four["failed"], four["results"]), (2, 2))
        self.assertEqual(four["outcomes"]["SLOWER"], 2)
        self.assertEqual(eight["failed"], 0)
        self.assertEqual(eight["outcomes"]["AMBIGUOUS"], 2)
        self.assertEqual(four["failed_upper95"], 1.0)  # 2 of 2

    def test_a_count_without_power_is_refused(self) -> None:
        ab = self.evaluate("--reps", "2")["by_reps"]["2"]["ab"]
        self.assertEqual((ab["refused"], ab["failed"]), (2, 0))
        self.assertIn("no power", ab["why_refused"])

    def test_runs_of_two_machines_are_refused_not_failed(self) -> None:
        for index in range(2):  # the A/B candidates ran on another machine
            doc = run_doc(AB_CAND, extra=0.2)
            doc["context"]["num_cpus"] = 4
            self.write(self.saved(f"ab-{index:02d}-candidate"), doc)
        ab = self.evaluate("--reps", "4")["by_reps"]["4"]["ab"]
        self.assertEqual((ab["refused"], ab["failed"]), (2, 0))
        self.assertIn("num_cpus differs", ab["why_refused"])

    def test_injected_steps_and_ratios_of_medians(self) -> None:
        injected = self.evaluate()["injected"]
        self.assertEqual(list(injected), [BENCH])
        row = injected[BENCH]
        self.assertAlmostEqual(row["steps"], 0.2)
        self.assertAlmostEqual(row["ab"], 126.5 / 103.5)  # medians of all 8 a side
        self.assertAlmostEqual(row["aa"], 104.5 / 103.5)

    def test_markdown_table_rows(self) -> None:
        self.evaluate("--reps", "4")
        with open(os.path.join(self.out, "calibration.md"), encoding="utf-8") as handle:
            text = handle.read()
        self.assertIn("| 4 | 0/2 (95 % upper bound 78%) | 2/2 | 2 / 0 / 0 of 2 |", text)
        self.assertIn(f"| `{BENCH}` | 0.200 | 1.222 | 1.010 |", text)

    def test_no_saved_runs_is_refused(self) -> None:
        for stem in ("aa-00-baseline", "aa-01-baseline"):
            os.remove(self.saved(stem))
        with self.assertRaises(SystemExit) as raised:
            calibrate.main(["evaluate", "--runs", self.out, "--policy", self.policy])
        self.assertIn(self.runs, str(raised.exception.code))
        self.assertFalse(os.path.exists(os.path.join(self.out, "calibration.json")))


class BadArguments(unittest.TestCase):
    def exit_code(self, argv: List[str]) -> object:
        with contextlib.redirect_stderr(io.StringIO()) as stderr:
            with self.assertRaises(SystemExit) as raised:
                calibrate.main(argv)
        self.assertIn("usage:", stderr.getvalue())
        return raised.exception.code

    def test_bad_arguments_exit_64(self) -> None:
        for argv in (
            [],
            ["score"],
            ["evaluate"],  # --runs is required
            ["run", "--out", "x"],  # --bench is required
            ["run", "--bench", "b", "--out", "x", "--comparisons", "many"],
            ["evaluate", "--runs", "x", "--reps", "4,x"],  # a count that is not a number
        ):
            with self.subTest(argv=argv):
                self.assertEqual(self.exit_code(argv), schema.EXIT_USAGE)


if __name__ == "__main__":
    unittest.main()
