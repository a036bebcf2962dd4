#!/usr/bin/env python3
"""Tests that kill generated mutants of the speed gate's decisions at their bounds (a ratio equal
to max_ratio, a delta equal to the floor, p equal to alpha, repetitions equal to min_reps) which
survived every other test (torchplace.mutation.generated; ci/mutation/README.md "Generated
mutants"). Each names the mutant it was seen to kill. Rows and runs are made here: synthetic."""
import tempfile
import unittest

from gate_inputs import write_in
from torchplace.gate import speed
from torchplace.gate.policy import load_policy
from torchplace.schema import InputError


def decided(ratio, delta_s, p_adjusted, max_ratio=1.25, min_abs_ns=0.0, alpha=0.05):
    """A synthetic row's outcome and note after speed.decide."""
    row = {
        "ratio": ratio,
        "delta_s": delta_s,
        "p_adjusted": p_adjusted,
        "rule": {"max_ratio": max_ratio, "min_abs_ns": min_abs_ns},
        "note": "",
    }
    speed.decide(row, alpha)
    return row["outcome"], row["note"]


class Decide(unittest.TestCase):
    def test_a_ratio_equal_to_max_ratio_either_way_is_same(self):
        # kills reports/torchplace/gate/speed.py:decide:1676bd:rel_flip:0 (1.25 read as SLOWER)
        # and :rel_flip:1 (0.8 = 1 / 1.25 read as FASTER); exact in binary floating point
        self.assertEqual(decided(1.25, 1.0, 0.0)[0], speed.SAME)
        self.assertEqual(decided(0.8, -1.0, 0.0)[0], speed.SAME)
        self.assertEqual(decided(1.2500001, 1.0, 0.0)[0], speed.SLOWER)
        self.assertEqual(decided(0.7999999, -1.0, 0.0)[0], speed.FASTER)

    def test_a_delta_equal_to_the_floor_counts(self):
        # kills reports/torchplace/gate/speed.py:decide:193f00:rel_flip:0 (a delta of exactly
        # min_abs_ns, 0.5 s = 5e8 ns, read as below the floor)
        self.assertEqual(decided(2.0, 0.5, 0.0, min_abs_ns=5e8)[0], speed.SLOWER)
        self.assertEqual(decided(2.0, 0.4999, 0.0, min_abs_ns=5e8)[0], speed.SAME)

    def test_p_equal_to_alpha_is_not_significant(self):
        # kills reports/torchplace/gate/speed.py:decide:e4b1cc:rel_flip:0 (p = alpha read as
        # SLOWER) and decide:fe339a:delete_stmt:0 (AMBIGUOUS without saying to rerun)
        outcome, note = decided(2.0, 1.0, 0.05, alpha=0.05)
        self.assertEqual(outcome, speed.AMBIGUOUS)
        self.assertIn("rerun with more repetitions", note)
        self.assertEqual(decided(2.0, 1.0, 0.0499, alpha=0.05), (speed.SLOWER, ""))


class Power(unittest.TestCase):
    @staticmethod
    def row(reps_baseline, reps_candidate, min_reps=8):  # synthetic, no measurement
        return {
            "name": f"BM_{reps_baseline}_{reps_candidate}",
            "informational": False,
            "reps_baseline": reps_baseline,
            "reps_candidate": reps_candidate,
            "rule": {"min_reps": min_reps},
        }

    def test_min_reps_a_side_is_enough_and_the_smaller_side_counts(self):
        # kills reports/torchplace/gate/speed.py:power:4cfb87:rel_flip:0 (8 of min_reps 8 read
        # as too few), power:cbf335:minmax_swap:0 (10 and 5 read as 10) and power:4cfb87:
        # logic_swap:0 (too few repetitions passed while the p could be reached)
        self.assertEqual(speed.power([self.row(8, 8)], 0.05)["without"], [])
        for reps in ((10, 5), (5, 10)):
            with self.subTest(reps=reps):
                found = speed.power([self.row(*reps)], 0.05)
                self.assertLess(found["min_p"], 0.05)  # the p alone could be reached
                self.assertEqual(found["without"], [self.row(*reps)["name"]])
                self.assertFalse(found["enough"])

    def test_reps_needed_must_put_the_smallest_p_below_alpha(self):
        # kills reports/torchplace/gate/speed.py:reps_needed:f03d7c:rel_flip:0 (3 a side at
        # alpha 0.1, where min_p(3, 3) = 0.1 itself cannot be SLOWER)
        self.assertEqual(speed.min_p(3, 3), 0.1)
        self.assertEqual(speed.reps_needed(1, 0.1), 4)


