"""The mutation check: proves that the CPU tests can fail. Each mutation of mutations.py breaks one
fix in a scratch copy of the tree; the tests it names are rebuilt and run, and at least one must
fail. Before any mutation, the same tests must run (not skip) and pass on the unmutated copy.

  python3 -m torchplace.mutation [--only NAME,...] [--list | --check] [--scratch DIR] [--jobs N]

--check only applies every mutation's text to its file in memory (no copy, no build): each file
must exist and each text be found where it must; a full run starts with the same check.

Exit codes: 0 every mutation was killed; 1 a mutation survived (named); 3 the check could not
judge (a mutation that does not apply or does not compile, a kill set that selects no test or
fails unmutated, a crash of the tools); 4 the unmutated copy does not build; 64 bad arguments.
"""
import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Iterable, List, Optional, Sequence, Tuple

from torchplace.mutation.mutations import MUTATIONS, Mutation
from torchplace.schema import EXIT_BUILD, EXIT_ENV, EXIT_OK, EXIT_USAGE, ROOT
from torchplace.schema import EXIT_FAIL as EXIT_SURVIVED

TEST_TIMEOUT_S = 600  # a hang counts as killed, but not forever
BINARIES = {"torchplace_harness_tests": "harness", "torchplace_scenarios": "scenarios"}


