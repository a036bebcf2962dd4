#!/usr/bin/env python3
"""The matrix gate's input rules (issue 25) and its neighbour comparison (issue 26), on synthetic
matrix.json documents run through `python3 -m torchplace.matrix.gate`: unique versions, oldest
first, each label agreeing with its column's fingerprint, by_version keyed by the versions, at
least one cell compared, `--out` into a folder that does not exist yet, and three versions
compared each with its older neighbour.

  test_matrix_rules.py [TestClass[.test] ...]      (CTest: matrix.gate_rules)
"""
import contextlib
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest
from unittest import mock

from torchplace import schema
from torchplace.matrix import gate as matrix_gate

PASS, REGRESSION, INPUT = 0, 2, 3
SYNTHETIC = "synthetic (ci/matrix/tests/test_matrix_rules.py), not recorded from a run"
FIX = "s/variant=manual_to/device=cpu"


def entry(status="pass"):
    category = {"pass": "passed", "fail": "failed", "skip": "skipped"}.get(status, "not_run")
    outcome = {"pass": "success", "fail": "success", "skip": "not_run"}.get(status, "not_run")
    return {
        "status": status,
        "observed_outcome": outcome,
        "category": category,
        "observed_class": None,
        "message": "",
        "reason": "" if status == "pass" else "why",
    }


def column(version, status="ok", fingerprint_version=None):
    return {
        "version": version,
        "status": status,
        "root": "synthetic",
        "fingerprint": {
            "libtorch_version": fingerprint_version or version,
            "synthetic": "hand-made test data, not a measurement: a matrix "
            "column for the matrix gate's rule tests",
        },
        "unit": {"status": "ok", "ran": 1, "failed": []},  # synthetic, as the fingerprint
    }


def matrix(versions=("1.13.1", "2.6.0", "2.14.1"), by_version=None, cells=None):
    """One cell passing on every version, unless by_version {version: status} says otherwise."""
    by_version = by_version or {v: "pass" for v in versions}
    one = {
        "id": FIX,
        "scenario": "s",
        "axes": {"variant": "manual_to"},
        "device": "cpu",
        "by_version": {v: entry(status) for v, status in by_version.items()},
    }
    return {
        "schema": "torchplace.matrix/1",
        "about": SYNTHETIC,
        "versions": [column(v) for v in versions],
        "cells": [one] if cells is None else cells,
    }


class MatrixGateCase(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="matrix-rules-")
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def gate(self, doc, *extra):
        path = os.path.join(self.tmp, "matrix.json")
        with open(path, "w", encoding="utf-8") as handle:
            json.dump(doc, handle)
        done = subprocess.run(
            [sys.executable, "-m", "torchplace.matrix.gate", path, *extra],
            capture_output=True,
            text=True,
        )
        self.assertNotIn("Traceback", done.stdout + done.stderr)
        return done

    def judged(self, code, doc, words=None, *extra):
        done = self.gate(doc, *extra)
        self.assertEqual(done.returncode, code, done.stdout + done.stderr)
        if words:
            self.assertIn(words, done.stderr)
        return done


class VersionRules(MatrixGateCase):
    def test_a_good_matrix_passes(self):
        self.judged(PASS, matrix())

    def test_the_same_version_twice(self):
        doc = matrix(versions=("2.6.0", "2.6.0"), by_version={"2.6.0": "pass"})
        self.judged(INPUT, doc, "listed twice")

    def test_a_label_its_fingerprint_contradicts(self):
        doc = matrix()
        doc["versions"][2]["fingerprint"]["libtorch_version"] = "2.6.0"
        self.judged(INPUT, doc, "fingerprint says LibTorch 2.6.0")

    def test_debian_1_13_1_reports_1_13_0(self):  # its headers' TORCH_VERSION_PATCH is 0
        doc = matrix()
        doc["versions"][0]["fingerprint"]["libtorch_version"] = "1.13.0"
        self.judged(PASS, doc)

    def test_newest_first(self):
        doc = matrix(versions=("2.14.1", "2.6.0", "1.13.1"))
        self.judged(INPUT, doc, "not oldest first")

    def test_a_label_that_is_no_version(self):
        self.judged(INPUT, matrix(versions=("latest", "2.6.0")), "not a version number")

    def test_by_version_keys_that_are_not_the_versions(self):
        doc = matrix(versions=("1.13.1", "2.14.1"), by_version={"1.13.1": "pass", "2.6.0": "pass"})
        self.judged(INPUT, doc, "by_version")

    def test_no_cells(self):
        self.judged(INPUT, matrix(cells=[]), "nothing compared")

    def test_no_versions(self):
        self.judged(INPUT, matrix(versions=(), cells=[]), "no versions")

    def test_cells_that_never_ran(self):
        doc = matrix(by_version={"1.13.1": "skip", "2.6.0": "skip", "2.14.1": "skip"})
        self.judged(INPUT, doc, "nothing compared")

    def test_a_field_of_the_wrong_type(self):
        doc = matrix()
        doc["cells"][0]["by_version"]["2.6.0"]["status"] = 1
        self.judged(INPUT, doc, "status must be str")


