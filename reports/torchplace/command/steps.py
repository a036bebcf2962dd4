"""The step runner of `run`: steps in order, most valuable first, each under what is left of an
optional time budget. A step is started only with MIN_STEP_S left; the first step cut by the
budget ends the run, and so does a failed build. Every step's outcome goes into run.json; with
`trace` (the GPU run) also OUT/steps.txt, OUT/not_run.txt, OUT/logs/STEP.log and OUT/run.tar.gz
(repacked every minute and after each step, so that a run killed from outside still returns
what it had finished)."""

import os
import sys
import tarfile
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Callable, List, Optional

from torchplace import schema
from torchplace.command import common

MIN_STEP_S = 5  # a step is not started with less left
BudgetCut = common.BudgetCut


@dataclass
class Budget:
    """Seconds from `start` (time.monotonic()); None: no budget (each step runs to its end)."""

    seconds: Optional[int]
    start: float = field(default_factory=time.monotonic)

    def elapsed(self) -> int:
        return int(time.monotonic() - self.start)

    def left(self) -> float:
        if self.seconds is None:
            return 86400.0
        return self.seconds - (time.monotonic() - self.start)


def run_process(argv: List[str], log: Optional[IO[str]] = None, **options: object) -> int:
    """common.call with the output to `log`, else stderr: stopped at the step's deadline
    (BudgetCut), and with this command on SIGTERM."""
    stream = log if log is not None else sys.stderr
    options.setdefault("stdout", stream)
    options.setdefault("stderr", stream)
    return common.call(argv, **options)


Action = Callable[[Optional[IO[str]]], int]  # the step's exit code; given its log, if any


@dataclass
class Step:
    name: str
    action: Action
    ends_run_on_failure: bool = False  # the build: nothing else can run without it
    records: bool = False  # the action records its own step in run.json (else: ok | failed)


@dataclass
class Outcome:
    status: int  # the run's exit code from its steps
    cut: str  # why the rest did not run, or ""


