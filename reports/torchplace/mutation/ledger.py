"""The mutants' record files: the equivalents (ids no input can kill, each with a reason) and
the ledger (each mutant's verdict at its last measurement). ci/mutation/README.md."""
import json
from pathlib import Path
from typing import Dict, List

from torchplace.mutation.mutations import MUTATIONS
from torchplace.mutation.run import CannotJudge
from torchplace.schema import EXIT_ENV

EQUIVALENTS = Path(__file__).with_name("equivalents")
# Each mutant's verdict at the last measurement (--write-ledger): killed, untriaged (survived, not
# yet killed by a test nor shown equivalent), unrun (not reached), not_built (see generated.py) or
# build_failure (the mutated source does not compile: no program to judge, out of the ratio);
# killed_cuda: killed by the tests of a CUDA build on a GPU, whose CUDA tests a host without them
# skips: such a host does not run it (status needs_cuda, apart from its run's ratio); the
# ledger's ratio counts it killed. killed_2x: killed by a LibTorch 2.x build's tests (code and
# cells a 1.13.1 build compiles but never runs: autocast on sim:0, the 2.x rule columns), which a
# 1.x build does not run (status needs_2x, apart, like needs_cuda); counted killed.
# killed_fault NAME: a scenario file's survivor under whose change the catalogue's fault NAME
# escapes the cells that catch it (faults.py); a sample judges it again with NAME planted.
# A sampled survivor fails the run when the ledger says killed (a hole opened) or does not know it
# (new or changed code); one it records as untriaged or unrun is a known, unmeasured hole: listed
# and counted as survived in the kill ratio, not a failure. A sample does not run untriaged ones.
LEDGER = Path(__file__).with_name("ledger")
LEDGER_STATES = (
    "killed",
    "killed_cuda",
    "killed_2x",
    "killed_fault",
    "untriaged",
    "unrun",
    "not_built",
    "build_failure",
)


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


def _known_state(state: str, faults: set) -> bool:
    """One of LEDGER_STATES, or `killed_fault NAME` for a fault of the catalogue."""
    kind, _, name = state.partition(" ")
    if kind == "killed_fault":
        return name in faults
    return state in LEDGER_STATES


def load_ledger(path: Path = LEDGER) -> Dict[str, str]:
    ledger = load_equivalents(path) if path.is_file() else {}
    faults = {fault["name"] for fault in MUTATIONS}
    wrong = [f"{i} {s}" for i, s in ledger.items() if not _known_state(s, faults)]
    if wrong:
        known = f"one of {LEDGER_STATES}, nor killed_fault with a catalogue fault's name"
        raise CannotJudge(EXIT_ENV, f"{path.name}: a state is not {known}: {wrong[:3]}")
    return ledger


def ledger_state(record: dict) -> str:
    """A run's record as a ledger state: a kill on a CUDA build is `killed_cuda`, on a LibTorch
    2.x build `killed_2x`, under a planted fault (faults.py) `killed_fault NAME`."""
    if record.get("fault") and record["status"] == "killed":
        return f"killed_fault {record['fault']}"
    killed = (
        "killed_cuda" if record.get("cuda") else "killed_2x" if record.get("torch2") else "killed"
    )
    return {
        "killed": killed,
        "timeout": killed,
        "build_failure": "build_failure",
        "not_built": "not_built",
        "needs_cuda": "killed_cuda",
        "needs_2x": "killed_2x",
    }.get(record["status"], "untriaged")


def write_ledger(path: Path, records: list, ledger: Dict[str, str], mutants: list) -> None:
    """Every mutant but the equivalents, with this run's verdict where it ran one."""
    now = {r["id"]: ledger_state(r) for r in records}
    equivalents = load_equivalents()
    lines = [HEADER_LEDGER]
    for mutant in mutants:
        if mutant.id not in equivalents:
            lines.append(f"{mutant.id} {now.get(mutant.id, ledger.get(mutant.id, 'unrun'))}")
    path.write_text("\n".join(lines) + "\n")


HEADER_LEDGER = (
    "# Every generated mutant's verdict at its last measurement (ledger.py --write-ledger):\n"
    "# killed, untriaged (survived; not yet killed by a test or shown equivalent), unrun (not\n"
    "# reached), not_built (in `#if NAME` code this build does not compile, e.g. CUDA-only) or\n"
    "# build_failure (the mutated source does not compile); killed_cuda: killed by a CUDA\n"
    "# build's tests, not run by a build without CUDA; killed_2x: killed by a LibTorch 2.x\n"
    "# build's tests, not run by a 1.x build; killed_fault NAME: with the catalogue's fault\n"
    "# NAME planted, the cells that caught it pass (faults.py).\n"
    "# Equivalents are not listed. Written by the tool."
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


def records_of(paths: List[str]) -> list:
    """The mutant records of --out files (a sharded run's, say), later files winning."""
    by_id: Dict[str, dict] = {}
    for path in paths:
        try:
            doc = json.loads(Path(path).read_text())
            records = doc["mutants"]
        except (OSError, ValueError, KeyError, TypeError) as error:
            raise CannotJudge(EXIT_ENV, f"{path}: not a mutant record file (--out): {error}")
        for record in records:
            if not isinstance(record, dict) or not {"id", "status"} <= set(record):
                raise CannotJudge(EXIT_ENV, f"{path}: a record without id and status: {record}")
            by_id[record["id"]] = record
    return list(by_id.values())
