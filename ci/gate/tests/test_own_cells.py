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


def merged(cells_dir: Path) -> dict:
    """One torchplace.results/1 document from the cells' files; their fingerprints must agree
    (one binary on one host)."""
    files = sorted(cells_dir.glob("*.json"))
    if not files:
        raise AssertionError(
            f"{cells_dir}: no cell results; the scenario cells did not run (CTest fixture "
            "scenario_cells: run this test through ctest)"
        )
    docs = [schema.load_results(str(path)) for path in files]
    prints = {json.dumps(doc["fingerprint"], sort_keys=True) for doc in docs}
    if len(prints) != 1:
        raise AssertionError(f"{cells_dir}: the cells' fingerprints differ ({len(prints)})")
    cells = [cell for doc in docs for cell in doc["cells"]]
    ids = [cell["id"] for cell in cells]
    if len(ids) != len(set(ids)):
        raise AssertionError(f"{cells_dir}: a cell recorded twice")
    return {"schema": docs[0]["schema"], "fingerprint": docs[0]["fingerprint"], "cells": cells}


class OwnCells(unittest.TestCase):
    def test_the_cells_of_this_host_pass_the_behaviour_gate(self):
        doc = merged(CELLS_DIR)
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
