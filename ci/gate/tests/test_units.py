#!/usr/bin/env python3
"""Unit tests of the gate's parts: Holm's correction, the power check, policy resolution, the
interleaved merge, the Markdown table and the expectations refresh. The end-to-end cases live in
cases.json."""
import contextlib
import io
import json
import math
import os
import shutil
import tempfile
import unittest

from torchplace.gate import behaviour, interleave, report, skips, speed
from torchplace.gate.policy import Policy, load_policy
from torchplace.schema import EXIT_USAGE, InputError

HERE = os.path.dirname(os.path.abspath(__file__))

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

    def test_min_p_exact_above_eight(self):
        # scipy's 'auto' goes asymptotic above 8 a side (3.7e-5 at 12); exact: 2 / C(24, 12)
        self.assertAlmostEqual(speed.min_p(12, 12), 2 / math.comb(24, 12), places=15)
        self.assertAlmostEqual(speed.min_p(16, 16), 2 / math.comb(32, 16), places=18)
        ladder = [speed.min_p(n, n) for n in range(2, 20)]
        self.assertEqual(ladder, sorted(ladder, reverse=True))  # more repetitions, more power

    def test_exact_without_ties_asymptotic_with_ties(self):
        self.assertEqual(speed.test_method([1.0, 2.0], [3.0, 4.0]), "exact")
        self.assertEqual(speed.test_method([1.0, 2.0], [2.0, 4.0]), "asymptotic")
        cand, base = [float(i) for i in range(10, 20)], [float(i) for i in range(10)]
        self.assertAlmostEqual(speed.mann_whitney_p(cand, base), 2 / math.comb(20, 10), places=15)

    def test_reps_needed_is_the_smallest_that_holds(self):
        for gated in (1, 5, 34, 140, 1000):
            needed = speed.reps_needed(gated, self.ALPHA)
            self.assertLess(gated * speed.min_p(needed, needed), self.ALPHA, gated)
            self.assertGreaterEqual(gated * speed.min_p(needed - 1, needed - 1), self.ALPHA, gated)
        self.assertEqual(speed.reps_needed(1, self.ALPHA, min_reps=8), 8)

    @staticmethod
    def row(name, reps, informational=False, min_reps=8):
        return {
            "name": name,
            "informational": informational,
            "reps_baseline": reps,
            "reps_candidate": reps,
            "rule": {"min_reps": min_reps},
        }

    def test_every_gated_benchmark_needs_power(self):
        # 100 at 8 a side and one at 16: 101 x 2/C(16, 8) >= 0.01, so the 100 can never be SLOWER
        rows = [self.row(f"b{i}", 8) for i in range(100)] + [self.row("best", 16)]
        check = speed.power(rows, self.ALPHA)
        self.assertFalse(check["enough"])
        self.assertEqual(len(check["without"]), 100)
        self.assertNotIn("best", check["without"])
        self.assertTrue(speed.power(rows[:60] + [self.row("best", 16)], self.ALPHA)["enough"])

    def test_below_min_reps_is_no_power_and_informational_rows_do_not_count(self):
        rows = [self.row("a", 16), self.row("few", 7)] + [
            self.row(f"i{i}", 2, True) for i in range(500)
        ]
        check = speed.power(rows, self.ALPHA)
        self.assertEqual((check["gated"], check["without"]), (2, ["few"]))
        self.assertIsNone(speed.power(rows[2:], self.ALPHA))

    def test_holm_refuses_nan(self):
        with self.assertRaises(InputError):
            speed.holm({"a": 0.001, "b": float("nan")})


class PolicyTest(unittest.TestCase):
    DOC = {
        "schema": "torchplace.gate-policy/1",
        "alpha": 0.01,
        "default": {"max_ratio": 1.1, "min_abs_ns": 50, "min_reps": 8, "informational": False},
        "patterns": [
            {"match": "transfer/*", "max_ratio": 1.2},
            {"match": "*device:cuda:1", "informational": True},
        ],
        "benchmarks": {"transfer/a/device:cuda:1": {"max_ratio": 1.3}},
    }

    def test_later_entries_override(self):
        rule = Policy(self.DOC, "p").rule("transfer/a/device:cuda:1")
        self.assertEqual((rule["max_ratio"], rule["informational"]), (1.3, True))
        self.assertEqual(
            rule["sources"], ["default", "transfer/*", "*device:cuda:1", "transfer/a/device:cuda:1"]
        )
        self.assertEqual(Policy(self.DOC, "p").rule("cpu_copy/x")["max_ratio"], 1.1)

    def test_rejects_typos_and_bad_values(self):
        default = self.DOC["default"]
        for change in (
            {"alpha": 1.5},
            {"default": dict(self.DOC["default"], max_ratio=0.9)},
            {"alpha": float("nan")},
            {"alpha": "0.01"},
            {"default": dict(default, max_ratio=float("nan"))},
            {"default": dict(default, max_ratio=float("inf"))},
            {"default": dict(default, min_abs_ns=float("inf"))},
            {"default": dict(default, min_reps=7.5)},
            {"patterns": [{"match": "x", "min_abs_ns": float("nan")}]},
            {"patterns": [{"match": "x", "informationl": True}]},
            {"extra": 1},
        ):
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
        rows = [
            r for r in doc["benchmarks"] if r["run_name"] == "cpu_copy/path:clone/bytes:1048576"
        ]
        self.assertEqual([r["repetition_index"] for r in rows], list(range(24)))
        self.assertEqual({r["repetitions"] for r in rows}, {24})
        self.assertEqual({r["run_type"] for r in doc["benchmarks"]}, {"iteration"})

    def test_no_round_is_a_usage_error_not_a_traceback(self):
        # --rounds 0 ran nothing, then document() met a context of None (a TypeError; mypy)
        argv = ["--baseline-bin", "a", "--candidate-bin", "b", "--out-baseline", "x"]
        for bad in (["--rounds", "0"], ["--batch", "0"]):
            with self.assertRaises(SystemExit) as stop, contextlib.redirect_stderr(io.StringIO()):
                interleave.parse(argv + ["--out-candidate", "y", *bad])
            self.assertEqual(stop.exception.code, EXIT_USAGE, bad)
        with self.assertRaises(InputError):
            interleave.Merged("baseline").document("rounds=0")


