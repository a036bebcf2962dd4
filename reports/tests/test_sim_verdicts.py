#!/usr/bin/env python3
"""torchplace.sim_verdicts in process: `--suite BINARY` runs the sim:0 cells, then the cuda:0
cells in a process of their own, and compares them; no cuda:0 cell is exit 3, or 77 with
--skip-without-cuda; a results file it cannot read is exit 3 naming it; other arguments exit 64.
The binaries here are stand-ins (synthetic: a script that writes results files)."""
import contextlib
import io
import json
import os
import sys
import tempfile
import unittest

from torchplace import sim_verdicts
from torchplace.schema import EXIT_FAIL, EXIT_INPUT, EXIT_OK, EXIT_SKIP, EXIT_USAGE

# A stand-in scenario binary: logs its arguments, then writes the cells of the group its
# --gtest_filter names (sim0 or cuda0) from CELLS, a {group: [cell]} file beside it, and exits
# 1 when one of them failed, as the suite does.
FAKE = """#!{python}
import json, os, sys
here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "calls"), "a") as log:
    log.write(" ".join(sys.argv[1:]) + "\\n")
group = sys.argv[1].split("device=")[1].rstrip("*")
results = sys.argv[2].split("=", 1)[1]
cells = json.load(open(os.path.join(here, "cells.json")))
if group in cells:
    json.dump({{"schema": "torchplace.results/1", "cells": cells[group]}}, open(results, "w"))
print("stand-in output")
sys.exit(1 if any(c["status"] == "fail" for c in cells.get(group, [])) else 0)
"""


def cell(device, outcome, status="pass", variant="broken"):
    """A synthetic results cell of one scenario on `device`."""
    return {
        "id": f"forgotten_labels/variant={variant}/device={device}",
        "status": status,
        "reason": "device absent" if status == "skip" else "",
        "observed": {"outcome": outcome, "error_class": None, "message": ""},
    }


class Suite(unittest.TestCase):
    def setUp(self):
        scratch = tempfile.TemporaryDirectory()
        self.addCleanup(scratch.cleanup)
        self.folder = scratch.name
        self.binary = os.path.join(self.folder, "scenarios")
        with open(self.binary, "w", encoding="utf-8") as handle:
            handle.write(FAKE.format(python=sys.executable))
        os.chmod(self.binary, 0o755)

    def cells(self, groups):
        with open(os.path.join(self.folder, "cells.json"), "w", encoding="utf-8") as handle:
            json.dump(groups, handle)

    def main(self, *argv):
        """(exit, stdout, stderr) of main(argv); a sys.exit inside counts as its exit."""
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = sim_verdicts.main(list(argv))
            except SystemExit as stop:
                code = stop.code
        return code, out.getvalue(), err.getvalue()

    def calls(self):
        with open(os.path.join(self.folder, "calls"), encoding="utf-8") as handle:
            return [line.split()[0] for line in handle]

    def test_sim_then_cuda_each_in_its_own_process(self):
        self.cells({"sim0": [cell("sim:0", "error")], "cuda0": [cell("cuda:0", "error")]})
        code, out, err = self.main("--suite", self.binary)
        self.assertEqual(code, EXIT_OK, out + err)
        self.assertEqual(
            self.calls(), ["--gtest_filter=*device=sim0*", "--gtest_filter=*device=cuda0*"]
        )
        self.assertIn("all 1 compared sim:0 cells give cuda:0's verdict", out)

    def test_a_disagreement_fails(self):
        self.cells({"sim0": [cell("sim:0", "success")], "cuda0": [cell("cuda:0", "error")]})
        code, out, _ = self.main("--suite", self.binary)
        self.assertEqual(code, EXIT_FAIL)
        self.assertIn("1 sim:0 cells disagree with cuda:0 (0 agree)", out)

    def test_each_agreeing_pair_is_counted(self):
        variants = ("broken", "manual_to", "batch_mover")
        sim = [cell("sim:0", "error", variant=v) for v in variants]
        cuda = [cell("cuda:0", "error", variant=v) for v in variants]
        self.cells({"sim0": sim, "cuda0": cuda})
        self.assertIn(
            "all 3 compared sim:0 cells give cuda:0's verdict", self.main("--suite", self.binary)[1]
        )
        sim[0] = cell("sim:0", "success")
        self.cells({"sim0": sim, "cuda0": cuda})
        code, out, _ = self.main("--suite", self.binary)
        self.assertEqual(code, EXIT_FAIL)
        self.assertIn("1 sim:0 cells disagree with cuda:0 (2 agree)", out)

    def test_a_run_with_failed_cells_is_still_compared(self):
        # a failed cell makes the suite exit 1; its verdict is compared all the same
        self.cells({"sim0": [cell("sim:0", "error", "fail")], "cuda0": [cell("cuda:0", "error")]})
        code, out, err = self.main("--suite", self.binary)
        self.assertEqual(code, EXIT_OK, out + err)
        self.assertIn("all 1 compared sim:0 cells give cuda:0's verdict", out)

    def test_no_cuda_cell_is_3_or_a_skip(self):
        self.cells({"sim0": [cell("sim:0", "error")], "cuda0": [cell("cuda:0", "", "skip")]})
        for argv, expected in (([], EXIT_INPUT), (["--skip-without-cuda"], EXIT_SKIP)):
            with self.subTest(argv=argv):
                code, out, _ = self.main("--suite", self.binary, *argv)
                self.assertEqual(code, expected, out)
                self.assertIn("SKIP: no sim:0 cell could be compared", out)

    def test_a_binary_that_writes_no_results_is_3_naming_the_file(self):
        self.cells({"sim0": [cell("sim:0", "error")]})  # the cuda0 run writes nothing
        code, _, err = self.main("--suite", self.binary, "--skip-without-cuda")
        self.assertEqual(code, EXIT_INPUT)
        self.assertRegex(err, r"sim_verdicts: cannot read results \S*/results-cuda0\.json: ")

    def test_bad_arguments_exit_64_and_run_nothing(self):
        for argv in (["--suite", self.binary, "--skip"], ["--suite", self.binary, "-x", "-y"]):
            with self.subTest(argv=argv):
                code, _, err = self.main(*argv)
                self.assertEqual(code, EXIT_USAGE)
                self.assertIn("--skip-without-cuda", err)
        self.assertFalse(os.path.exists(os.path.join(self.folder, "calls")))


class ResultsFile(unittest.TestCase):
    def test_an_unreadable_file_is_3_naming_it(self):
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "results.json")
            # synthetic: absent, not JSON, no cells, not an object
            cases = (None, "No such file"), ("{", "Expecting"), ("{}", "'cells'"), ("[]", "list")
            for text, why in cases:
                with self.subTest(text=text):
                    if text is not None:
                        with open(path, "w", encoding="utf-8") as handle:
                            handle.write(text)
                    err = io.StringIO()
                    with contextlib.redirect_stderr(err), self.assertRaises(SystemExit) as stop:
                        sim_verdicts.load_cells(path)
                    self.assertEqual(stop.exception.code, EXIT_INPUT)
                    self.assertIn(f"sim_verdicts: cannot read results {path}: ", err.getvalue())
                    self.assertIn(why, err.getvalue())


if __name__ == "__main__":
    unittest.main()
