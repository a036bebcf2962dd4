#!/usr/bin/env python3
"""Tests that kill generated mutants of the speed gate, its policy and its input which survived
every other test (torchplace.mutation.generated; ci/mutation/README.md "Generated mutants").
Each names the mutant it was seen to kill. Input files are made here and say that they are
synthetic."""
import math
import tempfile
import unittest
from unittest import mock

from gate_inputs import write_in
from torchplace.gate import speed, speed_input
from torchplace.schema import InputError


class DeclaredRepetitions(unittest.TestCase):
    @staticmethod
    def entry(index, declared):  # synthetic: hand-made, not a benchmark's output
        return {
            "name": "BM_synthetic",
            "run_name": "BM_synthetic",
            "run_type": "iteration",
            "repetitions": declared,
            "repetition_index": index,
            "iterations": 10,
            "real_time": 100.0,
            "cpu_time": 100.0,
            "time_unit": "ns",
        }

    def test_an_entry_that_is_no_object_is_bad_input(self):
        # kills reports/torchplace/gate/speed_input.py:load_run:8f768a:delete_stmt:0 (a TypeError
        # then, a tool error)
        with tempfile.TemporaryDirectory() as folder:
            doc = {"context": {}, "benchmarks": [self.entry(0, 1), 5], "synthetic": True}
            with self.assertRaises(InputError) as raised:
                speed_input.load_run(write_in(folder, "bench.json", doc))
        self.assertIn("benchmarks[1] must be an object", str(raised.exception))

    def test_one_more_repetition_than_declared_is_refused(self):
        # kills reports/torchplace/gate/speed_input.py:_add:c73d6f:const_plus:1 (max(declared, 2):
        # a run declaring 1 repetition passed with 2) and :const_minus:1 (a declared 0, read as
        # one repetition, refused its one)
        with tempfile.TemporaryDirectory() as folder:
            for declared, count, refused in (
                (1, 2, True),
                (1, 1, False),
                (2, 2, False),
                (0, 1, False),
            ):
                doc = {
                    "context": {"synthetic": "hand-made test data, not a measurement"},
                    "benchmarks": [self.entry(i, declared) for i in range(count)],
                }
                path = write_in(folder, "bench.json", doc)
                with self.subTest(declared=declared, count=count):
                    if not refused:
                        speed_input.repetitions(path)
                        continue
                    with self.assertRaises(InputError) as raised:
                        speed_input.repetitions(path)
                    self.assertIn("more repetitions than the 1 it declares", str(raised.exception))


class MeasureErrors(unittest.TestCase):
    def test_a_test_that_cannot_give_p_is_bad_input_naming_the_benchmark(self):
        # kills reports/torchplace/gate/speed.py:measure:f5c8ce:delete_stmt:0 (p None went on)
        failing = InputError("synthetic: the test gave p = nan")
        rule = {"informational": False, "min_reps": 2}
        with mock.patch.object(speed, "mann_whitney_p", side_effect=failing):
            with self.assertRaises(InputError) as raised:
                speed.measure("BM_synthetic", [1.0, 2.0], [3.0, 4.0], rule)
        self.assertEqual(
            str(raised.exception), "benchmark BM_synthetic: synthetic: the test gave p = nan"
        )

    def test_a_time_that_is_no_number_gives_no_p(self):
        # kills reports/torchplace/gate/speed.py:mann_whitney_p:a253b2:delete_stmt:0 (p = nan
        # returned: it would sort anywhere in Holm's order)
        with self.assertRaises(InputError) as raised:
            speed.mann_whitney_p([float("nan"), 3.0], [1.0, 2.0])
        self.assertIn(
            "the test gave p = nan for 2 baseline and 2 candidate times", str(raised.exception)
        )
        self.assertEqual(speed.mann_whitney_p([3.0, 4.0], [1.0, 2.0]), 1 / 3)

    def test_the_refusal_counts_each_side_as_its_own(self):
        # kills reports/torchplace/gate/speed.py:measure:a90f2b:arg_swap:0 (the two-sided p is
        # the same either way, but the sides were passed swapped: "3 baseline and 2 candidate")
        rule = {"informational": False, "min_reps": 2}  # synthetic times, a NaN among them
        with self.assertRaises(InputError) as raised:
            speed.measure("BM_synthetic", [1.0, 2.0], [float("nan"), 3.0, 4.0], rule)
        self.assertIn(
            "benchmark BM_synthetic: the test gave p = nan for 2 baseline and 3 candidate times",
            str(raised.exception),
        )


