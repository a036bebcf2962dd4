#!/usr/bin/env python3
"""Hand-made test data says so (issue 29): every committed fixture carries the synthetic mark in
its fingerprint (Google Benchmark JSON: context.torchplace_synthetic); the schema accepts the mark
as text only; the report shows a synthetic input as SYNTHETIC in large type, never as real; the
behaviour and matrix gates note a synthetic input (a note, not a failure)."""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

from torchplace import schema

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
FIXTURE_ROOTS = [
    os.path.join(HERE, "fixtures"),
    os.path.join(REPO, "ci", "gate", "tests", "fixtures"),
]
GPU = os.path.join(HERE, "fixtures", "synthetic_gpu")
BEHAVIOUR = os.path.join(REPO, "ci", "gate", "tests", "fixtures", "behaviour")
MARK = re.compile(r"^hand-made test data, not a measurement: .+")


def fixture_docs():
    """(path, parsed JSON) of every committed fixture that parses (the broken ones on purpose
    do not: they are checked as bytes in test_unparsable_fixtures_carry_the_mark_where_they_can)."""
    for top in FIXTURE_ROOTS:
        for folder, _, names in os.walk(top):
            for name in sorted(names):
                path = os.path.join(folder, name)
                try:
                    with open(path, encoding="utf-8") as handle:
                        yield path, json.load(handle)
                except (ValueError, UnicodeDecodeError):
                    continue


def fingerprints(doc):
    """Every fingerprint (and Google Benchmark context) in a document, with its key."""
    if not isinstance(doc, dict):
        return []
    found = []
    if isinstance(doc.get("fingerprint"), dict):
        found.append(("synthetic", doc["fingerprint"]))
    if isinstance(doc.get("context"), dict):
        found.append(("torchplace_synthetic", doc["context"]))
        embedded = doc["context"].get("torchplace_fingerprint")
        if isinstance(embedded, str) and embedded.startswith("{"):
            found.append(("synthetic", json.loads(embedded)))
    for column in doc.get("versions", []) if isinstance(doc.get("versions"), list) else []:
        if isinstance(column, dict) and isinstance(column.get("fingerprint"), dict):
            found.append(("synthetic", column["fingerprint"]))
    return found


