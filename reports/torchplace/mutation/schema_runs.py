"""A C++ file's mutants judged through one schema build (schemata.py) in a Scratch: the schema
is built numbered until it compiles (a copy a compile error names leaves it), rebuilt with the
original line numbers, seen passing its kill set with no mutant chosen, then each mutant's kill
set runs with TORCHPLACE_MUTANT set. What the schema cannot hold is left to the one-by-one path
(scratch.try_mutant), which also records a mutant that does not compile as a build failure."""
import time
from collections import Counter, defaultdict
from typing import Dict, List, Tuple

from torchplace.mutation import schemata, scope
from torchplace.mutation.operators_cpp import Mutant
from torchplace.mutation.scratch import Scratch, log, write_fresh

MAX_ROUNDS = 4  # numbered builds; each drops every copy an error names
ERRORS_KEPT = 2_000_000  # characters of a failed build's output: every error, to name its copy
MIN_MUTANTS = 3  # fewer in a file: two schema builds cost more than one build a mutant
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


def _compiling(scratch: Scratch, path: str, text: str, numbered: Dict[int, Mutant]) -> bool:
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


def run_file(scratch: Scratch, path: str, mutants: List[Mutant]) -> Dict[str, dict]:
    """The records of the file's mutants the schema judged, by id (none where it cannot)."""
    file = scratch.tree / path
    pristine = file.read_text()
    held = schemata.placeable(pristine, mutants)
    numbered = {number: m for number, m in enumerate(mutants) if m in held}
    binary, pattern = scope.CPP[path]
    started = time.monotonic()
    try:
        if not _compiling(scratch, path, pristine, numbered):
            return {}
        write_fresh(file, schemata.schema(pristine, numbered))
        ok, output = scratch.build([binary])
        verdict, detail = scratch.gtest(binary, pattern) if ok else ("unbuilt", output[-400:])
        if verdict != "pass":
            log(f"schema of {path}, no mutant chosen: {verdict} ({detail[:200]}); one by one")
            return {}
        share = (time.monotonic() - started) / len(numbered)  # the builds, shared
        killers = KILLERS.setdefault((binary, pattern), Killers())
        records = {}
        for number, mutant in numbered.items():
            began = time.monotonic()
            verdict, detail = killers.judge(scratch, binary, pattern, number)
            seconds = round(time.monotonic() - began + share, 1)
            status = STATUS.get(verdict, "survived")
            records[mutant.id] = {"status": status, "detail": detail, "seconds": seconds}
            records[mutant.id]["schema"] = True
        log(f"schema of {path}: {len(records)} of {len(mutants)} mutant(s) judged")
        return records
    finally:
        write_fresh(file, pristine)


def by_file(mutants: List[Mutant]) -> Dict[str, List[Mutant]]:
    """The (C++) mutants of each file that has MIN_MUTANTS or more of them."""
    groups: Dict[str, List[Mutant]] = defaultdict(list)
    for mutant in mutants:
        groups[mutant.path].append(mutant)
    return {path: group for path, group in groups.items() if len(group) >= MIN_MUTANTS}
