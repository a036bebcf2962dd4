#!/usr/bin/env python3
"""The step runner's trace (torchplace.command.steps with `trace`, the GPU run) in process, with
synthetic steps: steps.txt, not_run.txt, each step's log and the tail shown, run.tar.gz packed
after each step and by the Packer (what a run killed from outside still returns), the closing
summary, and where a step's processes write.

  test_command_trace.py [CLASS]      (CTest: command.trace)
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

from command_runner import Base, Fixed, Flushed, exiting
from torchplace import schema
from torchplace.command import common, steps


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
        self.assertEqual(seen["shown"], "== a (86400 s left)\nsynthetic a\n== b (86400 s left)\n")

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
        self.assertTrue(made[0].thread.daemon, "a packer must never hold the process open")

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
        self.assertEqual(shown[0], "== good (42 s left)\n" + "".join(f"{x}\n" for x in lines[-3:]))
        self.assertEqual(shown[1], "".join(f"{line}\n" for line in lines[-25:]))

    def test_a_stale_not_run_list_is_replaced(self) -> None:
        (self.out / "not_run.txt").write_text("stale: not run\n", encoding="utf-8")
        self.run_steps(self.runner(steps.Budget(None), trace=True), [steps.Step("a", exiting(0))])
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
        self.assertEqual(sorted(path.name for path in self.out.glob(steps.PACKING + "*")), [])

    def test_packing_leaves_no_file_open(self) -> None:
        before = len(os.listdir("/proc/self/fd"))
        for _ in range(3):
            steps.pack(self.out)
        self.assertEqual(len(os.listdir("/proc/self/fd")), before)
        self.assertTrue((self.out / "run.tar.gz").is_file())

    def test_a_pack_that_fails_is_logged_and_leaves_no_scrap(self) -> None:
        with mock.patch.object(tarfile, "open", side_effect=OSError("synthetic disk full")):
            with contextlib.redirect_stderr(io.StringIO()) as stderr:
                steps.pack(self.out)
        self.assertIn(f"could not pack {self.out}: synthetic disk full", stderr.getvalue())
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
        (self.out / "steps.txt").write_text("a              passed 3s\n", encoding="utf-8")
        (self.out / "not_run.txt").write_text("b: not run (synthetic)\n", encoding="utf-8")
        self.stdout = Flushed()
        with contextlib.redirect_stdout(self.stdout), mock.patch.object(
            steps.time, "monotonic", return_value=102.5
        ):  # 2.5 s after the budget's start, however slow this host
            runner.summary(steps.Budget(600, start=100.0), 5)
        self.assertEqual(
            self.stdout.shown,
            "== steps (2s of a 600 s budget):\na              passed 3s\n"
            "== not run:\nb: not run (synthetic)\nrun: exit 5\n",
        )

    def test_a_tail_is_shown_at_once(self) -> None:
        log = self.out / "synthetic.log"
        log.write_text("one\ntwo\nthree\n", encoding="utf-8")
        self.stdout = Flushed()
        with contextlib.redirect_stdout(self.stdout):
            steps.Runner.show_tail(log, 2)
        self.assertEqual(self.stdout.shown, "two\nthree\n")  # before any child's output

    def test_a_summary_without_a_budget_or_files(self) -> None:
        with contextlib.redirect_stdout(self.stdout):
            self.runner(steps.Budget(None)).summary(steps.Budget(None), 0)
            steps.Runner.show_tail(self.out / "missing.log", 3)
        self.assertEqual(self.stdout.getvalue(), "== steps (0s):\n== not run:\nrun: exit 0\n")


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
