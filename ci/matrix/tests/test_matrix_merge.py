#!/usr/bin/env python3
"""What a user reads in the merged matrix (torchplace.matrix.merge.merge), in process on
synthetic columns (test_matrix.write_column): each column's entry (root, timings, bench, first
error, problem), which version's verdict lands under which column, the differences flagged, the
compile-only CUDA column kept apart. Written to kill generated mutants of merge.py
(ci/mutation/README.md); the messages and build logs here are hand-made."""
import json
import os
import tempfile
import unittest

from test_matrix import BROKEN, FIX, PLAIN, cell, write_column
from torchplace import schema
from torchplace.matrix import merge


def edit_steps(column, **steps):
    """Replaces or adds steps in the column's run.json (a step None: removed)."""
    path = os.path.join(column, "run.json")
    with open(path) as handle:
        doc = json.load(handle)
    for name, step in steps.items():
        if step is None:
            del doc["steps"][name]
        else:
            doc["steps"][name] = step
    with open(path, "w") as handle:
        json.dump(doc, handle)


class MergeCase(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.out = self.tmp.name

    def column(self, version, status="ok", cells=(), **options):
        write_column(self.out, version, status, cells, **options)
        return os.path.join(self.out, version)


class ColumnEntry(MergeCase):
    def test_a_column_that_ran_names_its_results_timings_and_bench(self):
        column = self.column("2.6.0", cells=[cell(FIX)])
        bench = {"status": "ok", "seconds": 5}
        edit_steps(column, bench=bench, prepare={"status": "ok", "root_cached": 1})
        entry = merge.merge(self.out, [("2.6.0", "trixie")])["versions"][0]
        self.assertEqual(
            (entry["version"], entry["root"], entry["status"]), ("2.6.0", "trixie", "ok")
        )
        self.assertEqual(entry["results"], "2.6.0/results.json")
        self.assertEqual(entry["fingerprint"]["libtorch_version"], "2.6.0")
        self.assertEqual(entry["timings_s"], {"build": 10, "run": 7})  # scenarios 2 + bench 5
        self.assertIs(entry["root_cached"], True)
        self.assertEqual((entry["scenarios_exit"], entry["bench"]), (0, "ok"))
        self.assertNotIn("bench_note", entry)  # the bench ran: nothing to explain
        self.assertEqual(entry["unit"]["status"], "ok")
        self.assertIsNone(entry["problem"])

    def test_an_absent_bench_says_why_or_that_there_was_none(self):
        column = self.column("2.6.0", cells=[cell(FIX)])
        entry = merge.merge(self.out, [("2.6.0", "t")])["versions"][0]
        self.assertEqual((entry["bench"], entry["bench_note"]), ("absent", "no torchplace_bench"))
        self.assertEqual(entry["timings_s"]["run"], 2)  # the scenarios' 2 s, no bench seconds
        edit_steps(column, bench=None, prepare={"status": "ok"})  # nor whether its root was cached
        entry = merge.merge(self.out, [("2.6.0", "t")])["versions"][0]
        self.assertEqual(entry["bench_note"], "no benchmark pass in this column")
        self.assertIs(entry["root_cached"], False)

    def test_a_column_that_did_not_build_has_no_results_and_no_run_time(self):
        for status in ("build_failed", "compiled"):
            with self.subTest(status=status), tempfile.TemporaryDirectory() as out:
                log = "[ 50%] Building\nld: undefined reference to `at::empty'\n"
                write_column(out, "2.6.0", status, build_log=log)
                entry = merge.merge(out, [("2.6.0", "t")])["versions"][0]
                self.assertEqual(entry["status"], status)
                self.assertEqual(entry["first_error"], "ld: undefined reference to `at::empty'")
                self.assertEqual(entry["timings_s"], {"root": 31, "install": 55, "build": 10})
                self.assertEqual([entry[k] for k in ("results", "fingerprint", "unit")], [None] * 3)
                self.assertIsNone(entry["scenarios_exit"])

    def test_no_error_line_or_no_build_log_is_no_first_error(self):
        column = self.column("2.6.0", "build_failed", build_log="make: *** [all] Stop.\n")
        self.assertIsNone(merge.merge(self.out, [("2.6.0", "t")])["versions"][0]["first_error"])
        os.unlink(os.path.join(column, "build.log"))
        self.assertIsNone(merge.merge(self.out, [("2.6.0", "t")])["versions"][0]["first_error"])

    def test_each_kind_of_first_error_is_found(self):
        for line in (
            "a.cpp:1: error: x",
            "CMake Error at a.txt:3",
            "LINK : fatal error LNK1104 cannot open torch.lib",  # no "error:" in it
            "x.o: undefined reference to `f'",
        ):
            with self.subTest(line=line):
                self.assertEqual(merge.first_error(f"note: fine\n  {line}  \nlater\n"), line)

    def test_a_crashed_column_missing_cells_keeps_its_crash_as_the_problem(self):
        self.column("1.13.1", cells=[cell(FIX), cell(PLAIN)])
        self.column("2.6.0", cells=[cell(FIX)], scenarios_exit=134)
        versions = merge.merge(self.out, [("1.13.1", "h"), ("2.6.0", "t")])["versions"]
        self.assertEqual(versions[1]["status"], "run_crashed")
        self.assertEqual(versions[1]["missing_cells"], [PLAIN])
        self.assertEqual(
            versions[1]["problem"],
            "the scenario binary exited 134 (0 and 1 are its only verdicts; 6 would be the signal)",
        )

    def test_an_ok_column_missing_cells_names_how_many_and_the_first(self):
        self.column("1.13.1", cells=[cell(FIX), cell(PLAIN), cell(BROKEN)])
        self.column("2.6.0", cells=[cell(FIX)])
        entry = merge.merge(self.out, [("1.13.1", "h"), ("2.6.0", "t")])["versions"][1]
        self.assertEqual(entry["missing_cells"], sorted([PLAIN, BROKEN]))
        self.assertEqual(
            entry["problem"], f"2 cell(s) another column has are absent (first: {BROKEN})"
        )

    def test_an_exit_above_128_names_its_signal_and_128_none(self):
        for code, problem in (
            (128, "exited 128 (0 and 1 are its only verdicts)"),
            (129, "exited 129 (0 and 1 are its only verdicts; 1 would be the signal)"),
        ):
            with self.subTest(code=code), tempfile.TemporaryDirectory() as out:
                write_column(out, "2.6.0", "ok", [cell(FIX)], scenarios_exit=code)
                entry = merge.merge(out, [("2.6.0", "t")])["versions"][0]
                self.assertEqual(entry["problem"], f"the scenario binary {problem}")


class Columns(MergeCase):
    """Which version's verdict lands under which column."""

    def test_each_verdict_lands_under_its_own_version(self):
        latent = cell(
            FIX,
            status="fail",
            outcome="error",
            error_class="DeviceMismatch",
            message="cuda:0 and cpu",
        )
        latent["expected"]["latent"] = True
        self.column("1.13.1", cells=[cell(FIX)])
        self.column("2.6.0", cells=[latent])
        by_version = merge.merge(self.out, [("1.13.1", "h"), ("2.6.0", "t")])["cells"][0][
            "by_version"
        ]
        self.assertEqual(list(by_version), ["1.13.1", "2.6.0"])
        self.assertEqual(
            by_version["2.6.0"],
            {
                "status": "fail",
                "expected_outcome": "success",
                "expected_class": None,
                "latent": True,
                "category": "failed",
                "observed_outcome": "error",
                "observed_class": "DeviceMismatch",
                "message": "cuda:0 and cpu",
                "reason": "loss did not fall",
            },
        )
        self.assertEqual(
            (by_version["1.13.1"]["status"], by_version["1.13.1"]["latent"]), ("pass", False)
        )

    def test_a_column_that_did_not_run_shows_why_in_every_cell(self):
        self.column("1.13.1", cells=[cell(FIX), cell(PLAIN)])
        self.column("2.6.0", "build_failed", build_log="a.cpp:2: error: gone\n")
        self.column("2.14.1", "run_failed")
        matrix = merge.merge(self.out, [("1.13.1", "h"), ("2.6.0", "t"), ("2.14.1", "s")])
        for merged in matrix["cells"]:
            self.assertEqual(
                merged["by_version"]["2.6.0"],
                {
                    "status": "build_failed",
                    "observed_outcome": "not_run",
                    "category": schema.NOT_RUN,
                    "observed_class": None,
                    "message": "a.cpp:2: error: gone",
                },
            )
            self.assertEqual(merged["by_version"]["2.14.1"]["message"], "")
        self.assertEqual([c["id"] for c in matrix["cells"]], [FIX, PLAIN])

    def test_a_cell_only_a_newer_version_has_is_flagged_absent_on_the_older(self):
        self.column("1.13.1", cells=[cell(FIX)])
        self.column("2.6.0", cells=[cell(FIX), cell(PLAIN)])
        matrix = merge.merge(self.out, [("1.13.1", "h"), ("2.6.0", "t")])
        self.assertEqual([c["id"] for c in matrix["cells"]], [FIX, PLAIN])
        self.assertEqual(matrix["cells"][1]["axes"], {"dtype": "float"})
        self.assertEqual({d["id"] for d in matrix["differences"]}, {PLAIN})  # FIX is the same
        found = {d["kind"]: d["versions"] for d in matrix["differences"]}
        self.assertEqual(found["status"], {"1.13.1": "absent", "2.6.0": "pass"})
        self.assertEqual(len(found), len(merge.DIFFERENCE_KINDS))

    def test_the_compile_only_cuda_column_is_kept_apart(self):
        self.column("1.13.1", cells=[cell(FIX)])
        self.column(merge.CUDA_COLUMN, "compiled", build_log="k.cu:1: error: nvcc\n")
        matrix = merge.merge(self.out, [("1.13.1", "h")], require_cuda=True)
        cuda = matrix["cuda_compile"]
        self.assertEqual((cuda["version"], cuda["root"]), (merge.CUDA_COLUMN, "trixie-cuda"))
        self.assertEqual((cuda["status"], cuda["first_error"]), ("compiled", "k.cu:1: error: nvcc"))
        self.assertEqual([v["version"] for v in matrix["versions"]], ["1.13.1"])


if __name__ == "__main__":
    unittest.main()
