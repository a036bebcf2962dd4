"""Generated mutants (issue 26): standard operators applied to every line in scope (scope.py),
each tried in a scratch copy, rebuilt where C++, and run against only the tests that can kill it.

  python3 -m torchplace.mutation.generated [--lang cpp,py] [--only ID,...] [--files PATH,...]
      [--sample SEED --budget-s N] [--limit N] [--list | --check] [--scratch DIR] [--out FILE]

Mutant ids are `path:[function:]hash:operator:index` (operators_cpp.Mutant.id): no line number,
so an edit elsewhere in the file keeps them. reports/torchplace/mutation/equivalents lists the
ones that cannot be killed, each with a one-line reason; they are not run. --sample SEED orders
the rest by a hash of the seed and the id (CI: the commit hash, so every submission meets other
mutants); with --budget-s N no mutant starts that would end past N seconds by the longest of its
kind so far (the baseline counts). Python mutants run as pytests.py says: traced and cached
without a budget, every test of the kill set (each killer checked unmutated) with one.
The ledger (LEDGER below) decides which survivors fail the run.
Each mutant ends: killed (a selected test failed), timeout (a test ran past its deadline: counted
as detected, listed apart), survived, or build_failure (the mutant does not compile: proves
nothing, listed apart, never a kill).

Exit codes: 0 no survivor the ledger did not expect; 1 one (named); 3 cannot
judge (the unmutated copy fails its kill tests, no mutant was tried, an equivalent names no
mutant, a crash of the tools); 4 the unmutated copy does not build; 64 bad arguments.
"""
import argparse
import hashlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from typing import Any, Dict, List, Optional, Sequence, Tuple
from pathlib import Path

from torchplace.mutation import operators_cpp, operators_py, pytests, scope
from torchplace.mutation.operators_cpp import Mutant
from torchplace.mutation.run import CannotJudge, configure, sync_tree
from torchplace.schema import EXIT_BUILD, EXIT_ENV, EXIT_FAIL, EXIT_OK, EXIT_USAGE, ROOT

EQUIVALENTS = Path(__file__).with_name("equivalents")
# Each mutant's verdict at the last measurement (--write-ledger): killed, untriaged (survived, not
# yet killed by a test nor shown equivalent) or unrun (not reached). A sampled survivor fails the
# run when the ledger says killed (a hole opened) or does not know it (new or changed code); one
# it records as untriaged or unrun is a known, unmeasured hole: listed and counted as survived in
# the kill ratio, not a failure. A sample does not run untriaged ones (they would cost time only).
LEDGER = Path(__file__).with_name("ledger")
LEDGER_STATES = ("killed", "untriaged", "unrun")
FIRST_GUESS_S = {"cpp": 120.0, "py": 30.0}  # one mutant, until one of its kind was timed
BUILD_TIMEOUT_S = 900  # one rebuild on a loaded 2-core runner
TEST_TIMEOUT_S = 180  # the kill set of one mutant
PY_TEST_TIMEOUT_S = 60  # one CTest test of a Python mutant


def log(text: str) -> None:
    print(f"generated: {text}", file=sys.stderr, flush=True)


def generate(langs: Sequence[str] = ("cpp", "py"), files: Optional[Sequence[str]] = None) -> list:
    """Every mutant in scope, in file then line order."""
    mutants = []
    for lang, table, module in (
        ("cpp", scope.CPP, operators_cpp),
        ("py", scope.PYTHON, operators_py),
    ):
        if lang not in langs:
            continue
        for path in table:  # type: ignore[attr-defined]
            if files and path not in files:
                continue
            source = ROOT / path
            if not source.is_file():
                raise CannotJudge(EXIT_ENV, f"{path} is in scope.py but not in the tree")
            mutants += module.mutants_of(path, source.read_text())
    return mutants


