"""The step runner tests' shared parts (test_command_steps.py, test_command_trace.py): a budget
with fixed seconds left, a synthetic step, a stdout that keeps what was flushed, and a base case
that runs steps into a scratch folder and reads back run.json."""
import contextlib
import io
import json
from pathlib import Path
from typing import List, Optional

from command_scratch import Scratch
from torchplace.command import steps


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


class Flushed(io.StringIO):
    """A stdout that keeps what had been flushed (what a terminal would show by then)."""

    shown = ""

    def flush(self) -> None:
        self.shown = self.getvalue()
