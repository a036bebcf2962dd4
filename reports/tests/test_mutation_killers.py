#!/usr/bin/env python3
"""The schema's first-killers pass (torchplace.mutation.schema_runs.Killers): a mutant runs the
tests that killed most mutants so far first, and a kill there stands without the full run only
when those tests pass alone with no mutant chosen. A stand-in for gtest: synthetic tests."""
import unittest

from torchplace.mutation import schemata
from torchplace.mutation.schema_runs import Killers

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


if __name__ == "__main__":
    unittest.main()
