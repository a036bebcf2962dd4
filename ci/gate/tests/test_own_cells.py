#!/usr/bin/env python3
"""The suite's own scenario cells, as CTest ran them on this host, held to the committed
expectations by the behaviour gate (issue 45): their outcomes, error classes, categories, skip
codes and transfer counts. Each CTest cell wrote its record into CELLS_DIR
(TORCHPLACE_RESULTS_DIR, scenarios/CMakeLists.txt); this test runs after all of them (fixture
scenario_cells), merges the records into one results document and runs the gate on it, so a fix
cell that starts counting like its broken twin (transfers_grew), or a cell whose outcome or class
changed, fails here and not only in `.ci/run`'s matrix gate.

  test_own_cells.py CELLS_DIR [EXPECTATIONS]   (default ci/gate/expectations.json)
"""
import json
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

from torchplace import schema
from torchplace.gate import behaviour

CELLS_DIR = Path(sys.argv[1]) if len(sys.argv) > 1 else Path()
EXPECTATIONS = sys.argv[2] if len(sys.argv) > 2 else behaviour.DEFAULT_EXPECTATIONS


class OwnCells(unittest.TestCase):
    def test_the_cells_of_this_host_pass_the_behaviour_gate(self):
        doc = schema.merge_results(CELLS_DIR)  # InputError: no record, or one bad
        with tempfile.TemporaryDirectory() as run_dir:
            Path(run_dir, "results.json").write_text(json.dumps(doc))
            gate = [sys.executable, "-m", "torchplace.gate", "--results", run_dir]
            done = subprocess.run(
                gate + ["--expectations", EXPECTATIONS], capture_output=True, text=True
            )
        print(f"{len(doc['cells'])} cell(s) from {CELLS_DIR}", file=sys.stderr)
        # the verdict and the regressions come first in the gate's summary
        self.assertEqual(done.returncode, 0, done.stdout[:6000] + done.stderr[-2000:])


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1])