def load_equivalents(path: Path = EQUIVALENTS) -> dict:
    """id -> reason, from lines `ID  reason` (# comments, blank lines ignored)."""
    found = {}
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        ident, _, reason = line.strip().partition(" ")
        if not reason.strip():
            raise CannotJudge(EXIT_ENV, f"{path.name}:{number}: {ident} has no reason")
        found[ident] = reason.strip()
    return found


def load_ledger(path: Path = LEDGER) -> Dict[str, str]:
    ledger = load_equivalents(path) if path.is_file() else {}
    wrong = [f"{i} {s}" for i, s in ledger.items() if s not in LEDGER_STATES]
    if wrong:
        raise CannotJudge(
            EXIT_ENV, f"{path.name}: a state is not one of {LEDGER_STATES}: {wrong[:3]}"
        )
    return ledger


def write_ledger(path: Path, records: list, ledger: Dict[str, str]) -> None:
    """Every generated mutant but the equivalents, with this run's verdict where it ran one."""
    now = {
        r["id"]: {"killed": "killed", "timeout": "killed", "build_failure": "unrun"}.get(
            r["status"], "untriaged"
        )
        for r in records
    }
    equivalents = load_equivalents()
    lines = [HEADER_LEDGER]
    for mutant in generate():
        if mutant.id not in equivalents:
            lines.append(f"{mutant.id} {now.get(mutant.id, ledger.get(mutant.id, 'unrun'))}")
    path.write_text("\n".join(lines) + "\n")


HEADER_LEDGER = (
    "# Every generated mutant's verdict at its last measurement (generated.py --write-ledger;\n"
    "# see LEDGER there): killed, untriaged (survived; not yet killed by a test or shown\n"
    "# equivalent) or unrun (not reached). Equivalents are not listed. Written by the tool."
)


def check_equivalents(mutants: list, equivalents: dict) -> None:
    known = {mutant.id for mutant in mutants}
    stale = sorted(set(equivalents) - known)
    if stale:
        raise CannotJudge(
            EXIT_ENV,
            f"equivalents name mutants that are not generated (a file "
            f"changed? re-check them): {', '.join(stale[:10])}",
        )


def sample_order(mutants: list, seed: str) -> list:
    return sorted(mutants, key=lambda m: hashlib.sha256(f"{seed}:{m.id}".encode()).hexdigest())


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

    def build(self) -> Tuple[bool, str]:
        """(ok, output tail); a build past its deadline is not ok."""
        args = [
            "cmake",
            "--build",
            str(self.build_dir),
            "-j",
            str(self.jobs),
            "--target",
            scope.CPP_BINARY,
        ]
        try:
            done = subprocess.run(args, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            return False, f"build timed out after {BUILD_TIMEOUT_S} s"
        return done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]

    def gtest(self, pattern: str) -> Tuple[str, str]:
        """(verdict, detail): pass, fail, timeout, or empty (nothing ran: a crash or no test)."""
        report = Path(tempfile.gettempdir()) / f"torchplace-generated-{os.getpid()}.json"
        report.unlink(missing_ok=True)
        binary = self.build_dir / "harness" / scope.CPP_BINARY
        command = [str(binary), f"--gtest_filter={pattern}", f"--gtest_output=json:{report}"]
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=TEST_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            return "timeout", f"past {TEST_TIMEOUT_S} s"
        if not report.is_file():
            return "fail", f"crashed (exit {done.returncode})"
        failed, completed = [], 0
        suites = json.loads(report.read_text())["testsuites"]
        report.unlink()
        for suite in suites:
            for test in suite["testsuite"]:
                completed += test.get("result") == "COMPLETED"
                if test.get("failures"):
                    failed.append(f"{suite['name']}.{test['name']}")
        if failed or done.returncode != 0:
            return "fail", ", ".join(failed) or f"exit {done.returncode}"
        return ("pass", f"{completed} test(s)") if completed else ("empty", "no test ran")

    def python_kill_set(self, kill: Tuple[str, str]) -> pytests.KillSet:
        """The kill set's tests, each seen passing unmutated, timed and traced (cached)."""
        if kill not in self.kill_sets:
            tests = pytests.discover(self.build_dir, *kill)
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
            done = subprocess.run(args, capture_output=True, text=True, timeout=TEST_TIMEOUT_S * 5)
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
    if is_cpp(mutant):
        return scope.CPP[mutant.path]
    return (TESTS_OVERRIDE, "") if TESTS_OVERRIDE else scope.PYTHON[mutant.path]


