#!/usr/bin/env python3
"""The behaviour gate holds the note each cell's expectation states to its committed entry
(issue 45; torchplace/gate/stated.py): a skip's reason, why a mistake is latent, what a silent
success asserts. Changed, lost or added, ran or skipped, it is expected_note_changed (exit 2), on
the LibTorch the entries were refreshed on only. The runs are real ones: cells_amp.json and
cells_transfer_budget.json (reports/reference/debian12-libtorch1.13.1/, its README says how they
were recorded); each edit below is synthetic and says what it changes.

  test_stated.py [TestClass[.test] ...]      (CTest: gate.stated)
"""
import json
import unittest

from recorded_run import RecordedRun
from torchplace.gate import behaviour, stated
from torchplace.schema import InputError

SCALER = "amp/variant=grad_scaler/device=cpu"  # ran: "bf16 autocast never overflows: ..."
UNDERFLOW = "amp/variant=fp16_underflow/device=cpu"  # ran, states no note
ABSENT = "amp/variant=grad_scaler/device=cuda:0"  # skipped here: no_cuda_build
HOST = "transfer_budget/case=metric_once/device=cpu"  # skipped: its expectation is a skip


class RanCells(RecordedRun):
    RECORD = "cells_amp.json"

    def expected(self, cell_id: str) -> dict:
        return self.cell(cell_id)["expected"]

    def test_a_refresh_keeps_every_cells_stated_note_skipped_or_not(self):
        cells = self.committed()["cells"]
        self.assertEqual(len(cells), len(self.run_doc["cells"]))
        for cell in self.run_doc["cells"]:
            self.assertEqual(cells[cell["id"]]["expected_note"], cell["expected"]["note"])
        self.assertTrue(cells[SCALER]["expected_note"].startswith("bf16 autocast never"))
        self.assertEqual(
            (cells[UNDERFLOW]["expected_note"], cells[ABSENT]["expected_note"]),
            ("", ""),
        )
        self.assertEqual(self.regressions(), [])

    def test_a_note_changed_or_dropped_is_a_regression(self):
        note = self.expected(SCALER)["note"]
        self.expected(SCALER)["note"] = ""  # Expect::success() where success(note) was meant
        self.assertEqual(
            self.regressions(),
            [
                (
                    SCALER,
                    "expected_note_changed",
                    f"the code's expectation states '', committed {note!r}",
                )
            ],
        )
        self.expected(SCALER)["note"] = note.replace("bf16", "fp16")
        self.assertEqual([r[:2] for r in self.regressions()], [(SCALER, "expected_note_changed")])

    def test_a_note_added_or_no_note_recorded_is_a_regression(self):
        self.expected(UNDERFLOW)["note"] = "silent: no error"  # a note where none was stated
        self.assertEqual(
            [r[:2] for r in self.regressions()], [(UNDERFLOW, "expected_note_changed")]
        )
        del self.expected(UNDERFLOW)["note"]  # a record that states none at all
        [(_, kind, detail)] = self.regressions()
        self.assertEqual(
            (kind, detail),
            (
                "expected_note_changed",
                "the code's expectation states None, committed ''",
            ),
        )
        self.refresh()  # a refresh from it holds none
        self.assertNotIn("expected_note", self.committed()["cells"][UNDERFLOW])
        self.assertEqual(self.regressions(), [])

    def test_an_outcome_regression_outranks_a_changed_note(self):
        # compared beyond its outcome only where the outcome stands: a fix that now raises
        # reports that it raises, not that its note moved (synthetic: both at once)
        self.expected(SCALER)["note"] = ""
        self.cell(SCALER).update(status="fail", category="failed", reason="raised")
        self.cell(SCALER)["observed"].update(outcome="error", error_class="DtypeMismatch")
        self.assertEqual([r[:2] for r in self.regressions()], [(SCALER, "started_failing")])

    def test_a_cell_skipped_for_its_host_states_its_note_too(self):
        self.expected(ABSENT)["note"] = "runs in the cpu cell"
        self.assertEqual([r[:2] for r in self.regressions()], [(ABSENT, "expected_note_changed")])

    def test_another_libtorch_states_other_things(self):
        self.run_doc["fingerprint"]["libtorch_version"] = "2.14.1"  # synthetic: another version
        self.expected(SCALER)["note"] = "on sim:0"
        self.assertEqual(self.regressions(), [])

    def test_an_entry_without_a_stated_note_holds_none(self):
        doc = self.committed()
        del doc["cells"][SCALER]["expected_note"]
        self.expectations.write_text(json.dumps(doc))
        self.expected(SCALER)["note"] = "anything"
        self.assertEqual(self.regressions(), [])

    def test_a_second_gpus_cell_keeps_none_of_its_own(self):
        cells = {f"x/device=cuda:{k}": {"expected": {"note": f"on cuda:{k}"}} for k in (0, 1)}
        self.assertEqual(stated.entries(cells, behaviour.kind_id), {"x/device=cuda:0": "on cuda:0"})

    def test_a_stated_note_that_is_not_a_string_is_refused(self):
        doc = self.committed()
        doc["cells"][SCALER]["expected_note"] = None
        self.expectations.write_text(json.dumps(doc))
        with self.assertRaises(InputError):
            self.regressions()


class SkippedCells(RecordedRun):
    RECORD = "cells_transfer_budget.json"

    def test_a_skips_changed_reason_is_a_regression_not_a_listed_skip(self):
        skip = self.cell(HOST)
        reason = "runs in the sim:0 cell"  # the reason of another branch, as a slip takes it
        skip["expected"]["note"] = skip["reason"] = reason
        [(cell_id, kind, detail)] = self.regressions()
        self.assertEqual((cell_id, kind), (HOST, "expected_note_changed"))
        self.assertIn(repr(reason), detail)

    def test_an_unchanged_skip_is_listed(self):
        self.write_run()
        section = behaviour.compare(str(self.dir / "results.json"), str(self.expectations))
        self.assertIn(HOST, [s["id"] for s in section["skipped"]])


if __name__ == "__main__":
    unittest.main()
