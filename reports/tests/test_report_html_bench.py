#!/usr/bin/env python3
"""The benchmark sections of index.html (torchplace.report.html_bench), in process: the
bandwidth tables with their % of raw_cudamemcpy and device-copy rows, prefetch overlap, the
skipped CUDA benchmarks, the CPU baselines and failures. Every bench.json entry is synthetic,
made in report_inputs.py or below, never recorded from a run."""
import unittest

from report_inputs import (
    FIGURES,
    MIB,
    analyse,
    failed,
    load_bench,
    reps,
    skipped,
    tables_of,
)
from torchplace.report import html_bench

BPS, DEVICE = "bytes_per_second", "device_copy_bytes_per_second"


def transfer(direction, strategy, size):
    return f"transfer/direction:{direction}/strategy:{strategy}/bytes:{size}/device:cuda:0"


def gpu_entries():
    """Synthetic transfers (GB/s medians: raw 12 and 30, pinned 6 and 15, pageable 3 at 4 KiB
    only), device copies, prefetch on two devices, CPU copies, a batch mover."""
    return (
        reps(transfer("h2d", "zzz_custom", 4096), BPS, [1.5e9])
        + reps(transfer("h2d", "pageable", 4096), BPS, [3e9])
        + reps(transfer("h2d", "pinned_resident", 4096), BPS, [6e9])
        + reps(transfer("h2d", "pinned_resident", MIB), BPS, [15e9], **{DEVICE: 25e9})
        + reps(transfer("h2d", "raw_cudamemcpy", 4096), BPS, [20e9, 10e9, 12e9])
        + reps(transfer("h2d", "raw_cudamemcpy", MIB), BPS, [30e9])
        + reps(transfer("d2h", "raw_cudamemcpy", 4096), BPS, [8e9])
        + prefetch("cuda:0", 1.05)
        + prefetch("cuda:1", 1.5)
    )


def prefetch(device, ratio):
    counters = {
        "compute_ms": 2.0,
        "copy_ms": 1.5,
        "step_ms": 2.1234,
        "overlap_ratio": ratio,
    }
    return reps(f"prefetch_overlap/device:{device}", "iterations", [10], **counters)


def cpu_entries():
    """Synthetic CPU copies (copy_ 80% of memcpy, clone 80% of alloc_memcpy, to_dtype without
    its baseline at 1 MiB) and batch movers (10 tensors: 2 us against 8 us; 100: no loop).
    """
    return (
        reps("cpu_copy/path:memcpy/bytes:4096", BPS, [10e9])
        + reps("cpu_copy/path:alloc_memcpy/bytes:4096", BPS, [5e9])
        + reps("cpu_copy/path:copy_/bytes:4096", BPS, [8e9])
        + reps("cpu_copy/path:clone/bytes:4096", BPS, [4e9])
        + reps(f"cpu_copy/path:to_dtype/bytes:{MIB}", BPS, [1e9])
        + reps("batch_mover/tensors:10/impl:mover", "real_time", [2000.0])
        + reps("batch_mover/tensors:10/impl:loop", "real_time", [8000.0])
        + reps("batch_mover/tensors:100/impl:mover", "real_time", [20000.0])
    )