class Neighbours(MatrixGateCase):
    """Three versions: a cell that fails on the oldest, passes on the middle one and fails on the
    newest regressed between 2.6.0 and 2.14.1; comparing with the oldest sees nothing."""

    def test_each_version_against_its_neighbour(self):
        doc = matrix(by_version={"1.13.1": "fail", "2.6.0": "pass", "2.14.1": "fail"})
        done = self.judged(REGRESSION, doc, None, "--out", os.path.join(self.tmp, "v.json"))
        with open(os.path.join(self.tmp, "v.json"), encoding="utf-8") as handle:
            verdict = json.load(handle)
        pairs = [(p["old"], p["new"], len(p["regressions"])) for p in verdict["pairs"]]
        self.assertEqual(pairs, [("1.13.1", "2.6.0", 0), ("2.6.0", "2.14.1", 1)], done.stdout)


class NothingEverHeld(MatrixGateCase):
    """A cell that fails where it ran and passes on no version fails the gate: a skip holds
    nothing (it passed when skipped on the old version and failing on the new)."""

    def test_skipped_then_failing(self):
        for by_version in (
            {"1.13.1": "skip", "2.6.0": "fail"},
            {"1.13.1": "fail", "2.6.0": "skip"},
            {"1.13.1": "skip", "2.6.0": "skip", "2.14.1": "fail"},
        ):
            with self.subTest(by_version=by_version):
                doc = matrix(versions=tuple(by_version), by_version=by_version)
                other = dict(doc["cells"][0], id="synthetic/passing", by_version={})
                other["by_version"] = {v: entry("pass") for v in by_version}
                doc["cells"].append(other)
                done = self.judged(REGRESSION, doc)
                self.assertIn(f"FAILED (never_held) {FIX}", done.stdout)

    def test_a_skip_between_a_pass_and_a_fail_hides_no_regression(self):
        # a pass that proved nothing (ran_unexercised) may be skipped without a regression; the
        # failure after the skip is one all the same (it passed where it last ran; a review)
        doc = matrix(by_version={"1.13.1": "pass", "2.6.0": "skip", "2.14.1": "fail"})
        doc["cells"][0]["by_version"]["1.13.1"]["category"] = "ran_unexercised"
        out = os.path.join(self.tmp, "v.json")
        self.judged(REGRESSION, doc, None, "--out", out)
        with open(out, encoding="utf-8") as handle:
            pairs = json.load(handle)["pairs"]
        self.assertEqual([len(p["regressions"]) for p in pairs], [0, 1])
        self.assertIn("passed on 1.13.1, skipped since: why", pairs[1]["regressions"][0]["detail"])

    def test_looking_back_stops_at_a_column_that_never_ran_the_cell(self):
        # kills reports/torchplace/matrix/gate.py:last_ran:f208e6:logic_swap:0 (an absent entry
        # read as one: a tool error, exit 3, where the cell fails and never held: exit 2)
        doc = matrix(by_version={"2.6.0": "skip", "2.14.1": "fail"})
        doc["versions"][0] = column("1.13.1", status="build_failed")
        done = self.judged(REGRESSION, doc)
        self.assertIn(f"FAILED (never_held) {FIX}", done.stdout)

    def test_a_status_no_rule_judges_in_a_column_that_ran_cannot_be_judged(self):
        doc = matrix(versions=("1.13.1", "2.6.0"), by_version={"1.13.1": "pass", "2.6.0": "pass"})
        doc["cells"][0]["by_version"]["2.6.0"] = entry("run_failed")  # category not_run
        self.judged(INPUT, doc, "status 2.6.0: 'run_failed' in a column that ran")

    def test_a_run_that_judges_nothing_leaves_no_earlier_verdict(self):
        # an earlier pass beside a run that could not be judged (a review's find): removed first
        out = os.path.join(self.tmp, "verdict", "matrix-gate.json")
        os.makedirs(os.path.dirname(out))
        with open(out, "w", encoding="utf-8") as handle:
            handle.write('{"verdict": "pass", "about": "an earlier run (synthetic)"}\n')
        self.judged(INPUT, matrix(versions=()), "no versions", "--out", out)
        self.assertFalse(os.path.exists(out))

    def test_a_pass_anywhere_is_not_this_failure(self):
        by_version = {"1.13.1": "skip", "2.6.0": "fail", "2.14.1": "pass"}  # fixed by 2.14.1
        done = self.judged(PASS, matrix(by_version=by_version))
        self.assertNotIn("never_held", done.stdout)


