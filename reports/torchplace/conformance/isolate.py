"""Each sweep entry in a worker process (worker.py), so that a crash or a hang is a named failure
of that entry, never a dead run: a worker that dies mid-entry gives that entry the signal or exit
status it died of (and the end of what it printed); one that takes longer than the timeout is
killed, its entry a hang. A fresh worker then takes the next entry.
"""
from __future__ import annotations

import json
import os
import queue
import select
import signal
import subprocess
import tempfile
import threading
import time
from typing import Any, Dict, Iterable, Iterator, List, Optional

START_TIMEOUT_S = 300  # importing torch and the database
RESULTS_FD = "TORCHPLACE_RESULTS_FD"  # the worker writes its results to this descriptor


class Worker:
    """One worker process and its result channel (the pipe whose descriptor RESULTS_FD names)."""

    def __init__(self, argv: List[str], env: Dict[str, str]) -> None:
        self.log = tempfile.TemporaryFile()
        read, write = os.pipe()
        self.process = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            env=dict(env, **{RESULTS_FD: str(write)}),
            pass_fds=(write,),
            text=True,
            start_new_session=True,
        )
        os.close(write)
        self.results = os.fdopen(read, "r")
        self.hung = False

    def read(self, timeout: float) -> Optional[Dict[str, Any]]:
        """The next result line, or None when the worker died (self.hung False) or the time ran
        out (self.hung True)."""
        ready, _, _ = select.select([self.results], [], [], max(0.0, timeout))
        self.hung = not ready
        line = self.results.readline() if ready else ""
        return json.loads(line) if line else None

    def send(self, name: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(name + "\n")
        self.process.stdin.flush()

    def tail(self, size: int = 1500) -> str:
        self.log.seek(0, os.SEEK_END)
        self.log.seek(max(0, self.log.tell() - size))
        return self.log.read().decode(errors="replace")

    def stop(self) -> Optional[int]:
        """Its exit status (negative: the signal); killed first unless it ended by itself."""
        try:
            status = self.process.wait(timeout=0 if self.hung else 10)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            status = self.process.wait()
        self.results.close()
        self.log.close()
        return status


def death(status: Optional[int]) -> str:
    if status is not None and status < 0:
        return signal.Signals(-status).name
    return f"exit status {status}"


def _serve(
    argv: List[str],
    env: Dict[str, str],
    names: "queue.Queue[str]",
    timeout_s: float,
    deadline: float,
    out: "queue.Queue[Dict[str, Any]]",
) -> None:
    worker: Optional[Worker] = None
    while time.monotonic() < deadline:
        try:
            name = names.get_nowait()
        except queue.Empty:
            break
        if worker is None:
            worker = Worker(argv, env)
            if not (worker.read(START_TIMEOUT_S) or {}).get("ready"):
                tail = worker.tail()
                worker.stop()
                raise RuntimeError(f"the sweep's worker did not start: {tail}")
        worker.send(name)
        # An entry started before the deadline has its whole timeout: the budget stops starting
        # entries, it does not cut one short (that read as a hang: max_pool2d's backward).
        result = worker.read(timeout_s)
        if result is None:
            hung = worker.hung
            tail, status = worker.tail(), worker.stop()
            worker = None
            result = {
                "name": name,
                "agree": False,
                "cpu_runs": True,
                "crashed": "hang" if hung else death(status),
                "output_tail": tail[-1500:],
            }
        out.put(result)
    if worker is not None:
        worker.stop()


def run(
    argv: List[str],
    env: Dict[str, str],
    names: Iterable[str],
    workers: int,
    timeout_s: float,
    budget_s: float,
) -> Iterator[Dict[str, Any]]:
    """Yields each entry's result as it comes (in no fixed order) until the names or the budget
    run out; entries not started by then are not yielded."""
    todo: "queue.Queue[str]" = queue.Queue()
    for name in names:
        todo.put(name)
    done: "queue.Queue[Dict[str, Any]]" = queue.Queue()
    deadline = time.monotonic() + budget_s
    errors: List[BaseException] = []

    def serve() -> None:
        try:
            _serve(argv, env, todo, timeout_s, deadline, done)
        except BaseException as error:  # noqa: BLE001 - re-raised in the caller's thread
            errors.append(error)

    threads = [threading.Thread(target=serve, daemon=True) for _ in range(workers)]
    for thread in threads:
        thread.start()
    while any(thread.is_alive() for thread in threads) or not done.empty():
        try:
            yield done.get(timeout=0.5)
        except queue.Empty:
            continue
    if errors:
        raise errors[0]
