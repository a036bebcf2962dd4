#!/usr/bin/env python3
"""bench.json as the report reads it (torchplace.report.bench), in process: bandwidth from
bytes and time when no bytes_per_second is given, user counters required of every repetition,
(median, min, max), names' empty parts dropped, unknown time units rejected at load, and Google
Benchmark output of other programs told apart. Every entry is synthetic (report_inputs.py)."""
import math
import unittest

from report_inputs import entry, failed, load_bench, skipped
from torchplace.report import bench
from torchplace.schema import InputError


class Measurements(unittest.TestCase):
    def test_bandwidth_from_bytes_count_and_time(self):
        entries = [
            entry("small_tensors/bytes:1000/count:4", 1000.0),
            entry("small_tensors/bytes:1000", 500.0),
            entry("small_tensors/count:4", 1000.0),
            entry("transfer/bytes:8", 1.0, bytes_per_second=3e9),
        ]
        loaded = load_bench(entries).measurements
        self.assertAlmostEqual(loaded["small_tensors/bytes:1000/count:4"].gbps()[0], 4.0)
        self.assertAlmostEqual(loaded["small_tensors/bytes:1000"].gbps()[0], 2.0)
        self.assertTrue(math.isnan(loaded["small_tensors/count:4"].gbps()[0]))
        self.assertEqual(list(loaded["transfer/bytes:8"].gbps()), [3.0])

    def test_a_counter_missing_from_one_repetition_is_an_error(self):
        entries = [
            entry("prefetch_overlap/device:cuda:0", step_ms=1.0),
            entry("prefetch_overlap/device:cuda:0"),
        ]
        measurement = load_bench(entries).measurements["prefetch_overlap/device:cuda:0"]
        self.assertTrue(measurement.has_counter("step_ms"))
        self.assertFalse(measurement.has_counter("copy_ms"))
        with self.assertRaisesRegex(
            InputError, "benchmark prefetch_overlap/device:cuda:0.*step_ms"
        ):
            measurement.counter("step_ms")

    def test_spread_of_a_list(self):
        self.assertEqual(bench.spread([3, 1, 2, 10]), (2.5, 1.0, 10.0))


class Load(unittest.TestCase):
    def test_fields_path_context_skips_and_failures(self):
        entries = [
            entry("transfer/direction:h2d/manual_time"),
            skipped("transfer/b", "no GPU"),
            skipped("transfer/a", "no GPU"),
            failed("transfer/c", ""),
        ]
        context = {"torchplace_fingerprint": "{}", "host_name": "h"}
        loaded = load_bench(entries, context=context)
        self.assertEqual(
            loaded.measurements["transfer/direction:h2d/manual_time"].fields,
            {"direction": "h2d"},
        )
        self.assertTrue(loaded.path.endswith("bench.json"))
        self.assertEqual(loaded.context, context)
        self.assertEqual(loaded.skips, [("transfer/a", "no GPU"), ("transfer/b", "no GPU")])
        self.assertEqual(loaded.failures, [("transfer/c", "error")])

    def test_an_unknown_time_unit_is_rejected_at_load(self):
        with self.assertRaisesRegex(InputError, "unknown time_unit 'fortnight'"):
            load_bench([entry("batch_mover/tensors:1", time_unit="fortnight")])

    def test_other_programs_are_told_apart(self):
        for entries in ([entry("BM_Other/8")], [skipped("BM_Other", "x")], []):
            with self.assertRaisesRegex(
                InputError, "not from torchplace's benchmarks .*transfer, small_tensors"
            ):
                load_bench(entries, context={})
        self.assertEqual(len(load_bench([entry("BM_Other/8")]).measurements), 1)  # fingerprinted
        for known in (
            entry("cpu_copy/path:memcpy"),
            skipped("batch_mover", "x"),
            failed("transfer", "x"),
        ):
            loaded = load_bench([entry("BM_Other"), known], context={})
            self.assertEqual(loaded.context, {})


if __name__ == "__main__":
    unittest.main()
