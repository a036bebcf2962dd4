#!/usr/bin/env python3
"""The report's per-step transfer counts beside each cell (issue 32): the text made from a
cell's transfer.* metrics (torchplace.report.transfer_budget) and its column in "All cells"; and
(issue 43) a passing cell whose transfers grew, as the gate says, shown as a regression by
`report --gate`. The cells here are synthetic, made below, never recorded from a run."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from typing import Any, Optional

from torchplace.report import html_page
from torchplace.report import summary as summary_module
from torchplace.report import transfer_budget

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURE = os.path.join(HERE, "fixtures", "cpu_only")
COMMAND = os.path.join(HERE, "..", "..", "ci", "torchplace")

SYNTHETIC_METRICS = {  # hand-made: the shape of harness/transfer_metrics.h, not a measurement
    "transfer.step.h2d.copies": 2.0,
    "transfer.step.h2d.bytes": 960.0,
    "transfer.step.h2d.non_blocking": 2.0,
    "transfer.step.d2h.copies": 0.0,
    "transfer.step.d2h.bytes": 0.0,
    "transfer.step.d2h.non_blocking": 0.0,
    "transfer.step.sync._local_scalar_dense": 1.0,
    "transfer.step.sync.nonzero": 0.0,
    "transfer.once.d2h.copies": 1.0,
    "transfer.once.d2h.bytes": 1152.0,
    "transfer.once.d2h.non_blocking": 0.0,
    "transfer.once.sync.copy_to_host": 1.0,
}


def synthetic_cell(metrics: dict[str, float]) -> dict[str, Any]:
    return {
        "id": "transfer_budget/case=item_every_step/device=sim:0",
        "expected": {"outcome": "success", "error_class": None},
        "observed": {"outcome": "success", "error_class": None, "message": ""},
        "status": "pass",
        "category": "passed",
        "reason": "synthetic cell (reports/tests/test_transfer_column.py)",
        "metrics": metrics,
    }


class TransferColumn(unittest.TestCase):
    def test_text_per_phase(self) -> None:
        self.assertEqual(
            transfer_budget.cell_text(synthetic_cell(SYNTHETIC_METRICS)),
            "per step: h2d 2 (960 B, 2 non_blocking), syncs 1 (1 _local_scalar_dense); "
            "after the loop: d2h 1 (1152 B, 0 non_blocking), syncs 1 (1 copy_to_host)",
        )

    def test_no_sync_is_syncs_0_and_no_metrics_is_empty(self) -> None:
        quiet = {k: v for k, v in SYNTHETIC_METRICS.items() if "sync" not in k and "step" in k}
        self.assertEqual(
            transfer_budget.cell_text(synthetic_cell(quiet)),
            "per step: h2d 2 (960 B, 2 non_blocking), syncs 0",
        )
        self.assertEqual(transfer_budget.cell_text(synthetic_cell({"other": 1.0})), "")

    def test_a_phase_without_metrics_is_the_empty_string(self) -> None:
        self.assertEqual(transfer_budget.phase_text(SYNTHETIC_METRICS, "epoch"), "")
        self.assertEqual(transfer_budget.phase_text({}, "step"), "")

    def test_a_count_missing_beside_its_copies_reads_0(self) -> None:
        copies_only = {"transfer.step.h2d.copies": 3.0}  # synthetic: bytes, non_blocking left out
        self.assertEqual(
            transfer_budget.phase_text(copies_only, "step"), "h2d 3 (0 B, 0 non_blocking), syncs 0"
        )

    def test_beside_each_cell(self) -> None:
        page = html_page.cells_section({"cells": [synthetic_cell(SYNTHETIC_METRICS)]}, {})
        self.assertIn("<th>transfers (sim, per step)</th>", page)
        self.assertIn("per step: h2d 2 (960 B, 2 non_blocking), syncs 1", page)


class GateRegression(unittest.TestCase):
    """The fixture's run with synthetic transfer counts on one passing cell, its budget refreshed
    by the real gate, then one more .item() per step: the gate says transfers_grew (exit 2) and
    `report --gate` lists the cell as a regression in summary.md and in its status on the page."""

    def setUp(self) -> None:
        self.dir = tempfile.mkdtemp(prefix="tp-report-gate-")
        self.run_dir = os.path.join(self.dir, "run")
        shutil.copytree(FIXTURE, self.run_dir)
        self.results = os.path.join(self.run_dir, "results.json")
        with open(self.results, encoding="utf-8") as handle:
            self.doc = json.load(handle)
        # its passing cells only: the gate refuses its skips, which carry no skip code
        self.doc["cells"] = [c for c in self.doc["cells"] if c["status"] == "pass"]
        self.cell = self.doc["cells"][0]
        self.cell["metrics"] = dict(SYNTHETIC_METRICS)
        self.write()
        self.expectations = os.path.join(self.dir, "expectations.json")
        self.tool(
            "torchplace.gate",
            "--expectations",
            self.expectations,
            "--refresh-expectations",
            self.run_dir,
            code=0,
        )

    def tearDown(self) -> None:
        shutil.rmtree(self.dir)

    def write(self) -> None:
        with open(self.results, "w", encoding="utf-8") as handle:
            json.dump(self.doc, handle)

    def tool(self, module: str, *args: str, code: int) -> str:
        """python -m MODULE ARGS, or the command (ci/torchplace ARGS) when module is None."""
        argv = [COMMAND] if module is None else [sys.executable, "-m", module]
        done = subprocess.run([*argv, *args], capture_output=True, text=True, timeout=300)
        self.assertEqual(done.returncode, code, done.stdout + done.stderr)
        return done.stdout + done.stderr

    def gate(self) -> str:
        """The real gate on the run: exit 2 when a count grew; the path of its gate.json."""
        grew = self.cell["metrics"]["transfer.step.sync._local_scalar_dense"] > 1
        out = os.path.join(self.dir, "gate")
        self.tool(
            "torchplace.gate",
            "--results",
            self.run_dir,
            "--expectations",
            self.expectations,
            "--out",
            out,
            code=2 if grew else 0,
        )
        return os.path.join(out, "gate.json")

    def report(
        self, gate_json: str, module: Optional[str] = "torchplace.report"
    ) -> tuple[str, str]:
        out = os.path.join(self.dir, "report")
        self.tool(
            module,
            *(["report"] if module is None else []),
            self.run_dir,
            "--out",
            out,
            "--gate",
            gate_json,
            code=0,
        )
        with open(os.path.join(out, "summary.md"), encoding="utf-8") as summary:
            with open(os.path.join(out, "index.html"), encoding="utf-8") as page:
                return summary.read(), page.read()

    def bad_gate(self, doc: Any, says: str) -> None:
        bad = os.path.join(self.dir, "bad-gate.json")
        with open(bad, "w", encoding="utf-8") as handle:
            json.dump(doc, handle)
        out = self.tool(
            "torchplace.report",
            self.run_dir,
            "--out",
            os.path.join(self.dir, "r"),
            "--gate",
            bad,
            code=3,
        )
        self.assertIn(says, out)
        self.assertFalse(os.path.exists(os.path.join(self.dir, "r", "index.html")))

    def test_grown_transfers_are_a_regression_in_the_report(self) -> None:
        self.cell["metrics"]["transfer.step.sync._local_scalar_dense"] = 2.0
        self.write()
        summary, page = self.report(self.gate(), module=None)  # through ci/torchplace report
        self.assertIn(f"- **regression** `{self.cell['id']}`: transfers_grew: ", summary)
        self.assertIn("_local_scalar_dense", summary)
        self.assertIn('<span class="bad">regression: transfers_grew</span>', page)

    def test_the_same_counts_are_no_regression(self) -> None:
        summary, page = self.report(self.gate())
        self.assertIn("- Gate: PASS; 0 behaviour regression(s).", summary)
        self.assertNotIn("regression: ", page)

    def test_many_regressions_are_listed_up_to_the_limit_then_counted(self) -> None:
        self.cell["metrics"]["transfer.step.sync._local_scalar_dense"] = 2.0
        self.write()
        gate_json = self.gate()
        with open(gate_json, encoding="utf-8") as handle:
            doc = json.load(handle)
        (grown,) = doc["behaviour"]["regressions"]
        listed = summary_module.MAX_LISTED
        # synthetic: the real regression copied under made-up cell ids, one over the limit, twice
        doc["behaviour"]["regressions"] = [
            dict(grown, id=f"{grown['id']}/copy={n}") for n in range(listed + 2)
        ]
        with open(gate_json, "w", encoding="utf-8") as handle:
            json.dump(doc, handle)
        summary, _ = self.report(gate_json)
        self.assertEqual(summary.count("- **regression** "), listed)
        self.assertIn(f"; {listed + 2} behaviour regression(s).", summary)
        self.assertIn("- … and 2 more regressions", summary)
        doc["behaviour"]["regressions"] = doc["behaviour"]["regressions"][:listed]
        with open(gate_json, "w", encoding="utf-8") as handle:
            json.dump(doc, handle)
        summary, _ = self.report(gate_json)
        self.assertEqual(summary.count("- **regression** "), listed)
        self.assertNotIn("more regressions", summary)

    def test_a_file_that_is_not_a_gate_verdict_is_exit_3(self) -> None:
        self.bad_gate(self.doc, "not a gate verdict (schema torchplace.gate/1)")
        self.bad_gate([], "not a gate verdict (schema torchplace.gate/1)")
        verdict = {"schema": "torchplace.gate/1", "behaviour": {"regressions": {"id": "x"}}}
        self.bad_gate(verdict, "behaviour.regressions is not a list")
        verdict["behaviour"]["regressions"] = [{"id": "x", "detail": "d"}]
        self.bad_gate(verdict, "behaviour.regressions[0]: missing field(s) kind")
        verdict["behaviour"]["regressions"] = [{"id": "x", "kind": "k", "detail": "d"}]
        verdict["behaviour"]["regressions"].append({"id": "y", "kind": "k"})
        self.bad_gate(verdict, "behaviour.regressions[1]: missing field(s) detail")


if __name__ == "__main__":
    unittest.main()
