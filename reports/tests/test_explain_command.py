#!/usr/bin/env python3
"""torchplace explain's command line (torchplace.explain.command.main) in process with a stand-in
classifier (explain_standin.py, synthetic): its arguments, stdin or a file, the text and --json
outputs, the messages on stderr and the exit codes 0, 1, 3 and 64. The messages are real (sources
beside them); the logs around them are synthetic."""
import contextlib
import io
import json
import os
import sys
import unittest
from unittest import mock

from explain_standin import StandIn
from torchplace import schema
from torchplace.explain import command

# sgrvinod/a-PyTorch-Tutorial-to-Object-Detection issue 26
DEVICE = "RuntimeError: expected device cuda:0 but got device cpu"
# VICO-UoE/MTPSL issue 3
SHAPE = "RuntimeError: mat1 and mat2 shapes cannot be multiplied (1x2 and 6x64)"
# huggingface/accelerate issue 210, without its "RuntimeError: "
INDICES = "Input, output and indices must be on the current device"


class Main(StandIn):
    def run_main(self, *argv, stdin=""):
        out, err = io.StringIO(), io.StringIO()
        stream = io.TextIOWrapper(io.BytesIO(stdin.encode("utf-8")))
        with mock.patch.object(sys, "stdin", stream), contextlib.redirect_stdout(
            out
        ), contextlib.redirect_stderr(err):
            code = command.main(list(argv))
        return code, out.getvalue(), err.getvalue()


class Command(Main):
    def test_arguments(self):
        for argv in (["--nope"], ["a.log", "b.log"], ["-x", "-"]):
            with self.subTest(argv=argv):
                code, out, err = self.run_main(*argv)
                self.assertEqual((code, out), (schema.EXIT_USAGE, ""))
                self.assertEqual(err, command.USAGE + "\n")
        for flag in ("-h", "--help"):
            self.assertEqual(self.run_main(flag), (schema.EXIT_OK, command.USAGE + "\n", ""))
        self.assertEqual(command.parse([]), {"json": False, "input": "-"})
        self.assertEqual(command.parse(["-", "--json"]), {"json": True, "input": "-"})
        self.assertEqual(command.parse(["x.log"]), {"json": False, "input": "x.log"})

    def test_stdin_or_a_file_the_same(self):
        path = self.folder / "synthetic.log"
        path.write_bytes(f"synthetic: step 1 \xff\n{DEVICE}\n".encode("latin-1"))
        from_file = self.run_main("--json", str(path))
        from_stdin = self.run_main("--json", "-", stdin=f"synthetic: step 1\n{DEVICE}\n")
        self.assertEqual(from_file, from_stdin)
        self.assertEqual(from_file[0], schema.EXIT_OK)
        self.assertEqual(command.read(str(path)).split("\n")[0], "synthetic: step 1 \ufffd")

    def test_an_unreadable_file_exits_3(self):
        code, out, err = self.run_main(str(self.folder / "absent.log"))
        self.assertEqual((code, out), (schema.EXIT_INPUT, ""))
        self.assertEqual(
            err, f"explain: cannot read {self.folder / 'absent.log'}: No such file or directory\n"
        )

    def test_json_output(self):
        code, out, err = self.run_main("--json", stdin=f"{DEVICE}\n\n{DEVICE}\n")
        doc = json.loads(out)
        self.assertEqual((code, err), (schema.EXIT_OK, ""))
        self.assertEqual((doc["schema"], doc["exit"]), ("torchplace.explain/1", 0))
        (error,) = doc["errors"]
        self.assertEqual((error["line"], error["occurrences"]), (1, 2))
        self.assertEqual(error["message"], "expected device cuda:0 but got device cpu")

    def test_an_error_no_family_knows_exits_1(self):
        code, out, err = self.run_main("--json", stdin=f"{DEVICE}\n\n{SHAPE}\n")
        doc = json.loads(out)
        self.assertEqual((code, doc["exit"]), (schema.EXIT_FAIL, 1))
        self.assertEqual([e["class"] for e in doc["errors"]], ["DeviceMismatch", "Unclassified"])
        self.assertEqual(err, "explain: 1 error(s) that no family knows (shown above)\n")

    def test_no_error_exits_3(self):
        for argv in ([], ["--json"]):
            with self.subTest(argv=argv):
                code, out, err = self.run_main(*argv, stdin="synthetic: all good\n")
                self.assertEqual(code, schema.EXIT_INPUT)
                self.assertEqual(err, "explain: no LibTorch error found in the input\n")
        self.assertEqual(
            out,
            json.dumps({"schema": "torchplace.explain/1", "errors": [], "exit": 3}, indent=1)
            + "\n",
        )
        self.assertEqual(self.run_main(stdin="synthetic: all good\n")[1], "")

    def test_no_classifier_exits_3(self):
        os.environ["TORCHPLACE_CLASSIFY"] = str(self.folder / "absent")
        code, out, err = self.run_main(stdin=f"{DEVICE}\n")
        self.assertEqual((code, out), (schema.EXIT_INPUT, ""))
        self.assertTrue(err.startswith(f"explain: no classifier at {self.folder / 'absent'}"), err)


