#!/usr/bin/env python3
"""Where torchplace explain finds each LibTorch message in a text (torchplace.explain.extract,
in process, no classifier): the real logs of fixtures/explain/logs.json, where a message ends, the
log prefixes taken off a line, a C++ program's what(), this suite's "raw message:" and the
TorchScript interpreter's wrapper. Messages are real (their source beside them); the framing
around them (blank lines, colours, pdb's prefix) is synthetic and says so."""
import json
import unittest
from pathlib import Path

from torchplace.explain.extract import find_errors

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "explain" / "logs.json"
LOGS = {log["name"]: log for log in json.loads(FIXTURES.read_text(encoding="utf-8"))["logs"]}
# sgrvinod/a-PyTorch-Tutorial-to-Object-Detection issue 26 (the python_traceback log's message)
DEVICE = "RuntimeError: expected device cuda:0 but got device cpu"
# VICO-UoE/MTPSL issue 3 (the python_shape_error log's message)
SHAPE = "RuntimeError: mat1 and mat2 shapes cannot be multiplied (1x2 and 6x64)"


def found(text):
    return [(f.line, f.text) for f in find_errors(text)]


class RealLogs(unittest.TestCase):
    def test_a_python_traceback_gives_its_last_line(self):
        self.assertEqual(found(LOGS["python_traceback"]["text"]), [(14, DEVICE)])

    def test_what_is_taken_off_and_the_backtrace_stays_to_the_blank_line(self):
        ((line, text),) = found(LOGS["cxx_log_libtorch"]["text"])
        first, *frames = text.split("\n")
        self.assertEqual(line, 2)
        self.assertTrue(first.startswith("[enforce fail at inline_container.cc:137] . "), first)
        self.assertEqual(len(frames), 4)  # frame #0 to #3, then the log's blank line
        self.assertTrue(frames[-1].startswith("frame #3: "), frames[-1])

    def test_the_interpreters_wrapper_runs_to_the_line_naming_the_error(self):
        ((line, text),) = found(LOGS["cxx_torchscript_cpu_only"]["text"])
        lines = text.split("\n")
        self.assertEqual(line, 2)
        self.assertEqual(lines[0], "The following operation failed in the TorchScript interpreter.")
        self.assertIn("<--- HERE", text)
        self.assertTrue(lines[-1].startswith("RuntimeError: Could not run 'aten::empty"))
        self.assertNotIn("frame #", text)

    def test_two_logs_one_after_the_other(self):
        text = LOGS["python_traceback"]["text"] + "\n" + LOGS["python_shape_error"]["text"]
        after = LOGS["python_traceback"]["text"].count("\n") + 1
        self.assertEqual(found(text), [(14, DEVICE), (after + 10, SHAPE)])

    def test_no_marker_no_message(self):
        self.assertEqual(found("synthetic: epoch 1 loss 0.25\n\nall good\n"), [])


class WhereItEnds(unittest.TestCase):
    """Synthetic framing around real messages."""

    def test_each_traceback_line_ends_a_message(self):
        for end in (
            "Traceback (most recent call last):",
            "During handling of the above exception, another exception occurred:",
            "The above exception was the direct cause of the following exception:",
        ):
            with self.subTest(end=end):
                self.assertEqual(found(f'{DEVICE}\n{end}\n  File "x.py"\n'), [(1, DEVICE)])

    def test_a_continuation_line_stays(self):
        # NovaSearch-Team/RAG-Retrieval issue 27, launched by torchrun: "[rank5]: " on each line.
        text = (
            "[rank5]: RuntimeError: CUDA error: invalid device ordinal\n"
            "[rank5]: CUDA kernel errors might be asynchronously reported at some other API "
            "call, so the stacktrace below might be incorrect.\n"
        )
        ((line, message),) = found(text)
        self.assertEqual(line, 1)
        self.assertEqual(
            message.split("\n"),
            [
                "RuntimeError: CUDA error: invalid device ordinal",
                text.split("\n")[1][len("[rank5]: ") :],
            ],
        )

    def test_the_next_error_starts_a_new_message(self):
        self.assertEqual(found(f"{DEVICE}\n{SHAPE}\n"), [(1, DEVICE), (2, SHAPE)])
        self.assertEqual(found(f"x\n{DEVICE}\n{SHAPE}"), [(2, DEVICE), (3, SHAPE)])


class Prefixes(unittest.TestCase):
    """What each line loses before it is read: synthetic framing around a real message."""

    def test_colours_carriage_returns_and_pdbs_prefix_go(self):
        for line in (
            f"\x1b[1;31m{DEVICE}\x1b[0m",
            f"\x1b[31m{DEVICE}\x1b[m",  # ESC[m: the reset without a number
            f"{DEVICE}\r",
            f"*** {DEVICE}",
            f"[rank3]: {DEVICE}",
            f"\x1b[31m[rank3]: {DEVICE}",
        ):
            with self.subTest(line=line):
                self.assertEqual(found(f"x\n{line}\n\nafter\n"), [(2, DEVICE)])

    def test_a_cxx_programs_what(self):
        # pytorch/pytorch issue 16741, as std::terminate prints it (the cxx_log_libtorch log).
        what = "[enforce fail at inline_container.cc:137] . PytorchStreamReader failed reading"
        text = f"terminate called after throwing an instance of 'c10::Error'\n  what():  {what}\n"
        self.assertEqual(found(text), [(2, what)])


class SuiteOutput(unittest.TestCase):
    """This suite's own failure text (harness/internal/expected_error.cpp), filled in with a
    message of the corpus (cell:unregistered_buffers/.../device=sim:0)."""

    MESSAGE = (
        "Expected all tensors to be on the same device, but found at least two devices, sim:0 "
        "and cpu! (when checking argument for argument mat2 in method wrapper_SIM_mm_out)"
    )
    VERDICT = "cell.under_test(matmul) raised DeviceMismatch, expected DtypeMismatch; raw message:"

    def test_the_line_after_raw_message_is_the_message(self):
        self.assertEqual(found(f"{self.VERDICT}\n{self.MESSAGE}\n"), [(2, self.MESSAGE)])
        text = f"[ RUN      ] cell\n{self.VERDICT}\n{self.MESSAGE}\n\n[  FAILED  ] cell\n"
        self.assertEqual(found(text), [(3, self.MESSAGE)])

    def test_output_cut_off_after_raw_message_holds_none(self):
        self.assertEqual(found(f"[ RUN      ] cell\n{self.VERDICT}"), [])
        self.assertEqual(found(f"{self.VERDICT}\n\n{self.MESSAGE}\n"), [])


if __name__ == "__main__":
    unittest.main()