def baseline(scratch: Scratch, mutants: list) -> None:
    """Every kill set the mutants use runs at least one test and passes unmutated."""
    if any(is_cpp(mutant) for mutant in mutants):
        ok, output = scratch.build()
        if not ok:
            raise CannotJudge(EXIT_BUILD, "the unmutated scratch copy does not build:\n" + output)
    for kill in sorted({kill_set(mutant) for mutant in mutants}, key=str):
        if not isinstance(kill, str):
            tests = scratch.python_kill_set(kill).tests
            traced = sum(test.traced for test in tests)
            how = "each killer run unmutated first" if scratch.lazy else "pass unmutated"
            log(f"baseline {kill}: {len(tests)} test(s), {how}, {traced} traced")
            continue
        verdict, detail = scratch.gtest(kill)
        if verdict != "pass":
            raise CannotJudge(
                EXIT_ENV,
                f"unmutated, the kill set {kill} ended {verdict} "
                f"({detail}): it cannot show a mutant",
            )
        log(f"baseline {kill}: pass ({detail})")


def try_mutant(scratch: Scratch, mutant: Mutant) -> dict:
    path = scratch.tree / mutant.path
    pristine = path.read_text()
    started = time.monotonic()
    path.write_text(apply(pristine, mutant))
    killer = ""
    try:
        if is_cpp(mutant):
            ok, output = scratch.build()
            if not ok:
                status = "timeout" if "timed out" in output else "build_failure"
                return {"status": status, "detail": output[-400:]}
            verdict, detail = scratch.gtest(kill_set(mutant))
            # "empty": every selected test skipped, which CI shows as no failure either
            status = {"fail": "killed", "pass": "survived", "timeout": "timeout"}.get(
                verdict, "survived"
            )
        else:
            assert isinstance(mutant, operators_py.PyMutant)  # every mutant outside scope.CPP
            status, detail, killer = scratch.python_kill_set(kill_set(mutant)).try_mutant(
                mutant.path, mutant.stmt_line, mutant.stmt_end, scratch.jobs
            )
    finally:
        path.write_text(pristine)
        log(f"{mutant.id} done in {time.monotonic() - started:.0f} s")
    kills = scratch.kill_sets.get(kill_set(mutant))
    if killer and kills is not None and killer not in kills.verified:
        passed, output = kills.verify(killer, scratch.jobs)
        if not passed:
            raise CannotJudge(EXIT_ENV, f"unmutated, {killer} fails too: {output[-400:]}")
    return {"status": status, "detail": detail, "seconds": round(time.monotonic() - started, 1)}


def summarise(records: list, equivalents_count: int) -> dict:
    states = ("killed", "timeout", "survived", "untriaged", "unmeasured", "build_failure")
    counts = {key: 0 for key in states}
    for record in records:
        counts[record["status"]] += 1
    judged = sum(counts[key] for key in states[:-1])
    detected = counts["killed"] + counts["timeout"]
    return {
        **counts,
        "tried": len(records),
        "judged": judged,
        "kill_ratio": (detected / judged) if judged else None,
        "equivalents_excluded": equivalents_count,
    }