class Text(Main):
    """The text output, line by line."""

    def test_a_known_error_raised_twice(self):
        code, out, _ = self.run_main(stdin=f"synthetic: step 1\n{DEVICE}\n\n{DEVICE}\n")
        lines = out.split("\n")
        self.assertEqual(code, schema.EXIT_OK)
        self.assertEqual(
            lines[:5],
            [
                "error 1 (line 2, 2 times): DeviceMismatch",
                "  message:  expected device cuda:0 but got device cpu",
                "  family:   synthetic family",
                "  versions: 1.13.1 2.6.0",
                "  names:    devices cuda:0, cpu",
            ],
        )
        self.assertEqual(
            lines[5],
            "  scenario: forgotten_labels (scenarios/forgotten_labels.cpp; "
            'README.md, section "What each scenario shows"): an input or target left '
            "on another device",
        )
        self.assertTrue(lines[6].startswith("  fix:      tp::fixes::to_device"), lines[6])
        self.assertEqual(len(lines), 5 + 3 * 2 + 1)  # three scenarios, the last newline

    def test_an_unknown_error_names_nothing(self):
        _, out, _ = self.run_main(stdin=f"{DEVICE}\n\n{SHAPE}\n")
        second = out[out.index("error 2") :].split("\n")
        self.assertEqual(second[0], "error 2 (line 3): Unclassified")
        self.assertEqual(
            second[1], "  message:  mat1 and mat2 shapes cannot be multiplied (1x2 and 6x64)"
        )
        self.assertTrue(second[2].startswith("  family:   none: no family of harness/"), second[2])
        self.assertEqual(second[3:], ["  names:    nothing more", ""])

    def test_argument_method_dtypes_and_places(self):
        errors = [
            {
                "line": 7,
                "class": "DeviceMismatch",
                "message": "first line\nsecond line",
                "family": None,
                "occurrences": 1,
                "names": {
                    "argument": "index",
                    "method": "wrapper__index_select",
                    "devices": ["cuda:0", "cpu"],
                    "dtypes": ["Long", "Int"],
                    "where": [
                        {"tensor": "the other tensors", "device": "cuda:0"},
                        {"tensor": "index", "device": "cpu"},
                    ],
                },
                "covered_by": [{"scenario": "", "why": "why", "fix": "fix"}],
            }
        ]  # synthetic: every field filled in
        lines = command.render(errors).split("\n")
        self.assertEqual(lines[0], "error 1 (line 7): DeviceMismatch")
        self.assertEqual(lines[1], "  message:  first line")
        self.assertEqual(
            lines[3],
            "  names:    argument index; in wrapper__index_select; devices cuda:0, cpu; "
            "dtypes Long, Int",
        )
        self.assertEqual(
            lines[4],
            "  where:    the other tensors on cuda:0, index on cpu (in the message's order)",
        )
        self.assertEqual(lines[5:], ["  scenario: no scenario: why", "  fix:      fix"])


if __name__ == "__main__":
    unittest.main()
