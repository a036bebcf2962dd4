#!/usr/bin/env python3
"""The step runner of `run` (torchplace.command.steps) in process, with synthetic steps (Python
functions, no binaries): each step's status in run.json, the run's exit, a failed build or an
exhausted budget ending the run (a step starts with 5 s left, not less), and the deadline a
step's processes get. The trace (the GPU run's files): test_command_trace.py.

  test_command_steps.py [CLASS]      (CTest: command.steps)
"""
import io
import sys
import time
import unittest
from typing import List, Optional
from unittest import mock

from command_runner import Base, Fixed, exiting
from torchplace import schema
from torchplace.command import common, steps


class Outcomes(Base):
    def test_a_step_that_does_not_record_itself_is_ok_or_failed(self) -> None:
        # kills steps.py:Runner.one:4be20b:const_plus:0 (the status compared with 1: an exit 0
        # recorded "failed", an exit 1 "ok")
        plan = [steps.Step(f"s{code}", exiting(code)) for code in (0, 1, 2)]
        outcome = self.run_steps(self.runner(steps.Budget(None)), plan)
        self.assertEqual((outcome.status, outcome.cut), (schema.EXIT_FAIL, ""))
        recorded = self.recorded()
        for code, status in ((0, "ok"), (1, "failed"), (2, "failed")):
            self.assertEqual(recorded[f"s{code}"], {"status": status, "exit": code, "seconds": 0})

    def test_a_step_that_records_itself_is_left_alone(self) -> None:
        def records(log: Optional[io.TextIOBase]) -> int:
            common.record(self.out / "run.json", "own", status="ran")
            return 1

        self.run_steps(self.runner(steps.Budget(None)), [steps.Step("own", records, records=True)])
        self.assertEqual(self.recorded()["own"], {"status": "ran"})

    def test_every_step_passing_is_exit_0_and_no_trace_writes_no_files(self) -> None:
        logs: List[object] = []
        plan = [steps.Step(name, lambda log: logs.append(log) or 0) for name in ("a", "b")]
        outcome = self.run_steps(self.runner(steps.Budget(None)), plan)
        self.assertEqual((outcome.status, outcome.cut), (schema.EXIT_OK, ""))
        self.assertEqual(logs, [None, None])  # without trace a step gets no log
        self.assertEqual(sorted(path.name for path in self.out.iterdir()), ["run.json"])
        self.assertEqual(self.stdout.getvalue(), "")

    def test_a_failed_build_ends_the_run_with_its_exit(self) -> None:
        for code, status in (
            (4, schema.EXIT_BUILD),
            (3, schema.EXIT_ENV),
            (9, schema.EXIT_BUILD),
        ):
            with self.subTest(code=code):
                later = mock.Mock(return_value=0)
                plan = [
                    steps.Step("build", exiting(code), True),
                    steps.Step("later", later),
                ]
                outcome = self.run_steps(self.runner(steps.Budget(None)), plan)
                self.assertEqual(outcome, steps.Outcome(status, f"build failed (exit {code})"))
                later.assert_not_called()
                self.assertEqual(
                    self.recorded()["later"],
                    {"status": "not_run", "note": f"build failed (exit {code})"},
                )

    def test_a_build_that_works_lets_the_rest_run(self) -> None:
        later = mock.Mock(return_value=0)
        plan = [steps.Step("build", exiting(0), True), steps.Step("later", later)]
        self.assertEqual(self.run_steps(self.runner(steps.Budget(None)), plan).status, 0)
        later.assert_called_once_with(None)

    def test_a_failed_step_that_does_not_end_the_run(self) -> None:
        later = mock.Mock(return_value=0)
        plan = [steps.Step("first", exiting(2)), steps.Step("later", later)]
        outcome = self.run_steps(self.runner(steps.Budget(None)), plan)
        self.assertEqual(outcome, steps.Outcome(schema.EXIT_FAIL, ""))
        later.assert_called_once_with(None)


class Budgets(Base):
    def test_left_and_elapsed(self) -> None:
        self.assertEqual(steps.Budget(None).left(), 86400.0)
        budget = steps.Budget(10, start=time.monotonic() - 3.5)
        self.assertTrue(6.0 < budget.left() <= 6.5, budget.left())
        self.assertEqual(budget.elapsed(), 3)

    def test_a_step_starts_with_5_s_left_not_with_less(self) -> None:
        ran = mock.Mock(return_value=0)
        outcome = self.run_steps(self.runner(Fixed(10, 5.0)), [steps.Step("a", ran)])
        self.assertEqual(outcome.status, schema.EXIT_OK)
        ran.assert_called_once_with(None)
        ran.reset_mock()
        outcome = self.run_steps(self.runner(Fixed(10, 4.9)), [steps.Step("b", ran)])
        cut = "the 10 s budget ran out before it"
        self.assertEqual(outcome, steps.Outcome(schema.EXIT_BUDGET, cut))
        ran.assert_not_called()
        self.assertEqual(self.recorded()["b"], {"status": "not_run", "note": cut})

    def test_a_step_cut_by_the_budget_ends_the_run(self) -> None:
        def cut(log: Optional[io.TextIOBase]) -> int:
            raise common.BudgetCut()

        later = mock.Mock(return_value=0)
        runner = self.runner(Fixed(30, 20.0), trace=True)
        outcome = self.run_steps(runner, [steps.Step("slow", cut), steps.Step("later", later)])
        why = "the 30 s budget ran out during slow"
        self.assertEqual(outcome, steps.Outcome(schema.EXIT_BUDGET, why))
        later.assert_not_called()
        recorded = self.recorded()
        self.assertEqual(recorded["slow"], {"status": "cut", "seconds": 0})
        self.assertEqual(recorded["later"], {"status": "not_run", "note": why})
        self.assertIn("slow           cut by the budget after 0s", self.text("steps.txt"))
        not_run = self.text("not_run.txt").splitlines()
        self.assertEqual(
            not_run,
            [
                "slow: cut by the budget after 0s (what it wrote is kept)",
                f"later: not run ({why})",
            ],
        )

    def test_a_failure_before_the_budget_ran_out_is_the_runs_exit(self) -> None:
        budget = Fixed(10, 10.0)

        def fails_slowly(log: Optional[io.TextIOBase]) -> int:
            budget.remaining = 1.0  # the step used up the budget, then failed
            return 1

        later = mock.Mock(return_value=0)
        plan = [steps.Step("first", fails_slowly), steps.Step("later", later)]
        outcome = self.run_steps(self.runner(budget), plan)
        self.assertEqual(
            outcome,
            steps.Outcome(schema.EXIT_FAIL, "the 10 s budget ran out before it"),
        )
        later.assert_not_called()

    def test_the_step_deadline_is_what_is_left_and_is_cleared_after(self) -> None:
        seen: List[Optional[float]] = []
        plan = [steps.Step("a", lambda log: seen.append(common.DEADLINE[0]) or 0)]
        before = time.monotonic()
        self.run_steps(self.runner(Fixed(100, 50.0)), plan)
        after = time.monotonic()
        self.assertIsNotNone(seen[0])
        self.assertTrue(before + 50.0 <= seen[0] <= after + 50.0, (before, seen, after))
        self.assertIsNone(common.DEADLINE[0])
        self.run_steps(self.runner(steps.Budget(None)), plan)
        self.assertIsNone(seen[1])  # no budget: no deadline


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0], *sys.argv[1:], "-v"])
