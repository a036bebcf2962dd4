#!/usr/bin/env python3
"""Tests of the version matrix's merge, gate, status and message corpus (torchplace.matrix.*) on
synthetic columns."""
import contextlib
import io
import json
import os
import subprocess
import sys
import tempfile
import unittest

from torchplace import run_record
from torchplace.matrix import corpus, gate, merge
from torchplace.matrix.summary import render


def command(name, *args):
    """python3 -m torchplace.matrix.<name> args..., its output captured."""
    return subprocess.run(
        [sys.executable, "-m", f"torchplace.matrix.{name}", *args], capture_output=True, text=True
    )


FIX = "s/variant=manual_to/device=cpu"
BROKEN = "s/variant=broken/device=cpu"
PLAIN = "t/dtype=float/device=cpu"  # a scenario without a variant axis
EXPECTED_ERROR = dict(
    outcome="error", error_class="DeviceMismatch", expected="error", expected_class="DeviceMismatch"
)


def cell(
    cell_id,
    status="pass",
    outcome="success",
    error_class=None,
    message="",
    expected="success",
    expected_class=None,
    category=None,
):
    """A results.json cell; its category, unless given, as harness/internal/results.cpp derives
    it."""
    axes = dict(part.split("=", 1) for part in cell_id.split("/")[1:-1])
    expected_category = "expected_error" if expected == "error" else "passed"
    if category is None:
        category = (
            "skipped"
            if status == "skip"
            else "failed"
            if status != "pass"
            else "expected_error"
            if outcome == "error"
            else expected_category
        )
    return {
        "id": cell_id,
        "scenario": cell_id.split("/")[0],
        "axes": axes,
        "device": "cpu",
        "expected": {
            "outcome": expected,
            "error_class": expected_class,
            "note": "",
            "category": expected_category,
        },
        "observed": {"outcome": outcome, "error_class": error_class, "message": message},
        "status": status,
        "category": category,
        "reason": "" if status == "pass" else "loss did not fall",
    }


SYNTHETIC_MARK = (
    "hand-made test data, not a measurement: a matrix column for the matrix's tests "
    "(ci/matrix/tests/test_matrix.py)"
)
NO_EXIT = object()  # a scenarios step that recorded no exit


def fingerprint(version):
    """A CPU-only column's fingerprint, as harness/internal/fingerprint.cpp writes its fields."""
    return {
        "synthetic": SYNTHETIC_MARK,
        "libtorch_version": version,
        "cuda": {"built_with_cuda": False, "available": False, "device_count": 0, "gpus": []},
    }


def write_unit(column, failed=(), step="ok"):
    """The harness unit tests' step and gtest report (unit.json, synthetic: two tests), as
    build_and_run.sh leaves them; step absent: no report, the step says why."""
    if step == "absent":
        return {"status": "absent", "note": "torchplace_harness_tests not built in this tree"}
    names = ["Synthetic.Passes", *failed]
    suites = [
        {
            "name": name.split(".")[0],
            "testsuite": [
                {
                    "name": name.split(".")[1],
                    "status": "RUN",
                    "result": "COMPLETED",
                    **({"failures": [{"failure": "synthetic"}]} if name in failed else {}),
                }
            ],
        }
        for name in names
    ]
    with open(os.path.join(column, "unit.json"), "w") as handle:
        json.dump({"tests": len(names), "testsuites": suites}, handle)
    return {"status": "failed" if failed else step, "exit": 1 if failed else 0}


def write_column(out, version, status, cells=(), build_log="", scenarios_exit=0, unit=()):
    """A column as build_and_run.sh leaves it: run.json (torchplace.run/1), build.log and, when
    the scenarios ran, results.json and the unit tests' report. status: ok, build_failed,
    compiled or run_failed; unit: the unit tests that failed, or "absent" (no unit step)."""
    column = os.path.join(out, version)
    os.makedirs(column)
    steps = {
        "prepare": {"status": "ok", "root_cached": False, "root_seconds": 31, "install_seconds": 55}
    }
    build = {"build_failed": "failed", "compiled": "compiled"}.get(status, "ok")
    steps["build"] = {"status": build, "seconds": 10}
    if build == "ok":
        scenarios = {"status": "ok" if status == "ok" else "no_results", "seconds": 2}
        if scenarios_exit is not NO_EXIT:
            scenarios["exit"] = scenarios_exit
        steps["scenarios"] = scenarios
        steps["bench"] = {"status": "absent", "note": "no torchplace_bench"}
        steps["unit"] = write_unit(column, *(((), "absent") if unit == "absent" else (unit,)))
    with open(os.path.join(column, "run.json"), "w") as handle:
        json.dump({"schema": "torchplace.run/1", "steps": steps}, handle)
    with open(os.path.join(column, "build.log"), "w") as handle:
        handle.write(build_log)
    if status == "ok":
        results = {
            "schema": "torchplace.results/1",
            "fingerprint": fingerprint(version),
            "cells": list(cells),
        }
        with open(os.path.join(column, "results.json"), "w") as handle:
            json.dump(results, handle)


class MergeTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.out = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def test_cells_by_version_and_message_difference(self):
        old_text = "found at least two devices, cuda:0 and cpu! (wrapper__index_select)"
        new_text = "but got index is on cpu (wrapper_CUDA__index_select)"
        write_column(
            self.out,
            "1.13.1",
            "ok",
            [
                cell(FIX),
                cell(
                    BROKEN, "pass", "error", "DeviceMismatch", old_text, "error", "DeviceMismatch"
                ),
            ],
        )
        write_column(
            self.out,
            "2.14.1",
            "ok",
            [
                cell(FIX),
                cell(
                    BROKEN, "pass", "error", "DeviceMismatch", new_text, "error", "DeviceMismatch"
                ),
            ],
        )
        matrix = merge.merge(self.out, [("1.13.1", "host-bookworm"), ("2.14.1", "sid")])
        self.assertEqual(matrix["schema"], "torchplace.matrix/1")
        self.assertEqual([c["id"] for c in matrix["cells"]], [FIX, BROKEN])
        self.assertEqual(matrix["cells"][1]["by_version"]["2.14.1"]["message"], new_text)
        self.assertEqual(
            matrix["differences"],
            [
                {
                    "id": BROKEN,
                    "kind": "message",
                    "versions": {"1.13.1": old_text, "2.14.1": new_text},
                }
            ],
        )
        self.assertEqual(
            matrix["versions"][1]["timings_s"], {"root": 31, "install": 55, "build": 10, "run": 2}
        )

    def test_build_failure_shows_first_compiler_error_and_others_still_report(self):
        log = (
            "[ 10%] Building\n/src/a.cpp:3:1: error: 'foo' was not declared\n"
            "/src/b.cpp:9: error: second\n"
        )
        write_column(self.out, "1.13.1", "ok", [cell(FIX)])
        write_column(self.out, "2.14.1", "build_failed", build_log=log)
        matrix = merge.merge(self.out, [("1.13.1", "host-bookworm"), ("2.14.1", "sid")])
        failed = matrix["versions"][1]
        self.assertEqual(failed["status"], "build_failed")
        self.assertEqual(failed["first_error"], "/src/a.cpp:3:1: error: 'foo' was not declared")
        self.assertEqual(matrix["cells"][0]["by_version"]["1.13.1"]["status"], "pass")
        self.assertEqual(matrix["cells"][0]["by_version"]["2.14.1"]["status"], "build_failed")
        self.assertEqual(matrix["differences"], [])  # only columns that ran are compared

    def test_outcome_and_class_changes_are_both_listed(self):
        write_column(
            self.out,
            "2.6.0",
            "ok",
            [
                cell(
                    BROKEN,
                    "pass",
                    "error",
                    "BackendUnavailable",
                    "a",
                    "error",
                    "BackendUnavailable",
                )
            ],
        )
        write_column(
            self.out,
            "2.14.1",
            "ok",
            [cell(BROKEN, "fail", "success", None, "", "error", "BackendUnavailable")],
        )
        matrix = merge.merge(self.out, [("2.6.0", "trixie"), ("2.14.1", "sid")])
        kinds = [d["kind"] for d in matrix["differences"]]
        self.assertEqual(kinds, ["outcome", "category", "status", "error_class", "message"])

    def test_per_run_temporary_folders_are_not_differences(self):
        text = (
            "open file failed because of errno 2 on fopen: , file path: "
            "/tmp/torchplace-ck-{}-3/a.pt"
        )
        write_column(
            self.out,
            "1.13.1",
            "ok",
            [
                cell(
                    BROKEN,
                    "pass",
                    "error",
                    "FileNotFound",
                    text.format(111),
                    "error",
                    "FileNotFound",
                )
            ],
        )
        write_column(
            self.out,
            "2.14.1",
            "ok",
            [
                cell(
                    BROKEN,
                    "pass",
                    "error",
                    "FileNotFound",
                    text.format(222),
                    "error",
                    "FileNotFound",
                )
            ],
        )
        matrix = merge.merge(self.out, [("1.13.1", "host-bookworm"), ("2.14.1", "sid")])
        self.assertEqual(matrix["differences"], [])

    def test_malformed_column_results_exit_3_and_write_nothing(self):
        write_column(self.out, "1.13.1", "ok", [cell(FIX)])
        broken = cell(FIX)
        del broken["observed"]["message"]
        write_column(self.out, "2.14.1", "ok", [broken])
        run = command("merge", self.out, "1.13.1=host-bookworm", "2.14.1=sid")
        self.assertEqual(run.returncode, 3, run.stdout + run.stderr)
        self.assertIn(
            "2.14.1/results.json: cells[0].observed: missing field(s) message", run.stderr
        )
        self.assertFalse(os.path.exists(os.path.join(self.out, "matrix.json")))

    def test_crashed_scenario_binary_makes_the_column_not_ok(self):
        for code, words in (
            (139, "11 would be the signal"),
            (3, "exited 3"),
            (NO_EXIT, "has no exit"),
        ):
            with self.subTest(scenarios_exit=code), tempfile.TemporaryDirectory() as out:
                write_column(out, "1.13.1", "ok", [cell(FIX)], scenarios_exit=code)
                column = merge.merge(out, [("1.13.1", "host-bookworm")])["versions"][0]
                self.assertEqual(column["status"], "run_crashed")
                self.assertIn(words, column["problem"])
                self.assertEqual(merge.merge(out, [("1.13.1", "h")])["cells"][0]["id"], FIX)

    def test_scenario_exit_1_is_a_verdict_not_a_crash(self):
        write_column(self.out, "1.13.1", "ok", [cell(FIX, status="fail")], scenarios_exit=1)
        self.assertEqual(merge.merge(self.out, [("1.13.1", "h")])["versions"][0]["status"], "ok")

    def test_column_lacking_cells_of_another_is_incomplete(self):
        write_column(self.out, "1.13.1", "ok", [cell(FIX), cell(PLAIN)])
        write_column(self.out, "2.14.1", "ok", [cell(FIX)])
        versions = merge.merge(self.out, [("1.13.1", "h"), ("2.14.1", "sid")])["versions"]
        self.assertEqual([v["status"] for v in versions], ["ok", "run_incomplete"])
        self.assertEqual(versions[1]["missing_cells"], [PLAIN])

    def test_command_line_writes_matrix_json_and_md(self):
        text = "expected all tensors on the same device — cuda:0 and cpu"  # kept as UTF-8
        write_column(
            self.out, "1.13.1", "ok", [cell(BROKEN, "pass", message=text, **EXPECTED_ERROR)]
        )
        run = command("merge", self.out, "1.13.1=host-bookworm")
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
        with open(os.path.join(self.out, "matrix.json"), encoding="utf-8") as handle:
            self.assertEqual(json.load(handle)["cells"][0]["by_version"]["1.13.1"]["message"], text)
        self.assertTrue(os.path.exists(os.path.join(self.out, "matrix.md")))


class GateTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.out = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def matrix(self, old_cells, new_cells, new_status="ok"):
        write_column(self.out, "1.13.1", "ok", old_cells)
        write_column(self.out, "2.14.1", new_status, new_cells, build_log="x.cpp:1: error: boom\n")
        self.matrix_doc = merge.merge(self.out, [("1.13.1", "host-bookworm"), ("2.14.1", "sid")])
        return self.matrix_doc

    def test_fix_that_held_and_now_fails_fails_the_gate(self):
        verdict = gate.gate(self.matrix([cell(FIX)], [cell(FIX, status="fail")]))
        self.assertEqual(verdict["verdict"], "fail")
        self.assertEqual([r["id"] for r in verdict["pairs"][0]["regressions"]], [FIX])

    def test_broken_variant_change_is_reported_not_failed(self):
        old = cell(BROKEN, "pass", "error", "DeviceMismatch", "old text", "error", "DeviceMismatch")
        new = cell(BROKEN, "pass", "error", "DeviceMismatch", "new text", "error", "DeviceMismatch")
        verdict = gate.gate(self.matrix([old, cell(FIX)], [new, cell(FIX)]))
        self.assertEqual(verdict["verdict"], "pass")
        self.assertEqual(
            verdict["pairs"][0]["changes"],
            [{"id": BROKEN, "kind": "message", "old": "old text", "new": "new text"}],
        )

    def test_expected_error_no_longer_raised_fails_the_gate(self):
        old = cell(BROKEN, "pass", message="found at least two devices", **EXPECTED_ERROR)
        new = cell(BROKEN, "fail", "success", None, "", "error", "DeviceMismatch")
        verdict = gate.gate(self.matrix([old], [new]))
        self.assertEqual(verdict["verdict"], "fail")
        self.assertEqual([r["id"] for r in verdict["pairs"][0]["regressions"]], [BROKEN])
        kinds = [c["kind"] for c in verdict["pairs"][0]["changes"]]
        self.assertEqual(
            kinds, ["observed_outcome", "category", "status", "observed_class", "message"]
        )

    def test_cell_without_variant_axis_that_fails_now_fails_the_gate(self):
        verdict = gate.gate(self.matrix([cell(PLAIN)], [cell(PLAIN, status="fail")]))
        self.assertEqual(verdict["verdict"], "fail")
        self.assertEqual([r["id"] for r in verdict["pairs"][0]["regressions"]], [PLAIN])

    def test_cell_that_now_passes_is_a_change_not_a_regression(self):
        verdict = gate.gate(self.matrix([cell(FIX, status="fail")], [cell(FIX)]))
        self.assertEqual(verdict["verdict"], "pass")
        self.assertEqual(
            [c["kind"] for c in verdict["pairs"][0]["changes"]], ["category", "status"]
        )

    def test_new_version_that_does_not_build_fails_the_gate(self):
        verdict = gate.gate(self.matrix([cell(FIX)], [], new_status="build_failed"))
        self.assertEqual(verdict["verdict"], "fail")
        self.assertEqual(verdict["pairs"][0]["regressions"][0]["detail"], "x.cpp:1: error: boom")

    def test_cell_failing_on_never_held_fails_the_gate(self):
        verdict = gate.gate(
            self.matrix(
                [cell(FIX, status="fail"), cell(PLAIN)], [cell(FIX, status="fail"), cell(PLAIN)]
            )
        )
        self.assertEqual(verdict["verdict"], "fail")
        self.assertEqual([(f["kind"], f["id"]) for f in verdict["failures"]], [("never_held", FIX)])

    def test_cell_failing_on_the_only_version_fails_the_gate(self):
        write_column(self.out, "2.14.1", "ok", [cell(FIX, status="fail")])
        verdict = gate.gate(merge.merge(self.out, [("2.14.1", "sid")]))
        self.assertEqual(verdict["verdict"], "fail")

    def test_crashed_old_column_fails_the_gate(self):
        write_column(self.out, "1.13.1", "ok", [cell(FIX)], scenarios_exit=134)
        write_column(self.out, "2.14.1", "ok", [cell(FIX)])
        verdict = gate.gate(merge.merge(self.out, [("1.13.1", "h"), ("2.14.1", "sid")]))
        self.assertEqual(verdict["verdict"], "fail")
        self.assertEqual(
            [(f["kind"], f["status"]) for f in verdict["failures"]], [("column", "run_crashed")]
        )

    def test_new_column_lacking_cells_fails_the_gate(self):
        verdict = gate.gate(self.matrix([cell(FIX), cell(PLAIN)], [cell(FIX)]))
        self.assertEqual(verdict["verdict"], "fail")
        self.assertEqual([f["status"] for f in verdict["failures"]], ["run_incomplete"])

    def test_race_shown_then_not_shown_fails_the_gate(self):
        race = "p/case=d2h_unsynchronized/device=cpu"
        verdict = gate.gate(
            self.matrix(
                [cell(race, category="race_shown")], [cell(race, category="race_not_shown")]
            )
        )
        self.assertEqual(verdict["verdict"], "fail")
        self.assertEqual(
            verdict["pairs"][0]["regressions"],
            [
                {
                    "id": race,
                    "old": "race_shown",
                    "new": "race_not_shown",
                    "detail": "no longer evidence",
                }
            ],
        )

    def test_evidence_then_skipped_fails_the_gate(self):
        sim = "amp/variant=grad_scaler/device=sim:0"
        verdict = gate.gate(self.matrix([cell(sim)], [cell(sim, status="skip")]))
        self.assertEqual(verdict["verdict"], "fail")
        [regression] = verdict["pairs"][0]["regressions"]
        self.assertEqual((regression["old"], regression["new"]), ("passed", "skipped"))
        self.assertIn("skipped where the older version proved it", regression["detail"])

    def test_skipped_then_evidence_is_a_change_not_a_regression(self):
        sim = "amp/variant=grad_scaler/device=sim:0"
        verdict = gate.gate(self.matrix([cell(sim, status="skip")], [cell(sim)]))
        self.assertEqual(verdict["verdict"], "pass")

    def test_unexercised_on_both_is_a_pass_and_shows_in_the_summary(self):
        verdict = gate.gate(
            self.matrix(
                [cell(FIX, category="ran_unexercised")], [cell(FIX, category="ran_unexercised")]
            )
        )
        self.assertEqual(verdict["verdict"], "pass")
        text = render(self.matrix_doc)
        self.assertIn(f"| {FIX} | pass ran_unexercised | pass ran_unexercised |", text)

    def test_column_results_without_category_exit_3(self):
        bad = cell(FIX)
        del bad["category"]
        write_column(self.out, "1.13.1", "ok", [bad])
        with self.assertRaises(merge.data.InputError) as raised:
            merge.merge(self.out, [("1.13.1", "host-bookworm")])
        self.assertIn("cells[0]: missing field(s) category", str(raised.exception))

    def test_command_line_exit_codes(self):
        matrix = self.matrix([cell(FIX)], [cell(FIX, status="fail")])
        path = os.path.join(self.out, "matrix.json")
        with open(path, "w") as handle:
            json.dump(matrix, handle)
        run = command("gate", path, "--out", path + ".gate")
        self.assertEqual(run.returncode, 2, run.stdout + run.stderr)
        self.assertIn(f"REGRESSED {FIX}", run.stdout)
        with open(path + ".gate", encoding="utf-8") as handle:
            self.assertEqual(json.load(handle)["verdict"], "fail")
        missing = command("gate", os.path.join(self.out, "nope.json"))
        self.assertEqual(missing.returncode, 3)
        self.assertIn("nope.json does not exist", missing.stderr)

    def test_malformed_matrix_exits_3_with_the_missing_field(self):
        matrix = self.matrix([cell(FIX)], [cell(FIX)])
        del matrix["cells"][0]["by_version"]["2.14.1"]["status"]
        path = os.path.join(self.out, "matrix.json")
        with open(path, "w") as handle:
            json.dump(matrix, handle)
        run = command("gate", path)
        self.assertEqual(run.returncode, 3, run.stdout + run.stderr)
        self.assertIn("cells[0].by_version['2.14.1']: missing field(s) status", run.stderr)


class CorpusTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.out = self.tmp.name
        self.corpus = os.path.join(self.out, "corpus.json")
        write_column(
            self.out,
            "1.13.1",
            "ok",
            [
                cell(
                    BROKEN,
                    "pass",
                    message="two devices — /tmp/torchplace-ck-7-1/a.pt",
                    **EXPECTED_ERROR,
                )
            ],
        )
        matrix = merge.merge(self.out, [("1.13.1", "host-bookworm")])
        with open(os.path.join(self.out, "matrix.json"), "w") as handle:
            json.dump(matrix, handle)

    def tearDown(self):
        self.tmp.cleanup()

    def write_probe(self, observations):
        with open(os.path.join(self.out, "1.13.1", "messages.json"), "w") as handle:
            json.dump({"schema": "torchplace.messages/1", "observations": observations}, handle)

    def test_folds_cells_and_probes_with_masked_folders(self):
        self.write_probe(
            [
                {
                    "probe": "p",
                    "expected_class": "FileNotFound",
                    "outcome": "error",
                    "message": "no file",
                },
                {"probe": "q", "expected_class": "DtypeMismatch", "outcome": "success"},
            ]
        )
        self.assertEqual(corpus.main(["corpus.py", self.out, self.corpus]), 0)
        with open(self.corpus, encoding="utf-8") as handle:
            entries = json.load(handle)["entries"]
        self.assertEqual(
            [(e["source"], e["message"]) for e in entries],
            [("cell:" + BROKEN, "two devices — <tmp>/a.pt"), ("probe:p", "no file")],
        )

    def test_a_probe_file_without_observations_is_bad_input(self):
        with open(os.path.join(self.out, "1.13.1", "messages.json"), "w") as handle:
            json.dump({"schema": "torchplace.messages/1"}, handle)  # synthetic: no observations
        with contextlib.redirect_stderr(io.StringIO()) as stderr:
            self.assertEqual(corpus.main(["corpus.py", self.out, self.corpus]), 3)
        self.assertIn("messages.json: missing field(s) observations", stderr.getvalue())
        self.assertFalse(os.path.exists(self.corpus), "the corpus is left as it was")

    def test_only_cells_that_passed_are_folded(self):
        wrong = "mat1 and mat2 shapes cannot be multiplied (4x8 and 16x2)"
        write_column(
            self.out,
            "2.14.1",
            "ok",
            [cell(BROKEN, "fail", "error", "Unclassified", wrong, "error", "DeviceMismatch")],
        )
        matrix = merge.merge(self.out, [("1.13.1", "host-bookworm"), ("2.14.1", "sid")])
        with open(os.path.join(self.out, "matrix.json"), "w") as handle:
            json.dump(matrix, handle)
        self.assertEqual(corpus.main(["corpus.py", self.out, self.corpus]), 0)
        with open(self.corpus, encoding="utf-8") as handle:
            entries = json.load(handle)["entries"]
        self.assertEqual([e["version"] for e in entries], ["1.13.1"])

    def test_public_reports_with_an_unstated_version_are_kept_and_sorted_after(self):
        public = {
            "version": "unstated",
            "source": "https://github.com/o/r/issues/1",
            "message": "synthetic test entry",
            "expected_class": "DeviceMismatch",
        }
        with open(self.corpus, "w") as handle:
            json.dump({"schema": "torchplace.message_corpus/1", "entries": [public]}, handle)
        self.write_probe(
            [
                {
                    "probe": "p",
                    "expected_class": "FileNotFound",
                    "outcome": "error",
                    "message": "no file",
                }
            ]
        )
        self.assertEqual(corpus.main(["corpus.py", self.out, self.corpus]), 0)
        with open(self.corpus, encoding="utf-8") as handle:
            entries = json.load(handle)["entries"]
        self.assertEqual(
            [(e["source"][:5], e["version"]) for e in entries],
            [("cell:", "1.13.1"), ("https", "unstated"), ("probe", "1.13.1")],
        )
        self.assertLess(corpus.version_order("2.6.0"), corpus.version_order("2.14.1"))
        self.assertLess(corpus.version_order("2.14.1"), corpus.version_order("unstated"))

    def test_malformed_probe_output_exits_3_and_keeps_the_corpus(self):
        with open(self.corpus, "w") as handle:
            handle.write('{"schema": "torchplace.message_corpus/1", "entries": []}\n')
        self.write_probe([{"probe": "p", "expected_class": "FileNotFound", "outcome": "error"}])
        self.assertEqual(corpus.main(["corpus.py", self.out, self.corpus]), 3)
        with open(self.corpus, encoding="utf-8") as handle:
            self.assertEqual(json.load(handle)["entries"], [])


