#!/usr/bin/env python3
"""A kill set of the scenario binary is held to ci/gate/expectations.json as CTest's
gate.own_cells holds it (torchplace.mutation.cells_gate, through Scratch.gtest): a run whose
gtest checks pass but whose cells count other transfers is a kill. A shell script stands for the
binary; the cell records it writes are real: cells_transfer_budget.json in
reports/reference/debian12-libtorch1.13.1/, written by `torchplace_scenarios
--gtest_filter='transfer_budget.*'` (Debian 12, LibTorch 1.13.1; its README says how)."""
import json
import shutil
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from torchplace.mutation import cells_gate, scope
from torchplace.mutation.run import CannotJudge
from torchplace.mutation.scratch import Scratch

RECORD = (
    Path(__file__).parents[1]
    / "reference"
    / "debian12-libtorch1.13.1"
    / "cells_transfer_budget.json"
)
PATTERN = "transfer_budget.*"
# writes the cells' records where the harness would, then a passing gtest report
REPORT = '{"testsuites": [{"name": "s", "testsuite": [{"name": "t", "result": "COMPLETED"}]}]}'
SKIPPED = REPORT.replace("COMPLETED", "SKIPPED")  # every selected test skipped: gtest's "empty"
STAND_IN = """#!/bin/sh
cp {record} "$TORCHPLACE_RESULTS_DIR/record.json"
for a in "$@"; do case $a in --gtest_output=json:*) report=${{a#--gtest_output=json:}};; esac; done
printf '%s' '{report}' > "$report"
"""


class CellsGate(unittest.TestCase):
    def setUp(self):
        self.build = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, self.build)
        self.record = self.build / "record.json"
        self.record.write_text(RECORD.read_text())
        self.stand_in(REPORT)
        self.scratch = Scratch.__new__(Scratch)  # no scratch copy: only gtest() is used
        self.scratch.build_dir = self.build

    def stand_in(self, report: str) -> None:
        binary = self.build / scope.BINARIES[cells_gate.BINARY] / cells_gate.BINARY
        binary.parent.mkdir(parents=True, exist_ok=True)
        binary.write_text(STAND_IN.format(record=self.record, report=report))
        binary.chmod(0o755)

    def edit_sim_cell(self, metric: str, value: float) -> None:
        doc = json.loads(self.record.read_text())
        cell = next(c for c in doc["cells"] if c["device"] == "sim:0")
        cell["metrics"][metric] = value
        self.record.write_text(json.dumps(doc))

    def test_the_recorded_cells_pass(self):
        self.assertEqual(self.scratch.gtest(cells_gate.BINARY, PATTERN), ("pass", "1 test(s)"))

    def test_a_cell_counting_one_copy_more_is_a_kill(self):
        self.edit_sim_cell("transfer.step.h2d.copies", 99.0)
        verdict, detail = self.scratch.gtest(cells_gate.BINARY, PATTERN)
        self.assertEqual(verdict, "fail")
        self.assertIn("transfers_grew", detail)

    def test_only_the_selected_cells_are_compared(self):
        # "*" would also expect every other scenario's cells: all vanished from this run
        verdict, detail = self.scratch.gtest(cells_gate.BINARY, "*")
        self.assertEqual(verdict, "fail")
        self.assertIn("vanished", detail)

    def test_a_record_the_gate_cannot_read_is_a_kill(self):
        # CTest's gate.own_cells fails on it too; the unmutated records passed (the baseline)
        self.record.write_text('{"schema": "torchplace.results/1"}')
        verdict, detail = self.scratch.gtest(cells_gate.BINARY, PATTERN)
        self.assertEqual(verdict, "fail")
        self.assertIn("cannot read", detail)

    def test_a_cell_recorded_twice_is_a_kill(self):
        doc = json.loads(self.record.read_text())
        doc["cells"].append(doc["cells"][0])
        self.record.write_text(json.dumps(doc))
        verdict, detail = self.scratch.gtest(cells_gate.BINARY, PATTERN)
        self.assertEqual(verdict, "fail")
        self.assertIn("recorded twice", detail)

    def test_every_cell_skipped_is_judged_by_the_gate(self):
        # a mutant whose needs() skips every cell (seen: ddp's Gloo check negated) leaves gtest
        # nothing completed; CTest's gate.own_cells fails on the skips all the same. Synthetic:
        # the real record's ran cells turned into skips with a code the run contradicts
        doc = json.loads(self.record.read_text())
        for cell in doc["cells"]:
            if cell["status"] != "skip":
                cell.update(status="skip", skip_code="no_c10d_gloo", category="skipped")
                cell.update(category_label="skipped", reason="no c10d Gloo", metrics={})
                cell["observed"]["outcome"] = "not_run"
        self.record.write_text(json.dumps(doc))
        self.stand_in(SKIPPED)
        verdict, detail = self.scratch.gtest(cells_gate.BINARY, PATTERN)
        self.assertEqual(verdict, "fail")
        self.assertIn("no_c10d_gloo", detail)

    def test_every_test_skipped_with_the_recorded_cells_is_empty(self):
        self.stand_in(SKIPPED)
        self.assertEqual(self.scratch.gtest(cells_gate.BINARY, PATTERN), ("empty", "no test ran"))

    def test_a_filter_that_selects_no_committed_cell_cannot_judge(self):
        with self.assertRaises(CannotJudge):
            self.scratch.gtest(cells_gate.BINARY, "no_such_scenario.*")

    def test_a_gate_that_cannot_run_is_an_error_not_a_kill(self):
        with mock.patch.object(cells_gate.sys, "executable", "/bin/false"):
            with self.assertRaises(CannotJudge):
                self.scratch.gtest(cells_gate.BINARY, PATTERN)

    def test_gtests_filter(self):
        self.assertTrue(cells_gate.selects("*sim0*-ddp.*", "amp.variant=x/device=sim0"))
        self.assertFalse(cells_gate.selects("*sim0*-ddp.*", "ddp.variant=x/devices=sim0+sim1"))
        self.assertFalse(cells_gate.selects("*-ddp.*", "ddp.variant=x/device=cpu"))
        self.assertTrue(cells_gate.selects("a.*:b.*", "b.case=y/device=cpu"))
        self.assertEqual(
            cells_gate.gtest_name("amp/variant=x/device=sim:0"), "amp.variant=x/device=sim0"
        )


if __name__ == "__main__":
    unittest.main()
