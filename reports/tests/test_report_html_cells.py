#!/usr/bin/env python3
"""The page's outcome grid, cell list and skip reasons (torchplace.report.html_page), in
process: each grid cell's mark, colour and hover text, numbered skip footnotes, every cell with
its status (a gate's regression shown whatever the status says), and skips grouped by reason.
The cells and benchmark skips are synthetic, made in report_inputs.py or below."""
import unittest

from report_inputs import cell, results, tables_of
from torchplace.report import html_page, matrix
from torchplace.report.bench import BenchData

ERROR = {"outcome": "error", "message": "bad <x>", "error_class": "DeviceMismatch"}


def grid_cells():
    """Synthetic cells: two rows, two devices, one combination absent, two skip reasons."""
    return [
        cell("s/broken/cpu", category="latent_unexercised"),
        cell("s/broken/cuda", "cuda:0", "expected_error", observed=ERROR),
        cell("s/fixed/cpu", category="skipped", status="skip", reason="no GPU"),
        cell("t/fixed/cpu", category="skipped", status="skip", reason='other "x"'),
        cell("t/fixed/cuda", "cuda:0", category="skipped", status="skip", reason="no GPU"),
    ]


class GridTable(unittest.TestCase):
    def setUp(self):
        self.html = html_page.grid_table(matrix.from_results(results(grid_cells())))

    def test_marks_and_footnotes(self):
        self.assertEqual(
            tables_of(self.html),
            [
                [
                    ["scenario · variant", "cpu", "cuda:0"],
                    ["s · variant=broken", "latent, unexercised", "expected error"],
                    ["s · variant=fixed", "[1]", ""],
                    ["t · variant=fixed", "[2]", "[1]"],
                ]
            ],
        )
        self.assertIn("<td>s · variant=fixed</td><td", self.html)
        self.assertIn("[1]</td><td></td></tr>", self.html)
        self.assertTrue(
            self.html.endswith(
                "</table><p>Skipped:</p><ul><li>[1] no GPU</li>"
                "<li>[2] other &quot;x&quot;</li></ul>"
            )
        )

    def test_colour_and_hover_text(self):
        style = f"background:{matrix.COLOURS[matrix.EXPECTED_ERROR]};color:#fff"
        self.assertIn(
            f'<td class="cell" style="{style}" title="s/broken/cuda\nexpected error: '
            'DeviceMismatch">expected error</td>',
            self.html,
        )
        latent = f"background:{matrix.COLOURS[matrix.LATENT]};color:#000"
        self.assertIn(f'style="{latent}" title="s/broken/cpu\n', self.html)
        self.assertIn('title="t/fixed/cpu\nskipped: other &quot;x&quot;">[2]</td>', self.html)

    def test_no_skips_no_footnotes(self):
        html = html_page.grid_table(matrix.from_results(results(grid_cells()[:2])))
        self.assertNotIn("Skipped", html)
        self.assertTrue(html.endswith("</tr></table>"))


class CellsSection(unittest.TestCase):
    def rows(self, regressions=None):
        cells = [
            cell("a/fixed/cpu", reason="why <not>"),
            cell("b/broken/cpu", category="failed", status="fail", observed=ERROR),
        ]
        cells[0]["metrics"] = {
            "transfer.step.h2d.copies": 2.0,
            "transfer.step.h2d.bytes": 8.0,
        }
        self.html = html_page.cells_section(results(cells), regressions or {})
        return tables_of(self.html)[0]

    def test_every_cell_with_its_outcomes(self):
        rows = self.rows()
        self.assertEqual(
            rows[0],
            ["cell", "expected", "observed", "status", "raw error message", "reason"]
            + ["transfers (sim, per step)"],
        )
        self.assertEqual(
            rows[1][:6],
            ["a/fixed/cpu", "success", "success", "pass: passed", "", "why <not>"],
        )
        self.assertIn("h2d", rows[1][6])
        self.assertEqual(
            rows[2][:5],
            [
                "b/broken/cpu",
                "success",
                "error (DeviceMismatch)",
                "fail: unexpected",
                "bad <x>",
            ],
        )
        self.assertIn('<td><span class="bad">fail: unexpected</span></td>', self.html)
        self.assertIn('<div class="msg">bad &lt;x&gt;</div>', self.html)
        self.assertTrue(self.html.startswith('<section id="cells"><h2>All cells (2), with raw'))

    def test_a_regression_is_shown_whatever_the_status(self):
        rows = self.rows({"a/fixed/cpu": ("transfers_grew", "2 -> 3")})
        self.assertEqual(rows[1][3], "regression: transfers_grew (pass: passed; 2 -> 3)")
        self.assertIn('<td><span class="bad">regression: transfers_grew</span> (pass', self.html)
        self.assertEqual(rows[2][3], "fail: unexpected")


class SkipsSection(unittest.TestCase):
    def test_grouped_by_reason_most_first(self):
        cells = [
            cell(f"s/v{i}/cpu", category="skipped", status="skip", reason="r1") for i in (1, 2)
        ]
        cells += [cell("s/v3/cpu", category="skipped", status="skip"), cell("s/v4/cpu")]
        cells.insert(0, cell("s/v0/cpu", category="skipped", status="skip", reason="r0"))
        html = html_page.skips_section(results(cells), None)
        self.assertTrue(html.startswith('<section id="skips"><h2>Skips and their reasons</h2>'))
        self.assertEqual(
            tables_of(html)[0],
            [
                ["reason", "count", "which"],
                ["r1", "2", "s/v1/cpu …s/v1/cpus/v2/cpu"],
                ["r0", "1", "s/v0/cpu" * 2],
                ["(no reason given)", "1", "s/v3/cpu" * 2],
            ],
        )
        self.assertIn('<td>r1</td><td class="num">2</td><td><details><summary>s/v1/cpu …', html)
        self.assertIn("s/v1/cpu<br>s/v2/cpu</details>", html)
        self.assertNotIn("Benchmarks", html)

    def test_benchmark_skips_and_none(self):
        skips = [("b1", "no GPU"), ("b2", "no GPU"), ("b3", "other")]
        html = html_page.skips_section(results([]), BenchData("x", {}, {}, skips, []))
        self.assertIn("<h3>Scenario cells</h3><p>None.</p><h3>Benchmarks</h3><table>", html)
        self.assertEqual(
            tables_of(html)[0][1:],
            [["no GPU", "2", "b1 …b1b2"], ["other", "1", "b3b3"]],
        )
        html = html_page.skips_section(results([]), BenchData("x", {}, {}, [], []))
        self.assertIn("<h3>Benchmarks</h3><p>None.</p></section>", html)


if __name__ == "__main__":
    unittest.main()
