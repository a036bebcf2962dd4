#!/usr/bin/env python3
"""Tests of the report (torchplace.report) and `ci/torchplace report` on the committed fixtures
(bad input: test_bad_input.py), and of what the figures draw, on synthetic inputs (FigureContents).

usage: test_render.py [TestClass ...]   (CTest runs one class per test)
"""
import base64
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
from unittest import mock

from render_helpers import (
    LinkCollector,
    bandwidth_rows,
    cpu_copy_median,
    device_copy_medians,
    load,
    median_bandwidth,
)
from torchplace.report import matrix

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
RENDER = ["-m", "torchplace.report"]  # run with sys.executable, PYTHONPATH from the caller
FIXTURES = os.path.join(HERE, "fixtures")
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
ALWAYS = {"index.html", "summary.md", "outcome_matrix.png"}
CUDA_FILES = ALWAYS | {
    "transfer_bandwidth.png",
    "pinned_pageable_ratio.png",
    "small_tensors.png",
    "cpu_copy.png",
    "batch_mover.png",
}
CPU_FILES = ALWAYS | {"cpu_copy.png", "batch_mover.png"}
MATRIX_FILES = ALWAYS | {"version_matrix.png"}


def render(in_dir, out_dir=None, env=None):
    args = [sys.executable, *RENDER, in_dir] + (["--out", out_dir] if out_dir else [])
    return subprocess.run(args, capture_output=True, text=True, env=env, timeout=300)


class TempDirs(unittest.TestCase):
    """A fresh folder per test; each fixture is rendered once per class (a render takes seconds)."""

    @classmethod
    def setUpClass(cls):
        cls.renders = tempfile.mkdtemp(prefix="tp-report-renders-")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.renders)

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="tp-report-test-")

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def rendered(self, fixture):
        """Renders a fixture folder (once per class); returns (folder, index.html text)."""
        out = os.path.join(self.renders, fixture)
        if not os.path.isdir(out):
            done = render(os.path.join(FIXTURES, fixture), out)
            self.assertEqual(done.returncode, 0, done.stderr)
        with open(os.path.join(out, "index.html"), encoding="utf-8") as page:
            return out, page.read()


