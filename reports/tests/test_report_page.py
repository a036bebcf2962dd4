#!/usr/bin/env python3
"""index.html as assembled (torchplace.report.page), in process: the title and its SYNTHETIC
prefix, the machine and count lines, the navigation naming only the sections present, the
sections' order, the outcome grid with its image, the gate's regressions in the cell list, and
a version matrix folder (versions, their grid, differences). The cells, versions, gate and
benchmarks are synthetic (report_inputs.py, below); the PNGs are stand-in bytes."""
import unittest

from report_inputs import FIGURES, analyse, cell, load_bench, reps, results, tables_of
from torchplace.report import html_page, matrix, page

CELLS = [
    cell("a/x/cpu"),
    cell("a/y/cpu", category="latent_unexercised"),
    cell("a/z/cpu", category="skipped", status="skip", reason="r"),
]
ANCHORS = [
    "outcomes",
    "versions",
    "transfers",
    "cpu",
    "bench-failures",
    "skips",
    "cells",
    "fingerprint",
]


def matrix_doc(differences):
    """A synthetic version matrix: two versions, one cell."""
    entry = {"category": "passed", "status": "pass"}
    versions = [
        {
            "version": "2.4",
            "status": "ok",
            "root": "/r",
            "timings_s": {"build": 1.5, "test": 2},
        },
        {"version": "2.5", "status": "broken", "first_error": "x <y>"},
    ]
    cells = [
        {
            "id": "s/v/cpu",
            "scenario": "s",
            "axes": {"variant": "v"},
            "device": "cpu",
            "by_version": {"2.4": entry},
        }
    ]
    return {"versions": versions, "cells": cells, "differences": differences}


def sections(html):
    return [a for a in ANCHORS if f'<section id="{a}">' in html]


class RunPage(unittest.TestCase):
    def test_title_heading_and_navigation(self):
        bench = load_bench(reps("cpu_copy/path:memcpy/bytes:4096", "bytes_per_second", [1e9]))
        html = page.render(analyse(results(CELLS), bench), FIGURES)
        title = "torchplace report — LibTorch 9.9.9"
        self.assertTrue(
            html.startswith(
                '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
                f"<title>{title}</title><style>{html_page.CSS}</style></head><body>"
                f"<h1>{title}</h1><p>LibTorch 9.9.9 · CPU-only · no GPU</p>"
            )
        )
        self.assertIn(
            f"<p>3 scenario cells: 1 passed, 1 {matrix.LATENT}, 1 skipped; 1 of the 2 "
            "cells that ran are evidence.</p><nav>",
            html,
        )
        present = ["outcomes", "transfers", "cpu", "skips", "cells", "fingerprint"]
        self.assertEqual(sections(html), present)
        nav = html[html.index("<nav>") : html.index("</nav>")]
        self.assertEqual(
            nav,
            '<nav><a href="#outcomes">Outcomes</a> <a href="#transfers">Transfers</a>'
            ' <a href="#cpu">CPU baselines</a> <a href="#skips">Skips</a> <a href="#cells">'
            'Cells</a> <a href="#fingerprint">Fingerprint</a>',
        )
        order = [html.index(f'<section id="{a}">') for a in present]
        self.assertEqual(order, sorted(order))
        self.assertTrue(html.endswith("</section></body></html>\n"))

    def test_outcomes_section(self):
        html = page.render(analyse(results(CELLS)), FIGURES)
        start = html.index('<section id="outcomes"><h2>Scenario outcome matrix</h2>')
        body = html[start : html.index("</section>", start)]
        self.assertIn(html_page.legend_html() + "<p>Hover over a cell for its reason", body)
        self.assertIn(html_page.grid_table(analyse(results(CELLS)).grid), body)
        self.assertIn(
            "<details><summary>The same matrix as an image (outcome_matrix.png)</summary>"
            '<p><img src="data:image/png;base64,',
            body,
        )
        self.assertTrue(body.endswith('alt="outcome matrix"></p></details>'))
        self.assertNotIn("versions", sections(html))

    def test_synthetic_title_and_banner(self):
        html = page.render(analyse(results(CELLS, synthetic="by hand")), FIGURES)
        title = "SYNTHETIC — torchplace report — LibTorch 9.9.9"
        self.assertIn(f"<title>{title}</title>", html)
        self.assertIn('</head><body><div class="synthetic"><p class="synthetic-big">', html)
        self.assertIn(f"<li>results.json: by hand</li></ul></div><h1>{title}</h1>", html)

    def test_the_version_is_escaped(self):
        html = page.render(analyse(results(CELLS, libtorch_version="2<3")), FIGURES)
        self.assertIn("<title>torchplace report — LibTorch 2&lt;3</title>", html)
        self.assertIn("<h1>torchplace report — LibTorch 2&lt;3</h1><p>LibTorch 2&lt;3 ·", html)

    def test_a_gate_regression_reaches_the_cell_list(self):
        gate = {"behaviour": {"regressions": [{"id": "a/x/cpu", "kind": "grew", "detail": "d"}]}}
        html = page.render(analyse(results(CELLS), gate=gate), FIGURES)
        self.assertIn('<span class="bad">regression: grew</span> (pass: passed; d)', html)


