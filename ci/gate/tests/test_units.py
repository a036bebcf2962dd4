#!/usr/bin/env python3
"""Unit tests of the gate's parts: Holm's correction, the power check, policy resolution, the
interleaved merge, the Markdown table and the expectations refresh. The end-to-end cases live in
cases.json."""
import json
import math
import os
import shutil
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
import behaviour  # noqa: E402
import interleave  # noqa: E402
import report  # noqa: E402
import skips  # noqa: E402
import speed  # noqa: E402
from policy import InputError, Policy, load_policy  # noqa: E402

FIXTURES = os.path.join(HERE, "fixtures")


class HolmTest(unittest.TestCase):
    def test_step_down_by_hand(self):
        # sorted p 0.01, 0.02, 0.04 -> 3*0.01, max(0.03, 2*0.02), max(0.04, 1*0.04)
        adjusted = speed.holm({"a": 0.04, "b": 0.01, "c": 0.02})
        self.assertAlmostEqual(adjusted["b"], 0.03)
        self.assertAlmostEqual(adjusted["c"], 0.04)
        self.assertAlmostEqual(adjusted["a"], 0.04)

    def test_capped_at_one(self):
        self.assertEqual(speed.holm({"a": 0.6, "b": 0.7}), {"a": 1.0, "b": 1.0})


class PowerTest(unittest.TestCase):
    ALPHA = 0.01

    def test_min_p_exact_by_hand(self):
        # 4 a side, perfectly separated: 2 of the C(8, 4) = 70 orderings are as extreme
        self.assertAlmostEqual(speed.min_p(4, 4), 2 / 70)

    def test_min_p_asymptotic_by_hand(self):
        # 12 a side: U = 144, mean 72, sd sqrt(12*12*25/12); continuity correction 0.5
        z = (144 - 72 - 0.5) / math.sqrt(12 * 12 * 25 / 12)
        self.assertAlmostEqual(speed.min_p(12, 12), math.erfc(z / math.sqrt(2)), places=12)

    def test_reps_needed_is_the_smallest_that_holds_from_there_on(self):
        for gated in (1, 5, 34, 140):
            needed = speed.reps_needed(gated, self.ALPHA)
            for n in range(needed, needed + 30):
                self.assertLess(gated * speed.min_p(n, n), self.ALPHA, (gated, n))
            self.assertTrue(needed == 2 or any(gated * speed.min_p(n, n) >= self.ALPHA
                                               for n in range(2, needed)), gated)

    def test_power_counts_holms_family_only(self):
        row = {"informational": False, "p": 0.5, "reps_baseline": 10, "reps_candidate": 10}
        rows = ([row] * 60 + [dict(row, informational=True)] * 100
                + [dict(row, p=None, reps_candidate=3)] * 100)
        check = speed.power(rows, self.ALPHA)
        self.assertEqual(check["gated"], 60)
        self.assertFalse(check["enough"])  # 60 x 1.8e-4 >= 0.01
        self.assertEqual(check["reps_needed"], speed.reps_needed(60, self.ALPHA))
        self.assertTrue(speed.power(rows[:50], self.ALPHA)["enough"])  # 50 x 1.8e-4 < 0.01
        self.assertIsNone(speed.power(rows[60:], self.ALPHA))


class PolicyTest(unittest.TestCase):
    DOC = {"schema": "torchplace.gate-policy/1", "alpha": 0.01,
           "default": {"max_ratio": 1.1, "min_abs_ns": 50, "min_reps": 8, "informational": False},
           "patterns": [{"match": "transfer/*", "max_ratio": 1.2},
                        {"match": "*device:cuda:1", "informational": True}],
           "benchmarks": {"transfer/a/device:cuda:1": {"max_ratio": 1.3}}}

    def test_later_entries_override(self):
        rule = Policy(self.DOC, "p").rule("transfer/a/device:cuda:1")
        self.assertEqual((rule["max_ratio"], rule["informational"]), (1.3, True))
        self.assertEqual(rule["sources"], ["default", "transfer/*", "*device:cuda:1",
                                           "transfer/a/device:cuda:1"])
        self.assertEqual(Policy(self.DOC, "p").rule("cpu_copy/x")["max_ratio"], 1.1)

    def test_rejects_typos_and_bad_values(self):
        for change in ({"alpha": 1.5}, {"default": dict(self.DOC["default"], max_ratio=0.9)},
                       {"patterns": [{"match": "x", "informationl": True}]}, {"extra": 1}):
            with self.assertRaises(InputError, msg=change):
                Policy(dict(self.DOC, **change), "p")

    def test_committed_policy_loads(self):
        self.assertLess(load_policy().alpha, 0.05)


