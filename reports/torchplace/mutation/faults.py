"""A scenario file's survivors judged under a planted fault (issue 45). A mutant that deletes or
loosens a check leaves every passing cell passing: only wrong code shows what the check was for.
The catalogue (mutations.py) holds such faults. With one planted that the scenario catches, the
cells that fail with it alone (every device this host runs) are its catchers; a survivor of the
scenario's file is killed when, with the fault still planted, one of those cells runs alone and
passes (a skip passes nothing): the mutant switched off the check that caught it. The ledger
records it `killed_fault NAME`, and a sample judges it again the same way (one build with both
edits).

The full pass (--faults, on the ids the ledger calls untriaged) builds a file's survivors once
per fault, as one schema (schemata.py); a survivor no schema can hold (a tolerance at namespace
scope: no function body holds it) is built alone with the fault, one build each.
"""
import json
import time
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Set, Tuple

from torchplace.mutation import operators_cpp, schema_runs, schemata, scope
from torchplace.mutation.mutations import MUTATIONS
from torchplace.mutation.mutations import S as SCENARIOS
from torchplace.mutation.mutations import Kill, Mutation
from torchplace.mutation.operators_cpp import Mutant
from torchplace.mutation.run import CannotJudge, mutate_text
from torchplace.mutation.scratch import Scratch, log, write_fresh
from torchplace.schema import EXIT_BUILD, EXIT_ENV

STATE = "killed_fault"


def scenario_of(path: str) -> Optional[str]:
    """The scenario a file registers (scenarios/NAME.cpp registers NAME), or None."""
    if not path.startswith("scenarios/") or path.count("/") != 1 or not path.endswith(".cpp"):
        return None
    return path[len("scenarios/") : -len(".cpp")]


def cells_of(fault: Mutation, scenario: str) -> List[Kill]:
    """The fault's kill sets that run the scenario's cells."""
    return [
        (binary, pattern)
        for binary, pattern in fault["kill"]
        if binary == SCENARIOS and pattern.startswith(scenario + ".")
    ]


def faults_for(path: str, only: Optional[Set[str]] = None) -> List[Mutation]:
    """The catalogue's faults that some cell of this file's scenario catches, in its order
    (those named in `only`, when given)."""
    scenario = scenario_of(path)
    chosen = [fault for fault in MUTATIONS if only is None or fault["name"] in only]
    return [fault for fault in chosen if scenario and cells_of(fault, scenario)]


def fault_named(name: str) -> Mutation:
    for fault in MUTATIONS:
        if fault["name"] == name:
            return fault
    raise CannotJudge(EXIT_ENV, f"the ledger names a fault the catalogue lacks: {name}")


class Planted:
    """A fault written into the scratch tree for a `with` block; its file restored after."""

    def __init__(self, scratch: Scratch, fault: Mutation) -> None:
        self.file = scratch.tree / fault["path"]
        self.fault = fault
        self.pristine = ""

    def __enter__(self) -> "Planted":
        self.pristine = self.file.read_text()
        write_fresh(self.file, mutate_text(self.pristine, self.fault))
        return self

    def __exit__(self, *_: object) -> None:
        write_fresh(self.file, self.pristine)


def failing(
    scratch: Scratch, pattern: str, env: Optional[Dict[str, str]] = None
) -> Optional[Set[str]]:
    """The cells of `pattern` that fail (every one run), or None where the run cannot say (a
    crash, a timeout, nothing run)."""
    verdict, detail = scratch.gtest(SCENARIOS, pattern, env, fail_fast=False)
    if verdict == "pass":
        return set()
    names = set(detail.split(", "))
    if verdict != "fail" or any(" " in name or "." not in name for name in names):
        return None
    return names


# (fault, file) -> the cells that fail with the fault alone, twice (once by chance is none)
CATCHERS: Dict[Tuple[str, str], Set[str]] = {}


def failing_twice(scratch: Scratch, fault: Mutation, path: str) -> Set[str]:
    """The file's cells that fail in two runs of what is built now (the fault alone)."""
    runs = [failing(scratch, scope.CPP[path][1]) or set() for _ in range(2)]
    CATCHERS[(fault["name"], path)] = runs[0] & runs[1]
    log(f"faults: {fault['name']} alone fails {len(runs[0] & runs[1])} cell(s) of {path}")
    return runs[0] & runs[1]


