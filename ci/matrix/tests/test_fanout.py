#!/usr/bin/env python3
"""The fanned-out matrix (issue 29): columns made by separate invocations in separate folders
(as separate CI jobs or machines would), copied into one folder, then merged and gated by
`ci/torchplace matrix --merge-only`. A missing or unreadable column fails closed (exit 3, named).
The columns are synthetic (test_matrix.write_column); no root is built."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
TORCHPLACE = os.path.join(REPO, "ci", "torchplace")
FIX = "s/variant=manual_to/device=cpu"

# One column, made by its own Python process into its own folder: the synthetic column, then its
# root label recorded in run.json exactly as ci/matrix/columns.sh records it.
MAKE_COLUMN = """
import sys
from test_matrix import cell, write_column
write_column(sys.argv[1], sys.argv[2], "ok", [cell({fix!r}, status=sys.argv[4])])
"""


def make_column(folder: str, version: str, root: str, status: str = "pass") -> str:
    """Makes OUT/<version>/ in `folder` by two separate invocations; returns the column's path."""
    code = MAKE_COLUMN.format(fix=FIX)
    # test_matrix (beside this file) through PYTHONPATH, as every import of the package goes
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([HERE, os.environ.get("PYTHONPATH", "")]))
    subprocess.run([sys.executable, "-c", code, folder, version, root, status], check=True, env=env)
    column = os.path.join(folder, version)
    record_prepare(column, "status=ok", "root_cached=1", f"root={root}")
    return column


def record_prepare(column, *fields):
    """The column's prepare step into its run.json, as the column scripts record it."""
    run_json = os.path.join(column, "run.json")
    command = [sys.executable, "-m", "torchplace.run_record", run_json, "prepare", *fields]
    subprocess.run(command, check=True)


# The real column step (tp_matrix_column in ci/matrix/columns.sh), on the host branch, with fakes:
# the host counts as Debian 12 with 1.13.1, nothing is installed, and build_and_run.sh is a fake
# that leaves a synthetic column. What is real: the step's folder handling and its run.json record.
COLUMN_STEP = """
set -euo pipefail
source "$FAKE/ci/lib/common.sh"  # copies of ci/lib and ci/matrix: TP_ROOT is the fake tree
source "$FAKE/ci/matrix/roots.sh"
source "$FAKE/ci/matrix/columns.sh"
tp_matrix_on_host() {{ [[ $1 == 1.13.1 ]]; }}
tp_ensure_deps() {{ :; }}
tp_matrix_column_status() {{ echo faked; }}
tp_matrix_column {version} "$OUT"
"""
FAKE_BUILD_AND_RUN = """#!/bin/bash
# Fake build_and_run.sh <src> <build> <column>: a synthetic column, no build.
set -euo pipefail
tmp=$(mktemp -d)
version=$(basename "$3")
"{python}" -c "{code}" "$tmp" "$version" ok pass
cp -a "$tmp/$version/." "$3/"
rm -rf "$tmp"
"""