def parse_args(argv: Optional[List[str]] = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python3 -m torchplace.mutation.generated", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--lang", default="cpp,py", help="cpp, py or both (default)")
    parser.add_argument("--only", help="comma-separated mutant ids")
    parser.add_argument("--files", help="comma-separated paths in scope")
    parser.add_argument("--sample", help="seed: run in the order of a hash of seed and id")
    parser.add_argument("--budget-s", type=float, help="start no mutant after this many seconds")
    parser.add_argument("--limit", type=int, help="run at most this many mutants")
    parser.add_argument("--list", action="store_true", help="print the mutants and exit")
    parser.add_argument(
        "--check",
        action="store_true",
        help="generate, check the equivalents file, count; build nothing",
    )
    parser.add_argument("--scratch", default=str(ROOT / "build" / "mutate-generated"))
    parser.add_argument(
        "--in-tree",
        metavar="BUILD_DIR",
        help="mutate the checkout itself and rebuild in this configured build "
        "folder (CI: no scratch build); every file is restored after its "
        "mutant, and the checkout must hold no change to the files in scope",
    )
    parser.add_argument(
        "--tests",
        metavar="REGEX",
        help="Python mutants: only these CTest tests (to see one new test kill its mutant)",
    )
    parser.add_argument("--out", help="write every mutant's record here (JSON)")
    parser.add_argument(
        "--write-ledger", metavar="FILE", help="write every mutant's verdict (see LEDGER) here"
    )
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    try:
        args = parser.parse_args(argv)
    except SystemExit as error:
        sys.exit(EXIT_OK if error.code == 0 else EXIT_USAGE)
    langs = set(args.lang.split(","))
    if not langs or langs - {"cpp", "py"} or (args.budget_s is not None and args.budget_s <= 0):
        print(
            "generated: --lang takes cpp, py or cpp,py; --budget-s a positive number",
            file=sys.stderr,
        )
        sys.exit(EXIT_USAGE)
    args.langs = langs
    return args


def select(args: argparse.Namespace, mutants: list, equivalents: dict) -> list:
    if args.only:
        wanted = args.only.split(",")
        by_id = {mutant.id: mutant for mutant in mutants}
        unknown = [ident for ident in wanted if ident not in by_id]
        if unknown:
            print(f"generated: no such mutant: {', '.join(unknown)}", file=sys.stderr)
            sys.exit(EXIT_USAGE)
        return [by_id[ident] for ident in wanted]
    chosen = [mutant for mutant in mutants if mutant.id not in equivalents]
    if args.sample:
        chosen = sample_order(chosen, args.sample)
    return chosen[: args.limit] if args.limit else chosen


def untriaged_record(mutant: Mutant) -> Dict[str, Any]:
    detail = "a known survivor (ledger: untriaged), not run"
    return {"id": mutant.id, "old": mutant.old, "new": mutant.new, "status": "untriaged"} | {
        "detail": detail
    }