class Holm(unittest.TestCase):
    def test_p_of_0_and_1_are_valid(self):
        # kills reports/torchplace/gate/speed.py:holm:426dc1:rel_flip:0 (p = 0 refused: the
        # normal approximation gives 0.0 for large fully separated samples with ties)
        self.assertEqual(speed.holm({"a": 0.0, "b": 1.0}), {"a": 0.0, "b": 1.0})
        for bad in (-0.1, 1.1, float("nan")):
            with self.subTest(p=bad), self.assertRaises(InputError):
                speed.holm({"a": bad})


class NoPowerMessage(unittest.TestCase):
    def test_three_names_are_listed_without_a_count(self):
        # kills reports/torchplace/gate/speed.py:no_power_message:eacc21:rel_flip:0 and
        # :const_minus:1 ("and 0 more", "BM_a, BM_b and 1 more" for three)
        check = {"reps_needed": 6, "without": ["BM_a", "BM_b", "BM_c"], "gated": 3}
        text = speed.no_power_message(dict(check, min_p=0.1, alpha=0.05))
        self.assertIn("3 of 3 gated benchmarks could never be SLOWER (BM_a, BM_b, BM_c):", text)


class OneRepetition(unittest.TestCase):
    @staticmethod
    def run_of(reps):  # synthetic: hand-made Google Benchmark entries, not a measurement
        entry = {"name": "BM_synthetic", "run_type": "iteration", "time_unit": "ns"}
        return {
            "context": {"synthetic": "hand-made test data"},
            "benchmarks": [
                dict(entry, repetition_index=i, repetitions=reps, real_time=100.0 + i)
                for i in range(reps)
            ],
        }

    def test_one_side_with_a_single_repetition_is_bad_input(self):
        # kills reports/torchplace/gate/speed.py:compare:cf227b:minmax_swap:0 (1 baseline
        # against 3 candidate repetitions was measured)
        policy = load_policy()  # ci/gate/policy.json, min_reps 8: power aside, 3 would do
        with tempfile.TemporaryDirectory() as folder:
            for base, cand in ((1, 3), (3, 1)):
                paths = [
                    write_in(folder, f"{side}.json", self.run_of(reps))
                    for side, reps in (("base", base), ("cand", cand))
                ]
                with self.subTest(base=base, cand=cand), self.assertRaises(InputError) as raised:
                    speed.compare(paths[0], paths[1], policy)
                self.assertIn(
                    f"{base} baseline and {cand} candidate repetition(s); run with "
                    "--benchmark_repetitions",
                    str(raised.exception),
                )


class NewBenchmark(unittest.TestCase):
    def test_a_benchmark_of_the_candidate_only_is_listed_as_new_not_a_problem(self):
        # kills reports/torchplace/gate/speed.py:_pair:fd3a28:delete_stmt:0 (it vanished from
        # the verdict and the summary)
        same = OneRepetition.run_of(8)
        extra = dict(same["benchmarks"][0], name="BM_extra", run_name="BM_extra")
        grown = dict(same, benchmarks=same["benchmarks"] + [extra])
        with tempfile.TemporaryDirectory() as folder:
            base, cand = write_in(folder, "base.json", same), write_in(folder, "cand.json", grown)
            section = speed.compare(base, cand, load_policy())
        self.assertEqual([row["name"] for row in section["new"]], ["BM_extra"])
        self.assertEqual([row["name"] for row in section["benchmarks"]], ["BM_synthetic"])
        self.assertEqual(speed.input_problems(section), [])


