#!/usr/bin/env python3
"""The numbers the report derives from bench.json (torchplace.report.tables), in process:
medians of repetitions, pinned over pageable ratios with paired whiskers, small-tensor bars,
prefetch against its target, batch mover ratios, byte sizes as read. Every entry is synthetic,
made in report_inputs.py or below, never recorded from a run."""
import unittest

from report_inputs import MIB, load_bench, reps
from torchplace.report import tables

BPS = "bytes_per_second"


def h2d(strategy, size, values, direction="h2d"):
    name = f"transfer/direction:{direction}/strategy:{strategy}"
    return reps(name + (f"/bytes:{size}" if size is not None else ""), BPS, values)


def rounded(spread):
    """A (median, min, max) in microseconds, rounded off the float noise of ns -> s -> us."""
    return spread and tuple(round(value, 9) for value in spread)


class Transfers(unittest.TestCase):
    def test_pinned_over_pageable_pairs_the_extremes(self):
        bench = load_bench(
            h2d("pinned_resident", 4096, [6e9, 8e9, 10e9])
            + h2d("pageable", 4096, [2e9, 4e9, 5e9])
            + h2d("pinned_resident", MIB, [9e9])
            + h2d("pinned_resident", 64, [9e9])
            + h2d("pageable", 64, [0.0])
            + h2d("pinned_resident", 128, [1e9])
            + h2d("pageable", 128, [0.5e9])
            + h2d("pinned_resident", 4096, [1e9], direction="d2h")
        )
        ratios = tables.pinned_pageable_ratio(tables.transfer_curves(bench))
        self.assertEqual(ratios, {"h2d": [(128, 2.0, 2.0, 2.0), (4096, 2.0, 6 / 5, 10 / 2)]})
        self.assertEqual(tables.pinned_pageable_ratio({}), {})

    def test_a_name_without_bytes_counts_as_zero(self):
        bench = load_bench(h2d("raw_cudamemcpy", None, [1e9]))
        self.assertEqual(
            tables.transfer_curves(bench),
            {"h2d": {"raw_cudamemcpy": [(0, 1.0, 1.0, 1.0)]}},
        )

    def test_device_copy_medians(self):
        name = "transfer/direction:h2d/strategy:pinned_resident"
        counter = tables.DEVICE_COPY
        entries = [
            *reps(f"{name}/bytes:4096", counter, [3e9, 1e9, 2e9], bytes_per_second=1e9),
            *reps(name, counter, [5e9], bytes_per_second=1e9),
            *h2d("pageable", 4096, [1e9]),
        ]
        self.assertEqual(
            tables.device_copy_medians(load_bench(entries)),
            {"h2d": {"pinned_resident": {4096: 2.0, 0: 5.0}}},
        )


class OtherFamilies(unittest.TestCase):
    def test_small_tensor_bars_in_ms(self):
        entries = reps(
            "small_tensors/direction:h2d/strategy:loop/count:1000/bytes:4096",
            "real_time",
            [3.0, 1.0, 2.0],
            time_unit="ms",
        )
        entries += reps("nested_batch/strategy:mover/bytes:x", "real_time", [500.0], time_unit="us")
        self.assertEqual(
            tables.small_tensor_bars(load_bench(entries)),
            {
                "small_tensors, h2d: 1000 tensors × 4 KiB": {"loop": (2.0, 1.0, 3.0)},
                "nested_batch, ?: ? tensors × ? bytes": {"mover": (0.5, 0.5, 0.5)},
            },
        )
        self.assertEqual(tables.tables_size(None), "? bytes")
        self.assertEqual(tables.tables_size(""), "? bytes")

    def test_prefetch_meets_its_target_up_to_it(self):
        counters = {"compute_ms": 2.0, "copy_ms": 1.0, "step_ms": 2.2}
        entries = []
        for ratio in (1.0, tables.OVERLAP_TARGET, 1.2):
            entries += [
                {**e, "name": e["name"], "overlap_ratio": value}
                for e, value in zip(
                    reps(
                        f"prefetch_overlap/device:r{ratio}",
                        "iterations",
                        [10] * 3,
                        **counters,
                    ),
                    (ratio, ratio + 1, ratio - 1),
                )
            ]
        entries += reps("prefetch_overlap", "overlap_ratio", [1.0], **counters)
        rows = tables.prefetch_rows(load_bench(entries))
        self.assertEqual([r["device"] for r in rows], ["r1.0", "r1.1", "r1.2", "?"])
        self.assertEqual([r["overlap_ratio"] for r in rows], [1.0, 1.1, 1.2, 1.0])
        self.assertEqual([r["meets_target"] for r in rows], [True, True, False, True])
        self.assertEqual(rows[0]["step_ms"], 2.2)

    def test_batch_mover_ratio_of_medians(self):
        entries = reps("batch_mover/tensors:10/impl:mover", "real_time", [2000.0, 1000.0, 9000.0])
        entries += reps("batch_mover/tensors:10/impl:loop", "real_time", [8000.0, 4000.0, 30000.0])
        entries += reps("batch_mover/tensors:20/impl:mover", "real_time", [1000.0])
        entries += reps("batch_mover/tensors:20/impl:loop", "real_time", [0.0, 0.0, 5000.0])
        entries += reps("batch_mover/tensors:30/impl:mover", "real_time", [1000.0])
        entries += reps("batch_mover/tensors:30/impl:loop", "real_time", [0.0, 500.0, 500.0])
        entries += reps("batch_mover/impl:mover", "real_time", [1000.0])
        rows = tables.batch_mover_rows(load_bench(entries))
        self.assertEqual(
            [(count, rounded(mover), rounded(loop), ratio) for count, mover, loop, ratio in rows],
            [
                (0, (1.0, 1.0, 1.0), None, None),
                (10, (2.0, 1.0, 9.0), (8.0, 4.0, 30.0), 0.25),
                (20, (1.0, 1.0, 1.0), (0.0, 0.0, 5.0), None),
                (30, (1.0, 1.0, 1.0), (0.5, 0.0, 0.5), 2.0),
            ],
        )

    def test_cpu_copy_without_bytes(self):
        bench = load_bench(reps("cpu_copy/path:memcpy", BPS, [2e9]))
        self.assertEqual(tables.cpu_copy_curves(bench), {"memcpy": [(0, 2.0, 2.0, 2.0)]})


class HumanBytes(unittest.TestCase):
    def test_each_unit(self):
        cases = {
            1023: "1.02e+03 B",
            1024: "1 KiB",
            1023 * 1024: "1.02e+03 KiB",
            MIB: "1 MiB",
        }
        cases.update({1023 * MIB: "1.02e+03 MiB", 1 << 30: "1 GiB", 3 << 40: "3.07e+03 GiB"})
        for size, text in cases.items():
            self.assertEqual(tables.human_bytes(size), text, size)


if __name__ == "__main__":
    unittest.main()
