#!/usr/bin/env python3
"""torchplace.schema's Google Benchmark helpers, in process on synthetic entries:
parse_benchmark_name, planned_skip (skipped, the old "skip: " error, a real error), seconds (each
time_unit, an unknown one refused), iteration_groups (repetitions grouped by run_name in order,
aggregates left out, the first skip and error kept, a measured entry without its metric refused)
and safe_name.

  test_schema_bench.py [CLASS]      (CTest: report.schema_bench)
"""
import unittest

from schema_cases import SchemaCase
from torchplace import schema


def measured(name: str, time: float, unit: str = "ns", **fields: object) -> dict:
    """A synthetic repetition as Google Benchmark writes it (run_type iteration)."""
    return dict(name=name, run_type="iteration", real_time=time, time_unit=unit, **fields)


class Names(SchemaCase):
    def test_parse_benchmark_name(self) -> None:
        self.assertEqual(
            schema.parse_benchmark_name("transfer/direction:h2d/bytes:4096/manual_time"),
            ("transfer", {"direction": "h2d", "bytes": "4096", "manual_time": ""}),
        )
        self.assertEqual(schema.parse_benchmark_name("f/k:a:b"), ("f", {"k": "a:b"}))
        self.assertEqual(schema.parse_benchmark_name("plain"), ("plain", {}))

    def test_safe_name(self) -> None:
        self.assertEqual(schema.safe_name("transfer/direction:h2d"), "transfer_direction_h2d")
        self.assertEqual(schema.safe_name("  a  b! "), "a_b")  # a run of others is one "_"
        self.assertEqual(schema.safe_name("v2.3.0-rc_1"), "v2.3.0-rc_1")
        self.assertEqual(schema.safe_name("__x__"), "x")


class Skips(SchemaCase):
    def test_planned_skip(self) -> None:
        cases = [
            ({"skipped": True, "skip_message": "no CUDA device"}, "no CUDA device"),
            ({"skipped": True}, "skipped"),
            ({"error_occurred": True, "error_message": "skip: no CUDA device"}, "no CUDA device"),
            ({"error_occurred": True, "error_message": "out of memory"}, None),
            ({"error_occurred": True}, None),
            ({"error_message": "skip: not an error"}, None),
            ({"skipped": False, "skip_message": "x"}, None),
            ({}, None),
        ]
        for entry, reason in cases:
            self.assertEqual(schema.planned_skip(entry), reason, entry)

    def test_seconds(self) -> None:
        self.assertEqual(schema.seconds({"real_time": 2500}), 2500 * 1e-9)  # ns by default
        for unit, scale in (("ns", 1e-9), ("us", 1e-6), ("ms", 1e-3), ("s", 1.0)):
            entry = {"real_time": "3", "cpu_time": 5, "time_unit": unit}
            self.assertEqual(schema.seconds(entry), 3 * scale)
            self.assertEqual(schema.seconds(entry, "cpu_time"), 5 * scale)
        self.refuses(
            "benchmark f: unknown time_unit 'min'",
            schema.seconds,
            {"name": "f", "real_time": 1, "time_unit": "min"},
        )


class Groups(SchemaCase):
    def test_repetitions_grouped_in_first_seen_order(self) -> None:
        doc = {
            "benchmarks": [
                measured("b/repeats:2", 2000, run_name="b"),
                measured("a", 3, "us"),  # no run_name: its name is the group
                {"name": "b_mean", "run_name": "b", "run_type": "aggregate", "real_time": 9},
                measured("b/repeats:2", 4, "ms", run_name="b"),
            ]
        }
        groups = schema.iteration_groups(doc, "bench.json")
        self.assertEqual(list(groups), ["b", "a"])
        self.assertEqual(groups["b"]["entries"], [doc["benchmarks"][0], doc["benchmarks"][3]])
        self.assertEqual(groups["b"]["times"], [2000 * 1e-9, 4 * 1e-3])
        self.assertEqual(groups["a"]["times"], [3 * 1e-6])
        self.assertEqual((groups["b"]["skip"], groups["b"]["error"]), (None, None))

    def test_the_first_skip_and_the_first_error_are_kept(self) -> None:
        doc = {
            "benchmarks": [
                {"name": "s", "run_type": "iteration", "skipped": True, "skip_message": "one"},
                {
                    "name": "s",
                    "run_type": "iteration",
                    "error_occurred": True,
                    "error_message": "skip: two",
                },
                {
                    "name": "e",
                    "run_type": "iteration",
                    "error_occurred": True,
                    "error_message": "boom",
                },
                {
                    "name": "e",
                    "run_type": "iteration",
                    "error_occurred": True,
                    "error_message": "later",
                },
                {"name": "n", "run_type": "iteration", "error_occurred": True},
            ]
        }
        groups = schema.iteration_groups(doc, "bench.json")
        self.assertEqual(groups["s"], {"entries": [], "times": [], "skip": "one", "error": None})
        self.assertEqual(groups["e"], {"entries": [], "times": [], "skip": None, "error": "boom"})
        self.assertEqual(groups["n"]["error"], "")  # an error without a message

    def test_metric_and_required_fields(self) -> None:
        doc = {"benchmarks": [measured("f", 1, cpu_time=7, iterations=10)]}
        groups = schema.iteration_groups(doc, "x", metric="cpu_time", required=("iterations",))
        self.assertEqual(groups["f"]["times"], [7 * 1e-9])
        self.refuses(
            "bench.json: benchmarks[0] (f): missing field(s) iterations, cpu_time",
            schema.iteration_groups,
            {"benchmarks": [measured("f", 1)]},
            "bench.json",
            "cpu_time",
            ("iterations",),
        )

    def test_a_run_name_that_is_not_text_is_refused(self) -> None:
        doc = {"benchmarks": [measured("f", 1), measured("g", 1, run_name=3)]}
        self.refuses(
            "bench.json: benchmarks[1]: run_name must be a string, found int",
            schema.iteration_groups,
            doc,
            "bench.json",
        )


if __name__ == "__main__":
    unittest.main()
