"""A scratch copy of the tree (or the checkout itself, --in-tree) where one mutant at a time is
applied, rebuilt where C++, and run against its kill set (scope.py); the verdict of each."""
import functools
import hashlib
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Set, Tuple

from torchplace.mutation import (
    cells_gate,
    macros,
    operators_cpp,
    operators_py,
    pytests,
    reach,
    scope,
    strays,
)
from torchplace.mutation.operators_cpp import BRANCH, Mutant
from torchplace.mutation.run import CannotJudge, configure, run_group, sync_tree
from torchplace.schema import EXIT_BUILD, EXIT_ENV, ROOT

# One mutant's seconds by kind (its kill set's binary, or py), until one of its kind was timed:
# a rebuild of the binary's unity batch and a link, then its kill set (ci/mutation/README.md).
FIRST_GUESS_S = {
    "py": 30.0,
    scope.HARNESS_TESTS: 120.0,
    "torchplace_transfer_tests": 120.0,
    "torchplace_scenarios": 240.0,
    "torchplace_sim_where_tests": 120.0,  # one file with -g, and a link
}
BUILD_TIMEOUT_S = 900  # one rebuild on a loaded 2-core runner
BASELINE_TIMEOUT_S = 3600  # the unmutated test binary from nothing (measured past 900 s under load)
TEST_TIMEOUT_S = 180  # the kill set of one mutant
# The most a kill set's run (and its children) may write to one file: past it the kernel stops
# the writer with SIGXFSZ, a crash. Seen: a mutant's spinning death-test children filled the
# disk with a 32 GB gtest captured-stream file in /tmp.
FILE_SIZE_LIMIT = 1 << 30
PY_TEST_TIMEOUT_S = 60  # one CTest test of a Python mutant


def log(text: str) -> None:
    print(f"generated: {text}", file=sys.stderr, flush=True)


