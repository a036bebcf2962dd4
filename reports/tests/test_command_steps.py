#!/usr/bin/env python3
"""The step runner of `run` (torchplace.command.steps) in process, with synthetic steps (Python
functions, no binaries): each step's status in run.json, the run's exit, a failed build or an
exhausted budget ending the run, the deadline a step's processes get, and with `trace` (the GPU
run) steps.txt, not_run.txt, each step's log and its tail, the closing summary and run.tar.gz.

  test_command_steps.py [CLASS]      (CTest: command.steps)
"""
import contextlib
import io
import json
import os
import sys
import tarfile
import time
import unittest
from pathlib import Path
from typing import List, Optional
from unittest import mock

from command_scratch import Scratch
from torchplace import schema
from torchplace.command import common, steps


class Fixed(steps.Budget):
    """A budget with `remaining` seconds left, whatever the clock says (synthetic)."""

    def __init__(self, seconds: Optional[int], remaining: float) -> None:
        super().__init__(seconds)
        self.remaining = remaining

    def left(self) -> float:
        return self.remaining


def exiting(code: int, *lines: str) -> steps.Action:
    """A step that writes `lines` to its log (when it has one) and exits `code`."""

    def action(log: Optional[io.TextIOBase]) -> int:
        for line in lines:
            print(line, file=log)
        return code

    return action


class Base(Scratch):
    def setUp(self) -> None:
        super().setUp()
        self.out = Path(self.tmp)
        self.stdout: io.StringIO = io.StringIO()

    def runner(self, budget: steps.Budget, trace: bool = False) -> steps.Runner:
        return steps.Runner(self.out, budget, trace)

    def run_steps(self, runner: steps.Runner, plan: List[steps.Step]) -> steps.Outcome:
        with contextlib.redirect_stdout(self.stdout):
            return runner.run(plan)

    def recorded(self) -> dict:
        with open(self.out / "run.json", encoding="utf-8") as handle:
            return dict(json.load(handle)["steps"])

    def text(self, name: str) -> str:
        return (self.out / name).read_text(encoding="utf-8")


class Outcomes(Base):
    def test_a_step_that_does_not_record_itself_is_ok_or_failed(self) -> None:
        # kills steps.py:Runner.one:4be20b:const_plus:0 and :ea03e8:const_minus:0 (the status
        # compared with 1 or -1: an exit 0 recorded "failed", an exit 1 "ok")
        plan = [steps.Step(f"s{code}", exiting(code)) for code in (0, 1, 2)]
        outcome = self.run_steps(self.runner(steps.Budget(None)), plan)
        self.assertEqual((outcome.status, outcome.cut), (schema.EXIT_FAIL, ""))
        recorded = self.recorded()
        for code, status in ((0, "ok"), (1, "failed"), (2, "failed")):
            self.assertEqual(
                recorded[f"s{code}"], {"status": status, "exit": code, "seconds": 0}
            )

    def test_a_step_that_records_itself_is_left_alone(self) -> None:
        def records(log: Optional[io.TextIOBase]) -> int:
            common.record(self.out / "run.json", "own", status="ran")
            return 1

        self.run_steps(
            self.runner(steps.Budget(None)), [steps.Step("own", records, records=True)]
        )
        self.assertEqual(self.recorded()["own"], {"status": "ran"})

    def test_every_step_passing_is_exit_0_and_no_trace_writes_no_files(self) -> None:
        logs: List[object] = []
        plan = [
            steps.Step(name, lambda log: logs.append(log) or 0) for name in ("a", "b")
        ]
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
                self.assertEqual(
                    outcome, steps.Outcome(status, f"build failed (exit {code})")
                )
                later.assert_not_called()
                self.assertEqual(
                    self.recorded()["later"],
                    {"status": "not_run", "note": f"build failed (exit {code})"},
                )

    def test_a_build_that_works_lets_the_rest_run(self) -> None:
        later = mock.Mock(return_value=0)
        plan = [steps.Step("build", exiting(0), True), steps.Step("later", later)]
        self.assertEqual(
            self.run_steps(self.runner(steps.Budget(None)), plan).status, 0
        )
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
        outcome = self.run_steps(
            runner, [steps.Step("slow", cut), steps.Step("later", later)]
        )
        why = "the 30 s budget ran out during slow"
        self.assertEqual(outcome, steps.Outcome(schema.EXIT_BUDGET, why))
        later.assert_not_called()
        recorded = self.recorded()
        self.assertEqual(recorded["slow"], {"status": "cut", "seconds": 0})
        self.assertEqual(recorded["later"], {"status": "not_run", "note": why})
        self.assertIn(
            "slow           cut by the budget after 0s", self.text("steps.txt")
        )
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


