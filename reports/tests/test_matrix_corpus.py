#!/usr/bin/env python3
"""torchplace.matrix.corpus in process: which cells and probe observations of a version matrix
become corpus entries (a passed cell that raised its expected class, a probe's error; not a
failed cell nor a success), run-specific folders masked, the committed entries kept, the file's
order and form, the default corpus, the versions' order. The folders are synthetic
(corpus_folder.py); their messages are real, copied from harness/messages/corpus.json.

  test_matrix_corpus.py [CLASS]      (CTest: report.matrix_corpus)
"""
import os
import unittest

from corpus_folder import COMMITTED, GUIDE, MISSING, ON_META, ON_SIM, Folder, entry
from corpus_folder import matrix_cell, seen
from torchplace import schema
from torchplace.matrix import corpus


class Fold(Folder):
    def test_a_passed_cell_and_a_probes_error_become_entries(self) -> None:
        self.matrix()
        self.assertEqual(
            self.main(self.out, self.corpus),
            (0, f"corpus: 2 entries in {self.corpus}\n", ""),
        )
        expected = [
            entry("2.6.0", "cell:amp/variant=targets_on_cpu/device=sim:0", ON_SIM),
            entry("2.6.0", "probe:add_meta_cpu", ON_META),
        ]
        self.assertEqual(self.entries(), expected)

    def test_a_run_specific_folder_is_masked_in_each_column(self) -> None:
        # the folder's pid and suffix are synthetic, as harness/temp_dir.h names it
        message = MISSING + "/tmp/torchplace-checkpoint-4242-Xy12Ab/absent.pt"
        raised = seen("pass", "error", "expected_error", expected_class="X", message=message)
        self.matrix([matrix_cell("checkpoint/case=missing/device=cpu", **{"2.6.0": raised})])
        os.remove(os.path.join(self.out, "2.6.0", "messages.json"))
        probed = {
            "probe": "load_missing_file",
            "expected_class": "X",
            "outcome": "error",
        }
        self.write("1.13.1/messages.json", {"observations": [dict(probed, message=message)]})
        self.assertEqual(self.main(self.out, self.corpus)[0], 0)
        masked = MISSING + "<tmp>/absent.pt"
        found = [(e["version"], e["source"], e["message"]) for e in self.entries()]
        self.assertEqual(
            found,
            [
                ("2.6.0", "cell:checkpoint/case=missing/device=cpu", masked),
                ("1.13.1", "probe:load_missing_file", masked),
            ],
        )

    def test_committed_entries_are_kept_and_the_file_sorted(self) -> None:
        self.matrix()
        kept = dict(entry("2.6.0", "probe:add_meta_cpu", ON_META), expected_class="Kept")
        older = entry("1.13.1", "probe:add_meta_cpu", ON_META)
        newer = entry("2.14.1", "probe:add_meta_cpu", ON_META)
        unstated = entry("unstated", "probe:add_meta_cpu", ON_META)
        other = entry("1.13.1", "probe:add_meta_cpu", "A" + ON_META)  # synthetic: sorts by message
        committed = [GUIDE, unstated, newer, kept, other, older]
        self.write(
            "corpus.json",
            {
                "schema": corpus.CORPUS_SCHEMA,
                "about": "synthetic",
                "entries": committed,
            },
        )
        self.assertEqual(self.main(self.out, self.corpus)[0], 0)
        cell = entry("2.6.0", "cell:amp/variant=targets_on_cpu/device=sim:0", ON_SIM)
        self.assertEqual(self.entries(), [cell, GUIDE, other, older, kept, newer, unstated])
        with open(self.corpus, encoding="utf-8") as handle:
            text = handle.read()
        self.assertIn('\n "about": "synthetic",\n "entries": [\n  {\n   "version"', text)
        self.assertIn("method …nll_loss_forward", text)  # UTF-8, not \\u escapes
        self.assertTrue(text.endswith("]\n}\n"))

    def test_the_default_corpus(self) -> None:
        self.matrix()
        self.corpus = corpus.DEFAULT_CORPUS  # the scratch file Folder points it at
        self.assertEqual(self.main(self.out), (0, f"corpus: 2 entries in {self.corpus}\n", ""))
        self.assertEqual(len(self.entries()), 2)
        self.assertEqual(COMMITTED, str(schema.ROOT / "harness" / "messages" / "corpus.json"))

    def test_version_order(self) -> None:
        versions = [
            "unstated",
            "2.14.1",
            "1.13",
            "2.6.0",
            "0.3.0",
            "2.6.0rc1",
            "1.13.1",
        ]
        ordered = sorted(versions, key=corpus.version_order)
        self.assertEqual(
            ordered,
            ["0.3.0", "1.13", "1.13.1", "2.6.0", "2.14.1", "2.6.0rc1", "unstated"],
        )


if __name__ == "__main__":
    unittest.main()