class NothingCompared(unittest.TestCase):
    def test_a_speed_section_without_benchmarks_is_a_problem(self):
        # kills reports/torchplace/gate/speed.py:input_problems:cb3d63:delete_stmt:0 (every
        # benchmark skipped on both sides: no problem, so a pass)
        section = {"missing": [], "errors": [], "benchmarks": []}
        self.assertEqual(
            speed.input_problems(section),
            ["no benchmark was compared (all skipped, missing or failed)"],
        )


class PowerEdges(unittest.TestCase):
    def test_a_smallest_p_equal_to_alpha_has_no_power(self):
        # kills reports/torchplace/gate/speed.py:power:4cfb87:rel_flip:1 (SLOWER needs p < alpha,
        # so 1 gated x min_p(3, 3) = 0.1 cannot be SLOWER at alpha 0.1)
        row = {
            "name": "BM_synthetic",
            "informational": False,
            "reps_baseline": 3,
            "reps_candidate": 3,
            "rule": {"min_reps": 2},
        }
        self.assertEqual(speed.min_p(3, 3), 0.1)
        self.assertEqual(speed.power([row], 0.1)["without"], ["BM_synthetic"])
        self.assertEqual(speed.power([row], 0.11)["without"], [])

    def test_two_repetitions_a_side_suffice_where_their_p_can_be_reached(self):
        # kills reports/torchplace/gate/speed.py:reps_needed:c631ee:const_plus:0 (a default of 3)
        self.assertAlmostEqual(speed.min_p(2, 2), 1 / 3)
        self.assertEqual(speed.reps_needed(1, 0.5), 2)

    def test_none_when_not_even_the_limit_suffices(self):
        # kills reports/torchplace/gate/speed.py:reps_needed:58a678:const_plus:1 (limit + 1 tried)
        self.assertEqual(speed.reps_needed(1, 0.05, limit=4), 4)  # min_p(4, 4) = 0.029
        self.assertIsNone(speed.reps_needed(1, 0.05, limit=3))  # min_p(3, 3) = 0.1

    def test_the_message_names_three_benchmarks_and_counts_the_rest(self):
        # kills reports/torchplace/gate/speed.py:no_power_message:eacc21:const_plus:1
        check = {
            "reps_needed": 6,
            "without": [f"BM_{n}" for n in "abcde"],
            "gated": 5,
            "min_p": 0.1,
            "alpha": 0.05,
        }
        text = speed.no_power_message(check)
        self.assertIn("(BM_a, BM_b, BM_c and 2 more)", text)
        # and :const_plus:1 (`> 4`: the fourth of four went uncounted)
        four = dict(check, without=check["without"][:4])
        self.assertIn("(BM_a, BM_b, BM_c and 1 more)", speed.no_power_message(four))


