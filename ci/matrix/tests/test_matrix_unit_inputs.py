#!/usr/bin/env python3
"""The matrix's unit rule against inputs on which the merge and gate passed (or crashed) although
a column's harness unit tests did not all run and pass: an adversarial review's finds (each was
red on the first version of torchplace/matrix/unit.py). The build_and_run.sh tests run the real
script with fakes around it (cmake, `ci/torchplace run`, a synthetic unit binary)."""
import json
import os
import shutil
import stat
import subprocess
import tempfile
import unittest

from test_matrix import FIX, cell, fingerprint, write_column
from torchplace import schema
from torchplace.matrix import gate, merge
from torchplace.matrix.unit import column_unit

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
VERSIONS = [("1.13.1", "host-bookworm"), ("2.14.1", "sid")]


def test_entry(name, result="COMPLETED", status="RUN", failures=None):
    entry = {"name": name, "status": status, "result": result}
    if failures:
        entry["failures"] = [{"failure": "synthetic"}]
    return entry


def gtest_report(*suites):
    """suites: (name, [test entries])."""
    return {"testsuites": [{"name": name, "testsuite": list(tests)} for name, tests in suites]}


def write(path, text, mode=None):
    with open(path, "w") as handle:
        handle.write(text)
    if mode:
        os.chmod(path, mode)


EXEC = stat.S_IRWXU | stat.S_IRGRP | stat.S_IXGRP | stat.S_IROTH | stat.S_IXOTH

# A fake gtest binary: three tests pass; GTEST_FILTER / GTEST_TOTAL_SHARDS in its environment
# select one of them, as gtest does; FAKE_UNIT_NO_REPORT=1: it exits 0 before writing its report
# (a test or library calling exit(0)).
FAKE_UNIT = r"""#!/usr/bin/env python3
import json, os, sys
if os.environ.get("FAKE_UNIT_NO_REPORT") == "1":
    sys.exit(0)
names = ["Sim.A", "Sim.B", "Sim.C"]
if os.environ.get("GTEST_FILTER") or os.environ.get("GTEST_TOTAL_SHARDS"):
    names = names[:1]
path = next(a for a in sys.argv[1:] if a.startswith("--gtest_output=json:"))[20:]
suites = [{"name": "Sim", "testsuite": [{"name": n[4:], "status": "RUN", "result": "COMPLETED"}
                                        for n in names]}]
json.dump({"tests": len(names), "testsuites": suites}, open(path, "w"))
"""


