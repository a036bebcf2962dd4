#!/usr/bin/env python3
"""The fanned-out matrix in ci/workflows/torchplace.yml (issue 29): the column list is data
(ci/matrix/columns.json) printed as JSON for strategy.matrix; one job per column uploads its
folder; the merge job needs every column, runs when one failed, and merges with --merge-only
--gate. The list-making step's own script is run here and its outputs checked."""
import json
import os
import re
import subprocess
import tempfile
import unittest

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
WORKFLOW = os.path.join(REPO, "ci", "workflows", "torchplace.yml")


def known_versions() -> "list[str]":
    """The versions ci/matrix/roots.sh knows (TP_MATRIX_SUITES)."""
    with open(os.path.join(REPO, "ci", "matrix", "roots.sh"), encoding="utf-8") as handle:
        line = next(text for text in handle if "TP_MATRIX_SUITES=" in text)
    return re.findall(r"\[([0-9.]+)\]=", line)


class Workflow(unittest.TestCase):
    def setUp(self):
        with open(WORKFLOW, encoding="utf-8") as handle:
            self.jobs = yaml.safe_load(handle)["jobs"]

    def list_outputs(self) -> "dict[str, str]":
        """Runs the matrix-columns job's step (a python heredoc) and reads its GITHUB_OUTPUT."""
        step = next(s for s in self.jobs["matrix-columns"]["steps"] if s.get("id") == "list")
        with tempfile.NamedTemporaryFile("r", suffix=".out") as output:
            env = dict(os.environ, GITHUB_OUTPUT=output.name)
            run = subprocess.run(
                ["bash", "-e", "-c", step["run"]],
                cwd=REPO,
                env=env,
                capture_output=True,
                text=True,
                timeout=60,
            )
            self.assertEqual(run.returncode, 0, run.stderr)
            lines = output.read().splitlines()
        return dict(line.split("=", 1) for line in lines)

    def test_the_column_list_is_data_for_strategy_matrix(self):
        outputs = self.list_outputs()
        columns = json.loads(outputs["columns"])["include"]
        self.assertGreaterEqual(len(columns), 2)
        for column in columns:
            self.assertIn(column["libtorch"], known_versions())
            self.assertEqual(set(column), {"libtorch", "cuda", "runner", "column", "flags"})
        plain = [c["libtorch"] for c in columns if c["cuda"] == "none"]
        self.assertEqual(outputs["versions"], ",".join(plain))
        self.assertEqual(
            outputs["merge_flags"] == "--cuda-compile",
            any(c["cuda"] == "compile-only" for c in columns),
        )
        column_job = self.jobs["matrix-column"]
        self.assertEqual(
            column_job["strategy"]["matrix"],
            "${{ fromJSON(needs.matrix-columns.outputs.columns) }}",
        )
        self.assertIs(column_job["strategy"]["fail-fast"], False)
        self.assertEqual(column_job["runs-on"], "${{ matrix.runner }}")

    def test_each_column_job_makes_and_uploads_one_column(self):
        steps = self.jobs["matrix-column"]["steps"]
        make = next(s for s in steps if "--columns-only" in s.get("run", ""))
        self.assertIn("--versions ${{ matrix.libtorch }}", make["run"])
        upload = next(s for s in steps if s.get("uses", "").startswith("actions/upload-artifact"))
        self.assertEqual(upload["with"]["name"], "torchplace-column-${{ matrix.column }}")
        self.assertEqual(upload["if"], "always()")

    def test_the_merge_job_needs_every_column_and_fails_closed(self):
        merge = self.jobs["matrix"]
        self.assertEqual(set(merge["needs"]), {"matrix-columns", "matrix-column"})
        self.assertIn("always()", merge["if"])  # runs when a column failed: missing -> exit 3
        download = next(
            s for s in merge["steps"] if s.get("uses", "").startswith("actions/download-artifact")
        )
        self.assertEqual(download["with"]["pattern"], "torchplace-column-*")
        self.assertIs(download["with"]["merge-multiple"], True)
        run = next(s["run"] for s in merge["steps"] if "--merge-only" in s.get("run", ""))
        self.assertIn("--gate", run)
        self.assertNotIn("|| true", run)


if __name__ == "__main__":
    unittest.main()