def catchers(scratch: Scratch, fault: Mutation, path: str) -> Set[str]:
    """The file's cells that fail with the fault alone, planted and built."""
    key = (fault["name"], path)
    if key not in CATCHERS:
        ok, output = scratch.build([SCENARIOS])
        if not ok:
            raise CannotJudge(EXIT_ENV, f"fault {fault['name']} does not build: {output[-400:]}")
        failing_twice(scratch, fault, path)
    return CATCHERS[key]


def escaped(scratch: Scratch, caught: Set[str], env: Optional[Dict[str, str]] = None) -> Set[str]:
    """The catchers that ran and passed now, each run alone (one skipped, crashed or not run
    passes nothing); none where the run of them all cannot say."""
    now = failing(scratch, ":".join(sorted(caught)), env)
    if now is None:
        return set()
    return {c for c in caught - now if scratch.gtest(SCENARIOS, c, env, False)[0] == "pass"}


def record(fault: Mutation, passing: Set[str]) -> dict:
    return {
        "status": "killed",
        "fault": fault["name"],
        "detail": f"with the fault {fault['name']} planted, {', '.join(sorted(passing))} "
        f"pass(es): the check this mutant changes is what caught it",
    }


def same_program(planted: List[Mutant], mutants: Dict[str, Mutant]) -> List[Mutant]:
    """The mutants of the text with a fault planted that change the same line the same way as
    in the pristine text (a dup_stmt beside the fault's line keeps its id, not its program)."""
    return [
        m
        for m in planted
        if m.id in mutants and (m.old, m.new) == (mutants[m.id].old, mutants[m.id].new)
    ]


def try_under_fault(scratch: Scratch, mutant: Mutant, name: str) -> dict:
    """A sample's judgement of a `killed_fault NAME` mutant: one build with both edits."""
    fault, started = fault_named(name), time.monotonic()
    with Planted(scratch, fault):
        caught = catchers(scratch, fault, mutant.path)
        if not caught:  # the suite lost what caught the fault: a hole, named
            detail = f"the fault {name} alone fails no cell of {mutant.path} now"
            return {"status": "survived", "detail": detail}
        file = scratch.tree / mutant.path
        text = file.read_text()
        moved = same_program(operators_cpp.mutants_of(mutant.path, text), {mutant.id: mutant})
        if not moved:
            raise CannotJudge(EXIT_ENV, f"{mutant.id}: another program with fault {name} planted")
        try:
            write_fresh(file, operators_cpp.apply(text, moved[0]))
            ok, output = scratch.build([SCENARIOS])
            passing = escaped(scratch, caught) if ok else set()
        finally:
            write_fresh(file, text)
    seconds = round(time.monotonic() - started, 1)
    if not ok:
        return {"status": "build_failure", "detail": output[-400:], "seconds": seconds}
    if not passing:
        detail = f"with the fault {name} planted, no catcher ran and passed: no kill"
        return {"status": "survived", "detail": detail, "seconds": seconds}
    return record(fault, passing) | {"seconds": seconds}


COMPILING: Dict[str, Set[str]] = {}  # a file's survivors whose schema copies compile
UNBUILT: List[str] = []  # "path under fault": a schema of placeable survivors that did not build


def _schema(
    scratch: Scratch, path: str, text: str, left: Dict[str, Mutant]
) -> Tuple[Dict[int, Mutant], bool]:
    """The survivors' schema of the file's text written and built (the copies that compile:
    found once a file, by a numbered build), by number, and whether any survivor was placeable;
    none by number where it cannot build."""
    chosen = same_program(operators_cpp.mutants_of(path, text), left)
    held = schemata.placeable(text, chosen)
    numbered = {n: m for n, m in enumerate(chosen) if m in held}
    if path in COMPILING:
        numbered = {n: m for n, m in numbered.items() if m.id in COMPILING[path]}
        write_fresh(scratch.tree / path, schemata.schema(text, numbered))
        if numbered and scratch.build([SCENARIOS])[0]:
            return numbered, True
    if not numbered or not schema_runs.compiling(scratch, path, text, numbered):
        return {}, bool(held)
    COMPILING[path] = {m.id for m in numbered.values()}
    write_fresh(scratch.tree / path, schemata.schema(text, numbered))
    return (numbered if scratch.build([SCENARIOS])[0] else {}), True