class RenderFixtures(TempDirs):
    def check_files(self, out, expected):
        self.assertEqual(set(os.listdir(out)), expected)
        for name in expected:
            with open(os.path.join(out, name), "rb") as handle:
                content = handle.read()
            self.assertGreater(len(content), 100, name)
            if name.endswith(".png"):
                self.assertTrue(content.startswith(PNG_SIGNATURE), name)

    def test_cuda_fixture_writes_every_file(self):
        out, page = self.rendered("synthetic_gpu")
        self.check_files(out, CUDA_FILES)
        for text in (
            "NVIDIA H200",
            "raw_cudamemcpy",
            "pinned_resident",
            "wrapper_CUDA__index_select",
            "device absent: cuda:1 needs 2 CUDA devices",
            "Prefetch overlap",
        ):
            self.assertIn(text, page)

    def test_cuda_share_of_ceiling_matches_the_json(self):
        out, page = self.rendered("synthetic_gpu")
        bench = load(os.path.join(FIXTURES, "synthetic_gpu", "bench.json"))
        size = 256 << 20  # 256 MiB
        pinned = median_bandwidth(bench, "h2d", "pinned_resident", size)
        raw = median_bandwidth(bench, "h2d", "raw_cudamemcpy", size)
        pageable = median_bandwidth(bench, "h2d", "pageable", size)
        row = bandwidth_rows(page, "h2d")["pinned_resident"]
        self.assertEqual(row["256 MiB"], f"{pinned / 1e9:.3g} GB/s ({100 * pinned / raw:.0f}%)")
        with open(os.path.join(out, "summary.md"), encoding="utf-8") as handle:
            summary = handle.read()
        self.assertIn(f"h2d pinned (pinned_resident) at 256 MiB: {pinned / 1e9:.1f} GB/s", summary)
        self.assertIn(f"{pinned / pageable:.1f}× pageable", summary)

    def test_device_copy_alone_matches_the_json(self):
        out, page = self.rendered("synthetic_gpu")
        bench = load(os.path.join(FIXTURES, "synthetic_gpu", "bench.json"))
        expected = device_copy_medians(bench)  # {(direction, strategy): {size label: bytes/s}}
        self.assertIn(("h2d", "pinned_resident"), expected)
        for direction in ("h2d", "d2h"):
            rows = bandwidth_rows(page, direction)
            suffix = " · device copy alone"
            alone = {name[: -len(suffix)] for name in rows if name.endswith(suffix)}
            self.assertEqual(alone, {s for d, s in expected if d == direction}, direction)
            for (d, strategy), by_size in expected.items():
                if d != direction:
                    continue
                row = rows[f"{strategy} · device copy alone"]
                for label, value in by_size.items():
                    self.assertEqual(row[label], f"{value / 1e9:.3g} GB/s", (d, strategy, label))
        with open(os.path.join(out, "summary.md"), encoding="utf-8") as handle:
            alone = expected[("h2d", "pinned_resident")]["256 MiB"]
            self.assertIn(f"; device copy alone {alone / 1e9:.1f} GB/s.", handle.read())

    def test_grid_marks_follow_the_outcome_categories(self):
        out, page = self.rendered("synthetic_gpu")
        results = load(os.path.join(FIXTURES, "synthetic_gpu", "results.json"))
        count = lambda category: sum(c["category"] == category for c in results["cells"])  # noqa
        marks = {
            "latent_unexercised": ">latent, unexercised</td>",
            "ran_unexercised": ">ran, unexercised</td>",
            "race_not_shown": ">race not shown</td>",
            "race_shown": ">race shown</td>",
            "passed": ">passed</td>",
        }
        for category, mark in marks.items():
            self.assertTrue(count(category), category)
            self.assertEqual(page.count(mark), count(category), category)
        self.assertNotIn("fix passed", page)
        proved = sum(count(c) for c in ("passed", "expected_error", "race_shown"))
        ran = proved + sum(
            count(c) for c in ("ran_unexercised", "latent_unexercised", "race_not_shown")
        )
        with open(os.path.join(out, "summary.md"), encoding="utf-8") as handle:
            summary = handle.read()
        self.assertIn(f"Evidence: {proved} of the {ran} cells that ran proved their claim", summary)
        self.assertIn(
            "- **race not shown** `pinned_non_blocking/case=staging_reuse_unsynchronized/"
            "device=cuda:0`",
            summary,
        )

    def test_cpu_fixture_lists_every_skipped_cuda_benchmark(self):
        out, page = self.rendered("cpu_only")
        self.check_files(out, CPU_FILES)
        bench = load(os.path.join(FIXTURES, "cpu_only", "bench.json"))
        skipped = {e["name"] for e in bench["benchmarks"] if e.get("error_occurred")}
        self.assertTrue(skipped)
        for name in skipped:
            self.assertIn(f"<td>{name}</td><td>device absent: cuda:0 needs CUDA", page)
        self.assertIn("CPU copies as % of the memcpy doing the same work", page)

    def test_cpu_copies_are_divided_by_the_memcpy_doing_the_same_work(self):
        """clone and to_dtype allocate their destination: against alloc_memcpy; copy_ writes into
        an allocated one: against memcpy (the fixture's alloc_memcpy is far slower at 64 MiB)."""
        out, page = self.rendered("cpu_only")
        bench = load(os.path.join(FIXTURES, "cpu_only", "bench.json"))
        size = 64 * 1024 * 1024

        def median(path):
            return cpu_copy_median(bench, path, size)

        with open(os.path.join(out, "summary.md"), encoding="utf-8") as handle:
            summary = handle.read()
        for path, like in (
            ("clone", "alloc_memcpy"),
            ("to_dtype", "alloc_memcpy"),
            ("copy_", "memcpy"),
        ):
            share = 100 * median(path) / median(like)
            self.assertIn(f"{path} {share:.0f}% of {like}", summary)
            self.assertIn(f"<td>{path}</td><td>{like}</td>", page)
        self.assertNotIn("<td>alloc_memcpy</td><td>", page)  # a baseline is not divided by itself

    def test_version_matrix_and_absent_bench(self):
        out, page = self.rendered("with_matrix")
        self.check_files(out, MATRIX_FILES)
        self.assertIn("No bench.json in this folder", page)
        self.assertIn("is not a member of &#x27;at::autocast&#x27;", page)  # a build's first error

    def test_matrix_folder_without_results(self):
        run_dir = os.path.join(self.tmp, "matrix")  # as the matrix merge leaves it: no results
        os.makedirs(run_dir)
        shutil.copy(os.path.join(FIXTURES, "with_matrix", "matrix.json"), run_dir)
        out = os.path.join(self.tmp, "out")
        done = render(run_dir, out)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.check_files(out, {"index.html", "summary.md", "version_matrix.png"})
        with open(os.path.join(out, "index.html"), encoding="utf-8") as handle:
            page = handle.read()
        self.assertIn("no single-run results are present", page)
        self.assertIn("LibTorch version matrix (1.13.1, 2.1.2, 2.14.1)", page)
        self.assertIn("is not a member of &#x27;at::autocast&#x27;", page)  # a build's first error
        self.assertNotIn('id="cells"', page)
        with open(os.path.join(out, "summary.md"), encoding="utf-8") as handle:
            summary = handle.read()
        self.assertIn("no single-run results are present", summary)
        self.assertIn("Version matrix: 3 LibTorch versions, 1 difference(s)", summary)

    def test_out_defaults_to_in_dir(self):
        run_dir = os.path.join(self.tmp, "run")
        shutil.copytree(os.path.join(FIXTURES, "cpu_only"), run_dir)
        done = render(run_dir)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(set(os.listdir(run_dir)), CPU_FILES | {"results.json", "bench.json"})

    def test_summary_is_short(self):
        for fixture in ("synthetic_gpu", "cpu_only", "with_matrix"):
            out, _ = self.rendered(fixture)
            with open(os.path.join(out, "summary.md"), encoding="utf-8") as handle:
                lines = handle.read().splitlines()
            self.assertLessEqual(len(lines), 30, fixture)
            # Every committed fixture is hand-made: the summary says so first, then its heading.
            self.assertTrue(lines[0].startswith("**SYNTHETIC: "), fixture)
            self.assertTrue(lines[2].startswith("## "), fixture)