class PrintedChanges(MatrixGateCase):
    def test_a_changed_message_is_printed_with_both_texts(self):
        # kills reports/torchplace/matrix/gate.py:print_verdict:2f0f52:delete_stmt:0 (the changes
        # counted in the pair's line, never listed)
        doc = matrix()
        doc["cells"][0]["by_version"]["2.14.1"]["message"] = "synthetic: a new wording"
        done = self.judged(PASS, doc)
        self.assertIn("2.6.0 -> 2.14.1: 0 regression(s), 1 behaviour change(s)", done.stdout)
        self.assertIn(f"  changed message of {FIX}: '' -> 'synthetic: a new wording'", done.stdout)

    def test_a_column_that_did_not_build_fails_and_its_cells_are_not_compared(self):
        # kills reports/torchplace/matrix/gate.py:compare_pair:26c669:logic_swap:0 (a cell the
        # failed column lacks was compared field by field: a tool error, exit 3)
        doc = matrix()
        doc["versions"][0] = column("1.13.1", status="build_failed")
        del doc["cells"][0]["by_version"]["1.13.1"]
        done = self.judged(REGRESSION, doc)
        self.assertIn("1.13.1 -> 2.6.0: 0 regression(s), 0 behaviour change(s)", done.stdout)
        self.assertIn("FAILED (column) <1.13.1 column>: build_failed", done.stdout)

    def test_the_verdict_names_each_synthetic_column(self):
        # kills reports/torchplace/matrix/gate.py:gate:30eefd:delete_branch:0 (a verdict on
        # hand-made columns that did not say so)
        out = os.path.join(self.tmp, "v.json")
        self.judged(PASS, matrix(), None, "--out", out)
        with open(out, encoding="utf-8") as handle:
            noted = [item["version"] for item in json.load(handle)["synthetic"]]
        self.assertEqual(noted, ["1.13.1", "2.6.0", "2.14.1"])


class StoppedBySigterm(unittest.TestCase):
    def test_a_sigterm_while_loading_is_exit_3_and_says_so(self):
        # kills reports/torchplace/matrix/gate.py:main:fcc0dd:delete_stmt:0 (stopped silently)
        stopped = schema.Terminated("stopped by signal 15 (SIGTERM)")
        stderr = io.StringIO()
        with mock.patch.object(matrix_gate.data, "load_matrix", side_effect=stopped):
            with contextlib.redirect_stderr(stderr), mock.patch("signal.signal"):
                code = matrix_gate.main(["gate", "synthetic-matrix.json"])
        self.assertEqual(code, INPUT)
        self.assertIn("matrix gate: stopped by SIGTERM; nothing judged (exit 3)", stderr.getvalue())

    def test_a_sigterm_to_the_command_is_a_clean_exit_3(self):
        # kills reports/torchplace/matrix/gate.py:main:49be15:delete_stmt:0 (no handler: the
        # process died of the signal, saying nothing). The input is a FIFO nobody writes, so
        # the gate waits in it until the signal comes.
        with tempfile.TemporaryDirectory() as folder:
            fifo = os.path.join(folder, "matrix.json")
            os.mkfifo(fifo)
            child = subprocess.Popen(
                [sys.executable, "-m", "torchplace.matrix.gate", fifo],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            writer = None
            deadline = time.monotonic() + 30  # s: for the child to open the FIFO
            while writer is None and time.monotonic() < deadline and child.poll() is None:
                try:  # succeeds once the child has the FIFO open to read: its handler is set
                    writer = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
                except OSError:
                    time.sleep(0.05)
            child.send_signal(signal.SIGTERM)
            try:
                _, err = child.communicate(timeout=60)
            except subprocess.TimeoutExpired:
                child.kill()
                raise
            finally:
                if writer is not None:
                    os.close(writer)
        self.assertIsNotNone(writer, "the gate never opened its input")
        self.assertEqual(child.returncode, INPUT, err)
        self.assertIn("stopped by SIGTERM", err)


class OutFolder(MatrixGateCase):
    def test_out_into_a_folder_not_there_yet(self):
        target = os.path.join(self.tmp, "not", "yet", "matrix-gate.json")
        self.judged(PASS, matrix(), None, "--out", target)
        self.assertTrue(os.path.isfile(target))

    def test_out_that_cannot_be_written(self):
        blocker = os.path.join(self.tmp, "a_file")
        open(blocker, "w").close()
        self.judged(INPUT, matrix(), "cannot write", "--out", os.path.join(blocker, "v.json"))


if __name__ == "__main__":
    unittest.main()
