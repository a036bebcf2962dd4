#!/usr/bin/env python3
"""summary.md (torchplace.report.summary), in process: the SYNTHETIC line, the outcome counts
and evidence, the gate's regressions, unexpected cells, races not shown, benchmark failures
(each list capped), and the transfer lines a reader quotes: pinned bandwidth, its share of
raw_cudamemcpy, pinned over pageable, the device copy alone, prefetch, the batch mover, CPU
copies. Every cell, gate verdict and bench.json entry is synthetic (report_inputs.py, below)."""
import unittest

from report_inputs import MIB, analyse, cell, failed, load_bench, reps, results, skipped
from torchplace.report import summary

BPS = "bytes_per_second"


def t(direction, strategy, size, values, **counters):
    name = f"transfer/direction:{direction}/strategy:{strategy}/bytes:{size}"
    return reps(name, BPS, values, **counters)


def bench_entries():
    """Synthetic: h2d pinned 15 GB/s at 1 MiB, 50% of raw's 30, twice pageable's 7.5, its
    device copy 25; d2h pinned alone; prefetch on two devices; movers; CPU copies."""
    return (
        t("h2d", "raw_cudamemcpy", 4096, [10e9])
        + t("h2d", "raw_cudamemcpy", MIB, [30e9, 20e9, 31e9])
        + t("h2d", "pinned_resident", 4096, [5e9])
        + t(
            "h2d",
            "pinned_resident",
            MIB,
            [15e9, 12e9, 16e9],
            device_copy_bytes_per_second=25e9,
        )
        + t("h2d", "pageable", MIB, [7.5e9, 5e9, 10e9])
        + t("d2h", "pinned_resident", 4096, [4e9])
        + reps(
            "prefetch_overlap/device:cuda:0",
            "overlap_ratio",
            [1.054],
            compute_ms=1.0,
            copy_ms=1.0,
            step_ms=1.0,
        )
        + reps(
            "prefetch_overlap/device:cuda:1",
            "overlap_ratio",
            [1.5],
            compute_ms=1.0,
            copy_ms=1.0,
            step_ms=1.0,
        )
        + reps("batch_mover/tensors:10/impl:mover", "real_time", [2000.0])
        + reps("batch_mover/tensors:10/impl:loop", "real_time", [8000.0])
        + reps("batch_mover/tensors:100/impl:mover", "real_time", [9000.0])
        + reps("cpu_copy/path:memcpy/bytes:4096", BPS, [10e9])
        + reps(f"cpu_copy/path:memcpy/bytes:{MIB}", BPS, [10e9])
        + reps("cpu_copy/path:copy_/bytes:4096", BPS, [8e9])
        + reps(f"cpu_copy/path:copy_/bytes:{MIB}", BPS, [5e9])
        + reps("cpu_copy/path:alloc_memcpy/bytes:4096", BPS, [4e9])
        + reps("cpu_copy/path:clone/bytes:4096", BPS, [2e9])
        + [failed("transfer/x", "boom\nsecond line")]
    )


class Transfers(unittest.TestCase):
    def test_the_lines_a_reader_quotes(self):
        doc = results([cell("a/b/cpu", category="failed", status="fail", reason="why")])
        text = summary.render(analyse(doc, load_bench(bench_entries())))
        for line in (
            "- **unexpected** `a/b/cpu`: why",
            "- h2d pinned (pinned_resident) at 1 MiB: 15.0 GB/s (50% of raw_cudamemcpy 30.0 "
            "GB/s), 2.0× pageable; device copy alone 25.0 GB/s.",
            "- d2h pinned (pinned_resident) at 4 KiB: 4.0 GB/s.",
            "- prefetch overlap on cuda:0: 1.05 (meets ≤ 1.1).",
            "- prefetch overlap on cuda:1: 1.50 (misses ≤ 1.1).",
            "- batch mover at 100 tensors: no loop to compare.",
            "- CPU copies at 1 MiB against the same work: copy_ 50% of memcpy.",
            "- **benchmark failed** `transfer/x`: boom\nsecond line",
        ):
            self.assertIn(line + "\n", text)
        self.assertNotIn("Transfers: none measured", text)
        self.assertNotIn("at 10 tensors", text)
        self.assertLess(text.index("- h2d pinned"), text.index("- d2h pinned"))
        self.assertLess(text.index("- d2h pinned"), text.index("- prefetch overlap on cuda:0"))
        self.assertLess(text.index("- prefetch overlap on cuda:1"), text.index("- batch mover"))
        self.assertLess(text.index("- batch mover"), text.index("- CPU copies"))

    def test_mover_ratio_and_no_cpu_line(self):
        entries = [e for e in bench_entries() if e["name"].startswith("batch_mover/tensors:10/")]
        text = summary.render(analyse(results([]), load_bench(entries)))
        self.assertIn("- batch mover / loop of .to() at 10 tensors: 0.25×.\n", text)
        self.assertNotIn("CPU copies", text)
        self.assertIn(
            "- Transfers: none measured (0 benchmarks skipped; reasons in index.html).",
            text,
        )

    def test_without_transfers_or_bench(self):
        entries = [skipped(f"transfer/device:cuda:{i}", "no GPU") for i in range(3)]
        text = summary.render(analyse(results([]), load_bench(entries)))
        self.assertIn(
            "\n- Transfers: none measured (3 benchmarks skipped; reasons in index.html).\n",
            text,
        )
        text = summary.render(analyse(results([])))
        self.assertIn("\n- Benchmarks: no bench.json in this run.\n", text)
        last = "Full report: index.html (plots, every cell with its raw message, skip reasons)."
        self.assertTrue(text.endswith(f"\n\n{last}\n"))

    def test_pinned_without_its_share(self):
        entries = t("h2d", "pinned_resident", 4096, [5e9])
        entries += t("h2d", "raw_cudamemcpy", MIB, [9e9])
        text = summary.render(analyse(results([]), load_bench(entries)))
        self.assertIn("- h2d pinned (pinned_resident) at 4 KiB: 5.0 GB/s.\n", text)