class PowerFigures(unittest.TestCase):
    def test_min_p_is_the_worst_gated_benchmarks(self):
        # kills reports/torchplace/gate/speed.py:power:b6649c:delete_stmt:0 (min_p stayed 0.0:
        # the power line claimed any p could be reached)
        def row(name, reps, informational=False):  # synthetic rows, no measurement
            return {
                "name": name,
                "informational": informational,
                "reps_baseline": reps,
                "reps_candidate": reps,
                "rule": {"min_reps": 2},
            }

        found = speed.power([row("a", 8), row("b", 3), row("c", 2, True)], 0.05)
        self.assertEqual(found["gated"], 2)
        self.assertEqual(found["min_p"], speed.min_p(3, 3))
        self.assertGreater(found["min_p"], speed.min_p(8, 8))
        self.assertEqual(found["without"], ["b"])

    def test_the_advised_repetitions_are_enough_for_every_gated_rule(self):
        # kills reports/torchplace/gate/speed.py:power:9237d1:minmax_swap:0 (advised >= 8 a side
        # while one gated rule asks for 12: rerun as told, the gate still had no power)
        def rows(reps):  # synthetic rows, no measurement; power alone needs 5 a side here
            return [
                {
                    "name": name,
                    "informational": False,
                    "reps_baseline": reps,
                    "reps_candidate": reps,
                    "rule": {"min_reps": min_reps},
                }
                for name, min_reps in (("BM_a", 8), ("BM_b", 12))
            ]

        found = speed.power(rows(10), 0.05)
        self.assertEqual(found["without"], ["BM_b"])
        self.assertEqual(speed.power(rows(found["reps_needed"]), 0.05)["without"], [])
        self.assertEqual(speed.power(rows(found["reps_needed"] - 1), 0.05)["without"], ["BM_b"])

    def test_the_advised_repetitions_come_from_the_family_and_alpha(self):
        # kills reports/torchplace/gate/speed.py:power:9237d1:arg_swap:0 (reps_needed(alpha,
        # gated): min_reps 2 advised where 3 gated at alpha 0.05 need 5 a side). Reference: the
        # smallest p of n against n is 2 / C(2n, n) (min_p's docstring), so 3 x 2 / C(2n, n) <
        # 0.05 needs C(2n, n) > 120: C(8, 4) = 70, C(10, 5) = 252.
        n = next(n for n in range(2, 50) if 3 * 2 / math.comb(2 * n, n) < 0.05)
        self.assertEqual(n, 5)
        rows = [  # synthetic rows, no measurement: 3 a side, min_reps 2
            {
                "name": name,
                "informational": False,
                "reps_baseline": 3,
                "reps_candidate": 3,
                "rule": {"min_reps": 2},
            }
            for name in ("BM_a", "BM_b", "BM_c")
        ]
        found = speed.power(rows, 0.05)
        self.assertEqual((found["reps_needed"], found["enough"]), (n, False))
        self.assertIn("add repetitions (>= 5 a side)", speed.no_power_message(found))


class EntryNames(unittest.TestCase):
    def test_a_name_or_run_type_that_is_no_text_is_bad_input(self):
        # kills reports/torchplace/gate/speed_input.py:_check_entry:d43be2:delete_stmt:0 and
        # _check_entry:048f8d:delete_stmt:0 (a run_type 5 was skipped in silence, a name 5
        # measured, a missing name a KeyError)
        good = DeclaredRepetitions.entry(0, 1)
        for key, wrong in (
            ("name", 5),
            ("name", ""),
            ("name", None),
            ("run_type", 5),
            ("run_type", ""),
        ):
            entry = dict(DeclaredRepetitions.entry(0, 1), run_name="BM_other", **{key: wrong})
            if wrong is None:
                del entry[key]
            doc = {"context": {"synthetic": "hand-made test data"}, "benchmarks": [good, entry]}
            with tempfile.TemporaryDirectory() as folder, self.subTest(key=key, value=wrong):
                with self.assertRaises(InputError) as raised:
                    speed_input.repetitions(write_in(folder, "bench.json", doc))
                self.assertIn(f"benchmarks[1]: {key} must be non-empty text", str(raised.exception))


class RunNames(unittest.TestCase):
    def test_a_run_name_if_present_is_non_empty_text(self):
        # kills reports/torchplace/gate/speed_input.py:_check_entry:380eb1:eq_flip:0 (a bad
        # run_name unchecked; an entry without one a KeyError)
        entry = {"name": "BM_synthetic", "run_type": "iteration"}
        speed_input._check_entry(entry, "synthetic")
        for bad in (5, ""):
            with self.subTest(run_name=bad), self.assertRaises(InputError) as raised:
                speed_input._check_entry(dict(entry, run_name=bad), "synthetic")
            self.assertIn("run_name must be non-empty text", str(raised.exception))


if __name__ == "__main__":
    unittest.main()