def _end_group(process: subprocess.Popen) -> None:
    """Kills what is left of the process's group (its own session) and reaps it."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.wait()


def is_cpp(mutant: Mutant) -> bool:
    return mutant.path in scope.CPP


def apply(text: str, mutant: Mutant) -> str:
    return (operators_cpp if is_cpp(mutant) else operators_py).apply(text, mutant)


class Scratch:
    """A scratch copy of the tree, configured once; builds and runs kill sets in it."""

    def __init__(
        self, directory: Path, jobs: int, in_tree: Optional[Path] = None, lazy: bool = False
    ) -> None:
        self.jobs = jobs
        # a sample within a budget cannot afford the profile run (CI; see pytests.lazy)
        self.lazy = lazy
        self.kill_sets: Dict[Any, pytests.KillSet] = {}  # Python: profiled once a run
        if in_tree:  # CI: the checkout itself and its existing build; each file is restored
            self.tree, self.build_dir = ROOT, in_tree
            changed = subprocess.run(
                ["git", "diff", "--quiet", "--", *scope.CPP, *scope.PYTHON], cwd=ROOT
            ).returncode
            if changed:
                raise CannotJudge(
                    EXIT_ENV,
                    "--in-tree mutates the checkout: commit or stash the " "files in scope first",
                )
            if not (in_tree / "CMakeCache.txt").is_file():
                raise CannotJudge(EXIT_ENV, f"--in-tree {in_tree}: not a configured build folder")
            return
        self.tree = directory / "tree"
        self.build_dir = self.tree / "build" / "dev"
        self.tree.mkdir(parents=True, exist_ok=True)
        sync_tree(self.tree)
        configure(self.tree, self.build_dir)

    def build(
        self, binaries: Iterable[str], timeout_s: float = BUILD_TIMEOUT_S, tail: int = 6000
    ) -> Tuple[bool, str]:
        """(ok, output's last `tail` characters) of building these kill-set binaries; past the
        deadline: not ok."""
        args = ["cmake", "--build", str(self.build_dir), "-j", str(self.jobs), "--target"]
        args += sorted(set(binaries))
        try:
            code, output = run_group(args, timeout_s)
        except subprocess.TimeoutExpired:
            return False, f"build timed out after {timeout_s:.0f} s"
        return code == 0, output[-tail:]

    def defines(self, macro: str, binary: str = scope.HARNESS_TESTS) -> bool:
        """Whether the kill-set binary is compiled with `macro` on (-DNAME=1 or -DNAME in its
        flags.make): TORCHPLACE_WITH_CUDA, a CUDA build (`#if NAME` code: compiles())."""
        folder = self.build_dir / scope.BINARIES[binary] / "CMakeFiles"
        flags = folder / f"{binary}.dir" / "flags.make"
        if not flags.is_file():
            raise CannotJudge(EXIT_ENV, f"{flags}: not found, cannot tell whether {macro} is on")
        words = flags.read_text().split()
        return any(w in (f"-D{macro}", f"-D{macro}=1") for w in words)

    @functools.lru_cache(maxsize=None)
    def libtorch_major(self) -> int:
        """The major version of the LibTorch this build is configured against: Torch_DIR's
        TorchConfigVersion.cmake (Debian's 1.13.1 says 1.13.0; pip's wheels their own)."""
        cache = (self.build_dir / "CMakeCache.txt").read_text()
        found = re.search(r"^Torch_DIR:[A-Z]+=(.+)$", cache, re.M)
        config = Path(found.group(1).strip()) / "TorchConfigVersion.cmake" if found else None
        version = (
            re.search(r'PACKAGE_VERSION "(\d+)\.', config.read_text())
            if config and config.is_file()
            else None
        )
        if not version:
            raise CannotJudge(EXIT_ENV, f"{self.build_dir}: cannot tell its LibTorch's version")
        return int(version.group(1))

    def compiles(self, mutant: Mutant) -> bool:
        """Whether the mutant's conditional code is compiled in this build (macros.py)."""
        if not (self.build_dir / "compile_commands.json").is_file():
            raise CannotJudge(EXIT_ENV, f"{self.build_dir}: no compile_commands.json")
        binary = scope.CPP[mutant.path][0]
        source = self.tree / mutant.path
        if mutant.needs == BRANCH:
            return macros.line_compiled(self.build_dir, source, binary, mutant.line)
        return macros.macro_on(self.build_dir, source, binary, mutant.needs)

    def gtest(
        self,
        binary: str,
        pattern: str,
        env: Optional[Dict[str, str]] = None,
        fail_fast: bool = True,
    ) -> Tuple[str, str]:
        """(verdict, detail): pass, fail, timeout, or empty (nothing ran: a crash or no test);
        `env`: added to this process's environment (a schema's chosen mutant); without
        `fail_fast`, a failure's detail names every failed test."""
        report = Path(tempfile.gettempdir()) / f"torchplace-generated-{os.getpid()}.json"
        report.unlink(missing_ok=True)
        program = self.build_dir / scope.BINARIES[binary] / binary
        command = ["prlimit", f"--fsize={FILE_SIZE_LIMIT}", "--"]  # util-linux, Essential
        command += [str(program), f"--gtest_filter={pattern}", f"--gtest_output=json:{report}"]
        if fail_fast:  # a kill needs one failure: the rest is not run
            command.append("--gtest_fail_fast")
        with tempfile.TemporaryDirectory() as cells:
            if binary == cells_gate.BINARY:  # each cell's record, for the gate (cells_gate.py)
                env = {**(env or {}), cells_gate.ENV: cells}
            verdict, detail = self._gtest_run(command, report, env)
            # "empty" too: cells a mutant skips record their skips, which the gate judges
            if verdict in ("pass", "empty") and binary == cells_gate.BINARY:
                failed = cells_gate.judge(Path(cells), pattern)
                return ("fail", failed) if failed else (verdict, detail)
        return verdict, detail

    @staticmethod
    def _gtest_run(
        command: List[str], report: Path, env: Optional[Dict[str, str]]
    ) -> Tuple[str, str]:
        """gtest's verdict from its JSON report (Scratch.gtest)."""
        # its output is not read (any bytes: seen, a crash mid-UTF-8); a session of its own, so
        # that the children a mutant leaves spinning (seen: forked death-test children) end too
        process = subprocess.Popen(
            command,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env={**os.environ, **(env or {})},
            start_new_session=True,
        )
        try:
            returncode = process.wait(timeout=TEST_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            return "timeout", f"past {TEST_TIMEOUT_S} s"
        finally:
            _end_group(process)
        if not report.is_file():
            return "fail", f"crashed (exit {returncode})"
        failed, completed = [], 0
        try:  # seen: a host_read_fault.cpp mutant's run left its report cut short
            suites = json.loads(report.read_text(errors="replace"))["testsuites"]
        except (ValueError, KeyError):
            if returncode != 0:
                return "fail", f"crashed (exit {returncode}), its report cut short"
            return "empty", "exit 0 with a report that is not gtest's JSON: nothing judged"
        finally:
            report.unlink()
        for suite in suites:
            for test in suite["testsuite"]:
                completed += test.get("result") == "COMPLETED"
                if test.get("failures"):
                    failed.append(f"{suite['name']}.{test['name']}")
        if failed or returncode != 0:
            return "fail", ", ".join(failed) or f"exit {returncode}"
        return ("pass", f"{completed} test(s)") if completed else ("empty", "no test ran")

    def python_kill_set(self, kill: Tuple[str, str]) -> pytests.KillSet:
        """The kill set's tests, each seen passing unmutated, timed and traced (cached)."""
        if kill not in self.kill_sets:
            tests = pytests.discover(self.build_dir, *kill)
            # a test that reaches no Python file in scope (a gtest cell, a benchmark's shell
            # script) judges no Python mutant
            tests = [
                t
                for t in tests
                if set(scope.PYTHON) & reach.reached_files(tuple(t.command), self.tree)
            ]
            if not tests:
                raise CannotJudge(EXIT_ENV, f"the kill set {kill} names no CTest test")
            name = hashlib.sha256(repr(kill).encode()).hexdigest()[:12]
            cache = self.build_dir / f"mutation-pytests-{name}.json"
            if self.lazy:
                self.kill_sets[kill] = pytests.lazy(tests, self.build_dir)
                return self.kill_sets[kill]
            try:
                self.kill_sets[kill] = pytests.profile(tests, self.tree, cache, self.jobs)
            except RuntimeError as error:
                raise CannotJudge(EXIT_ENV, f"{error}: it cannot show a mutant")
        return self.kill_sets[kill]

    def ctest(self, regex: str, exclude: str, stop_on_failure: bool) -> Tuple[str, str]:
        args = [
            "ctest",
            "--test-dir",
            str(self.build_dir),
            "-R",
            regex,
            "--no-tests=error",
            "--timeout",
            str(PY_TEST_TIMEOUT_S),
            "-j",
            str(self.jobs),
        ]
        if exclude:
            args += ["-E", exclude]
        if stop_on_failure:
            args.append("--stop-on-failure")
        try:
            done = subprocess.run(
                args, capture_output=True, text=True, errors="replace", timeout=TEST_TIMEOUT_S * 5
            )
        except subprocess.TimeoutExpired:
            return "timeout", "the CTest run passed its deadline"
        output = done.stdout + done.stderr
        if "No tests were found" in output:
            return "empty", "no test matched"
        if done.returncode == 0:
            return "pass", output.strip().splitlines()[-1] if output.strip() else ""
        failed = [
            line.split(" - ")[-1]
            for line in output.splitlines()
            if "(Failed)" in line or "(Timeout)" in line or "(SEGFAULT)" in line
        ]
        if failed and all(
            "(Timeout)" in line
            for line in output.splitlines()
            if line.strip().endswith(("(Failed)", "(Timeout)"))
        ):
            return "timeout", "; ".join(failed)
        return "fail", "; ".join(failed)[:300] or output[-300:]


TESTS_OVERRIDE: Optional[str] = None  # --tests: a CTest regex for every Python mutant


def kill_set(mutant: Mutant) -> Any:
    """C++: ("gtest", binary, filter). Python: ("ctest", -R, -E), every test that can judge a
    mutant (scope.KILL_EXCLUDE), of which a mutant runs those that reach its file (reached)."""
    if is_cpp(mutant):
        return ("gtest",) + scope.CPP[mutant.path]
    return ("ctest", TESTS_OVERRIDE or ".", "" if TESTS_OVERRIDE else scope.KILL_EXCLUDE)


def reached(tests: List[pytests.PyTest], path: str, tree: Path) -> Set[str]:
    """The names of the tests whose scripts reach `path` (reach.py); all of them for --tests."""
    if TESTS_OVERRIDE:
        return {test.name for test in tests}
    return {test.name for test in tests if path in reach.reached_files(tuple(test.command), tree)}


def cpp_kill_sets(path: str) -> List[Tuple[str, str]]:
    """A C++ file's kill sets, (binary, gtest filter), in the order a mutant runs them."""
    return [scope.CPP[path], *scope.later_kill_sets(path)]


def then_later(
    scratch: Scratch, path: str, verdict: str, detail: str, env: Optional[Dict[str, str]] = None
) -> Tuple[str, str]:
    """A gtest verdict that did not kill, judged again by the file's later kill sets (scope), in
    order, up to the first that kills."""
    for later in scope.later_kill_sets(path):
        if verdict in ("fail", "timeout"):
            break
        again, more = scratch.gtest(*later, env)
        if again in ("fail", "timeout"):
            return again, f"{later[0]}: {more}"
    return verdict, detail


def baseline(scratch: Scratch, mutants: list) -> None:
    """Every kill set the mutants use runs at least one test and passes unmutated."""
    cpp = {mutant.path for mutant in mutants if is_cpp(mutant)}
    binaries = {binary for path in cpp for binary, _ in cpp_kill_sets(path)}
    if binaries:
        ok, output = scratch.build(binaries, BASELINE_TIMEOUT_S)
        if not ok:
            raise CannotJudge(EXIT_BUILD, "the unmutated scratch copy does not build:\n" + output)
    kills = {kill_set(mutant) for mutant in mutants if not is_cpp(mutant)}
    kills |= {("gtest",) + kill for path in cpp for kill in cpp_kill_sets(path)}
    for kill in sorted(kills, key=str):
        if kill[0] == "ctest":
            tests = scratch.python_kill_set(kill[1:]).tests
            traced = sum(test.traced for test in tests)
            how = "each killer run unmutated first" if scratch.lazy else "pass unmutated"
            log(f"baseline {kill}: {len(tests)} test(s), {how}, {traced} traced")
            continue
        verdict, detail = scratch.gtest(*kill[1:])
        if verdict != "pass":
            raise CannotJudge(
                EXIT_ENV,
                f"unmutated, the kill set {kill} ended {verdict} "
                f"({detail}): it cannot show a mutant",
            )
        log(f"baseline {kill}: pass ({detail})")


def write_fresh(path: Path, text: str) -> None:
    """Writes a mutant's file, or restores it; a .py file's mtime then moves on by a whole second
    at least: CPython's .pyc records the source's mtime in seconds and its size, so a child that
    still writes bytecode (a fresh environment, `python -I`) could run a same-size text of the
    same second as the last one's bytecode."""
    before = int(path.stat().st_mtime)
    path.write_text(text)
    if path.suffix == ".py":
        after = max(int(time.time()), before + 1)
        os.utime(path, (after, after))


def try_mutant(scratch: Scratch, mutant: Mutant) -> dict:
    path = scratch.tree / mutant.path
    pristine = path.read_text()
    started = time.monotonic()
    before = strays.state(scratch.tree)
    write_fresh(path, apply(pristine, mutant))
    killer = ""
    try:
        if is_cpp(mutant):
            ok, output = scratch.build([binary for binary, _ in cpp_kill_sets(mutant.path)])
            if not ok:
                status = "timeout" if "timed out" in output else "build_failure"
                return {"status": status, "detail": output[-400:]}
            verdict, detail = scratch.gtest(*kill_set(mutant)[1:])
            verdict, detail = then_later(scratch, mutant.path, verdict, detail)
            # "empty": every selected test skipped, which CI shows as no failure either (the
            # scenario cells' skips were held to the gate first: Scratch.gtest)
            status = {"fail": "killed", "pass": "survived", "timeout": "timeout"}.get(
                verdict, "survived"
            )
        else:
            assert isinstance(mutant, operators_py.PyMutant)  # every mutant outside scope.CPP
            kills = scratch.python_kill_set(kill_set(mutant)[1:])
            status, detail, killer = kills.try_mutant(
                mutant.path,
                mutant.stmt_line,
                mutant.stmt_end,
                scratch.jobs,
                reached(kills.tests, mutant.path, scratch.tree),
            )
    finally:
        write_fresh(path, pristine)
        left = strays.undo(scratch.tree, before, mutant.path)
        if left:
            log(f"{mutant.id} changed {len(left)} other file(s), put back: {left[:5]}")
        log(f"{mutant.id} done in {time.monotonic() - started:.0f} s")
    known = scratch.kill_sets.get(kill_set(mutant)[1:])
    if killer and known is not None and killer not in known.verified:
        passed, output = known.verify(killer, scratch.jobs)
        if not passed:
            raise CannotJudge(EXIT_ENV, f"unmutated, {killer} fails too: {output[-400:]}")
    return {"status": status, "detail": detail, "seconds": round(time.monotonic() - started, 1)}