class CannotJudge(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


def log(text: str) -> None:
    print(f"mutate: {text}", file=sys.stderr, flush=True)


def sync_tree(tree: Path) -> None:
    """Copies the tracked and untracked-but-not-ignored files into `tree`, rewriting only files
    whose bytes differ, so that the scratch build stays incremental."""
    listed = (
        subprocess.run(
            ["git", "ls-files", "-z", "-co", "--exclude-standard"],
            cwd=ROOT,
            check=True,
            capture_output=True,
        )
        .stdout.decode()
        .split("\0")
    )
    wanted = {name for name in listed if name and (ROOT / name).is_file()}
    for name in sorted(wanted):
        source, target = ROOT / name, tree / name
        data = source.read_bytes()
        if not target.is_file() or target.read_bytes() != data:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
            shutil.copymode(source, target)
    for path in tree.rglob("*"):
        relative = path.relative_to(tree).as_posix()
        if path.is_file() and not relative.startswith("build/") and relative not in wanted:
            path.unlink()


# ccache's settings for a build with a precompiled header (its manual, "Precompiled headers"):
# without them every unit that uses the PCH is a miss.
CCACHE_ENV = {"CCACHE_SLOPPINESS": "pch_defines,time_macros,include_file_mtime,include_file_ctime"}


def configure(tree: Path, build: Path) -> None:
    """The dev preset's layout, built as CI's build type (Release: no debug info to write or
    link), with ccache and lld where present. Without unity builds: a mutant then recompiles the
    files that include what it changed, not a whole batch of them; ccache makes the restored
    file's rebuild a hit (its base dir: the scratch folder's parent, shared by scratch copies).
    Measured: 9 s a C++ mutant (median), against 25-80 s at -O2 -g without ccache (ci/mutation/
    README.md). Configured on every check, so that a scratch build of an older check takes these
    options."""
    args = ["cmake", "-S", str(tree), "--preset", "dev", "-B", str(build)]
    args += ["-DTORCHPLACE_UNITY_BUILD=OFF", "-DCMAKE_BUILD_TYPE=Release"]
    if shutil.which("ccache"):
        args += ["-DCMAKE_CXX_COMPILER_LAUNCHER=ccache", "-DCMAKE_CXX_FLAGS=-fpch-preprocess"]
        for name, value in CCACHE_ENV.items():
            os.environ.setdefault(name, value)  # a user's own setting wins
        os.environ.setdefault("CCACHE_BASEDIR", str(tree.parent.parent))
    if shutil.which("ld.lld"):
        args += [f"-DCMAKE_{kind}_LINKER_FLAGS=-fuse-ld=lld" for kind in ("EXE", "SHARED")]
    if os.environ.get("Torch_DIR"):
        args.append(f"-DTorch_DIR={os.environ['Torch_DIR']}")
    args += os.environ.get("TORCHPLACE_CMAKE_ARGS", "").split()
    if subprocess.run(args, stdout=subprocess.DEVNULL).returncode != 0:
        raise CannotJudge(EXIT_ENV, "configuring the scratch copy failed (CMake's message above)")


def run_group(args: Sequence[str], timeout_s: Optional[float] = None) -> Tuple[int, str]:
    """(exit code, output) of a build run in a session of its own. On a timeout or any exception
    (SIGTERM's SystemExit) the whole group is killed before it propagates: a compiler left
    running would write a mutant's object after the file's restore, newer than the source, and
    every later build would link it (seen: a kill set red unmutated)."""
    process = subprocess.Popen(
        list(args),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        output, _ = process.communicate(timeout=timeout_s)
    except BaseException:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        process.communicate()
        raise
    return process.returncode, output


def build(build_dir: Path, targets: Sequence[str], jobs: int) -> Tuple[bool, str]:
    args = ["nice", "cmake", "--build", str(build_dir), "-j", str(jobs), "--target", *targets]
    code, output = run_group(args)
    return code == 0, output[-8000:]


def run_tests(
    build_dir: Path, binary: str, pattern: str, scratch: Path
) -> Tuple[int, List[str], str]:
    """Runs one kill set; returns (completed, failed test names, how it ended)."""
    report = scratch / "gtest.json"
    report.unlink(missing_ok=True)
    command = [
        str(build_dir / BINARIES[binary] / binary),
        f"--gtest_filter={pattern}",
        f"--gtest_output=json:{report}",
    ]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=TEST_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return 0, [], f"timed out after {TEST_TIMEOUT_S} s"
    if not report.is_file():  # a crash: the report is written at the end
        return 0, [], f"crashed (exit {done.returncode}): {done.stderr.strip()[-300:]}"
    completed, failed = 0, []
    for suite in json.loads(report.read_text())["testsuites"]:
        for test in suite["testsuite"]:
            if test.get("result") == "COMPLETED":
                completed += 1
            if test.get("failures"):
                failed.append(f"{suite['name']}.{test['name']}")
    return completed, failed, f"exit {done.returncode}"


def mutate_text(text: str, mutation: Mutation) -> str:
    start = 0
    if mutation["anchor"]:
        start = text.find(mutation["anchor"])
        if start < 0:
            raise CannotJudge(
                EXIT_ENV, f"{mutation['name']}: anchor not found in {mutation['path']}"
            )
    elif text.count(mutation["old"]) != 1:
        raise CannotJudge(
            EXIT_ENV,
            f"{mutation['name']}: the text to change occurs "
            f"{text.count(mutation['old'])} times in {mutation['path']}",
        )
    at = text.find(mutation["old"], start)
    if at < 0:
        raise CannotJudge(
            EXIT_ENV,
            f"{mutation['name']}: text to change not found in "
            f"{mutation['path']} (was the file edited? update torchplace/mutation/mutations.py)",
        )
    return text[:at] + mutation["new"] + text[at + len(mutation["old"]) :]


def check_texts(mutations: Iterable[Mutation]) -> None:
    """Every mutation applies to the tree as it is: its file exists and its text is found."""
    for mutation in mutations:
        path = ROOT / mutation["path"]
        if not path.is_file():
            raise CannotJudge(
                EXIT_ENV,
                f"{mutation['name']}: {mutation['path']} does not exist "
                f"(moved? update torchplace/mutation/mutations.py)",
            )
        mutate_text(path.read_text(), mutation)


def targets_of(mutations: Iterable[Mutation]) -> List[str]:
    return sorted({binary for mutation in mutations for binary, _ in mutation["kill"]})


def baseline(build_dir: Path, mutations: List[Mutation], scratch: Path, jobs: int) -> None:
    """Every kill set must run at least one test and pass on the unmutated copy."""
    ok, output = build(build_dir, targets_of(mutations), jobs)
    if not ok:
        raise CannotJudge(EXIT_BUILD, "the unmutated scratch copy does not build:\n" + output)
    for binary, pattern in sorted({kill for mutation in mutations for kill in mutation["kill"]}):
        completed, failed, ended = run_tests(build_dir, binary, pattern, scratch)
        if completed == 0 or failed:
            raise CannotJudge(
                EXIT_ENV,
                f"unmutated, {binary} --gtest_filter={pattern} ran "
                f"{completed} test(s), failed {failed} ({ended}): it "
                f"cannot show a mutation",
            )
        log(f"baseline {binary} {pattern}: {completed} test(s) pass")


def try_mutation(
    tree: Path, build_dir: Path, mutation: Mutation, scratch: Path, jobs: int
) -> List[str]:
    """Applies one mutation, rebuilds what it touches, runs its kill sets, restores the file.
    Returns the failing tests (empty: the mutation survived)."""
    path = tree / mutation["path"]
    pristine = path.read_text()
    path.write_text(mutate_text(pristine, mutation))
    try:
        ok, output = build(build_dir, sorted({binary for binary, _ in mutation["kill"]}), jobs)
        if not ok:
            raise CannotJudge(
                EXIT_ENV,
                f"{mutation['name']}: the mutant does not compile, so it "
                f"proves nothing; fix torchplace/mutation/mutations.py:\n{output}",
            )
        killed_by = []
        for binary, pattern in mutation["kill"]:
            completed, failed, ended = run_tests(build_dir, binary, pattern, scratch)
            if failed:
                killed_by += failed
            elif completed == 0:  # crashed or hung: red in CI too
                killed_by.append(f"{binary} --gtest_filter={pattern} ({ended})")
        return killed_by
    finally:
        path.write_text(pristine)  # a new mtime: the next build recompiles it (a ccache hit)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python3 -m torchplace.mutation", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--only", help="comma-separated mutation names")
    parser.add_argument("--list", action="store_true", help="print the mutations and exit")
    parser.add_argument(
        "--check",
        action="store_true",
        help="check that every mutation applies to this tree, build nothing",
    )
    parser.add_argument(
        "--scratch",
        default=str(ROOT / "build" / "mutate"),
        help="scratch folder (default build/mutate; kept between runs)",
    )
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    try:
        return parser.parse_args()
    except SystemExit as error:
        sys.exit(EXIT_OK if error.code == 0 else EXIT_USAGE)


def select(only: Optional[str]) -> List[Mutation]:
    if not only:
        return MUTATIONS
    names = only.split(",")
    unknown = sorted(set(names) - {mutation["name"] for mutation in MUTATIONS})
    if unknown:
        print(f"mutate: unknown mutation(s): {', '.join(unknown)}", file=sys.stderr)
        sys.exit(EXIT_USAGE)
    return [mutation for mutation in MUTATIONS if mutation["name"] in names]


def check(mutations: List[Mutation], scratch: Path, jobs: int) -> List[str]:
    tree = scratch / "tree"
    build_dir = tree / "build" / "dev"  # the worktree's relative layout: ccache hits
    tree.mkdir(parents=True, exist_ok=True)
    sync_tree(tree)
    configure(tree, build_dir)
    started = time.monotonic()
    baseline(build_dir, mutations, scratch, jobs)
    log(f"baseline built and passed in {time.monotonic() - started:.0f} s")
    survivors = []
    for mutation in mutations:
        started = time.monotonic()
        killed_by = try_mutation(tree, build_dir, mutation, scratch, jobs)
        seconds = time.monotonic() - started
        verdict = f"killed by {', '.join(killed_by)}" if killed_by else "SURVIVED"
        print(f"{mutation['name']}: {verdict} ({seconds:.0f} s)", flush=True)
        if not killed_by:
            survivors.append(mutation["name"])
    return survivors


def main() -> int:
    args = parse_args()
    mutations = select(args.only)
    if args.list:
        for mutation in mutations:
            kills = "; ".join(f"{binary} {pattern}" for binary, pattern in mutation["kill"])
            print(f"{mutation['name']}\t{mutation['path']}\t{kills}")
        return EXIT_OK
    started = time.monotonic()
    try:
        check_texts(mutations)
        if args.check:
            log(f"all {len(mutations)} mutation(s) apply to this tree")
            return EXIT_OK
        survivors = check(mutations, Path(args.scratch).resolve(), args.jobs)
    except CannotJudge as error:
        print(f"mutate: cannot judge: {error}", file=sys.stderr)
        return error.code
    log(f"{len(mutations)} mutation(s) in {time.monotonic() - started:.0f} s")
    if survivors:
        print(
            f"mutate: {len(survivors)} mutation(s) survived: {', '.join(survivors)}",
            file=sys.stderr,
        )
        return EXIT_SURVIVED
    log(f"all {len(mutations)} mutation(s) killed")
    return EXIT_OK
