"""A C++ file's mutants judged through one schema build (schemata.py) in a Scratch: the schema
is built numbered until it compiles (a copy a compile error names leaves it), rebuilt with the
original line numbers, seen passing its kill set with no mutant chosen, then each mutant's kill
set runs with TORCHPLACE_MUTANT set. What the schema cannot hold is left to the one-by-one path
(scratch.try_mutant), which also records a mutant that does not compile as a build failure."""
import subprocess
import time
from collections import Counter, defaultdict, deque
from concurrent.futures import ThreadPoolExecutor
from typing import Deque, Dict, List, Optional, Tuple

from torchplace.mutation import macros, operators_cpp, schemata, scope
from torchplace.mutation.operators_cpp import Mutant
from torchplace.mutation.scratch import Scratch, cpp_kill_sets, log, then_later, write_fresh

MAX_ROUNDS = 4  # numbered builds; each drops every copy an error names
ERRORS_KEPT = 2_000_000  # characters of a failed build's output: every error, to name its copy
MIN_MUTANTS = 3  # fewer in a file: two schema builds cost more than one build a mutant
SYNTAX_S = 600  # one -fsyntax-only compile of a file (LibTorch's headers) on a loaded runner
STATUS = {"fail": "killed", "pass": "survived", "timeout": "timeout"}  # gtest's "empty": survived


class Killers:
    """The tests of a kill set that killed most mutants so far: a mutant runs them first (a kill
    there needs no full run). Such a set counts only once seen passing alone with no mutant
    chosen: a test that leans on an earlier test's state would otherwise kill every mutant."""

    FIRST = 5

    def __init__(self) -> None:
        self.counts: Counter = Counter()
        self.alone: Dict[str, bool] = {}  # a first set's filter -> it passes unmutated

    def judge(self, scratch: Scratch, binary: str, pattern: str, number: int) -> Tuple[str, str]:
        env = {schemata.ENV: str(number)}
        first = ":".join(name for name, _ in self.counts.most_common(self.FIRST))
        if first and self.alone.get(first, True):
            verdict, detail = scratch.gtest(binary, first, env)
            if verdict in ("fail", "timeout") and self._passes_alone(scratch, binary, first):
                self._learn(detail)
                return verdict, detail
        verdict, detail = scratch.gtest(binary, pattern, env)
        if verdict == "fail":
            self._learn(detail)
        return verdict, detail

    def _passes_alone(self, scratch: Scratch, binary: str, first: str) -> bool:
        if first not in self.alone:
            self.alone[first] = scratch.gtest(binary, first)[0] == "pass"
        return self.alone[first]

    def _learn(self, detail: str) -> None:
        """gtest's detail: the failed tests' names (not "crashed (...)" nor "exit N")."""
        names = [name for name in detail.split(", ") if "." in name and " " not in name]
        self.counts.update(names)


KILLERS: Dict[Tuple[str, str], Killers] = {}  # by kill set, for this process's run


def compiling(scratch: Scratch, path: str, text: str, numbered: Dict[int, Mutant]) -> bool:
    """Drops from `numbered` the copies that do not compile; whether the rest build."""
    binary = scope.CPP[path][0]
    for _ in range(MAX_ROUNDS):
        if not numbered:
            return False
        write_fresh(scratch.tree / path, schemata.schema(text, numbered, by_number=True))
        ok, output = scratch.build([binary], tail=ERRORS_KEPT)
        if ok:
            return True
        named, outside = schemata.error_copies(output, path)
        if outside or not named & set(numbered):
            log(f"schema of {path}: an error outside the mutants' copies; one by one instead")
            return False
        for number in named:
            numbered.pop(number, None)
    return False


def _syntax_check(scratch: Scratch, path: str) -> Optional[List[str]]:
    """The compiler's words to check a text of `path` (stdin) with its build's flags
    (-fsyntax-only), or None where the file's unmutated text does not pass it alone."""
    command = macros.command_for(scratch.build_dir, scratch.tree / path, scope.CPP[path][0])
    if command is None:
        return None
    words = macros.without_output(command)
    folder = str((scratch.tree / path).parent)  # "..." includes, as from the file's own folder
    words += ["-iquote", folder, "-fsyntax-only", "-x", "c++", "-"]
    return words if _compiles(words, (scratch.tree / path).read_text()) is None else None


