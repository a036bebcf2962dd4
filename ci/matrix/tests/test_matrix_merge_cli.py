#!/usr/bin/env python3
"""`python3 -m torchplace.matrix.merge` (merge.main, in process) on synthetic columns: bare and
VERSION=ROOT columns, --require-cuda-compile, --status, bad arguments (64), bad input and an
unwritable folder (3, naming the file and field, an earlier matrix.json kept); and which run-
specific parts of a message are masked before versions are compared (merge.comparable). Written
to kill generated mutants of merge.py (ci/mutation/README.md); the messages are hand-made."""
import contextlib
import io
import json
import os
import tempfile
import unittest

from test_matrix import FIX, cell, write_column
from test_matrix_merge import edit_steps
from torchplace import schema
from torchplace.matrix import merge


def run_main(*argv):
    """merge.main([...]) in process: (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = merge.main(["merge", *argv])
    return code, out.getvalue(), err.getvalue()


class CommandLine(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.out = self.tmp.name

    def written(self):
        with open(os.path.join(self.out, "matrix.json"), encoding="utf-8") as handle:
            return json.load(handle)

    def test_a_bare_version_reads_its_root_and_a_root_may_hold_an_equals_sign(self):
        write_column(self.out, "1.13.1", "ok", [cell(FIX)])
        edit_steps(os.path.join(self.out, "1.13.1"), prepare={"status": "ok", "root": "host"})
        write_column(self.out, "2.6.0", "ok", [cell(FIX)])
        code, _, err = run_main(self.out, "1.13.1", "2.6.0=image=trixie")
        self.assertEqual(code, schema.EXIT_OK, err)
        versions = self.written()["versions"]
        self.assertEqual(
            [(v["version"], v["root"]) for v in versions],
            [("1.13.1", "host"), ("2.6.0", "image=trixie")],
        )
        with open(os.path.join(self.out, "matrix.md"), encoding="utf-8") as handle:
            self.assertIn("2.6.0", handle.read())

    def test_a_bare_version_whose_run_json_records_an_empty_root_is_exit_3(self):
        write_column(self.out, "1.13.1", "ok", [cell(FIX)])
        edit_steps(os.path.join(self.out, "1.13.1"), prepare={"status": "ok", "root": ""})
        code, _, err = run_main(self.out, "1.13.1")
        self.assertEqual(code, schema.EXIT_INPUT)
        path = os.path.join(self.out, "1.13.1", "run.json")
        self.assertIn(f"column 1.13.1: {path} records no root (steps.prepare.root)", err)
        self.assertFalse(os.path.exists(os.path.join(self.out, "matrix.json")))

    def test_require_cuda_compile_is_a_flag_not_a_version(self):
        write_column(self.out, "1.13.1", "ok", [cell(FIX)])
        code, _, err = run_main(self.out, "--require-cuda-compile", "1.13.1=h")
        self.assertEqual(code, schema.EXIT_INPUT)
        missing = os.path.join(self.out, merge.CUDA_COLUMN)
        self.assertIn(f"nothing written: column cuda-2.6.0 is missing: {missing} does not", err)
        write_column(self.out, merge.CUDA_COLUMN, "compiled")
        code, _, err = run_main(self.out, "1.13.1=h", "--require-cuda-compile")
        self.assertEqual(code, schema.EXIT_OK, err)
        self.assertEqual([v["version"] for v in self.written()["versions"]], ["1.13.1"])
        self.assertEqual(self.written()["cuda_compile"]["status"], "compiled")

    def test_bad_input_names_the_file_and_field_and_keeps_the_earlier_matrix(self):
        for name in ("matrix.json", "matrix.md"):
            with open(os.path.join(self.out, name), "w", encoding="utf-8") as handle:
                handle.write(f"earlier {name}\n")
        broken = cell(FIX)
        del broken["observed"]["message"]  # the one field only merge requires
        write_column(self.out, "1.13.1", "ok", [broken])
        code, _, err = run_main(self.out, "1.13.1=h")
        self.assertEqual(code, schema.EXIT_INPUT)
        path = os.path.join(self.out, "1.13.1", "results.json")
        self.assertIn(
            f"bad input, nothing written: {path}: cells[0].observed: missing field(s) " "message",
            err,
        )
        for name in ("matrix.json", "matrix.md"):
            with open(os.path.join(self.out, name), encoding="utf-8") as handle:
                self.assertEqual(handle.read(), f"earlier {name}\n")

    def test_a_folder_it_cannot_write_into_is_exit_3(self):
        write_column(self.out, "1.13.1", "ok", [cell(FIX)])
        os.makedirs(os.path.join(self.out, "matrix.json", "in-the-way"))
        code, _, err = run_main(self.out, "1.13.1=h")
        self.assertEqual(code, schema.EXIT_INPUT)
        self.assertIn(f"matrix merge: cannot write into {self.out}: ", err)

    def test_status_prints_one_column_s_status(self):
        write_column(self.out, "1.13.1", "ok", [cell(FIX)], scenarios_exit=139)
        write_column(self.out, "2.6.0", "ok", [cell(FIX, status="fail")], scenarios_exit=1)
        write_column(self.out, "2.14.1", "run_failed")  # its scenarios step, no results.json
        for version, status in (
            ("1.13.1", "run_crashed"),
            ("2.6.0", "ok"),
            ("2.14.1", "run_failed"),
        ):
            with self.subTest(version=version):
                self.assertEqual(
                    run_main("--status", os.path.join(self.out, version)),
                    (schema.EXIT_OK, status + "\n", ""),
                )

    def test_status_of_a_malformed_run_record_is_exit_3_naming_it(self):
        write_column(self.out, "1.13.1", "ok", [cell(FIX)])
        edit_steps(os.path.join(self.out, "1.13.1"), build={"seconds": 3})
        code, out, err = run_main("--status", os.path.join(self.out, "1.13.1"))
        self.assertEqual((code, out), (schema.EXIT_INPUT, ""))
        path = os.path.join(self.out, "1.13.1", "run.json")
        self.assertIn(f"matrix merge: bad input: {path}: steps.build: missing field(s) status", err)

    def test_bad_arguments_are_exit_64_with_the_usage(self):
        for argv in ([self.out, "--require-cuda-compile"], [self.out, "-1.13.1"], ["--status"]):
            with self.subTest(argv=argv):
                code, _, err = run_main(*argv)
                self.assertEqual(code, schema.EXIT_USAGE)
                self.assertIn("usage: python3 -m torchplace.matrix.merge OUT VERSION", err)
        self.assertFalse(os.path.exists(os.path.join(self.out, "matrix.json")))


class Masked(unittest.TestCase):
    """What differs on every run is masked; each kind of it, one by one (synthetic messages)."""

    def test_each_run_specific_part_is_masked(self):
        cases = {
            "at /tmp/a.pt": "at <tmp>/a.pt",
            "at /var/tmp/run7/a.pt": "at <tmp>/a.pt",
            "into /tmp/tmpk3x9q/": "into <tmp>/",
            "in torchplace-ck-12-3": "in torchplace-<tmp>",
            "at 0x7f3a2b1c": "at 0x<address>",
        }
        for word in ("pid", "PID", "process", "thread", "tid"):
            cases[f"{word} 4242 died"] = f"{word} <id> died"
        cases["thread id=7"] = "thread id <id>"
        for text, masked in cases.items():
            with self.subTest(text=text):
                self.assertEqual(merge.comparable(text), masked)

    def test_a_cell_s_folder_as_temp_dir_h_names_it_is_masked_outside_tmp_too(self):
        # torchplace-<label>-<pid>-<mkdtemp's six characters> under $TMPDIR (harness/temp_dir.h)
        for label in ("archive_retag", "case-1", "x", ""):  # TempDir("") too
            with self.subTest(label=label):
                first = f"cannot remove /scratch/torchplace-{label}-4242-aB3xYz: busy"
                second = f"cannot remove /scratch/torchplace-{label}-913-09QqzZ: busy"
                masked = "cannot remove /scratch/torchplace-<tmp>: busy"
                self.assertEqual((merge.comparable(first), merge.comparable(second)), (masked,) * 2)

    def test_words_alone_and_other_values_are_left_as_they_are(self):
        for text in ("the process exited", "thread: main", "0x1f", "/data/tmp/a.pt"):
            with self.subTest(text=text):
                self.assertEqual(merge.comparable(text), text)
        self.assertEqual(merge.comparable(None), None)
        self.assertEqual(merge.comparable(3), 3)


if __name__ == "__main__":
    unittest.main()