class ComparableTest(unittest.TestCase):
    """Messages are compared with what differs on every run masked, and nothing else."""

    MISSING = (
        "open file failed because of errno 2 on fopen: No such file or directory, file path: "
        "/tmp/torchplace-checkpoint_map_location_case_missing_file_device_cpu-{pid}-{n}/absent.pt"
    )

    def test_temporary_paths_process_ids_and_addresses_are_masked(self):
        first = self.MISSING.format(pid=4242, n=7) + " (pid 4242, at 0x7f3a2b1c9d40)"
        second = self.MISSING.format(pid=913, n=12) + " (pid 913, at 0x55d0e1f2a3b4)"
        self.assertNotEqual(first, second)
        self.assertEqual(merge.comparable(first), merge.comparable(second))
        self.assertIn(
            "file path: <tmp>/absent.pt (pid <id>, at 0x<address>)", merge.comparable(first)
        )

    def test_a_wording_change_still_shows(self):
        old = self.MISSING.format(pid=1, n=1)
        new = old.replace("No such file or directory", "file not found")
        self.assertNotEqual(merge.comparable(old), merge.comparable(new))

    def test_a_path_outside_the_temporary_folder_still_shows(self):
        self.assertNotEqual(
            merge.comparable("file path: /data/a.pt"), merge.comparable("file path: /data/b.pt")
        )


