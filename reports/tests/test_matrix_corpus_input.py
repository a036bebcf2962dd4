#!/usr/bin/env python3
"""torchplace.matrix.corpus in process: bad input (a passed error cell or a probe's error
without its message, a probe file without observations, a corpus of another schema, without
entries or with a bad entry) exits 3 naming it, the corpus left as it was; usage exits 64; the
module run as a program. The folders are synthetic (corpus_folder.py).

  test_matrix_corpus_input.py [CLASS]      (CTest: report.matrix_corpus_input)
"""
import contextlib
import io
import runpy
import sys
import unittest
from unittest import mock

from corpus_folder import GUIDE, Folder, matrix_cell, seen
from torchplace import schema
from torchplace.matrix import corpus


class BadInput(Folder):
    def assert_refused(self, says: str) -> None:
        self.write("corpus.json", {"schema": corpus.CORPUS_SCHEMA, "entries": [GUIDE]})
        with open(self.corpus, encoding="utf-8") as handle:
            before = handle.read()
        code, out, err = self.main(self.out, self.corpus)
        self.assertEqual((code, out), (schema.EXIT_INPUT, ""))
        self.assertIn("corpus: bad input, corpus unchanged: ", err)
        self.assertIn(says, err)
        with open(self.corpus, encoding="utf-8") as handle:
            self.assertEqual(handle.read(), before)

    def test_a_passed_error_cell_without_its_message(self) -> None:
        cell = matrix_cell(
            "amp/x/device=cpu",
            **{"2.6.0": seen("pass", "error", "expected_error", expected_class="X")},
        )
        self.matrix([cell])
        self.assert_refused("matrix.json: amp/x/device=cpu on 2.6.0: missing field(s) message")

    def test_a_probe_error_without_its_message_or_observations(self) -> None:
        self.matrix([])
        observation = {"probe": "p", "expected_class": "X", "outcome": "error"}
        self.write("2.6.0/messages.json", {"observations": [observation]})
        self.assert_refused("messages.json: observations[0]: missing field(s) message")
        self.write("2.6.0/messages.json", {"observed": []})
        self.assert_refused("missing field(s) observations")
        self.write(
            "2.6.0/messages.json",
            {"observations": [{"probe": "p", "outcome": "error"}]},
        )
        self.assert_refused("observations[0]: missing field(s) expected_class")

    def test_a_corpus_of_another_schema_or_with_a_bad_entry(self) -> None:
        self.matrix()
        self.write("corpus.json", {"schema": "torchplace.matrix/1", "entries": []})
        code, _, err = self.main(self.out, self.corpus)
        self.assertEqual(code, schema.EXIT_INPUT)
        expected = f"schema is 'torchplace.matrix/1', expected '{corpus.CORPUS_SCHEMA}'"
        self.assertIn(f"{self.corpus}: {expected}", err)
        bad = dict(GUIDE)
        del bad["expected_class"]
        self.write("corpus.json", {"schema": corpus.CORPUS_SCHEMA, "entries": [GUIDE, bad]})
        code, _, err = self.main(self.out, self.corpus)
        self.assertEqual(code, schema.EXIT_INPUT)
        self.assertIn(f"{self.corpus}: entries[1]: missing field(s) expected_class", err)

    def test_a_corpus_without_entries(self) -> None:
        self.matrix()
        self.write("corpus.json", {"schema": corpus.CORPUS_SCHEMA})
        code, _, err = self.main(self.out, self.corpus)
        self.assertEqual(code, schema.EXIT_INPUT)
        self.assertIn(f"{self.corpus}: missing field(s) entries", err)


class Usage(Folder):
    def test_one_or_two_arguments(self) -> None:
        for args in ((), (self.out, self.corpus, "extra")):
            with self.subTest(args=args):
                code, out, err = self.main(*args)
                self.assertEqual((code, out), (schema.EXIT_USAGE, ""))
                self.assertIn("usage: python3 -m torchplace.matrix.corpus MATRIX_OUT", err)

    def test_run_as_a_program(self) -> None:
        self.matrix()
        argv = ["corpus.py", self.out, self.corpus]
        with mock.patch.object(sys, "argv", argv), contextlib.redirect_stdout(
            io.StringIO()
        ), contextlib.redirect_stderr(
            io.StringIO()
        ):  # runpy warns: imported already
            with self.assertRaises(SystemExit) as stop:
                runpy.run_module("torchplace.matrix.corpus", run_name="__main__")
        self.assertEqual(stop.exception.code, 0)
        self.assertEqual(len(self.entries()), 2)


if __name__ == "__main__":
    unittest.main()