class RowFigures(unittest.TestCase):
    def compared(self, base_doc, cand_doc):
        with tempfile.TemporaryDirectory() as folder:
            base = write_in(folder, "base.json", base_doc)
            return speed.compare(base, write_in(folder, "cand.json", cand_doc), load_policy())

    def test_each_row_names_the_test_it_used(self):
        # kills reports/torchplace/gate/speed.py:measure:bdc704:delete_stmt:0 (gate.json's row
        # did not say whether its p came from the exact test or the normal approximation)
        distinct = OneRepetition.run_of(8)  # 100..107 ns on both sides: ties across them
        shifted = dict(
            distinct,
            benchmarks=[dict(e, real_time=e["real_time"] + 50.5) for e in distinct["benchmarks"]],
        )
        self.assertEqual(self.compared(distinct, distinct)["benchmarks"][0]["method"], "asymptotic")
        self.assertEqual(self.compared(distinct, shifted)["benchmarks"][0]["method"], "exact")

    def test_a_skip_keeps_its_reason_and_side(self):
        # kills reports/torchplace/gate/speed.py:_pair:c108f6:logic_swap:0 (a skip of the
        # baseline only lost its reason; of both, the baseline's reason stood for the candidate's)
        measured = OneRepetition.run_of(8)

        def skipped(reason):  # Google Benchmark < 1.8's skip: an error with the skip prefix
            entries = [
                dict(e, error_occurred=True, error_message=f"skip: {reason}")
                for e in measured["benchmarks"]
            ]
            return dict(measured, benchmarks=entries)

        for base, cand, expected in (
            (skipped("synthetic: no GPU"), measured, ("synthetic: no GPU", "baseline")),
            (skipped("synthetic: A"), skipped("synthetic: B"), ("synthetic: B", "candidate")),
        ):
            with self.subTest(expected=expected):
                rows = self.compared(base, cand)["skipped"]
                self.assertEqual(
                    [(r["name"], r["reason"], r["side"]) for r in rows],
                    [("BM_synthetic", *expected)],
                )


class Context(unittest.TestCase):
    # synthetic contexts: each key that makes two runs another machine or build, changed alone
    SAME = {"num_cpus": 2, "gpu": "none", "library_build_type": "release", "host_name": "a"}

    def test_another_machine_or_build_is_a_problem_and_a_host_name_only_a_note(self):
        # held out: MUST_MATCH without library_build_type compared a debug build with a release
        for key, other in (("num_cpus", 4), ("gpu", "H200"), ("library_build_type", "debug")):
            with self.subTest(key=key):
                problems, notes = speed._context_checks(self.SAME, dict(self.SAME, **{key: other}))
                self.assertEqual(len(problems), 1)
                self.assertIn(f"context {key} differs", problems[0])
                self.assertEqual(notes, [])
        problems, notes = speed._context_checks(self.SAME, dict(self.SAME, host_name="b"))
        self.assertEqual((problems, len(notes)), ([], 1))

    def test_compare_names_the_baselines_value_first(self):
        # kills reports/torchplace/gate/speed.py:compare:f3173e:arg_swap:0 (the two contexts
        # swapped: "baseline 4, candidate 2"); one benchmark a side, none in common
        measured = OneRepetition.run_of(1)["benchmarks"][0]
        sides = (
            ("base", self.SAME, measured),
            ("cand", dict(self.SAME, num_cpus=4, host_name="b"), dict(measured, name="BM_b")),
        )
        with tempfile.TemporaryDirectory() as folder:
            paths = [
                write_in(folder, f"{side}.json", {"context": context, "benchmarks": [entry]})
                for side, context, entry in sides
            ]
            section = speed.compare(paths[0], paths[1], load_policy())
        self.assertEqual(section["mismatch"], ["context num_cpus differs: baseline 2, candidate 4"])
        host = "context host_name differs: baseline 'a', candidate 'b'"
        self.assertEqual(section["notes"], [host])
        names = [m["name"] for m in section["missing"] + section["new"]]
        self.assertEqual(names, ["BM_synthetic", "BM_b"])


if __name__ == "__main__":
    unittest.main()
