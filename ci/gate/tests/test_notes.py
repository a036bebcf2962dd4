#!/usr/bin/env python3
"""The behaviour gate holds a cell's notes to its committed entry (issue 45, item 4;
torchplace/gate/notes.py): a note changed, lost or added is notes_changed (exit 2), durations
aside, on the LibTorch the entries were refreshed on only. The run is a real one:
cells_transfer_budget.json (reports/reference/debian12-libtorch1.13.1/, its README says how it
was recorded); each edit below is synthetic and says what it changes.

  test_notes.py [TestClass[.test] ...]      (CTest: gate.notes)
"""
import json
import unittest

from recorded_run import RecordedRun
from torchplace.gate import behaviour, notes
from torchplace.schema import InputError

NOTED = "transfer_budget/case=metric_once/device=sim:0"  # its one note: the step's transfers


class Notes(RecordedRun):
    RECORD = "cells_transfer_budget.json"

    def test_a_refresh_keeps_the_notes_of_the_cells_that_ran(self):
        cells = self.committed()["cells"]
        self.assertEqual(cells[NOTED]["notes"], self.cell(NOTED)["notes"])
        skipped = [c["id"] for c in self.run_doc["cells"] if c["status"] == "skip"]
        self.assertTrue(skipped)
        self.assertFalse([i for i in skipped if "notes" in cells[i]])
        self.assertEqual(self.regressions(), [])

    def test_a_changed_note_is_a_regression(self):
        note = self.cell(NOTED)["notes"][0]
        self.cell(NOTED)["notes"] = [note.replace("d2h 1/", "d2h 2/")]
        [(cell_id, kind, detail)] = self.regressions()
        self.assertEqual((cell_id, kind), (NOTED, "notes_changed"))
        self.assertEqual(detail, f"lost {note!r}; new {self.cell(NOTED)['notes'][0]!r}")

    def test_a_lost_an_added_or_a_moved_note_is_a_regression(self):
        note = self.cell(NOTED)["notes"][0]
        self.cell(NOTED)["notes"] = []
        self.assertEqual(self.regressions()[0][1:], ("notes_changed", f"lost {note!r}"))
        self.cell(NOTED)["notes"] = [note, note]
        self.assertEqual(self.regressions()[0][1:], ("notes_changed", f"new {note!r}"))
        self.cell(NOTED)["notes"] = ["placement checked", note]  # synthetic: one note more, first
        self.refresh()
        self.cell(NOTED)["notes"] = [note, "placement checked"]
        [(_, kind, detail)] = self.regressions()
        self.assertEqual(kind, "notes_changed")
        self.assertIn("another order", detail)

    def test_durations_are_not_compared(self):
        self.cell(NOTED)["notes"] = ["rank 0: CollectiveTimeout after 2029 ms"]  # synthetic
        self.refresh()
        self.cell(NOTED)["notes"] = ["rank 0: CollectiveTimeout after 31 ms"]
        self.assertEqual(self.regressions(), [])
        self.cell(NOTED)["notes"] = ["rank 1: CollectiveTimeout after 31 ms"]
        self.assertEqual([r[1] for r in self.regressions()], ["notes_changed"])

    def test_only_a_number_before_ms_is_a_duration(self):
        self.assertEqual(
            notes.normalised(["kept in ms", "after 12 ms", "1 ms and 30 ms"]),
            ["kept in ms", "after <n> ms", "<n> ms and <n> ms"],
        )

    def test_another_libtorch_notes_other_things(self):
        self.run_doc["fingerprint"]["libtorch_version"] = "2.14.1"  # synthetic: another version
        self.cell(NOTED)["notes"] = ["projection on sim:0 after to(sim:0)"]
        self.assertEqual(self.regressions(), [])

    def test_an_entry_without_notes_holds_none(self):
        doc = self.committed()
        del doc["cells"][NOTED]["notes"]
        self.expectations.write_text(json.dumps(doc))
        self.cell(NOTED)["notes"] = ["anything"]
        self.assertEqual(self.regressions(), [])

    def test_a_second_gpus_cell_keeps_no_notes_of_its_own(self):
        # judged by its cuda:0 entry, it names its own device (synthetic cells)
        cells = {
            f"x/device=cuda:{k}": {"status": "pass", "notes": [f"on cuda:{k}"]} for k in (0, 1)
        }
        self.assertEqual(
            notes.entries(cells, behaviour.kind_id), {"x/device=cuda:0": ["on cuda:0"]}
        )

    def test_notes_that_are_not_strings_are_refused(self):
        doc = self.committed()
        doc["cells"][NOTED]["notes"] = [3]
        self.expectations.write_text(json.dumps(doc))
        with self.assertRaises(InputError):
            self.regressions()


if __name__ == "__main__":
    unittest.main()
