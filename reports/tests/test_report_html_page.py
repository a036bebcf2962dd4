#!/usr/bin/env python3
"""The page's building blocks (torchplace.report.html_page), in process: tables, the machine
line, the SYNTHETIC marks and banner, the fingerprint against bench.json's, the outcome grid
with its footnotes, every cell with a gate's regressions, and the skips by reason. The
fingerprints, cells and benchmarks are synthetic, made in report_inputs.py or below."""
import json
import unittest

from report_inputs import results, tables_of
from torchplace.report import html_page, matrix
from torchplace.report.bench import BenchData


def bench(context, skips=()):
    """A synthetic bench.json's data: its context and planned skips, nothing measured."""
    return BenchData("bench.json", context, {}, list(skips), [])


GPU = {
    "runtime_version": "12.4",
    "driver": "550.1",
    "gpus": [{"name": "G1"}, {"name": "G2"}],
}


class Pieces(unittest.TestCase):
    def test_image_is_a_data_uri(self):
        self.assertEqual(html_page.data_uri(b"ab"), "data:image/png;base64,YWI=")
        self.assertEqual(
            html_page.image(b"ab", "a<b"),
            '<p><img src="data:image/png;base64,YWI=" alt="a&lt;b"></p>',
        )

    def test_table_right_aligns_numeric_columns(self):
        html = html_page.table(("a", "b"), [("x", "1"), ("y", "2")], numeric=(1,))
        self.assertEqual(
            html,
            "<table><tr><th>a</th><th>b</th></tr>"
            '<tr><td>x</td><td class="num">1</td></tr>'
            '<tr><td>y</td><td class="num">2</td></tr></table>',
        )

    def test_section(self):
        self.assertEqual(
            html_page.section("s", "A & B", "<p>x</p>"),
            '<section id="s"><h2>A &amp; B</h2><p>x</p></section>',
        )

    def test_machine_line(self):
        fingerprint = {
            "libtorch_version": "2.5.1",
            "cuda": GPU,
            "cpu_model": "C",
            "os": "O",
        }
        fingerprint["compiler"] = "gcc"
        self.assertEqual(
            html_page.machine_line(fingerprint),
            "LibTorch 2.5.1 · CUDA 12.4 · G1, G2 · driver 550.1 · C · O · gcc",
        )
        fingerprint = {"synthetic": "made up", "cuda": {"gpus": [{}]}}
        self.assertEqual(
            html_page.machine_line(fingerprint),
            "SYNTHETIC (not a measurement) · LibTorch ? · CPU-only · ?",
        )
        self.assertEqual(html_page.machine_line({}), "LibTorch ? · CPU-only · no GPU")

    def test_legend_names_every_category(self):
        html = html_page.legend_html()
        for category in matrix.CATEGORIES:
            self.assertIn(
                f'background:{matrix.COLOURS[category]}"></span><b>{category}</b>: ',
                html,
            )
        self.assertEqual(html.count("<br>"), len(matrix.CATEGORIES))
        self.assertTrue(html.startswith("<p><span") and html.endswith("<br></p>"))


class Synthetic(unittest.TestCase):
    def test_every_marked_input_is_named(self):
        matrix_doc = {"versions": [{"version": "1.0", "fingerprint": {"synthetic": "m"}}]}
        matrix_doc["versions"].append({"version": "2.0", "fingerprint": {}})
        marked = bench({"torchplace_synthetic": "b"})
        sources = html_page.synthetic_sources(results([], synthetic="r"), matrix_doc, marked)
        self.assertEqual(
            sources,
            [
                ("results.json", "r"),
                ("matrix.json column 1.0", "m"),
                ("bench.json", "b"),
            ],
        )
        self.assertEqual(html_page.synthetic_sources(None, None, None), [])
        self.assertEqual(html_page.synthetic_sources(results([]), None, bench({})), [])

    def test_banner(self):
        self.assertEqual(html_page.synthetic_banner([]), "")
        html = html_page.synthetic_banner([("a.json", "x<y"), ("b", "z")])
        self.assertTrue(html.startswith('<div class="synthetic"><p class="synthetic-big">'))
        self.assertIn("SYNTHETIC</p><p>This report was rendered from hand-made test data", html)
        self.assertTrue(html.endswith("<ul><li>a.json: x&lt;y</li><li>b: z</li></ul></div>"))


class Fingerprint(unittest.TestCase):
    FINGERPRINT = {"libtorch_version": "2.5.1", "cuda": GPU, "n": 3}

    def context(self, fingerprint):
        context = {"gpu": "G1", "num_cpus": 4, "other": "left out"}
        if fingerprint is not None:
            context["torchplace_fingerprint"] = fingerprint
        return bench(context)

    def test_fields_flattened(self):
        html = html_page.fingerprint_section({"fingerprint": self.FINGERPRINT}, None)
        self.assertTrue(html.startswith('<section id="fingerprint"><h2>Fingerprint</h2><table>'))
        self.assertEqual(
            tables_of(html),
            [
                [
                    ["field", "value"],
                    ["libtorch_version", "2.5.1"],
                    ["cuda.runtime_version", "12.4"],
                    ["cuda.driver", "550.1"],
                    ["cuda.gpus.0.name", "G1"],
                    ["cuda.gpus.1.name", "G2"],
                    ["n", "3"],
                ]
            ],
        )
        flat = html_page._flatten({"a": [1, 2], "b": [], "c": [{"d": 1}, 2]})
        self.assertEqual(flat, [("a", "[1, 2]"), ("b", "[]"), ("c.0.d", "1"), ("c.1", "2")])

    def test_synthetic_fingerprint_says_so(self):
        html = html_page.fingerprint_section({"fingerprint": {"synthetic": "a<b"}}, None)
        self.assertIn(
            '<h2>Fingerprint</h2><p class="bad">SYNTHETIC fingerprint (hand-made test data, not a'
            " measurement): a&lt;b</p><table>",
            html,
        )

    def test_bench_context_and_same_fingerprint(self):
        doc = {"fingerprint": self.FINGERPRINT}
        html = html_page.fingerprint_section(doc, self.context(json.dumps(self.FINGERPRINT)))
        self.assertIn("<h3>Benchmark context (bench.json)</h3>", html)
        self.assertEqual(tables_of(html)[1], [["field", "value"], ["gpu", "G1"], ["num_cpus", "4"]])
        self.assertIn('<p class="note">The benchmarks ran under the same fingerprint.</p>', html)
        self.assertNotIn("different", html)

    def test_a_different_or_unreadable_fingerprint_is_flagged(self):
        doc = {"fingerprint": self.FINGERPRINT}
        for text in (json.dumps({"libtorch_version": "1"}), "{not json"):
            html = html_page.fingerprint_section(doc, self.context(text))
            self.assertIn('<p class="bad">The benchmarks carry a different fingerprint', html)
            self.assertNotIn("same fingerprint", html)
        html = html_page.fingerprint_section(doc, self.context(None))
        self.assertNotIn("fingerprint.</p>", html)
        self.assertIn("num_cpus", html)


if __name__ == "__main__":
    unittest.main()
