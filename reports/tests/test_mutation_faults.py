#!/usr/bin/env python3
"""A scenario file's survivors under a planted fault (torchplace.mutation.faults): a survivor is
killed when one of the cells that caught the fault alone passes with it; a crash, or cells that
still fail, kill nothing; a cell that failed once by chance catches nothing; both files come back
as they were; the ledger keeps the fault's name. A stand-in for the build and for gtest judges a
synthetic scenario file (no compiler, no LibTorch). Standard library only."""
import dataclasses
import shutil
import tempfile
import unittest
from pathlib import Path
from typing import Dict, List, Optional
from unittest import mock

from torchplace.mutation import faults, generated, ledger, operators_cpp, schemata, scope
from torchplace.mutation.mutations import S, m
from torchplace.mutation.run import CannotJudge
from torchplace.schema import EXIT_BUILD

PATH = "scenarios/synthetic.cpp"
# Synthetic: a check per line; the fault breaks the value both checks see.
SOURCE = """int check(int value) {
  EXPECT_EQ(value, 2);
  EXPECT_GT(value, 0);
  return value;
}
"""
FAULT = m("synthetic_fault", PATH, "return value;", "return value + 1;", [(S, "synthetic.*")])
HARMLESS = m("synthetic_harmless", PATH, "int check(int value) {", "int check(int value)  {", [])
CELLS = ("synthetic.a/device=cpu", "synthetic.b/device=sim0")


def deleting(line: str) -> operators_cpp.Mutant:
    found = [x for x in operators_cpp.mutants_of(PATH, SOURCE) if x.operator == "delete_stmt"]
    return [x for x in found if x.old.strip() == line][0]


def merged(batches) -> dict:
    return {ident: found for batch in batches for ident, found in batch.items()}


class Stand(object):
    """Scratch's build and gtest: a cell fails where the fault is planted and its check is kept
    (cell a checks EXPECT_EQ, cell b both); `crash` names the checks whose removal crashes."""

    def __init__(self, tree: Path, crash: str = "", flaky: str = "", skips: str = "") -> None:
        self.tree, self.crash, self.flaky, self.runs = tree, crash, flaky, 0
        self.skips = skips  # a check whose removal makes cell b a skip (an expectation's)

    def build(self, binaries, timeout_s=0, tail=0):
        return True, ""

    def _text(self, env: Optional[Dict[str, str]]) -> str:
        text = (self.tree / PATH).read_text()
        number = int((env or {}).get(schemata.ENV, "-1"))
        if number < 0 or "switch" not in text:
            return text
        survivors = [deleting("EXPECT_EQ(value, 2);"), deleting("EXPECT_GT(value, 0);")]
        return SOURCE.replace("return value;", "return value + 1;").replace(
            survivors[number].old + "\n", "\n"
        )

    def gtest(self, binary, pattern, env=None, fail_fast=True):
        assert binary == S and not fail_fast
        self.runs += 1
        text = self._text(env)
        if self.crash and self.crash not in text:
            return "fail", "crashed (exit 134)"
        planted = "value + 1" in text
        failed: List[str] = []
        ran = 0
        for cell in CELLS:
            selected = pattern == "synthetic.*" or cell in pattern.split(":")
            skipped = self.skips and self.skips not in text and cell == CELLS[1]
            ran += selected and not skipped
            once = cell == self.flaky and self.runs == 1
            kept = "EXPECT_EQ" in text or (cell.endswith("sim0") and "EXPECT_GT" in text)
            if selected and not skipped and ((planted and kept) or once):
                failed.append(cell)
        if failed:
            return "fail", ", ".join(failed)
        return ("pass", f"{ran} test(s)") if ran else ("empty", "no test ran")


# Synthetic: a tolerance at namespace scope, which no schema can hold (no function body).
SCOPED = """constexpr int kWant = 2;
int check(int value) {
  EXPECT_EQ(value, kWant);
  return value;
}
"""


class ScopedStand(Stand):
    """Cell a fails where the fault is planted and the constant still says 2."""

    def gtest(self, binary, pattern, env=None, fail_fast=True):
        text = (self.tree / PATH).read_text()
        self.runs += 1
        fails = "value + 1" in text and "kWant = 2;" in text and "EXPECT_EQ" in text
        return ("fail", CELLS[0]) if fails else ("pass", "2 test(s)")