class MatrixPage(unittest.TestCase):
    def render(self, differences):
        return page.render(analyse(matrix=matrix_doc(differences)), FIGURES)

    def test_heading_and_sections(self):
        html = self.render([])
        title = "torchplace report — LibTorch version matrix (2.4, 2.5)"
        self.assertIn(f"<title>{title}</title>", html)
        self.assertIn(f"<h1>{title}</h1><p>{page.NO_RESULTS}</p><nav>", html)
        self.assertEqual(sections(html), ["outcomes", "versions", "transfers"])
        self.assertIn(f"<h2>Scenario outcome matrix</h2><p>{page.NO_RESULTS}</p></section>", html)

    def test_versions_and_differences(self):
        differences = [{"id": "s/v/cpu", "kind": "changed", "versions": {"2.4": "a", "2.5": 1}}]
        html = self.render(differences)
        start = html.index('<section id="versions"><h2>LibTorch version matrix</h2><table>')
        body = html[start : html.index("</section>", start)]
        rows = tables_of(body)
        self.assertEqual(
            rows[0],
            [
                ["LibTorch", "root", "status", "first error", "timings"],
                ["2.4", "/r", "ok", "", "build 1.5 s, test 2 s"],
                ["2.5", "", "broken", "x <y>", ""],
            ],
        )
        self.assertIn('<div class="msg">x &lt;y&gt;</div>', body)
        grid = html_page.grid_table(analyse(matrix=matrix_doc([])).version_grid)
        self.assertIn("</table><p>Hover over a cell for its message.</p>" + grid, body)
        self.assertIn("(version_matrix.png)</summary><p><img", body)
        self.assertIn('alt="outcome matrix by LibTorch version"></p></details>', body)
        self.assertIn("<h3>Differences between versions (1)</h3>", body)
        self.assertEqual(
            rows[-1],
            [["cell", "kind", "by version"], ["s/v/cpu", "changed", "2.4: a2.5: 1"]],
        )
        self.assertIn('<b>2.4</b>: <span class="msg">a</span><br><b>2.5</b>', body)
        empty = self.render([{}])
        self.assertIn("<tr><td></td><td></td><td></td></tr>", empty)

    def test_no_differences(self):
        html = self.render([])
        self.assertIn("<h3>Differences between versions (0)</h3><p>None.</p></section>", html)
        doc = matrix_doc([])
        del doc["differences"]
        html = page.render(analyse(matrix=doc), FIGURES)
        self.assertIn("<h3>Differences between versions (0)</h3><p>None.</p></section>", html)


if __name__ == "__main__":
    unittest.main()