class HtmlSelfContained(TempDirs):
    def test_references_only_what_it_embeds(self):
        for fixture, files in (
            ("synthetic_gpu", CUDA_FILES),
            ("cpu_only", CPU_FILES),
            ("with_matrix", MATRIX_FILES),
        ):
            out, page = self.rendered(fixture)
            links = LinkCollector()
            links.feed(page)
            for url in links.urls:
                self.assertTrue(url.startswith(("data:image/png;base64,", "#")), url[:80])
                if url.startswith("#"):
                    self.assertIn(url[1:], links.ids, f"{fixture}: anchor {url} has no target")
            self.assertFalse([s for s in links.styles if re.search(r"url\(|@import", s)])
            embedded = {base64.b64decode(src.split(",", 1)[1]) for src in links.images}
            written = set()
            for name in files:
                if name.endswith(".png"):
                    with open(os.path.join(out, name), "rb") as handle:
                        written.add(handle.read())
            self.assertEqual(embedded, written, f"{fixture}: every plot embedded, nothing else")


class CommandLine(TempDirs):
    """ci/torchplace report, with the interpreter pinned to this one."""

    def torchplace(self, *args):
        env = dict(os.environ, TORCHPLACE_PYTHON=sys.executable)
        return subprocess.run(
            [os.path.join(ROOT, "ci", "torchplace"), "report", *args],
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
        )

    def test_renders_a_saved_run(self):
        out = os.path.join(self.tmp, "out")
        done = self.torchplace(os.path.join(FIXTURES, "synthetic_gpu"), "--out", out)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(set(os.listdir(out)), CUDA_FILES)

    def test_renders_a_matrix_folder(self):
        run_dir = os.path.join(self.tmp, "matrix")
        os.makedirs(run_dir)
        shutil.copy(os.path.join(FIXTURES, "with_matrix", "matrix.json"), run_dir)
        done = self.torchplace(run_dir)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(
            set(os.listdir(run_dir)),
            {"matrix.json", "index.html", "summary.md", "version_matrix.png"},
        )

    def test_exit_codes(self):
        self.assertEqual(self.torchplace().returncode, 64)
        self.assertEqual(self.torchplace(self.tmp, "--bogus").returncode, 64)
        self.assertEqual(self.torchplace(os.path.join(self.tmp, "absent")).returncode, 3)
        self.assertEqual(self.torchplace(self.tmp).returncode, 3)  # no results.json, no matrix.json


class SimulatedColumnTest(unittest.TestCase):
    """The simulated device (harness/sim/) gets a column of its own, titled as simulated."""

    def test_sim_column_is_labelled_simulated(self):
        cell = {
            "id": "s/variant=broken/device=sim:0",
            "scenario": "s",
            "axes": {"variant": "broken"},
            "device": "sim:0",
            "expected": {},
            "observed": {"outcome": "error", "error_class": "DeviceMismatch"},
            "status": "pass",
            "reason": "",
            "category": "expected_error",
        }
        cpu = dict(cell, id="s/variant=broken/device=cpu", device="cpu")
        cuda = dict(cell, id="s/variant=broken/device=cuda:0", device="cuda:0")
        grid = matrix.from_results({"cells": [cuda, cell, cpu]})
        self.assertEqual(grid.columns, ["cpu", "sim:0 (simulated)", "cuda:0"])

    # kills reports/torchplace/report/matrix.py:categorise:eecea1:logic_swap:0
    def test_a_cell_without_a_reason_says_what_it_rests_on(self):
        failed = matrix.categorise("failed", "fail", "", "s/device=cpu")  # synthetic cell
        self.assertEqual((failed.category, failed.detail), (matrix.UNEXPECTED, "status 'fail'"))
        said = matrix.categorise("failed", "fail", "AssertionError", "s/device=cpu")
        self.assertEqual(said.detail, "AssertionError")
        skipped = matrix.categorise("skipped", "skip", "", "s/device=cuda:0")
        self.assertEqual(skipped.detail, "skipped (no reason given)")