class Faults(unittest.TestCase):
    def setUp(self):
        self.tree = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, self.tree)
        (self.tree / "scenarios").mkdir()
        (self.tree / PATH).write_text(SOURCE)
        for cache in (faults.CATCHERS, faults.COMPILING):
            cache.clear()
            self.addCleanup(cache.clear)
        for patch in (
            mock.patch.object(faults, "MUTATIONS", [FAULT, HARMLESS]),
            mock.patch.object(ledger, "MUTATIONS", [FAULT]),
            mock.patch.dict(scope.CPP, {PATH: (S, "synthetic.*")}),
        ):
            patch.start()
            self.addCleanup(patch.stop)
        self.mutants = [deleting(line) for line in ("EXPECT_EQ(value, 2);", "EXPECT_GT(value, 0);")]
        self.ids = [mutant.id for mutant in self.mutants]
        self.survivors = {mutant.id: mutant for mutant in self.mutants}

    def test_a_survivor_whose_change_lets_a_catcher_pass_is_killed_by_name(self):
        records = merged(faults.judge_file(Stand(self.tree), PATH, self.survivors))
        # without EXPECT_EQ, cell a passes with the fault; without EXPECT_GT both still fail
        self.assertEqual(list(records), [self.ids[0]])
        self.assertEqual(records[self.ids[0]]["fault"], "synthetic_fault")
        self.assertIn(CELLS[0], records[self.ids[0]]["detail"])
        self.assertEqual((self.tree / PATH).read_text(), SOURCE)

    def test_a_constant_no_schema_holds_is_built_alone_under_the_fault(self):
        (self.tree / PATH).write_text(SCOPED)
        mutants = operators_cpp.mutants_of(PATH, SCOPED)
        constant = [x for x in mutants if x.line == 1 and x.operator == "const_plus"][0]
        self.assertFalse(schemata.placeable(SCOPED, [constant]))
        records = merged(faults.judge_file(ScopedStand(self.tree), PATH, {constant.id: constant}))
        self.assertEqual(list(records), [constant.id])
        self.assertIn(CELLS[0], records[constant.id]["detail"])
        self.assertEqual((self.tree / PATH).read_text(), SCOPED)

    def test_a_schema_that_does_not_build_is_an_error_not_a_pass(self):
        stand = Stand(self.tree)
        stand.build = lambda binaries, timeout_s=0, tail=0: (False, "error: synthetic")
        ledger_now = {ident: "untriaged" for ident in self.ids}
        with self.assertRaises(CannotJudge) as raised:
            faults.run_pass(stand, self.mutants, ledger_now, None)
        self.assertEqual(raised.exception.code, EXIT_BUILD)
        self.assertIn(f"{PATH} under synthetic_fault", str(raised.exception))
        self.assertEqual((self.tree / PATH).read_text(), SOURCE)

    def test_a_crash_or_a_cell_failed_once_by_chance_kills_nothing(self):
        crashing = merged(
            faults.judge_file(Stand(self.tree, crash="EXPECT_EQ"), PATH, self.survivors)
        )
        self.assertEqual(crashing, {})
        faults.CATCHERS.clear()
        stand = Stand(self.tree, flaky=CELLS[1])
        self.assertEqual(
            faults.catchers(stand, FAULT, PATH), set()
        )  # no fault planted: cell b failed once

    def test_a_catcher_made_a_skip_passes_nothing(self):
        # without EXPECT_GT, cell b is skipped: absent from the failures, yet it never passed
        records = merged(
            faults.judge_file(Stand(self.tree, skips="EXPECT_GT"), PATH, self.survivors)
        )
        self.assertEqual(list(records), [self.ids[0]])
        self.assertNotIn(CELLS[1], records[self.ids[0]]["detail"])

    def test_a_mutant_that_is_another_program_under_the_fault_is_not_judged(self):
        other = dataclasses.replace(self.mutants[0], new="  f();")  # its id, another line
        planted = operators_cpp.mutants_of(PATH, SOURCE)
        self.assertEqual(faults.same_program(planted, {other.id: other}), [])
        self.assertEqual(faults.same_program(planted, self.survivors), self.mutants)

    def test_the_sample_judges_a_fault_kill_again_with_both_edits(self):
        killed = faults.try_under_fault(
            Stand(self.tree), deleting("EXPECT_EQ(value, 2);"), FAULT["name"]
        )
        held = faults.try_under_fault(
            Stand(self.tree), deleting("EXPECT_GT(value, 0);"), FAULT["name"]
        )
        self.assertEqual((killed["status"], held["status"]), ("killed", "survived"))
        self.assertEqual((self.tree / PATH).read_text(), SOURCE)
        with self.assertRaises(CannotJudge):
            faults.try_under_fault(Stand(self.tree), deleting("EXPECT_GT(value, 0);"), "nameless")
        # a fault no cell catches any more: the hole is named, not an engine error
        lost = faults.try_under_fault(Stand(self.tree), self.mutants[0], HARMLESS["name"])
        self.assertEqual(lost["status"], "survived")
        self.assertIn("fails no cell", lost["detail"])

    def test_the_ledger_keeps_the_faults_name(self):
        record = {"status": "killed", "fault": "synthetic_fault"}
        self.assertEqual(ledger.ledger_state(record), "killed_fault synthetic_fault")
        self.assertEqual(ledger.ledger_state({"status": "survived", "fault": "x"}), "untriaged")
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder, "ledger")
            path.write_text("a.cpp:1:delete_stmt:0 killed_fault synthetic_fault\n")
            read = ledger.load_ledger(path)
            self.assertEqual(generated.fault_of(read, "a.cpp:1:delete_stmt:0"), "synthetic_fault")
            for wrong in ("killed_faulty synthetic_fault", "killed_fault nameless", "killed x"):
                path.write_text(f"a.cpp:1:delete_stmt:0 {wrong}\n")
                with self.subTest(wrong=wrong), self.assertRaises(CannotJudge):
                    ledger.load_ledger(path)

    def test_a_scenario_files_faults_are_the_catalogues_that_name_its_cells(self):
        self.assertEqual(faults.scenario_of("scenarios/amp.cpp"), "amp")
        self.assertIsNone(faults.scenario_of("scenarios/transfers/host_cache.h"))
        self.assertIsNone(faults.scenario_of("harness/scenario.cpp"))
        self.assertEqual(faults.faults_for(PATH), [FAULT])  # HARMLESS names no cell
        self.assertEqual(faults.faults_for("scenarios/amp.cpp"), [])

    def test_only_the_faults_named_when_names_are_given(self):
        with mock.patch.object(faults, "MUTATIONS", [FAULT, HARMLESS]):
            self.assertEqual(faults.faults_for(PATH, {"synthetic_fault"}), [FAULT])
            self.assertEqual(faults.faults_for(PATH, {"synthetic_harmless"}), [])
            with self.assertRaisesRegex(CannotJudge, "no_such_fault"):
                faults.run_pass(Stand(Path(".")), [], {}, None, {"no_such_fault"})


if __name__ == "__main__":
    unittest.main()