class TransferSection(unittest.TestCase):
    def setUp(self):
        self.result = analyse(bench_data=load_bench(gpu_entries()))
        self.html = html_bench.transfer_section(self.result, FIGURES)

    def test_each_direction_has_a_table_h2d_first(self):
        heads = [rows[0] for rows in tables_of(self.html)]
        self.assertEqual(heads[:2], [["h2d strategy", "4 KiB", "1 MiB"], ["d2h strategy", "4 KiB"]])
        self.assertTrue(self.html.startswith('<section id="transfers"><h2>Transfers</h2>'))

    def test_medians_and_share_of_the_ceiling(self):
        rows = tables_of(self.html)[0][1:]
        self.assertEqual(
            rows,
            [
                ["raw_cudamemcpy", "12 GB/s (100%)", "30 GB/s (100%)"],
                ["pinned_resident", "6 GB/s (50%)", "15 GB/s (50%)"],
                ["pinned_resident · device copy alone", "–", "25 GB/s"],
                ["pageable", "3 GB/s (25%)", "–"],
                ["zzz_custom", "1.5 GB/s (12%)", "–"],
            ],
        )
        self.assertEqual(tables_of(self.html)[1][1:], [["raw_cudamemcpy", "8 GB/s (100%)"]])
        self.assertIn('<td>raw_cudamemcpy</td><td class="num">12 GB/s (100%)</td>', self.html)
        self.assertIn('<td class="num">30 GB/s (100%)</td></tr>', self.html)

    def test_notes_and_figures_in_order(self):
        html = self.html
        order = [
            html.index(html_bench.SPREAD_NOTE),
            html.index('alt="transfer bandwidth"'),
            html.index("<h3>Median bandwidth and its share of the raw_cudamemcpy ceiling</h3>"),
            html.index(html_bench.DEVICE_COPY_NOTE),
            html.index("<table>"),
            html.index('alt="pinned over pageable ratio"'),
            html.index('<h3>Many small tensors</h3><p><img src="data:image/png;base64,'),
            html.index("<h3>Prefetch overlap</h3>"),
        ]
        self.assertEqual(order, sorted(order))

    def test_figures_left_out_are_not_shown(self):
        figures = {"transfer_bandwidth.png": b"x"}
        html = html_bench.transfer_section(self.result, figures)
        self.assertNotIn("pinned over pageable", html)
        self.assertNotIn("Many small tensors", html)
        self.result.device_copy = {}
        html = html_bench.transfer_section(self.result, figures)
        self.assertNotIn(html_bench.DEVICE_COPY_NOTE, html)
        self.assertIn("h2d strategy", html)

    def test_prefetch_rows(self):
        rows = tables_of(self.html)[-1]
        self.assertEqual(
            rows,
            [
                [
                    "device",
                    "compute (ms)",
                    "copy (ms)",
                    "step (ms)",
                    "overlap ratio",
                    "≤ 1.1",
                ],
                ["cuda:0", "2", "1.5", "2.12", "1.050", "yes"],
                ["cuda:1", "2", "1.5", "2.12", "1.500", "no"],
            ],
        )
        self.assertIn(
            '<tr><td>cuda:0</td><td class="num">2</td><td class="num">1.5</td>'
            '<td class="num">2.12</td><td class="num">1.050</td><td>yes</td></tr>',
            self.html,
        )
        self.assertIn('<td><span class="bad">no</span></td>', self.html)
        self.assertIn("overlap ratio = step / max(compute, copy)", self.html)

    def test_no_prefetch_no_table(self):
        result = analyse(bench_data=load_bench(gpu_entries()[:-2]))
        html = html_bench.transfer_section(result, FIGURES)
        self.assertNotIn("Prefetch", html)
        self.assertEqual(len(tables_of(html)), 2)


class WithoutTransfers(unittest.TestCase):
    def test_no_bench_json(self):
        html = html_bench.transfer_section(analyse(), FIGURES)
        self.assertIn('<section id="transfers"><h2>Transfers</h2><p>No bench.json', html)
        self.assertIn("there are no transfer measurements.</p></section>", html)
        self.assertEqual(html_bench.cpu_section(analyse(), FIGURES), "")
        self.assertEqual(html_bench.failures_section(analyse()), "")

    def skipped_section(self, count):
        """transfer_section of `count` skipped CUDA benchmarks and one CPU skip (synthetic)."""
        entries = [
            skipped(f"transfer/bytes:{i}/device:cuda:0", f"no GPU {i}") for i in range(count)
        ]
        entries.append(skipped("cpu_copy/path:memcpy/device:cpu", "cpu reason"))
        return html_bench.transfer_section(analyse(bench_data=load_bench(entries)), FIGURES)

    def test_skipped_cuda_benchmarks_are_listed(self):
        html = self.skipped_section(2)
        self.assertIn("<p>No transfer measurements: 2 CUDA benchmarks were skipped", html)
        self.assertEqual(
            tables_of(html),
            [
                [
                    ["skipped benchmark", "reason"],
                    ["transfer/bytes:0/device:cuda:0", "no GPU 0"],
                    ["transfer/bytes:1/device:cuda:0", "no GPU 1"],
                ]
            ],
        )
        self.assertTrue(html.startswith('<section id="transfers"><h2>Transfers</h2><p>No'))
        self.assertNotIn("<details>", html)

    def test_more_than_twenty_fold_into_details(self):
        self.assertNotIn("<details>", self.skipped_section(html_bench.LISTED_SKIPS))
        html = self.skipped_section(html_bench.LISTED_SKIPS + 1)
        self.assertIn("<details><summary>all 21 skipped benchmarks</summary><table>", html)
        self.assertEqual(len(tables_of(html)[0]), 22)
        self.assertIn("</table></details></section>", html)