class InterleaveTest(unittest.TestCase):
    def test_merge_renumbers_and_drops_aggregates(self):
        merged = interleave.Merged("baseline")
        for _ in range(2):
            with open(os.path.join(FIXTURES, "speed", "base.json"), encoding="utf-8") as handle:
                merged.add(json.load(handle))
        doc = json.loads(merged.document("rounds=2"))
        rows = [r for r in doc["benchmarks"] if r["run_name"] == "cpu_copy/path:clone/bytes:1048576"]
        self.assertEqual([r["repetition_index"] for r in rows], list(range(24)))
        self.assertEqual({r["repetitions"] for r in rows}, {24})
        self.assertEqual({r["run_type"] for r in doc["benchmarks"]}, {"iteration"})


class MarkdownTest(unittest.TestCase):
    def test_table_sorted_by_ratio_with_p_and_reps(self):
        section = speed.compare(os.path.join(FIXTURES, "speed", "base.json"),
                                os.path.join(FIXTURES, "speed", "slower.json"),
                                load_policy(os.path.join(FIXTURES, "speed", "policy.json")))
        verdict = {"problems": [], "behaviour": None, "speed": section, "exit_code": 1}
        rows = [line for line in report.markdown(verdict).splitlines() if line.startswith("| `")]
        ratios = [float(line.split("|")[3]) for line in rows]
        self.assertEqual(ratios, sorted(ratios, reverse=True))
        self.assertIn("| 12/12 |", rows[0])
        self.assertIn("p (Holm)", report.markdown(verdict))


class RefreshTest(unittest.TestCase):
    def test_refresh_reproduces_the_fixture_expectations(self):
        scratch = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, scratch)
        target = os.path.join(scratch, "expectations.json")
        behaviour.refresh(os.path.join(FIXTURES, "behaviour", "results_ok"), target)
        self.assertEqual(behaviour.load_expectations(target), behaviour.load_expectations(
            os.path.join(FIXTURES, "behaviour", "expectations.json")))

    def test_refresh_folds_a_second_gpu_into_its_kind(self):
        scratch = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, scratch)
        target = os.path.join(scratch, "expectations.json")
        behaviour.refresh(os.path.join(FIXTURES, "behaviour", "results_second_gpu_ok"), target)
        cells = behaviour.load_expectations(target)
        self.assertFalse([cell_id for cell_id in cells if "device=cuda:1" in cell_id])
        self.assertIn("forgotten_labels/loss=nll/variant=manual_to/device=cuda:0", cells)

    def test_refresh_refuses_a_failing_run(self):
        with self.assertRaises(InputError):
            behaviour.refresh(os.path.join(FIXTURES, "behaviour", "results_stopped_raising"),
                              os.path.join(tempfile.gettempdir(), "never-written.json"))


class SkipCodeTest(unittest.TestCase):
    ROOT = os.path.join(HERE, "..", "..", "..", "harness")

    def read(self, name):
        with open(os.path.join(self.ROOT, name), encoding="utf-8") as handle:
            return handle.read()

    def test_the_closed_set_is_the_harness_codes(self):
        import re
        declared = set(re.findall(r'// "(\w+)":', self.read("skip_code.h")))
        written = set(re.findall(r'return "(\w+)";', self.read("devices.cpp")))
        self.assertEqual(declared, set(skips.SKIP_CODES) | set(skips.NOT_ACCEPTED) - {"unlisted"})
        self.assertEqual(written, declared | {"unlisted"})
        self.assertFalse(set(skips.SKIP_CODES) & set(skips.NOT_ACCEPTED))

    def test_kind_of_a_second_gpu_is_cuda0(self):
        self.assertEqual(behaviour.kind_id("s/v=a/device=cuda:3"), "s/v=a/device=cuda:0")
        self.assertEqual(behaviour.kind_id("s/v=a/device=cuda:10"), "s/v=a/device=cuda:0")
        self.assertEqual(behaviour.kind_id("m/v=a/devices=cuda:0+cuda:1"), "m/v=a/devices=cuda:0+cuda:1")
        self.assertEqual(behaviour.kind_id("s/v=a/device=cpu"), "s/v=a/device=cpu")


if __name__ == "__main__":
    unittest.main()