class Runner:
    def __init__(self, out: Path, budget: Budget, trace: bool) -> None:
        self.out = out
        self.budget = budget
        self.trace = trace
        self.record = out / "run.json"

    def note(self, name: str, line: str) -> None:
        if self.trace:
            with open(self.out / name, "a", encoding="utf-8") as handle:
                handle.write(line + "\n")

    def run(self, steps: List[Step]) -> Outcome:
        if self.trace:
            for name in ("steps.txt", "not_run.txt"):
                (self.out / name).unlink(missing_ok=True)
            (self.out / "logs").mkdir(parents=True, exist_ok=True)
        packer = Packer(self.out) if self.trace else None
        try:
            outcome = self.each(steps)
        finally:
            if packer is not None:
                packer.stop()
        if self.trace and not (self.out / "not_run.txt").exists():
            self.note("not_run.txt", "every step ran")
        self.pack()
        return outcome

    def each(self, steps: List[Step]) -> Outcome:
        cut = ""
        failed = False
        status = schema.EXIT_OK
        for step in steps:
            if cut:
                self.not_run(step.name, cut)
                continue
            left = self.budget.left()
            if left < MIN_STEP_S:
                cut = f"the {self.budget.seconds} s budget ran out before it"
                self.not_run(step.name, cut)
                continue
            code, seconds = self.one(step, left)
            if code is None:
                cut = f"the {self.budget.seconds} s budget ran out during {step.name}"
                continue
            if step.ends_run_on_failure and code != 0:
                status = schema.EXIT_ENV if code == schema.EXIT_ENV else schema.EXIT_BUILD
                cut = f"{step.name} failed (exit {code})"
                continue
            failed = failed or code != 0
        if status != schema.EXIT_OK:
            return Outcome(status, cut)
        if failed:
            return Outcome(schema.EXIT_FAIL, cut)
        return Outcome(schema.EXIT_BUDGET if cut else schema.EXIT_OK, cut)

    def not_run(self, name: str, why: str) -> None:
        self.note("not_run.txt", f"{name}: not run ({why})")
        common.record(self.record, name, status="not_run", note=why)

    def one(self, step: Step, left: float) -> "tuple[Optional[int], int]":
        """Runs one step; (its exit code or None when the budget cut it, its seconds)."""
        started = time.monotonic()
        if self.trace:
            print(f"== {step.name} ({int(left)} s left)", flush=True)
        log_path = self.out / "logs" / f"{step.name}.log"
        common.DEADLINE[0] = None if self.budget.seconds is None else started + left
        try:
            code: Optional[int] = self.act(step, log_path)
        except BudgetCut:
            code = None
        finally:
            common.DEADLINE[0] = None
        seconds = int(time.monotonic() - started)
        if self.trace:
            self.show_tail(log_path, 3 if code == 0 else 25)
        if code is None:
            self.note("steps.txt", f"{step.name:<14} cut by the budget after {seconds}s")
            self.note(
                "not_run.txt",
                f"{step.name}: cut by the budget after {seconds}s " "(what it wrote is kept)",
            )
            common.record(self.record, step.name, status="cut", seconds=seconds)
            return None, seconds  # the run ends: run() packs it
        verdict = "passed" if code == 0 else f"failed (exit {code})"
        self.note("steps.txt", f"{step.name:<14} {verdict} {seconds}s")
        if not step.records:
            status = "ok" if code == 0 else "failed"
            common.record(self.record, step.name, status=status, exit=code, seconds=seconds)
        self.pack()  # with the step's line and record: a run killed in the next step keeps them
        return code, seconds

    def summary(self, budget: Budget, status: int) -> None:
        """The closing lines: each step's outcome and seconds, the steps not run, the exit."""
        of = f" of a {budget.seconds} s budget" if budget.seconds is not None else ""
        print(f"== steps ({budget.elapsed()}s{of}):")
        for name in ("steps.txt", "not_run.txt"):
            if name == "not_run.txt":
                print("== not run:")
            path = self.out / name
            if path.is_file():
                print(path.read_text(encoding="utf-8"), end="")
        print(f"run: exit {status}", flush=True)

    def act(self, step: Step, log_path: Path) -> int:
        if not self.trace:
            return step.action(None)
        with open(log_path, "w", encoding="utf-8") as log:
            return step.action(log)

    @staticmethod
    def show_tail(path: Path, lines: int) -> None:
        try:
            text = path.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            return
        for line in text[-lines:]:
            print(line)
        sys.stdout.flush()

    def pack(self) -> None:
        if self.trace:
            pack(self.out)


def pack(out: Path) -> None:
    """OUT/run.tar.gz: everything in OUT, written beside and moved in (the folder must not
    change while it is read)."""
    with _pack_lock:
        handle, packed = tempfile.mkstemp(dir=out, prefix=PACKING, suffix=".tar.gz")
        os.close(handle)
        _pack_into(out, packed)


PACKING = ".packing-"
_pack_lock = threading.Lock()


def _pack_into(out: Path, packed: str) -> None:
    try:
        with tarfile.open(packed, "w:gz") as tar:
            for entry in sorted(os.listdir(out)):
                if entry != "run.tar.gz" and not entry.startswith(PACKING):
                    tar.add(out / entry, arcname=f"./{entry}")
        os.chmod(packed, 0o644)
        os.replace(packed, out / "run.tar.gz")
    except OSError as error:
        common.log(f"could not pack {out}: {error}")
        if os.path.exists(packed):
            os.unlink(packed)


class Packer:
    """Repacks OUT every minute in a thread, until stopped."""

    def __init__(self, out: Path, period_s: float = 60.0) -> None:
        self.done = threading.Event()
        self.thread = threading.Thread(target=self.loop, args=(out, period_s), daemon=True)
        self.thread.start()

    def loop(self, out: Path, period_s: float) -> None:
        while not self.done.wait(period_s):
            pack(out)

    def stop(self) -> None:
        self.done.set()
        self.thread.join(timeout=30)