def run(args: argparse.Namespace, chosen: list, equivalents: dict, ledger: dict) -> int:
    started = time.monotonic()
    # A CI step cancelled mid-mutant: the `finally` of try_mutant still restores the file.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(EXIT_ENV))
    in_tree = Path(args.in_tree).resolve() if args.in_tree else None
    lazy = args.budget_s is not None
    scratch = Scratch(Path(args.scratch).resolve(), args.jobs, in_tree, lazy)
    skip_known = bool(args.sample) and not args.only
    known = {ident for ident, state in ledger.items() if state == "untriaged"}
    baseline(scratch, [m for m in chosen if not (skip_known and m.id in known)])
    records: List[Dict[str, Any]] = []
    guess, timed = dict(FIRST_GUESS_S), set()
    for mutant in chosen:
        kind = "cpp" if is_cpp(mutant) else "py"
        if skip_known and mutant.id in known:
            records.append(untriaged_record(mutant))
            continue
        spent = time.monotonic() - started
        # --in-tree: once a C++ mutant ran, the restored checkout is rebuilt at the end, about
        # one C++ mutant's rebuild, which the budget keeps room for
        restore = guess["cpp"] if in_tree and (kind == "cpp" or "cpp" in timed) else 0.0
        if args.budget_s is not None and spent + guess[kind] + restore > args.budget_s:
            continue  # would end past the budget; a cheaper kind may still fit
        record = {"id": mutant.id, "old": mutant.old, "new": mutant.new}
        record.update(try_mutant(scratch, mutant))
        if "seconds" in record:  # the longest of its kind so far replaces the first guess
            guess[kind] = (
                max(guess[kind], record["seconds"]) if kind in timed else record["seconds"]
            )
            timed.add(kind)
        if record["status"] == "survived" and ledger.get(mutant.id) in ("untriaged", "unrun"):
            record["status"] = "untriaged" if mutant.id in known else "unmeasured"
        records.append(record)
        print(f"{record['id']}: {record['status']} ({record['detail'][:160]!r})", flush=True)
        if args.out:  # after each mutant: a run stopped midway keeps what it measured
            partial = {"summary": summarise(records, len(equivalents)), "mutants": records}
            Path(args.out).write_text(json.dumps(partial, indent=1))
    if args.budget_s is not None:
        log(f"budget of {args.budget_s:.0f} s: {len(chosen) - len(records)} mutant(s) not tried")
    if in_tree and any(is_cpp(m) for m in chosen if m.id in {r["id"] for r in records}):
        ok, output = scratch.build()  # the binaries of the restored sources, not the last mutant's
        if not ok:
            raise CannotJudge(EXIT_BUILD, "the restored checkout does not build:\n" + output)
    summary = summarise(records, len(equivalents))
    summary["seconds"] = round(time.monotonic() - started, 1)
    if args.out:
        Path(args.out).write_text(json.dumps({"summary": summary, "mutants": records}, indent=1))
    log(f"summary: {json.dumps(summary)}")
    if args.write_ledger:
        write_ledger(Path(args.write_ledger), records, ledger)
    if not summary["judged"] - summary["untriaged"]:
        print("generated: cannot judge: no mutant was tried to the end", file=sys.stderr)
        return EXIT_ENV
    if summary["untriaged"] or summary["unmeasured"]:
        log(
            f"{summary['untriaged']} known untriaged survivor(s) and {summary['unmeasured']} "
            f"never measured before (reports/torchplace/mutation/ledger), counted as survived "
            f"in the kill ratio, not failures: "
            + ", ".join(r["id"] for r in records if r["status"] in ("untriaged", "unmeasured"))
        )
    survivors = [record["id"] for record in records if record["status"] == "survived"]
    if survivors:
        print(
            f"generated: {len(survivors)} mutant(s) survived (kill each with a test, or record "
            f"it in reports/torchplace/mutation/equivalents with a reason): "
            f"{', '.join(survivors)}",
            file=sys.stderr,
        )
        return EXIT_FAIL
    return EXIT_OK


def main(argv: Optional[List[str]] = None) -> int:
    global TESTS_OVERRIDE
    args = parse_args(argv)
    TESTS_OVERRIDE = args.tests
    try:
        mutants = generate(args.langs, args.files.split(",") if args.files else None)
        equivalents = load_equivalents()
        everything = generate()
        check_equivalents(everything, equivalents)
        ledger = load_ledger()
        stale = sorted(set(ledger) - {mutant.id for mutant in everything})
        if stale:  # its line changed: the new mutant there is judged afresh
            log(f"{len(stale)} ledger id(s) name no mutant now (--write-ledger): {stale[:5]}")
        chosen = select(args, mutants, equivalents)
        if args.check and args.write_ledger:  # after a merge: new ids unrun, the rest kept
            write_ledger(Path(args.write_ledger), [], ledger)
        if args.list or args.check:
            for mutant in chosen if args.list else []:
                print(f"{mutant.id}\t{mutant.old.strip()[:60]!r} -> {mutant.new.strip()[:60]!r}")
            log(
                f"{len(mutants)} mutant(s) generated, {len(equivalents)} recorded equivalent, "
                f"{len(chosen)} selected"
            )
            return EXIT_OK
        return run(args, chosen, equivalents, ledger)
    except CannotJudge as error:
        print(f"generated: cannot judge: {error}", file=sys.stderr)
        return error.code


if __name__ == "__main__":
    sys.exit(main())