def column_step(folder: str, version: str) -> subprocess.CompletedProcess:
    """Runs the real column step with fakes into folder/<version>/."""
    fake = os.path.join(folder, "fake-root")
    for part in ("lib", "matrix"):
        shutil.copytree(os.path.join(REPO, "ci", part), os.path.join(fake, "ci", part))
    script = os.path.join(fake, "ci", "matrix", "build_and_run.sh")
    code = MAKE_COLUMN.format(fix=FIX).replace('"', '\\"')
    with open(script, "w") as handle:
        handle.write(FAKE_BUILD_AND_RUN.format(python=sys.executable, code=code))
    os.chmod(script, 0o755)
    env = dict(os.environ, FAKE=fake, OUT=folder)
    env["PYTHONPATH"] = os.pathsep.join([HERE, os.environ.get("PYTHONPATH", "")])
    return subprocess.run(
        ["bash", "-c", COLUMN_STEP.format(version=version)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


def merge_only(out: str, versions: str, *extra: str) -> subprocess.CompletedProcess:
    # TORCHPLACE_MATRIX_NO_HOST: were the merge to probe this host, 1.13.1 would be "bookworm".
    env = dict(os.environ, TORCHPLACE_NO_INSTALL="1", TORCHPLACE_MATRIX_NO_HOST="1")
    return subprocess.run(
        [
            TORCHPLACE,
            "matrix",
            "--merge-only",
            "--versions",
            versions,
            "--out",
            out,
            "--gate",
            *extra,
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )


class FanOut(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="torchplace-fanout-")
        self.addCleanup(shutil.rmtree, self.tmp)
        self.merged = os.path.join(self.tmp, "merged")
        os.makedirs(self.merged)

    def column_elsewhere(self, version: str, root: str, status: str = "pass") -> None:
        """A column made in its own folder (its own 'machine'), then copied in like an artifact."""
        machine = os.path.join(self.tmp, f"machine-{version}")
        column = make_column(machine, version, root, status)
        shutil.copytree(column, os.path.join(self.merged, version))

    def test_separate_columns_merge_and_gate(self):
        self.column_elsewhere("1.13.1", "gpu-runner-7")
        self.column_elsewhere("2.14.1", "sid")
        run = merge_only(self.merged, "1.13.1,2.14.1")
        self.assertEqual(run.returncode, 0, run.stderr)
        with open(os.path.join(self.merged, "matrix.json")) as handle:
            matrix = json.load(handle)
        # The roots are the columns' own, never the merging host's ("host-bookworm").
        self.assertEqual(
            [(v["version"], v["root"], v["status"]) for v in matrix["versions"]],
            [("1.13.1", "gpu-runner-7", "ok"), ("2.14.1", "sid", "ok")],
        )
        self.assertTrue(os.path.exists(os.path.join(self.merged, "matrix-gate.json")))

    def test_the_column_step_records_its_root_and_the_merge_reads_it(self):
        machine = os.path.join(self.tmp, "machine-a")
        os.makedirs(machine)
        made = column_step(machine, "1.13.1")
        self.assertEqual(made.returncode, 0, made.stderr)
        with open(os.path.join(machine, "1.13.1", "run.json")) as handle:
            self.assertEqual(json.load(handle)["steps"]["prepare"]["root"], "host-bookworm")
        shutil.copytree(os.path.join(machine, "1.13.1"), os.path.join(self.merged, "1.13.1"))
        self.column_elsewhere("2.14.1", "sid")
        run = merge_only(self.merged, "1.13.1,2.14.1")
        self.assertEqual(run.returncode, 0, run.stderr)
        with open(os.path.join(self.merged, "matrix.json")) as handle:
            roots = [v["root"] for v in json.load(handle)["versions"]]
        self.assertEqual(roots, ["host-bookworm", "sid"])

    def test_a_regression_across_separate_columns_is_exit_2(self):
        self.column_elsewhere("1.13.1", "bookworm")
        self.column_elsewhere("2.14.1", "sid", status="fail")
        run = merge_only(self.merged, "1.13.1,2.14.1")
        self.assertEqual(run.returncode, 2, run.stderr)
        self.assertIn(FIX, run.stdout + run.stderr)

    def test_a_missing_column_fails_closed(self):
        self.column_elsewhere("1.13.1", "bookworm")
        run = merge_only(self.merged, "1.13.1,2.14.1")
        self.assertEqual(run.returncode, 3, run.stderr)
        self.assertIn("column 2.14.1 is missing", run.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.merged, "matrix.json")))

    def test_an_unreadable_column_fails_closed(self):
        self.column_elsewhere("1.13.1", "bookworm")
        self.column_elsewhere("2.14.1", "sid")
        with open(os.path.join(self.merged, "2.14.1", "run.json"), "w") as handle:
            handle.write("{ truncated")
        run = merge_only(self.merged, "1.13.1,2.14.1")
        self.assertEqual(run.returncode, 3, run.stderr)
        self.assertIn("2.14.1", run.stderr)

    def test_a_column_without_its_root_label_fails_closed(self):
        self.column_elsewhere("1.13.1", "bookworm")
        os.makedirs(os.path.join(self.tmp, "bare"))
        make_column(os.path.join(self.tmp, "bare"), "2.14.1", "sid")
        column = os.path.join(self.merged, "2.14.1")
        shutil.copytree(os.path.join(self.tmp, "bare", "2.14.1"), column)
        record_prepare(column, "status=ok")
        run = merge_only(self.merged, "1.13.1,2.14.1")
        self.assertEqual(run.returncode, 3, run.stderr)
        self.assertIn("column 2.14.1", run.stderr)

    def test_the_expected_cuda_compile_column_missing_fails_closed(self):
        self.column_elsewhere("1.13.1", "bookworm")
        run = merge_only(self.merged, "1.13.1", "--cuda-compile")
        self.assertEqual(run.returncode, 3, run.stderr)
        self.assertIn("column cuda-2.6.0 is missing", run.stderr)


class Arguments(unittest.TestCase):
    def test_conflicting_modes_are_exit_64(self):
        for args in (["--columns-only", "--merge-only"], ["--merge-only", "--cuda-only"]):
            run = subprocess.run(
                [TORCHPLACE, "matrix", "--versions", "1.13.1", *args],
                capture_output=True,
                text=True,
                timeout=60,
            )
            self.assertEqual(run.returncode, 64, (args, run.stderr))

    def test_merge_only_without_its_folder_is_exit_3(self):
        with tempfile.TemporaryDirectory() as tmp:
            run = merge_only(os.path.join(tmp, "absent"), "1.13.1")
            self.assertEqual(run.returncode, 3, run.stderr)
            self.assertIn("no columns folder", run.stderr)


if __name__ == "__main__":
    unittest.main()