class Flushed(io.StringIO):
    """A stdout that keeps what had been flushed (what a terminal would show by then)."""

    shown = ""

    def flush(self) -> None:
        self.shown = self.getvalue()


class Trace(Base):
    """`trace` (the GPU run): the files a run killed from outside still leaves."""

    def test_what_ran_is_packed_and_shown_before_the_next_step_starts(self) -> None:
        seen = {}

        def second(log: Optional[io.TextIOBase]) -> int:
            with tarfile.open(self.out / "run.tar.gz") as tar:
                seen["packed"] = sorted(tar.getnames())
                for name in ("steps.txt", "run.json"):
                    seen[name] = tar.extractfile(f"./{name}").read()  # type: ignore[union-attr]
            seen["shown"] = self.stdout.shown
            return 0

        self.stdout = Flushed()
        plan = [steps.Step("a", exiting(0, "synthetic a")), steps.Step("b", second)]
        self.run_steps(self.runner(Fixed(None, 86400.0), trace=True), plan)
        # what a finished (self-unrecorded) step left, even were the run killed during b
        self.assertIn("./logs/a.log", seen["packed"])
        self.assertEqual(seen["steps.txt"], b"a              passed 0s\n")
        self.assertEqual(json.loads(seen["run.json"])["steps"]["a"]["status"], "ok")
        self.assertEqual(
            seen["shown"], "== a (86400 s left)\nsynthetic a\n== b (86400 s left)\n"
        )

    def test_the_packer_is_stopped_when_the_run_ends(self) -> None:
        made: List[steps.Packer] = []
        packer = steps.Packer

        def making(out: Path) -> steps.Packer:
            made.append(packer(out))
            return made[-1]

        with mock.patch.object(steps, "Packer", side_effect=making):
            self.run_steps(
                self.runner(steps.Budget(None), trace=True),
                [steps.Step("a", exiting(0))],
            )
        self.assertEqual(len(made), 1)
        self.assertFalse(made[0].thread.is_alive(), "the packer outlived the run")
        self.assertTrue(
            made[0].thread.daemon, "a packer must never hold the process open"
        )

    def test_a_second_run_into_the_same_folder(self) -> None:
        for _ in range(2):
            outcome = self.run_steps(
                self.runner(steps.Budget(None), trace=True),
                [steps.Step("a", exiting(0))],
            )
            self.assertEqual(outcome.status, schema.EXIT_OK)

    def test_each_step_leaves_its_log_its_line_and_its_tail(self) -> None:
        lines = [f"synthetic line {n}" for n in range(1, 31)]
        (self.out / "steps.txt").write_text("stale\n", encoding="utf-8")
        plan = [
            steps.Step("good", exiting(0, *lines)),
            steps.Step("bad", exiting(2, *lines)),
        ]
        outcome = self.run_steps(self.runner(Fixed(60, 42.7), trace=True), plan)
        self.assertEqual(outcome.status, schema.EXIT_FAIL)
        self.assertEqual(self.text("logs/good.log").splitlines(), lines)
        self.assertEqual(
            self.text("steps.txt"),
            "good           passed 0s\nbad            failed (exit 2) 0s\n",
        )
        self.assertEqual(self.text("not_run.txt"), "every step ran\n")
        shown = self.stdout.getvalue().split("== bad (42 s left)\n")
        self.assertEqual(
            shown[0], "== good (42 s left)\n" + "".join(f"{x}\n" for x in lines[-3:])
        )
        self.assertEqual(shown[1], "".join(f"{line}\n" for line in lines[-25:]))

    def test_a_stale_not_run_list_is_replaced(self) -> None:
        (self.out / "not_run.txt").write_text("stale: not run\n", encoding="utf-8")
        self.run_steps(
            self.runner(steps.Budget(None), trace=True), [steps.Step("a", exiting(0))]
        )
        self.assertEqual(self.text("not_run.txt"), "every step ran\n")

    def test_the_pack_holds_what_the_run_wrote(self) -> None:
        plan = [steps.Step("a", exiting(0, "synthetic")), steps.Step("b", exiting(0))]
        self.run_steps(self.runner(Fixed(None, 86400.0), trace=True), plan)
        with tarfile.open(self.out / "run.tar.gz") as tar:
            names = sorted(tar.getnames())
            not_run = tar.extractfile("./not_run.txt").read()  # type: ignore[union-attr]
        self.assertEqual(
            names,
            [
                "./logs",
                "./logs/a.log",
                "./logs/b.log",
                "./not_run.txt",
                "./run.json",
                "./steps.txt",
            ],
        )
        self.assertEqual(not_run, b"every step ran\n")
        self.assertEqual((self.out / "run.tar.gz").stat().st_mode & 0o777, 0o644)
        self.assertEqual(
            sorted(path.name for path in self.out.glob(steps.PACKING + "*")), []
        )

    def test_packing_leaves_no_file_open(self) -> None:
        before = len(os.listdir("/proc/self/fd"))
        for _ in range(3):
            steps.pack(self.out)
        self.assertEqual(len(os.listdir("/proc/self/fd")), before)
        self.assertTrue((self.out / "run.tar.gz").is_file())

    def test_a_pack_that_fails_is_logged_and_leaves_no_scrap(self) -> None:
        with mock.patch.object(
            tarfile, "open", side_effect=OSError("synthetic disk full")
        ):
            with contextlib.redirect_stderr(io.StringIO()) as stderr:
                steps.pack(self.out)
        self.assertIn(
            f"could not pack {self.out}: synthetic disk full", stderr.getvalue()
        )
        self.assertEqual(list(self.out.iterdir()), [])

    def test_the_packer_repacks_until_stopped(self) -> None:
        (self.out / "steps.txt").write_text("synthetic\n", encoding="utf-8")
        packer = steps.Packer(self.out, period_s=0.02)
        deadline = time.monotonic() + 10
        while not (self.out / "run.tar.gz").exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        packer.stop()
        self.assertTrue((self.out / "run.tar.gz").exists(), "the packer never packed")
        self.assertFalse(packer.thread.is_alive())

    def test_the_summary(self) -> None:
        runner = self.runner(steps.Budget(None), trace=True)
        (self.out / "steps.txt").write_text(
            "a              passed 3s\n", encoding="utf-8"
        )
        (self.out / "not_run.txt").write_text(
            "b: not run (synthetic)\n", encoding="utf-8"
        )
        self.stdout = Flushed()
        with contextlib.redirect_stdout(self.stdout):
            runner.summary(steps.Budget(600, start=time.monotonic() - 2.5), 5)
        self.assertEqual(
            self.stdout.shown,
            "== steps (2s of a 600 s budget):\na              passed 3s\n"
            "== not run:\nb: not run (synthetic)\nrun: exit 5\n",
        )

    def test_a_summary_without_a_budget_or_files(self) -> None:
        with contextlib.redirect_stdout(self.stdout):
            self.runner(steps.Budget(None)).summary(steps.Budget(None), 0)
            steps.Runner.show_tail(self.out / "missing.log", 3)
        self.assertEqual(
            self.stdout.getvalue(), "== steps (0s):\n== not run:\nrun: exit 0\n"
        )


class Processes(Base):
    def test_a_process_writes_to_the_steps_log_else_to_stderr(self) -> None:
        log = io.StringIO()
        with mock.patch.object(common, "call", return_value=7) as call:
            self.assertEqual(steps.run_process(["synthetic", "a"], log), 7)
            steps.run_process(["synthetic"], None, cwd="/")
            steps.run_process(["synthetic"], log, stdout=None)
        first, second, third = call.call_args_list
        self.assertEqual(first, mock.call(["synthetic", "a"], stdout=log, stderr=log))
        self.assertEqual(
            second,
            mock.call(["synthetic"], cwd="/", stdout=sys.stderr, stderr=sys.stderr),
        )
        self.assertEqual(third, mock.call(["synthetic"], stdout=None, stderr=log))


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0], *sys.argv[1:], "-v"])