def _compiles(words: List[str], text: str) -> Optional[str]:
    """None where the text compiles, else the compiler's last words."""
    done = subprocess.run(words, input=text, capture_output=True, text=True, timeout=SYNTAX_S)
    return None if done.returncode == 0 else done.stderr[-400:]


def alone_failures(scratch: Scratch, path: str, mutants: List[Mutant]) -> Dict[str, dict]:
    """build_failure records of the mutants whose file text, compiled alone, does not compile
    (the copies a schema dropped: they need no build to be told apart)."""
    words = _syntax_check(scratch, path) if mutants else None
    if words is None:
        return {}
    check: List[str] = words
    pristine = (scratch.tree / path).read_text()
    texts = [operators_cpp.apply(pristine, mutant) for mutant in mutants]
    with ThreadPoolExecutor(max_workers=scratch.jobs) as pool:
        errors = list(pool.map(lambda text: _compiles(check, text), texts))
    detail = "does not compile alone (-fsyntax-only with its build's flags): "
    return {
        m.id: {"status": "build_failure", "detail": detail + error}
        for m, error in zip(mutants, errors)
        if error is not None
    }


def _schema_passes(scratch: Scratch, path: str) -> bool:
    """The schema, no mutant chosen, builds and passes each of the file's kill sets."""
    kill_sets = cpp_kill_sets(path)
    ok, output = scratch.build([binary for binary, _ in kill_sets])
    for kill in kill_sets:
        verdict, detail = scratch.gtest(*kill) if ok else ("unbuilt", output[-400:])
        if verdict != "pass":
            log(
                f"schema of {path}, no mutant chosen: {kill} {verdict} ({detail[:160]}): one by one"
            )
            return False
    return True


def run_file(scratch: Scratch, path: str, mutants: List[Mutant]) -> Dict[str, dict]:
    """The records of the file's mutants the schema judged, by id (none where it cannot)."""
    file = scratch.tree / path
    pristine = file.read_text()
    held = schemata.placeable(pristine, mutants)
    numbered = {number: m for number, m in enumerate(mutants) if m in held}
    binary, pattern = scope.CPP[path]
    started = time.monotonic()
    try:
        if not compiling(scratch, path, pristine, numbered):
            return {}
        dropped = [m for m in held if m not in numbered.values()]
        write_fresh(file, schemata.schema(pristine, numbered))
        if not _schema_passes(scratch, path):
            return {}
        share = (time.monotonic() - started) / len(numbered)  # the builds, shared
        killers = KILLERS.setdefault((binary, pattern), Killers())
        records = {}
        for number, mutant in numbered.items():
            began = time.monotonic()
            verdict, detail = killers.judge(scratch, binary, pattern, number)
            env = {schemata.ENV: str(number)}
            verdict, detail = then_later(scratch, path, verdict, detail, env)
            seconds = round(time.monotonic() - began + share, 1)
            status = STATUS.get(verdict, "survived")
            records[mutant.id] = {"status": status, "detail": detail, "seconds": seconds}
            records[mutant.id]["schema"] = True
        write_fresh(file, pristine)
        records.update(alone_failures(scratch, path, dropped))
        log(f"schema of {path}: {len(records)} of {len(mutants)} mutant(s) judged")
        return records
    finally:
        write_fresh(file, pristine)


def judged_first(pending: Deque[Mutant], judged: Dict[str, dict]) -> Deque[Mutant]:
    """The mutants a schema judged first, the rest in their order: their verdicts take no time,
    so a run stopped (SIGTERM) during the next one-by-one build has written them (--out)."""
    first = [mutant for mutant in pending if mutant.id in judged]
    return deque(first + [mutant for mutant in pending if mutant.id not in judged])


def by_file(mutants: List[Mutant]) -> Dict[str, List[Mutant]]:
    """The (C++) mutants of each file that has MIN_MUTANTS or more of them."""
    groups: Dict[str, List[Mutant]] = defaultdict(list)
    for mutant in mutants:
        groups[mutant.path].append(mutant)
    return {path: group for path, group in groups.items() if len(group) >= MIN_MUTANTS}