class BuildAndRunUnitStep(unittest.TestCase):
    """ci/matrix/build_and_run.sh's unit step, the real script with fakes around it: cmake that
    builds nothing, a `ci/torchplace run` that writes a synthetic run.json and results.json, and
    the fake unit binary above."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        base = self.tmp.name
        self.src = os.path.join(base, "src")
        os.makedirs(os.path.join(self.src, "ci", "lib"))
        os.makedirs(os.path.join(self.src, "ci", "matrix"))
        shutil.copy(os.path.join(ROOT, "ci", "lib", "common.sh"), f"{self.src}/ci/lib/")
        shutil.copy(
            os.path.join(ROOT, "ci", "matrix", "build_and_run.sh"), f"{self.src}/ci/matrix/"
        )
        os.symlink(os.path.join(ROOT, "reports"), os.path.join(self.src, "reports"))
        self.bin = os.path.join(base, "bin")
        os.makedirs(self.bin)
        write(os.path.join(self.bin, "cmake"), "#!/bin/sh\nexit 0\n", EXEC)
        write(
            os.path.join(self.src, "ci", "torchplace"),
            '#!/bin/bash\nout=${@: -1}\necho \'{"schema":"torchplace.run/1","steps":{"scenarios":'
            '{"status":"ok","exit":0,"seconds":1}}}\' >"$out/run.json"\n'
            'cp "$FAKE_RESULTS" "$out/results.json"\n',
            EXEC,
        )
        self.out = os.path.join(base, "out")
        self.base = base

    def tearDown(self):
        self.tmp.cleanup()

    def column(self, version, **env):
        build = os.path.join(self.base, f"build-{version}")
        os.makedirs(os.path.join(build, "harness"), exist_ok=True)
        write(os.path.join(build, "harness", "torchplace_harness_tests"), FAKE_UNIT, EXEC)
        results = os.path.join(self.base, f"results-{version}.json")
        with open(results, "w") as handle:
            json.dump(
                {
                    "schema": "torchplace.results/1",
                    "fingerprint": fingerprint(version),
                    "cells": [cell(FIX)],
                },
                handle,
            )
        environment = dict(os.environ, PATH=f"{self.bin}:{os.environ['PATH']}")
        environment.update(FAKE_RESULTS=results, **env)
        script = os.path.join(self.src, "ci", "matrix", "build_and_run.sh")
        done = subprocess.run(
            ["bash", script, self.src, build, os.path.join(self.out, version)],
            env=environment,
            capture_output=True,
            text=True,
        )
        self.assertEqual(done.returncode, 0, done.stderr)

    def verdict(self):
        return gate.gate(merge.merge(self.out, VERSIONS))["verdict"]

    def test_a_stale_unit_json_from_an_earlier_run_is_not_judged(self):
        """Hole: the script removes run.json but not unit.json. A rerun into the same OUT whose
        binary exits 0 without writing a report is judged on the earlier run's report."""
        self.column("1.13.1")
        self.column("2.14.1")
        self.assertEqual(self.verdict(), "pass")
        self.column("2.14.1", FAKE_UNIT_NO_REPORT="1")  # no report this time, exit 0
        self.assertEqual(self.verdict(), "fail", "judged the earlier run's unit.json")

    def test_gtest_filter_in_the_environment_does_not_thin_the_unit_tests(self):
        """Hole: GTEST_FILTER (or GTEST_TOTAL_SHARDS/GTEST_SHARD_INDEX) in the host column's
        environment reaches the binary; 1 test of 3 runs and the gate passes."""
        for variable, value in (("GTEST_FILTER", "Sim.A"), ("GTEST_TOTAL_SHARDS", "3")):
            with self.subTest(variable):
                shutil.rmtree(self.out, ignore_errors=True)
                self.column("1.13.1")
                extra = {variable: value}
                if variable == "GTEST_TOTAL_SHARDS":
                    extra["GTEST_SHARD_INDEX"] = "0"
                self.column("2.14.1", **extra)
                unit = merge.merge(self.out, VERSIONS)["versions"][1]["unit"]
                self.assertEqual(unit["ran"], 3, f"{variable} thinned 2.14.1's unit tests")
                self.assertEqual(self.verdict(), "pass")


