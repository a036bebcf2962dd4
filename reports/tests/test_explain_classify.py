#!/usr/bin/env python3
"""How torchplace explain runs the classifier and groups its verdicts (torchplace.explain.command:
find_classifier, classify, bare_message, explain), in process with a stand-in classifier
(explain_standin.py, synthetic): where it is looked for, each way running it fails, the lines of
a text without any marker, one error counted once however often it is raised. The messages are
real (sources beside them); the logs around them are synthetic."""
import os
import subprocess
import unittest
from pathlib import Path
from unittest import mock

from explain_standin import StandIn
from torchplace.explain import command
from torchplace.explain.command import ExplainError

# huggingface/accelerate issue 210, without its "RuntimeError: "
INDICES = "Input, output and indices must be on the current device"
# sgrvinod/a-PyTorch-Tutorial-to-Object-Detection issue 26
DEVICE = "RuntimeError: expected device cuda:0 but got device cpu"


class FindAndRun(StandIn):
    def test_the_classifier_named_by_the_environment(self):
        self.assertEqual(command.find_classifier(), self.classifier)
        self.classifier.chmod(0o600)  # there, but not executable
        with self.assertRaisesRegex(ExplainError, f"no classifier at {self.classifier}: "):
            command.find_classifier()

    def test_else_the_installed_bin_folder(self):
        del os.environ["TORCHPLACE_CLASSIFY"]
        # share/torchplace/reports/torchplace/explain/command.py -> share/torchplace/bin/
        share = Path(command.__file__).resolve().parents[3]
        installed = share / "bin" / "torchplace_classify"
        self.assertFalse(installed.exists())
        with self.assertRaises(ExplainError) as caught:
            command.find_classifier()
        self.assertIn(f"no classifier at {installed}: build the target", str(caught.exception))
        self.assertIn("set TORCHPLACE_CLASSIFY", str(caught.exception))

    def test_one_verdict_a_message(self):
        verdicts = command.classify([DEVICE, "synthetic: epoch 1"])
        self.assertEqual([v["class"] for v in verdicts], ["DeviceMismatch", "Unclassified"])
        self.assertEqual(verdicts[0]["core"], "expected device cuda:0 but got device cpu")
        os.environ["TORCHPLACE_CLASSIFY"] = str(self.folder / "absent")
        self.assertEqual(command.classify([]), [])  # nothing to ask: not run at all

    def test_each_failure_is_an_explain_error(self):
        os.environ["STANDIN_EXIT"] = "1"
        with self.assertRaisesRegex(
            ExplainError, r"^the classifier failed \(1\): synthetic failure$"
        ):
            command.classify([DEVICE])
        del os.environ["STANDIN_EXIT"]
        os.environ["STANDIN_COUNT"] = "1"
        with self.assertRaisesRegex(ExplainError, "a different number of messages"):
            command.classify([DEVICE, INDICES])
        self.classifier.write_text("#!/nonexistent/interpreter\n", encoding="utf-8")
        with self.assertRaisesRegex(ExplainError, "^the classifier did not run: "):
            command.classify([DEVICE])

    def test_a_classifier_that_hangs_is_stopped(self):
        timeout = subprocess.TimeoutExpired("torchplace_classify", command.TIMEOUT_S)
        with mock.patch.object(command.subprocess, "run", side_effect=timeout) as run:
            with self.assertRaisesRegex(ExplainError, "^the classifier did not run: .*timed out"):
                command.classify([DEVICE])
        self.assertEqual(run.call_args.kwargs["timeout"], command.TIMEOUT_S)
        self.assertEqual(command.TIMEOUT_S, 60)


class Grouping(StandIn):
    def test_lines_without_a_marker(self):
        text = f"synthetic: step 1\n{INDICES}\n  a line of the same message\n\nstep 2\n{INDICES}"
        found = command.bare_message(text)
        self.assertEqual(
            [(f.line, f.text) for f in found],
            [(2, f"{INDICES}\n  a line of the same message"), (6, INDICES)],
        )
        self.assertEqual(command.bare_message("synthetic: all good\n\n"), [])

    def test_a_bare_message_ends_at_the_first_blank_line(self):
        for text in (f"{INDICES}\n", f"{INDICES}\n\nsynthetic: step 2", f"{INDICES}\n \n"):
            with self.subTest(text=text):
                found = command.bare_message(text)
                self.assertEqual([(f.line, f.text) for f in found], [(1, INDICES)])

    def test_a_whole_text_the_classifier_knows(self):
        text = f"\n{INDICES}\nsynthetic: a second line\n"
        (error,) = command.explain(text)
        self.assertEqual(error["line"], 1)
        self.assertEqual(error["message"], f"{INDICES}\nsynthetic: a second line")
        self.assertEqual(error["family"]["versions"], "1.13.1 2.6.0")

    def test_one_error_raised_again_is_counted(self):
        text = f"synthetic: step 1\n{DEVICE}\n\n{DEVICE}\n\n{DEVICE}\n\nRuntimeError: other\n"
        errors = command.explain(text)
        self.assertEqual([(e["line"], e["occurrences"]) for e in errors], [(2, 3), (8, 1)])
        first = errors[0]
        self.assertEqual((first["class"], first["message"]), ("DeviceMismatch", DEVICE[14:]))
        self.assertEqual(first["names"]["devices"], ["cuda:0", "cpu"])
        self.assertEqual(first["covered_by"][0]["scenario"], "forgotten_labels")
        self.assertEqual((errors[1]["class"], errors[1]["covered_by"]), ("Unclassified", []))

    def test_nothing_to_find(self):
        self.assertEqual(command.explain("synthetic: all good\n"), [])
        self.assertEqual(command.explain(" \n\n"), [])


if __name__ == "__main__":
    unittest.main()