class MarkdownTest(unittest.TestCase):
    def test_table_sorted_by_ratio_with_p_and_reps(self):
        section = speed.compare(
            os.path.join(FIXTURES, "speed", "base.json"),
            os.path.join(FIXTURES, "speed", "slower.json"),
            load_policy(os.path.join(FIXTURES, "speed", "policy.json")),
        )
        verdict = {"problems": [], "behaviour": None, "speed": section, "exit_code": 1}
        rows = [line for line in report.markdown(verdict).splitlines() if line.startswith("| `")]
        ratios = [float(line.split("|")[3]) for line in rows]
        self.assertEqual(ratios, sorted(ratios, reverse=True))
        self.assertIn("| 12/12 |", rows[0])
        self.assertIn("p (Holm)", report.markdown(verdict))


class ToolErrorTest(unittest.TestCase):
    """An unexpected exception is exit 3 with a verdict in --out, never a pass."""

    def run_gate(self, candidate):
        from torchplace.gate import cli as gate

        scratch = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, scratch)
        code = gate.main(
            [
                "--baseline",
                os.path.join(FIXTURES, "speed", "base.json"),
                "--candidate",
                os.path.join(FIXTURES, "speed", candidate),
                "--out",
                scratch,
            ]
        )
        with open(os.path.join(scratch, "gate.json"), encoding="utf-8") as handle:
            verdict = json.load(handle)
        problems = verdict["problems"] + verdict.get("tool_errors", [])
        with open(os.path.join(scratch, "summary.md"), encoding="utf-8") as handle:
            summary = handle.read()
        return code, problems, summary

    def test_an_unexpected_exception_is_exit_3_with_a_verdict(self):
        def broken(*_args):
            raise ZeroDivisionError("injected")

        original, speed.compare = speed.compare, broken
        self.addCleanup(setattr, speed, "compare", original)
        code, problems, summary = self.run_gate("slower.json")
        self.assertEqual(code, report.EXIT_INPUT)
        self.assertTrue(any("ZeroDivisionError: injected" in p for p in problems), problems)
        self.assertIn("injected", summary)

    def test_a_failing_report_still_leaves_a_verdict(self):
        # the speed regression was reached: a summary that fails to render never replaces it
        original, report.markdown = report.markdown, lambda verdict: 1 / 0
        self.addCleanup(setattr, report, "markdown", original)
        code, problems, summary = self.run_gate("slower.json")
        self.assertEqual(code, report.EXIT_SPEED)
        self.assertTrue(any("ZeroDivisionError" in p for p in problems), problems)
        self.assertIn("ZeroDivisionError", summary)


class RefreshTest(unittest.TestCase):
    def test_refresh_reproduces_the_fixture_expectations(self):
        scratch = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, scratch)
        target = os.path.join(scratch, "expectations.json")
        behaviour.refresh(os.path.join(FIXTURES, "behaviour", "results_ok"), target)
        self.assertEqual(
            behaviour.load_expectations(target),
            behaviour.load_expectations(os.path.join(FIXTURES, "behaviour", "expectations.json")),
        )

    def test_refresh_makes_the_expectations_folder(self):
        scratch = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, scratch)
        target = os.path.join(scratch, "ci", "expectations.json")  # a project with no ci/ yet
        behaviour.refresh(os.path.join(FIXTURES, "behaviour", "results_ok"), target)
        self.assertTrue(behaviour.load_expectations(target))

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
            behaviour.refresh(
                os.path.join(FIXTURES, "behaviour", "results_stopped_raising"),
                os.path.join(tempfile.gettempdir(), "never-written.json"),
            )


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

    def test_no_c10d_gloo_must_agree_with_the_fingerprint(self) -> None:
        cell = {"device": "cpu", "reason": "no c10d Gloo", "skip_code": "no_c10d_gloo"}
        committed = {"outcome": "success", "skip_codes": ["no_c10d_gloo"]}
        cuda = {"built_with_cuda": False, "device_count": 0}
        without = {"cuda": cuda, "c10d_gloo": False}
        self.assertIsNone(skips.skip_problem(cell, committed, without))
        for fingerprint in ({"cuda": cuda, "c10d_gloo": True}, {"cuda": cuda}):
            self.assertIn("contradicts", skips.skip_problem(cell, committed, fingerprint))

    def test_kind_of_a_second_gpu_is_cuda0(self):
        self.assertEqual(behaviour.kind_id("s/v=a/device=cuda:3"), "s/v=a/device=cuda:0")
        self.assertEqual(behaviour.kind_id("s/v=a/device=cuda:10"), "s/v=a/device=cuda:0")
        self.assertEqual(
            behaviour.kind_id("m/v=a/devices=cuda:0+cuda:1"), "m/v=a/devices=cuda:0+cuda:1"
        )
        self.assertEqual(behaviour.kind_id("s/v=a/device=cpu"), "s/v=a/device=cpu")


if __name__ == "__main__":
    unittest.main()