def _schema_pass(
    scratch: Scratch, fault: Mutation, path: str, left: Dict[str, Mutant]
) -> Dict[str, Set[str]]:
    """The ids of `left` under whose schema copy some catcher of the planted fault passes; the
    catchers are the cells that fail with no copy chosen (the fault alone)."""
    file = scratch.tree / path
    text = file.read_text()  # the fault in it, where it lies in this file
    try:
        numbered, placeable = _schema(scratch, path, text, left)
        if not numbered:
            if placeable:
                UNBUILT.append(f"{path} under {fault['name']}")
            log(f"faults: {path}: no schema of its {len(left)} survivor(s) builds")
            return {}
        caught = failing_twice(scratch, fault, path)
        found = {
            m.id: escaped(scratch, caught, {schemata.ENV: str(n)}) for n, m in numbered.items()
        }
        return {ident: passing for ident, passing in found.items() if passing}
    finally:
        write_fresh(file, text)


def _alone_pass(
    scratch: Scratch, fault: Mutation, path: str, left: Dict[str, Mutant]
) -> Dict[str, Set[str]]:
    """The ids of `left` no schema can hold under which, each built alone with the planted fault,
    some catcher of the fault passes (a copy that does not build kills nothing)."""
    file = scratch.tree / path
    text = file.read_text()  # the fault in it, where it lies in this file
    chosen = same_program(operators_cpp.mutants_of(path, text), left)
    held = schemata.placeable(text, chosen)
    alone = [m for m in chosen if m not in held]
    if not alone:
        return {}
    caught = catchers(scratch, fault, path)  # the fault alone, built if not yet
    found: Dict[str, Set[str]] = {}
    try:
        for mutant in alone:
            write_fresh(file, operators_cpp.apply(text, mutant))
            passing = escaped(scratch, caught) if scratch.build([SCENARIOS])[0] else set()
            if passing:
                found[mutant.id] = passing
    finally:
        write_fresh(file, text)
    log(f"faults: {path} under {fault['name']}: {len(found)} of {len(alone)} built alone killed")
    return found


def judge_file(
    scratch: Scratch, path: str, survivors: Dict[str, Mutant], only: Optional[Set[str]] = None
) -> Iterator[Dict[str, dict]]:
    """Each fault's records of the file's survivors (by id) it kills, fault by fault."""
    left = dict(survivors)
    for fault in faults_for(path, only):
        if not left:
            break
        with Planted(scratch, fault):
            killed = _schema_pass(scratch, fault, path, left)
            rest = {ident: m for ident, m in left.items() if ident not in killed}
            killed.update(_alone_pass(scratch, fault, path, rest))
        log(f"faults: {path} under {fault['name']}: {len(killed)} of {len(left)} killed")
        for ident in killed:
            del left[ident]
        yield {ident: record(fault, passing) for ident, passing in killed.items()}


def run_pass(
    scratch: Scratch,
    chosen: List[Mutant],
    ledger: dict,
    out: Optional[str],
    only: Optional[Set[str]] = None,
) -> list:
    """--faults: the chosen scenario files' untriaged survivors under each of their faults (or
    only the catalogue's faults named in `only`: a name it lacks is an error)."""
    for name in sorted(only or ()):
        fault_named(name)
    survivors: Dict[str, Dict[str, Mutant]] = {}
    UNBUILT.clear()
    for mutant in chosen:
        if ledger.get(mutant.id) == "untriaged" and scenario_of(mutant.path):
            survivors.setdefault(mutant.path, {})[mutant.id] = mutant
    if not survivors:
        raise CannotJudge(EXIT_ENV, "--faults: no untriaged survivor of a scenario file chosen")
    records: List[dict] = []
    for path, mutants in survivors.items():
        for killed in judge_file(scratch, path, mutants, only):
            for ident, found in killed.items():
                mutant = mutants[ident]
                records.append({"id": ident, "old": mutant.old, "new": mutant.new} | found)
            if out:  # after each fault: a run stopped midway keeps what it measured
                Path(out).write_text(json.dumps({"mutants": records}, indent=1))
    log(f"faults: {len(records)} of {sum(map(len, survivors.values()))} survivor(s) killed")
    if UNBUILT:  # what it measured is in `out`; what it could not judge is an error
        raise CannotJudge(EXIT_BUILD, "--faults: no schema built for " + ", ".join(UNBUILT))
    return records