class UnitTestsThatVanish(unittest.TestCase):
    """Tests that ran on one column and not on another: nothing compares the columns."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.out = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def test_tests_skipped_on_the_newer_version_only_fail_the_gate(self):
        """Hole: 2.14.1 GTEST_SKIPs 99 of the 100 tests 1.13.1 ran (exit 0): gate pass. The cells
        get exactly this rule ("skipped where the older version proved it"); the unit tests not."""
        write_column(self.out, "1.13.1", "ok", [cell(FIX)])
        write_column(self.out, "2.14.1", "ok", [cell(FIX)])
        tests = [test_entry(f"T{i:02d}") for i in range(100)]
        with open(os.path.join(self.out, "1.13.1", "unit.json"), "w") as handle:
            json.dump(gtest_report(("Sim", tests)), handle)
        skipped = [tests[0]] + [test_entry(t["name"], "SKIPPED") for t in tests[1:]]
        with open(os.path.join(self.out, "2.14.1", "unit.json"), "w") as handle:
            json.dump(gtest_report(("Sim", skipped)), handle)
        self.assertEqual(gate.gate(merge.merge(self.out, VERSIONS))["verdict"], "fail")


class ReportShapes(unittest.TestCase):
    """column_unit on reports that are not gtest's: a failed entry, never a pass or a traceback."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.tmp.cleanup()

    def entry(self, doc):
        with open(os.path.join(self.tmp.name, "unit.json"), "w") as handle:
            json.dump(doc, handle)
        return column_unit(self.tmp.name, {"unit": {"status": "ok", "exit": 0}})

    def test_malformed_shapes_are_a_failed_entry_not_a_traceback(self):
        """Hole: TypeError/AttributeError escape column_unit; `matrix.merge` exits 1 with a
        traceback (its contract: 3 for a malformed input, naming it)."""
        shapes = (
            {"testsuites": [{"name": "A", "testsuite": None}]},
            {"testsuites": ["A"]},
            {"testsuites": [{"name": "A", "testsuite": ["x"]}]},
            {"testsuites": [{"name": "A", "testsuite": {"name": "x"}}]},
        )
        for doc in shapes:
            with self.subTest(doc=doc):
                self.assertEqual(self.entry(doc)["status"], "failed")

    def test_a_suite_without_its_tests_list_is_not_a_pass(self):
        """Hole: a suite with no "testsuite" key counts as zero tests; with one other test
        passing the entry is ok."""
        doc = gtest_report(("A", [test_entry("x")]))
        doc["testsuites"].append({"name": "B", "tests": 50, "failures": 3})
        self.assertEqual(self.entry(doc)["status"], "failed")

    def test_counts_that_contradict_the_tests_are_not_a_pass(self):
        """Hole: top-level/suite "failures" are ignored; an unknown result counts as passed."""
        doc = gtest_report(("A", [test_entry("x")]))
        doc["testsuites"][0]["failures"] = 2
        doc["failures"] = 2
        self.assertEqual(self.entry(doc)["status"], "failed")
        doc = gtest_report(("A", [test_entry("x", result="CRASHED")]))
        self.assertEqual(self.entry(doc)["status"], "failed")


class GateOnMatrixDocuments(unittest.TestCase):
    """The gate trusts matrix.json's unit entries: load_matrix checks none of their fields."""

    def matrix(self, unit):
        versions = []
        for version in ("1.13.1", "2.14.1"):
            versions.append(
                {
                    "version": version,
                    "status": "ok",
                    "fingerprint": fingerprint(version),
                    "unit": {"status": "ok", "ran": 3, "failed": []},
                }
            )
        versions[1]["unit"] = unit
        entry = {"status": "pass", "observed_outcome": "success", "category": "passed"}
        cells = [
            {
                "id": FIX,
                "scenario": "s",
                "axes": {},
                "device": "cpu",
                "by_version": {"1.13.1": entry, "2.14.1": entry},
            }
        ]
        return {"schema": schema.MATRIX_SCHEMA, "versions": versions, "cells": cells}

    def test_an_ok_unit_entry_that_contradicts_itself_is_not_a_pass(self):
        """Hole: {"status": "ok"} with no test run, or naming a failed test, passes the gate."""
        for unit in (
            {"status": "ok"},
            {"status": "ok", "ran": 0, "failed": []},
            {"status": "ok", "ran": 3, "failed": ["Sim.A"]},
        ):
            with self.subTest(unit=unit):
                try:
                    verdict = gate.gate(self.matrix(unit))["verdict"]
                except schema.InputError:
                    continue  # exit 3: fine
                self.assertEqual(verdict, "fail")

    def test_a_malformed_unit_entry_is_an_input_error_naming_it(self):
        """Low: a unit entry that is a string, lacks status or names non-strings raises
        TypeError/KeyError; the CLI turns it into a vague "tool error" exit 3."""
        for unit in (
            "ok",
            {"ran": 3},
            {"status": "failed", "failed": [1]},
            {"status": "failed", "failed": [], "tests": ["Sim.A"]},
        ):
            with self.subTest(unit=unit):
                with self.assertRaises(schema.InputError):
                    gate.gate(self.matrix(unit))

    def test_a_column_that_did_not_run_is_the_column_rule_s_alone(self):
        doc = self.matrix(None)
        doc["versions"][1]["status"] = "build_failed"
        doc["cells"][0]["by_version"]["2.14.1"] = {"status": "build_failed"}
        verdict = gate.gate(doc)
        self.assertEqual([f["kind"] for f in verdict["failures"]], ["column"])


if __name__ == "__main__":
    unittest.main()
