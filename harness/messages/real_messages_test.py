#!/usr/bin/python3
"""real_messages.py on a SYNTHETIC real_messages.json and a stand-in classifier made in a temp
folder (no message here is a user's or LibTorch's): its figures, checks and exit codes."""
import contextlib
import io
import json
import os
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path
from unittest import mock

import real_messages
from torchplace.schema import EXIT_ENV, EXIT_FAIL, EXIT_OK, EXIT_USAGE

# The stand-in classifier: the class is the message's text after "synthetic: ".
CLASSIFIER = """#!/usr/bin/python3
import json, sys
print(json.dumps([{"class": m.split("synthetic: ")[1]} for m in json.load(sys.stdin)]))
"""
FAILING = "#!/bin/sh\necho 'cannot classify' >&2\nexit 2\n"
URL = "https://github.com/example/synthetic/issues/1"


def entry(split: str, message: str, expected: str) -> dict:
    return {"split": split, "source": URL, "message": message, "expected_class": expected}


ENTRIES = [
    entry("dev", "synthetic: DeviceMismatch", "DeviceMismatch"),
    entry("dev", "synthetic: Unclassified", "DtypeMismatch"),
    entry("held_out", "synthetic: OutOfMemory", "OutOfMemory"),
    entry("held_out", "synthetic: DtypeMismatch", "DeviceMismatch"),
    entry("held_out", "synthetic: HostSync", "HostSync"),
]
FIGURES = {
    "dev": {"messages": 2, "right": 1, "wrong": 0},
    "held_out": {"messages": 3, "right": 2, "wrong": 1},
}


class RealMessages(unittest.TestCase):
    def setUp(self):
        folder = tempfile.TemporaryDirectory()
        self.addCleanup(folder.cleanup)
        self.tmp = Path(folder.name)
        self.data = self.tmp / "real_messages.json"
        self.write({"schema": "torchplace.real_messages/1", "entries": ENTRIES})
        self.classifier = self.script("classify", CLASSIFIER)
        for patch in (
            mock.patch.object(real_messages, "DATA", self.data),
            mock.patch.dict(os.environ, {"TORCHPLACE_CLASSIFY": self.classifier}),
        ):
            patch.start()
            self.addCleanup(patch.stop)

    def write(self, doc: dict):
        self.data.write_text(json.dumps(doc), encoding="utf-8")

    def script(self, name: str, text: str) -> str:
        path = self.tmp / name
        path.write_text(text)
        path.chmod(0o755)
        return str(path)

    def main(self, *argv: str):
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = real_messages.main(list(argv))
        return code, out.getvalue(), err.getvalue()

    def test_figures_per_split_unclassified_is_not_wrong(self):
        self.assertEqual(real_messages.figures(self.classifier), FIGURES)

    def test_record_then_check(self):
        self.assertEqual(self.main("--record")[0], EXIT_OK)
        self.assertEqual(json.loads(self.data.read_text())["measured"], {"after": FIGURES})
        code, out, _ = self.main()
        self.assertEqual((code, json.loads(out)), (EXIT_OK, FIGURES))

    def test_record_the_old_classifier_too(self):
        self.assertEqual(self.main("--record", "--before", self.classifier)[0], EXIT_OK)
        measured = json.loads(self.data.read_text())["measured"]
        self.assertEqual(measured, {"after": FIGURES, "before": FIGURES})

    def test_record_writes_the_file_readably(self):
        # A SYNTHETIC message with a non-ASCII sign: kept as written, one-space indents.
        doc = {"schema": "torchplace.real_messages/1", "entries": ENTRIES[:]}
        doc["entries"][4] = entry("held_out", "\u00d7 synthetic: HostSync", "HostSync")
        self.write(doc)
        self.assertEqual(self.main("--record")[0], EXIT_OK)
        text = self.data.read_text(encoding="utf-8")
        self.assertIn('"message": "\u00d7 synthetic: HostSync"', text)
        self.assertEqual(text.splitlines()[1], ' "schema": "torchplace.real_messages/1",')
        self.assertTrue(text.endswith("}\n"))

    def test_check_fails_when_the_figures_differ_from_the_recorded(self):
        self.main("--record")
        doc = json.loads(self.data.read_text())
        doc["entries"][0]["expected_class"] = "DtypeMismatch"
        self.write(doc)
        code, _, err = self.main()
        self.assertEqual(code, EXIT_FAIL)
        self.assertIn("the figures differ from those recorded in real_messages.json", err)
        self.assertIn("'right': 1", err)  # the recorded figures, named

    def test_bad_arguments(self):
        for argv in (["--before", self.classifier], ["extra"], ["--record", "--before"]):
            with self.subTest(argv=argv):
                code, _, err = self.main(*argv)
                self.assertEqual(code, EXIT_USAGE)
                self.assertIn("usage: real_messages.py", err)  # the usage, shown

    def test_bad_entries_are_named(self):
        cases = [
            ({"schema": "other/1", "entries": []}, "not torchplace.real_messages/1"),
            ({"split": "train"}, "entry 1: split must be one of ('dev', 'held_out')"),
            ({"source": "https://example.com/1"}, "entry 1: source must be the public thread"),
            ({"expected_class": "Shape"}, "entry 1: unknown class 'Shape'"),
        ]
        for change, problem in cases:
            with self.subTest(problem=problem):
                doc = {"schema": "torchplace.real_messages/1", "entries": ENTRIES[:]}
                if "schema" in change:
                    doc = change
                else:
                    doc["entries"][1] = {**ENTRIES[1], **change}
                self.write(doc)
                code, _, err = self.main()
                self.assertEqual(code, EXIT_ENV)
                self.assertIn(problem, err)

    def test_a_classifier_that_is_unset_absent_or_failing(self):
        cases = [
            ("", "TORCHPLACE_CLASSIFY is not set"),
            (str(self.tmp / "absent"), "did not run"),
            (self.script("failing", FAILING), "the classifier failed: cannot classify"),
            (self.script("garbled", "#!/bin/sh\necho garbled\n"), "real_messages.py: Expecting"),
        ]
        for classifier, problem in cases:
            with self.subTest(problem=problem):
                with mock.patch.dict(os.environ, {"TORCHPLACE_CLASSIFY": classifier}):
                    code, _, err = self.main()
                self.assertEqual(code, EXIT_ENV)
                self.assertIn(problem, err)

    def test_run_as_a_script(self):
        # Its exit code is main()'s on the arguments after the script's name.
        env = {k: v for k, v in os.environ.items() if k != "TORCHPLACE_CLASSIFY"}
        for argv, code, problem in (
            ([], EXIT_ENV, "TORCHPLACE_CLASSIFY is not set"),
            (["extra"], EXIT_USAGE, "usage: real_messages.py"),
        ):
            with self.subTest(argv=argv):
                run = subprocess.run(
                    [sys.executable, real_messages.__file__, *argv],
                    env=env,
                    capture_output=True,
                    text=True,
                    timeout=60,
                )
                self.assertEqual(run.returncode, code)
                self.assertIn(problem, run.stderr)


if __name__ == "__main__":
    unittest.main()
