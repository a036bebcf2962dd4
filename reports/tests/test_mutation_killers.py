#!/usr/bin/env python3
"""The schema's first-killers pass (torchplace.mutation.schema_runs.Killers): a mutant runs the
tests that killed most mutants so far first, and a kill there stands without the full run only
when those tests pass alone with no mutant chosen. Then a file's second kill set (scope): run on
what the first leaves alive, never after a kill. A stand-in for gtest: synthetic tests."""
import unittest

from torchplace.mutation import schemata, scope
from torchplace.mutation.schema_runs import Killers
from torchplace.mutation.scratch import cpp_kill_sets, then_later

FULL = "Suite.*"


class FakeGtest:
    """Which tests fail, by mutant number; `lean` fail whenever run without Suite.a first."""

    def __init__(self, failing, lean=()):
        self.failing, self.lean, self.calls = failing, set(lean), []

    def gtest(self, binary, pattern, env=None):
        number = int((env or {}).get(schemata.ENV, -1))
        self.calls.append((pattern, number))
        ran = ["Suite.a", "Suite.b", "Suite.c"] if pattern == FULL else pattern.split(":")
        failed = [t for t in ran if t in self.failing.get(number, ())]
        failed += [t for t in ran if t in self.lean and "Suite.a" not in ran]
        return ("fail", ", ".join(failed)) if failed else ("pass", f"{len(ran)} test(s)")


class FirstKillers(unittest.TestCase):
    def test_a_kill_by_the_first_set_needs_no_full_run(self):
        fake, killers = FakeGtest({0: {"Suite.b"}, 1: {"Suite.b"}}), Killers()
        self.assertEqual(killers.judge(fake, "bin", FULL, 0)[0], "fail")
        fake.calls.clear()
        verdict, detail = killers.judge(fake, "bin", FULL, 1)
        self.assertEqual((verdict, detail), ("fail", "Suite.b"))
        # the first set, then once unmutated to see it pass alone: no full run
        self.assertEqual(fake.calls, [("Suite.b", 1), ("Suite.b", -1)])
        fake.calls.clear()
        killers.judge(fake, "bin", FULL, 1)
        self.assertEqual(fake.calls, [("Suite.b", 1)])  # seen passing alone once: trusted

    def test_a_pass_of_the_first_set_goes_on_to_the_full_run(self):
        fake, killers = FakeGtest({0: {"Suite.b"}, 1: {"Suite.c"}}), Killers()
        killers.judge(fake, "bin", FULL, 0)
        self.assertEqual(killers.judge(fake, "bin", FULL, 1), ("fail", "Suite.c"))
        self.assertEqual(fake.calls[-1], (FULL, 1))
        self.assertEqual(killers.judge(fake, "bin", FULL, 2)[0], "pass")  # a survivor

    def test_a_test_that_fails_alone_unmutated_is_not_trusted(self):
        fake, killers = FakeGtest({0: {"Suite.c"}}, lean={"Suite.c"}), Killers()
        killers.judge(fake, "bin", FULL, 0)  # Suite.c killed mutant 0 in a full run
        # mutant 1 changes nothing: Suite.c fails alone only because it leans on Suite.a
        self.assertEqual(killers.judge(fake, "bin", FULL, 1)[0], "pass")
        self.assertIn((FULL, 1), fake.calls)
        fake.calls.clear()
        killers.judge(fake, "bin", FULL, 2)
        self.assertEqual(fake.calls, [(FULL, 2)])  # that first set is not run again

    def test_a_crash_teaches_no_name(self):
        fake, killers = FakeGtest({}), Killers()
        fake.gtest = lambda *args, **kwargs: ("fail", "crashed (exit -11)")
        killers.judge(fake, "bin", FULL, 0)
        self.assertFalse(killers.counts)


SIM_FILE = "harness/sim/cuda_rules.cpp"


class LaterKillSets(unittest.TestCase):
    def test_the_sims_files_run_the_cells_as_cuda_and_where_after_the_sim_suites(self):
        where = ("torchplace_sim_where_tests", "SimWhere.*")
        as_cuda = ("torchplace_sim_as_cuda_linked", "SimAsCuda.*")
        expected = [scope.CPP[SIM_FILE], scope.SIM_CELLS, as_cuda, where]
        self.assertEqual(cpp_kill_sets(SIM_FILE), expected)
        self.assertEqual(scope.SIM_CELLS, ("torchplace_scenarios", "*sim0*-ddp.*"))
        self.assertEqual(cpp_kill_sets("scenarios/amp.cpp"), [scope.CPP["scenarios/amp.cpp"]])

    def test_the_harness_s_other_files_run_the_cells_after_their_unit_tests(self):
        # the scenario-author API, the runner and the fixes: the scenarios use them through
        # paths the unit tests do not (scenario.cpp's run(), expect() and needs() kept)
        self.assertEqual(scope.CELLS, ("torchplace_scenarios", "*-ddp.*"))
        for path in (
            "harness/devices.cpp",
            "harness/fixes/grad_scaler.h",
            "harness/error_class.cpp",
        ):
            self.assertEqual(cpp_kill_sets(path), [scope.CPP[path], scope.CELLS], path)
        for path in ("harness/bench/bench_support.cpp", "scenarios/transfers/strategies.h"):
            self.assertEqual(cpp_kill_sets(path), [scope.CPP[path]], path)

    def test_the_where_files_run_the_sim_suites_built_without_debug_information_after(self):
        for path in scope.WHERE_FILES:
            self.assertEqual(cpp_kill_sets(path), [scope.WHERE[:2], (scope.HARNESS_TESTS, "Sim*")])

    def test_every_kill_sets_binary_has_its_folder(self):
        for path in scope.CPP:
            for binary, _ in cpp_kill_sets(path):
                self.assertIn(binary, scope.BINARIES, path)

    def test_a_survivor_of_the_first_is_judged_by_the_later_ones_in_order(self):
        fake = FakeGtest({3: {scope.SIM_CELLS[1]}, 5: {"SimWhere.*"}})
        self.assertEqual(then_later(fake, SIM_FILE, "pass", "111", {schemata.ENV: "3"})[0], "fail")
        self.assertEqual(fake.calls, [(scope.SIM_CELLS[1], 3)], "the first kill ends it")
        fake.calls.clear()
        killed = then_later(fake, SIM_FILE, "pass", "111", {schemata.ENV: "5"})
        self.assertEqual(killed[0], "fail")
        self.assertTrue(killed[1].startswith("torchplace_sim_where_tests: "), killed[1])
        self.assertEqual(
            fake.calls, [(scope.SIM_CELLS[1], 5), ("SimAsCuda.*", 5), ("SimWhere.*", 5)]
        )
        # no kill anywhere: the first's verdict stands
        self.assertEqual(
            then_later(fake, SIM_FILE, "empty", "0", {schemata.ENV: "4"}), ("empty", "0")
        )

    def test_a_kill_or_a_file_without_later_sets_runs_nothing_more(self):
        fake = FakeGtest({})
        self.assertEqual(then_later(fake, SIM_FILE, "fail", "Sim.x"), ("fail", "Sim.x"))
        self.assertEqual(then_later(fake, SIM_FILE, "timeout", "t"), ("timeout", "t"))
        self.assertEqual(then_later(fake, "scenarios/amp.cpp", "pass", "p"), ("pass", "p"))
        self.assertEqual(fake.calls, [])


if __name__ == "__main__":
    unittest.main()