class FigureContents(unittest.TestCase):
    """What a figure draws (labels, placement), read from the matplotlib Figure the function
    builds: to_png is replaced by one that keeps the figure. Inputs are synthetic, made here."""

    def figure_of(self, module, draw, *args):
        kept = []
        with mock.patch.object(module, "to_png", side_effect=lambda figure: kept.append(figure)):
            draw(*args)
        self.assertEqual(len(kept), 1)
        self.addCleanup(module.plt.close, kept[0])
        return kept[0]

    # kills reports/torchplace/report/plots.py:transfer_bandwidth:5acec6:eq_flip:0
    def test_only_raw_cudamemcpy_is_labelled_the_ceiling(self):
        from torchplace.report import plots, tables

        def points(scale):  # synthetic (bytes, median, min, max) in GB/s
            return [
                (4096, 0.5 * scale, 0.4 * scale, 0.6 * scale),
                (1 << 26, scale, 0.9 * scale, scale),
            ]

        curves = {
            direction: {
                tables.RAW: points(25.0),
                "pageable": points(6.0),
                tables.PINNED: points(20.0),
            }
            for direction in ("h2d", "d2h")
        }
        figure = self.figure_of(plots, plots.transfer_bandwidth, curves)
        labels = [text.get_text() for text in figure.legends[0].get_texts()]
        self.assertEqual(
            sorted(labels), sorted([f"{tables.RAW} (ceiling)", "pageable", tables.PINNED])
        )

    # kills reports/torchplace/report/matrix_figure.py:empty:acc16c:dup_stmt:0
    def test_a_grid_without_cells_says_so(self):
        from torchplace.report import matrix, matrix_figure

        grid = matrix.Grid("synthetic outcomes", [], [], {})
        figure = self.figure_of(matrix_figure, matrix_figure.outcome_matrix, grid)
        texts = [text.get_text() for text in figure.axes[0].texts]
        self.assertEqual(texts, ["synthetic outcomes: no cells"])

    # kills reports/torchplace/report/matrix_figure.py:outcome_matrix:a8161b:const_minus:0
    def test_skip_footnotes_sit_under_the_matrix_below_its_legend(self):
        from torchplace.report import matrix, matrix_figure

        cells = {
            ("scenario_a (synthetic)", "cpu"): matrix.Cell(matrix.PASSED, "", "a/cpu"),
            ("scenario_a (synthetic)", "cuda:0"): matrix.Cell(
                matrix.SKIPPED, "needs CUDA (synthetic reason)", "a/cuda"
            ),
            ("scenario_b (synthetic)", "cpu"): matrix.Cell(matrix.UNEXERCISED, "", "b/cpu"),
            ("scenario_b (synthetic)", "cuda:0"): matrix.Cell(
                matrix.SKIPPED, "no second device (synthetic reason)", "b/cuda"
            ),
        }
        rows = sorted({row for row, _ in cells})
        grid = matrix.Grid("synthetic outcomes", rows, ["cpu", "cuda:0"], cells)
        figure = self.figure_of(matrix_figure, matrix_figure.outcome_matrix, grid)
        figure.canvas.draw()
        renderer = figure.canvas.get_renderer()
        axis = figure.axes[0]
        notes = [t for t in axis.texts if t.get_text().startswith("Skipped:")]
        self.assertEqual(len(notes), 1)
        self.assertIn("[2] no second device (synthetic reason)", notes[0].get_text())
        box, matrix_box = notes[0].get_window_extent(renderer), axis.get_window_extent(renderer)
        legend_box = axis.get_legend().get_window_extent(renderer)
        # the footnotes start at the matrix's left edge, within its width (not off to one side)
        self.assertGreaterEqual(box.x0, matrix_box.x0 - 1)
        self.assertLess(box.x0, matrix_box.x1)
        # ... and lie under the matrix and under its legend, overlapping neither
        self.assertLess(box.y1, matrix_box.y0)
        self.assertLess(box.y1, legend_box.y0)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1] + sys.argv[1:], verbosity=2)