def matrix_doc():
    """A synthetic version matrix: two versions, one cell, one difference."""
    entry = {"category": "passed", "status": "pass"}
    versions = [{"version": "2.4", "status": "ok"}, {"version": "2.5", "status": "ok"}]
    cells = [
        {
            "id": "s/v/cpu",
            "scenario": "s",
            "axes": {"variant": "v"},
            "device": "cpu",
            "by_version": {"2.4": entry, "2.5": entry},
        }
    ]
    return {"versions": versions, "cells": cells, "differences": [{"id": "s/v/cpu"}]}


class Cells(unittest.TestCase):
    def test_counts_evidence_and_synthetic_line(self):
        cells = [cell("a/x/cpu"), cell("a/y/cpu", category="latent_unexercised")]
        cells.append(cell("a/z/cpu", category="skipped", status="skip", reason="r"))
        doc = results(cells, synthetic="made by hand")
        lines = summary.render(analyse(doc)).split("\n")
        self.assertEqual(
            lines[:4],
            [
                "**SYNTHETIC: hand-made test data, not a measurement** "
                "(results.json: made by hand)",
                "",
                "## torchplace report",
                "",
            ],
        )
        self.assertEqual(
            lines[4],
            "SYNTHETIC (not a measurement) · LibTorch 9.9.9 · CPU-only · no GPU",
        )
        self.assertEqual(lines[6].count("|"), 9)
        self.assertEqual(lines[7], "|" + "---|" * 8)
        self.assertEqual(lines[8], "| 0 | 1 | 0 | 0 | 1 | 0 | 1 | 0 |")
        self.assertTrue(lines[6].startswith("| expected error | passed | race shown |"))
        self.assertEqual(
            lines[10][:60],
            "Evidence: 1 of the 2 cells that ran proved their claim (pass",
        )
        self.assertEqual(summary.render(analyse(results([])))[:20], "## torchplace report")

    def test_eight_unexpected_are_all_listed(self):
        cells = [cell(f"f/v{i}/cpu", category="failed", status="fail") for i in range(8)]
        text = summary.render(analyse(results(cells)))
        self.assertIn("`f/v7/cpu`", text)
        self.assertNotIn("more unexpected", text)

    def test_unexpected_and_races_capped(self):
        cells = [
            cell(
                f"f/v{i}/cpu",
                category="failed",
                status="fail",
                reason="R" * 200 + str(i),
            )
            for i in range(10)
        ]
        cells += [
            cell(f"r/v{i}/cpu", category="race_not_shown", notes=["n1", "n" * 200])
            for i in range(9)
        ]
        text = summary.render(analyse(results(cells)))
        self.assertIn("- **unexpected** `f/v0/cpu`: " + "R" * 160 + "\n", text)
        self.assertIn("`f/v7/cpu`", text)
        self.assertNotIn("`f/v8/cpu`", text)
        self.assertIn("\n- … and 2 more unexpected cells\n", text)
        self.assertIn("- **race not shown** `r/v7/cpu`: n1; " + "n" * 156 + "\n", text)
        self.assertNotIn("`r/v8/cpu`", text)

    def test_gate_regressions_capped(self):
        found = [
            {"id": f"c{i}", "kind": "transfers_grew", "detail": f"{i} more\nsecond"}
            for i in range(10)
        ]
        found.append({"id": "empty", "kind": "k", "detail": ""})
        gate = {"verdict": "fail", "behaviour": {"regressions": found}}
        text = summary.render(analyse(results([]), gate=gate))
        self.assertIn("\n- Gate: fail; 11 behaviour regression(s).\n", text)
        self.assertIn("\n- **regression** `c7`: transfers_grew: 7 more\n", text)
        self.assertNotIn("`c8`", text)
        self.assertIn("\n- … and 3 more regressions\n", text)
        gate = {"behaviour": {"regressions": found[10:]}}
        text = summary.render(analyse(results([]), gate=gate))
        self.assertIn(
            "- Gate: ?; 1 behaviour regression(s).\n- **regression** `empty`: k: \n",
            text,
        )
        self.assertNotIn("more regressions", text)
        self.assertNotIn("Gate", summary.render(analyse(results([]))))

    def test_version_matrix_folder(self):
        text = summary.render(analyse(matrix=matrix_doc()))
        self.assertIn(
            "## torchplace report\n\nNo results.json in this folder: no single-run results "
            "are present (a version matrix folder).\n\n",
            text,
        )
        self.assertIn(
            "\n- Version matrix: 2 LibTorch versions, 1 difference(s) between them.\n",
            text,
        )
        doc = matrix_doc()
        del doc["differences"]
        text = summary.render(analyse(results([]), matrix=doc))
        self.assertIn("2 LibTorch versions, 0 difference(s)", text)


if __name__ == "__main__":
    unittest.main()