def render(in_dir, out_dir):
    run = subprocess.run(
        [sys.executable, "-m", "torchplace.report", in_dir, "--out", out_dir],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    with open(os.path.join(out_dir, "index.html"), encoding="utf-8") as page:
        html = page.read()
    with open(os.path.join(out_dir, "summary.md"), encoding="utf-8") as summary:
        return html, summary.read()


def strip_marks(folder):
    """Removes every synthetic mark from the JSON files of a copied fixture folder."""
    for name in os.listdir(folder):
        path = os.path.join(folder, name)
        with open(path, encoding="utf-8") as handle:
            doc = json.load(handle)
        for key, where in fingerprints(doc):
            where.pop(key, None)
        context = doc.get("context")
        if isinstance(context, dict) and "torchplace_fingerprint" in context:
            embedded = json.loads(context["torchplace_fingerprint"])
            embedded.pop("synthetic", None)
            context["torchplace_fingerprint"] = json.dumps(embedded)
        with open(path, "w", encoding="utf-8") as handle:
            json.dump(doc, handle)


class Fixtures(unittest.TestCase):
    def test_every_fixture_fingerprint_is_marked_synthetic(self):
        checked = 0
        for path, doc in fixture_docs():
            for key, where in fingerprints(doc):
                checked += 1
                self.assertRegex(str(where.get(key)), MARK, f"{path}: {key} missing or wrong")
        self.assertGreater(checked, 60)  # the speed, behaviour and report fixtures

    def test_unparsable_fixtures_carry_the_mark_where_they_can(self):
        for name in ("not_utf8.json", "malformed.json"):
            with open(os.path.join(HERE, "fixtures", "bad", name), "rb") as handle:
                mark = b'"synthetic": "hand-made test data, not a measurement'
                self.assertIn(mark, handle.read())

    def test_no_fixture_folder_is_named_like_a_machine(self):
        self.assertFalse(os.path.exists(os.path.join(HERE, "fixtures", "cuda_h200")))
        self.assertTrue(os.path.isdir(GPU))


class Schema(unittest.TestCase):
    def results(self, synthetic):
        with open(os.path.join(GPU, "results.json"), encoding="utf-8") as handle:
            doc = json.load(handle)
        doc["fingerprint"]["synthetic"] = synthetic
        return doc

    def test_text_is_accepted_and_read(self):
        doc = self.results("hand-made test data, not a measurement: x")
        schema.check_fingerprint(doc["fingerprint"], "r")
        self.assertEqual(
            schema.synthetic_reason(doc["fingerprint"]), "hand-made test data, not a measurement: x"
        )
        self.assertIsNone(schema.synthetic_reason({"libtorch_version": "2.6.0"}))

    def test_a_non_string_mark_is_refused(self):
        for bad in (True, 1, None, {"why": "x"}, ["x"]):
            with self.assertRaisesRegex(schema.InputError, "synthetic must be str"):
                schema.check_fingerprint(self.results(bad)["fingerprint"], "r")

    def test_a_non_string_mark_in_a_matrix_column_or_bench_context_is_refused(self):
        with tempfile.TemporaryDirectory() as tmp:
            with open(os.path.join(GPU, "bench.json"), encoding="utf-8") as handle:
                bench = json.load(handle)
            bench["context"]["torchplace_synthetic"] = False
            path = os.path.join(tmp, "bench.json")
            with open(path, "w", encoding="utf-8") as handle:
                json.dump(bench, handle)
            with self.assertRaisesRegex(schema.InputError, "torchplace_synthetic must be str"):
                schema.load_benchmarks(path)
            with open(os.path.join(HERE, "fixtures", "with_matrix", "matrix.json")) as handle:
                matrix = json.load(handle)
            matrix["versions"][0]["fingerprint"]["synthetic"] = 7
            path = os.path.join(tmp, "matrix.json")
            with open(path, "w", encoding="utf-8") as handle:
                json.dump(matrix, handle)
            with self.assertRaisesRegex(schema.InputError, "synthetic must be str"):
                schema.load_matrix(path)


class Report(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="tp-synthetic-")
        self.addCleanup(shutil.rmtree, self.tmp)

    def test_a_synthetic_run_is_shown_as_synthetic(self):
        html, summary = render(GPU, os.path.join(self.tmp, "out"))
        body = html.split("<body>", 1)[1]
        banner = '<div class="synthetic"><p class="synthetic-big">SYNTHETIC'
        self.assertTrue(body.startswith(banner))
        self.assertIn(".synthetic-big{font-size:4em", html)
        self.assertIn("a GPU run&#x27;s report", body.split("<h1>", 1)[0])  # the reason, on top
        self.assertIn("<title>SYNTHETIC", html)
        self.assertTrue(summary.startswith("**SYNTHETIC: hand-made test data, not a measurement**"))
        fingerprint = html.split('id="fingerprint"', 1)[1]
        self.assertIn('<p class="bad">SYNTHETIC fingerprint', fingerprint)
        self.assertIn("SYNTHETIC (not a measurement) · LibTorch 2.5.1", html)

    def test_a_matrix_of_synthetic_columns_is_shown_as_synthetic(self):
        folder = os.path.join(self.tmp, "matrix")
        shutil.copytree(os.path.join(HERE, "fixtures", "with_matrix"), folder)
        os.remove(os.path.join(folder, "results.json"))
        html, summary = render(folder, os.path.join(self.tmp, "out"))
        self.assertIn("matrix.json column 1.13.1", html.split("<h1>", 1)[0])
        self.assertTrue(summary.startswith("**SYNTHETIC"))

    def test_an_unmarked_run_is_not_called_synthetic(self):
        folder = os.path.join(self.tmp, "real")
        shutil.copytree(GPU, folder)
        strip_marks(folder)
        html, summary = render(folder, os.path.join(self.tmp, "out"))
        self.assertNotIn("SYNTHETIC", html)
        self.assertNotIn("SYNTHETIC", summary)
        self.assertIn("The benchmarks ran under the same fingerprint.", html)


class Gates(unittest.TestCase):
    def test_the_behaviour_gate_notes_synthetic_input(self):
        with tempfile.TemporaryDirectory() as out:
            run = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "torchplace.gate",
                    "--results",
                    os.path.join(BEHAVIOUR, "results_ok"),
                    "--expectations",
                    os.path.join(BEHAVIOUR, "expectations.json"),
                    "--out",
                    out,
                ],
                capture_output=True,
                text=True,
                timeout=120,
            )
            self.assertEqual(run.returncode, 0, run.stdout + run.stderr)  # a note, not a failure
            self.assertIn("**SYNTHETIC input** (note, not a failure)", run.stdout)
            with open(os.path.join(out, "gate.json"), encoding="utf-8") as handle:
                verdict = json.load(handle)
            self.assertRegex(verdict["behaviour"]["synthetic"], MARK)

    def test_the_matrix_gate_notes_synthetic_columns(self):
        with tempfile.TemporaryDirectory() as out:
            verdict_path = os.path.join(out, "matrix-gate.json")
            run = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "torchplace.matrix.gate",
                    os.path.join(HERE, "fixtures", "with_matrix", "matrix.json"),
                    "--out",
                    verdict_path,
                ],
                capture_output=True,
                text=True,
                timeout=120,
            )
            self.assertIn(run.returncode, (0, 2), run.stderr)  # its verdict stands either way
            self.assertIn("matrix gate: note: column 1.13.1 is SYNTHETIC", run.stdout)
            with open(verdict_path, encoding="utf-8") as handle:
                notes = json.load(handle)["synthetic"]
            self.assertEqual(notes[0]["version"], "1.13.1")


if __name__ == "__main__":
    unittest.main()
