"""The Python mutants' kill sets, run fast (issue 26): CTest's test commands, run directly.

Once per tree, every test of a kill set runs unmutated under coverage (python3-coverage, in its
child processes too, through a sitecustomize hook): it must pass, and its seconds and the lines it
executes of the tree's Python (TRACED: reports/, ci/, harness/, scenarios/) are cached
(build/.../pytests-profile.json, keyed by a hash of those files). A mutant then runs only the
tests that execute the statement it changes, cheapest first (seconds / (1 + mutants that test
killed so far)), `jobs` at a time, and stops at the first failure. A mutant whose statement no
test executes survives without a run: no test can tell it apart. Without python3-coverage every
test of the kill set is a candidate.
"""
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Callable, Dict, List, Optional, Set, Tuple

# A traced test's sitecustomize.py. os.execv (the command's report/gate/explain hand over to
# their module that way) ends a process without its atexit: the lines run before it are saved first.
HOOK = """import os
if os.environ.get('COVERAGE_PROCESS_START'):
    import coverage

    _cov = coverage.process_startup()
    if _cov is not None:
        _execv = os.execv

        def _saving_execv(path, args):
            _cov.stop()
            _cov.save()
            _execv(path, args)

        os.execv = _saving_execv
"""
# The tree's folders that hold the Python in scope (scope.py): each traced, and nothing else (a
# build folder's venvs hold torch).
TRACED = ("reports", "ci", "harness", "scenarios")


@dataclass
class PyTest:
    name: str
    command: List[str]
    env: Dict[str, str]
    cwd: str
    seconds: float = 0.0
    lines: Dict[str, Set[int]] = field(default_factory=dict)  # path in the tree -> lines run
    traced: bool = False  # lines were measured (python3-coverage present)
    skip_code: Optional[int] = None  # CTest's SKIP_RETURN_CODE: that exit is a skip, not a fail


def has_coverage() -> bool:
    try:
        import coverage  # noqa: F401
    except ImportError:
        return False
    return True


def discover(build_dir: Path, regex: str, exclude: str) -> List[PyTest]:
    """The tests CTest would run for `-R regex -E exclude`, with their command, env and cwd."""
    args = ["ctest", "--test-dir", str(build_dir), "--show-only=json-v1", "-R", regex]
    if exclude:
        args += ["-E", exclude]
    listed = json.loads(subprocess.run(args, capture_output=True, text=True, check=True).stdout)
    tests = []
    for entry in listed["tests"]:
        if not entry.get("command"):  # a gtest binary not built yet: CTest's placeholder
            continue
        props = {p["name"]: p["value"] for p in entry.get("properties", [])}
        env = dict(os.environ)
        env.update(item.split("=", 1) for item in props.get("ENVIRONMENT", []))
        for item in props.get("ENVIRONMENT_MODIFICATION", []):
            modify(env, item)
        cwd = str(props.get("WORKING_DIRECTORY", build_dir))
        skip = str(props.get("SKIP_RETURN_CODE", ""))
        skip_code = int(skip) if skip else None
        tests.append(PyTest(entry["name"], entry["command"], env, cwd, skip_code=skip_code))
    return tests


def modify(env: Dict[str, str], item: str) -> None:
    """One CTest ENVIRONMENT_MODIFICATION entry, `NAME=OP:VALUE` (CMake's test properties)."""
    name, _, rest = item.partition("=")
    op, _, value = rest.partition(":")
    now = env.get(name, "")
    glue = ";" if op.startswith("cmake_list") else os.pathsep
    after = glue.join(p for p in (now, value) if p)
    before = glue.join(p for p in (value, now) if p)
    ops = {"set": value, "string_append": now + value, "string_prepend": value + now}
    ops.update({"path_list_append": after, "cmake_list_append": after})
    ops.update({"path_list_prepend": before, "cmake_list_prepend": before})
    if op == "unset" or (op == "reset" and name not in os.environ):
        env.pop(name, None)
    elif op == "reset":  # the value before the test's modifications
        env[name] = os.environ[name]
    elif op in ops:
        env[name] = ops[op]
    else:
        raise ValueError(f"ENVIRONMENT_MODIFICATION {item!r}: an operation this engine lacks")


def tree_key(tree: Path, tests: List[PyTest]) -> str:
    """A hash of what the profile depends on: reports/ (not this engine, but its HOOK), ci/, the
    Python of harness/ and scenarios/, and the tests' commands."""
    digest = hashlib.sha256(json.dumps([t.command for t in tests]).encode() + HOOK.encode())
    for top in TRACED:
        for path in sorted((tree / top).rglob("*" if top in ("reports", "ci") else "*.py")):
            engine = path.parent.name == "mutation" and path.parent.parent.name == "torchplace"
            if path.is_file() and "__pycache__" not in path.parts and not engine:
                digest.update(path.relative_to(tree).as_posix().encode())
                digest.update(path.read_bytes())
    return digest.hexdigest()