class CpuAndFailures(unittest.TestCase):
    def setUp(self):
        entries = cpu_entries() + [failed("transfer/bytes:1/device:cuda:0", "boom <b>")]
        self.result = analyse(bench_data=load_bench(entries))
        self.html = html_bench.cpu_section(self.result, FIGURES)

    def test_cpu_copies_against_their_memcpy(self):
        start = f'<section id="cpu"><h2>CPU baselines</h2>{html_bench.SPREAD_NOTE}<p><img'
        self.assertTrue(self.html.startswith(start))
        self.assertIn(
            "<h3>CPU copies as % of the memcpy doing the same work (medians)</h3>",
            self.html,
        )
        self.assertIn("alloc_memcpy allocates its destination each time", self.html)
        self.assertEqual(
            tables_of(self.html)[0],
            [
                ["path", "against", "4 KiB", "1 MiB"],
                ["clone", "alloc_memcpy", "80%", "–"],
                ["copy_", "memcpy", "80%", "–"],
                ["to_dtype", "alloc_memcpy", "–", "–"],
            ],
        )
        self.assertIn('<td>memcpy</td><td class="num">80%</td><td class="num">–</td>', self.html)
        self.assertLess(self.html.index('alt="CPU copy baselines"'), self.html.index("<table>"))

    def test_batch_mover_against_a_loop(self):
        self.assertEqual(
            tables_of(self.html)[1],
            [
                ["tensors", "mover (µs)", "loop of .to() (µs)", "mover / loop"],
                ["10", "2", "8", "0.25×"],
                ["100", "20", "–", "–"],
            ],
        )
        self.assertIn(
            '<tr><td class="num">10</td><td class="num">2</td><td class="num">8</td>'
            '<td class="num">0.25×</td></tr>',
            self.html,
        )
        self.assertLess(self.html.index('alt="batch mover'), self.html.rindex("<table>"))

    def test_either_part_alone(self):
        self.result.mover_rows = []
        html = html_bench.cpu_section(self.result, FIGURES)
        self.assertEqual(len(tables_of(html)), 1)
        self.assertNotIn("batch mover", html)
        self.result.cpu_curves = {}
        self.assertEqual(html_bench.cpu_section(self.result, FIGURES), "")
        result = analyse(bench_data=load_bench(cpu_entries()[5:]))
        html = html_bench.cpu_section(result, FIGURES)
        self.assertEqual(len(tables_of(html)), 1)
        self.assertIn(html_bench.SPREAD_NOTE, html)
        self.assertNotIn("CPU copies", html)

    def test_failures_are_listed_escaped(self):
        html = html_bench.failures_section(self.result)
        self.assertIn('<section id="bench-failures"><h2>Benchmark failures (1)</h2>', html)
        self.assertIn('<p class="bad">These benchmarks stopped with an error', html)
        self.assertIn(
            '<tr><td>transfer/bytes:1/device:cuda:0</td><td><div class="msg">boom &lt;b&gt;'
            "</div></td></tr>",
            html,
        )
        self.assertEqual(tables_of(html)[0][0], ["benchmark", "error message"])


if __name__ == "__main__":
    unittest.main()