class RunRecordTest(unittest.TestCase):
    """run.json, the one file a column writes about its steps (torchplace.run_record)."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.path = os.path.join(self.tmp.name, "run.json")

    def record(self, *args):
        return subprocess.run(
            [sys.executable, "-m", "torchplace.run_record", self.path, *args],
            capture_output=True,
            text=True,
        )

    def test_steps_merge_with_typed_values(self):
        self.assertEqual(self.record("build", "status=ok", "seconds=12").returncode, 0)
        self.assertEqual(
            self.record(
                "scenarios", "status=crashed", "exit=139", "seconds=1.5", "cached=true", "note=a b"
            ).returncode,
            0,
        )
        with open(self.path) as handle:
            doc = json.load(handle)
        self.assertEqual(
            doc,
            {
                "schema": "torchplace.run/1",
                "steps": {
                    "build": {"status": "ok", "seconds": 12},
                    "scenarios": {
                        "status": "crashed",
                        "exit": 139,
                        "seconds": 1.5,
                        "cached": True,
                        "note": "a b",
                    },
                },
            },
        )

    def test_bad_arguments_exit_64_and_write_nothing(self):
        for args in (["build", "seconds=1"], ["build", "status"], ["Build", "status=ok"], ["x"]):
            with self.subTest(args=args):
                self.assertEqual(self.record(*args).returncode, 64)
                self.assertFalse(os.path.exists(self.path))

    def test_a_file_of_another_kind_is_left_as_it_is(self):
        with open(self.path, "w") as handle:
            handle.write('{"schema": "torchplace.results/1", "cells": []}')
        run = self.record("build", "status=ok")
        self.assertEqual(run.returncode, 3, run.stderr)
        self.assertIn("run.json: missing field(s) steps", run.stderr)
        with open(self.path) as handle:
            self.assertIn("results/1", handle.read())

    def test_parse_fields_needs_a_status(self):
        with self.assertRaises(ValueError):
            run_record.parse_fields(["seconds=3"])


class ColumnStatusTest(unittest.TestCase):
    """A column's status comes from its run.json; what it lacks is not ok."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.out = self.tmp.name

    def test_no_results_is_run_failed(self):
        write_column(self.out, "1.13.1", "run_failed")
        entry = merge.merge(self.out, [("1.13.1", "h")])["versions"][0]
        self.assertEqual(entry["status"], "run_failed")

    def test_no_run_record_is_run_failed_even_with_results(self):
        write_column(self.out, "1.13.1", "ok", [cell(FIX)])
        os.unlink(os.path.join(self.out, "1.13.1", "run.json"))
        self.assertEqual(
            merge.merge(self.out, [("1.13.1", "h")])["versions"][0]["status"], "run_failed"
        )

    def test_malformed_run_record_exits_3(self):
        write_column(self.out, "1.13.1", "ok", [cell(FIX)])
        with open(os.path.join(self.out, "1.13.1", "run.json"), "w") as handle:
            handle.write('{"schema": "torchplace.run/1", "steps": {"build": {"seconds": 3}}}')
        run = command("merge", self.out, "1.13.1=h")
        self.assertEqual(run.returncode, 3, run.stderr)
        self.assertIn("steps.build: missing field(s) status", run.stderr)

    def test_a_column_that_ran_no_cells_is_not_ok(self):
        write_column(self.out, "1.13.1", "ok", [])
        entry = merge.merge(self.out, [("1.13.1", "h")])["versions"][0]
        self.assertEqual(entry["status"], "run_incomplete")
        self.assertIn("ran no cells", entry["problem"])

    def test_status_of_one_column(self):
        write_column(self.out, "2.6.0", "compiled")
        run = command("merge", "--status", os.path.join(self.out, "2.6.0"))
        self.assertEqual((run.returncode, run.stdout.strip()), (0, "compiled"), run.stderr)


if __name__ == "__main__":
    unittest.main()