def _start(
    test: PyTest, trace_dir: Optional[Path], output: IO[bytes], tree: Path
) -> subprocess.Popen:
    """Starts one test; its output goes to a file (a pipe nobody reads until the end would block
    a test that writes more than the pipe holds, about 64 KiB, into a false timeout)."""
    # no .pyc written: a mutant of the same size, made in the same second as the last one, would
    # be run as the last one's bytecode (CPython checks only the source's mtime and size)
    env = dict(test.env, PYTHONDONTWRITEBYTECODE="1")
    if trace_dir is not None:
        trace_dir.mkdir(parents=True, exist_ok=True)
        (trace_dir / "sitecustomize.py").write_text(HOOK)
        rc = trace_dir / "coveragerc"
        rc.write_text(
            f"[run]\nparallel = True\ndata_file = {trace_dir}/.coverage\ninclude =\n"
            + "".join(f"    {tree.resolve()}/{top}/*\n" for top in TRACED)
        )
        env["COVERAGE_PROCESS_START"] = str(rc)
        env["PYTHONPATH"] = os.pathsep.join([env.get("PYTHONPATH", ""), str(trace_dir)])
    return subprocess.Popen(
        test.command,
        cwd=test.cwd,
        env=env,
        stdout=output,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def _lines_of(trace_dir: Path, tree: Path) -> Dict[str, Set[int]]:
    """path in the tree -> the lines the traced processes ran."""
    import coverage

    combined = coverage.Coverage(data_file=str(trace_dir / ".coverage"))
    combined.combine([str(trace_dir)], keep=False)
    data = combined.get_data()
    found: Dict[str, Set[int]] = {}
    root = tree.resolve()
    for measured in data.measured_files():
        path = Path(measured).resolve()
        if path.suffix == ".py" and path.is_relative_to(root):
            key = path.relative_to(root).as_posix()
            found.setdefault(key, set()).update(data.lines(measured) or [])
    return found


def _kill(process: subprocess.Popen) -> None:
    try:
        os.killpg(process.pid, 9)
    except ProcessLookupError:
        pass
    process.wait()


def run_tests(
    tests: List[PyTest],
    jobs: int,
    timeout_of: Callable[[PyTest], float],
    stop_at_first: bool,
    trace_root: Optional[Path] = None,
    tree: Path = Path("."),
) -> List[Tuple[PyTest, str, float, str]]:
    """Runs tests `jobs` at a time: (test, pass|fail|timeout, seconds, output tail) each, in the
    order they ended; with stop_at_first, the others are stopped at the first fail or timeout."""
    waiting, running, ended = list(tests), [], []  # type: ignore[var-annotated]
    started = 0
    while waiting or running:
        while waiting and len(running) < jobs:
            test = waiting.pop(0)
            trace = trace_root / str(started) if trace_root else None
            started += 1
            output = tempfile.TemporaryFile()
            started_at = time.monotonic()
            running.append((test, _start(test, trace, output, tree), started_at, trace, output))
        time.sleep(0.05)
        for item in list(running):
            test, process, began, trace, output = item
            spent = time.monotonic() - began
            if process.poll() is None and spent <= timeout_of(test):
                continue
            running.remove(item)
            if process.returncode is None:
                _kill(process)
                verdict, tail = "timeout", f"past {timeout_of(test):.0f} s"
            else:
                output.seek(0)
                verdict = "pass" if process.returncode == 0 else "fail"
                if process.returncode == test.skip_code:  # judged nothing here: never a kill
                    verdict = "skip"
                tail = output.read().decode(errors="replace")[-4000:]
            output.close()
            if trace is not None and verdict == "pass":
                test.lines, test.traced = _lines_of(trace, tree), True
            ended.append((test, verdict, spent, tail))
            if stop_at_first and verdict in ("fail", "timeout"):
                for _, other, _, _, other_output in running:
                    _kill(other)
                    other_output.close()
                return ended
    return ended


class KillSet:
    """The profiled tests of one kill set, and the order they are tried in."""

    def __init__(self, tests: List[PyTest], verified: bool):
        self.tests = tests
        self.kills: Counter = Counter()
        # tests seen passing unmutated: a kill by any other one counts only once it is (verify)
        self.verified: Set[str] = {t.name for t in tests} if verified else set()

    def verify(self, name: str, jobs: int) -> Tuple[bool, str]:
        """Runs one test on the unmutated tree (the caller restored it): (it does not fail,
        output). A skip there is no failure: the mutant's failure (say, an import that crashes
        before the test can skip) is the mutant's, and CTest would turn red on it."""
        test = next(t for t in self.tests if t.name == name)
        _, verdict, seconds, tail = run_tests([test], jobs, lambda t: 600.0, False)[0]
        not_failing = verdict in ("pass", "skip")
        if not_failing:
            self.verified.add(name)
            test.seconds = test.seconds or seconds
        return not_failing, tail

    def candidates(
        self, path: str, first: int, last: int, allowed: Optional[Set[str]] = None
    ) -> List[PyTest]:
        """Tests that execute a line of path in [first, last] (all, where not traced), among
        `allowed` (names; None: all)."""
        chosen = [
            t
            for t in self.tests
            if (allowed is None or t.name in allowed)
            and (not t.traced or any(first <= line <= last for line in t.lines.get(path, ())))
        ]
        return sorted(chosen, key=lambda t: t.seconds / (1 + self.kills[t.name]))

    def try_mutant(
        self, path: str, first: int, last: int, jobs: int, allowed: Optional[Set[str]] = None
    ) -> Tuple[str, str, str]:
        """(killed|timeout|survived, detail, the test that killed it or "")."""
        chosen = self.candidates(path, first, last, allowed)
        if not chosen:
            return "survived", f"no test of its kill set executes {path}:{first}-{last}", ""
        ended = run_tests(chosen, jobs, lambda t: max(60.0, 6 * t.seconds), True)
        for test, verdict, _, tail in ended:
            if verdict == "fail":
                self.kills[test.name] += 1
                lines = [line for line in tail.strip().splitlines() if line.strip()]
                named = [line for line in lines if line.startswith(("FAIL:", "ERROR:"))]
                said = (named or lines or [""])[0 if named else -1]
                return "killed", f"{test.name}: {said}"[:300], test.name
            if verdict == "timeout":
                return "timeout", f"{test.name} past its deadline", test.name
        return "survived", f"{len(chosen)} test(s) passed", ""


def profile(tests: List[PyTest], tree: Path, cache: Path, jobs: int) -> KillSet:
    """Runs every test unmutated (traced where python3-coverage is present) or reads the cache.
    Raises RuntimeError naming any test that does not pass unmutated."""
    key = tree_key(tree, tests)
    traced = has_coverage()
    if cache.is_file():
        stored = json.loads(cache.read_text())
        if stored.get("key") == key and stored.get("traced") == traced:
            by_name = stored["tests"]
            if all(t.name in by_name for t in tests):
                for test in tests:
                    test.seconds = by_name[test.name]["seconds"]
                    test.lines = {p: set(v) for p, v in by_name[test.name]["lines"].items()}
                    test.traced = by_name[test.name]["traced"]
                return KillSet(tests, verified=True)
    with tempfile.TemporaryDirectory(prefix="torchplace-trace-") as scratch:
        root = Path(scratch) if traced else None
        ended = run_tests(tests, jobs, lambda t: 600.0, False, root, tree)
    if traced:  # a test that times signals may fail under tracing: then run it untraced
        again = [t for t, verdict, _, _ in ended if verdict in ("fail", "timeout")]
        ended = [item for item in ended if item[1] in ("pass", "skip")]
        ended += run_tests(again, jobs, lambda t: 600.0, False) if again else []
        for test in again:
            print(f"generated: {test.name} runs untraced (red traced)", file=sys.stderr)
    red = [
        f"{t.name} ({verdict}): {tail[-300:]}"
        for t, verdict, _, tail in ended
        if verdict in ("fail", "timeout")
    ]
    if red:
        raise RuntimeError("unmutated, a kill-set test does not pass: " + "\n".join(red))
    for test, _, seconds, _ in ended:
        test.seconds = seconds
    stored = {
        "key": key,
        "traced": traced,
        "tests": {
            t.name: {
                "seconds": t.seconds,
                "traced": t.traced,
                "lines": {p: sorted(v) for p, v in t.lines.items()},
            }
            for t in tests
        },
    }
    cache.write_text(json.dumps(stored))
    print(f"generated: profiled {len(tests)} test(s), traced={traced}", file=sys.stderr)
    return KillSet(tests, verified=True)


def lazy(tests: List[PyTest], build_dir: Path) -> KillSet:
    """No profile run (CI, after `ctest` ran these tests): seconds from CTest's cost data where
    present, every test a candidate, and a test that kills a mutant is run once unmutated before
    the kill counts (KillSet.verify)."""
    costs: Dict[str, float] = {}
    data = build_dir / "Testing" / "Temporary" / "CTestCostData.txt"
    if data.is_file():
        for line in data.read_text().splitlines():
            if line.strip() == "---":
                break
            parts = line.split()
            if len(parts) == 3:
                costs[parts[0]] = float(parts[2])
    for test in tests:
        test.seconds = costs.get(test.name, 5.0)  # 5 s: an untimed test, about the median
    return KillSet(tests, verified=False)
