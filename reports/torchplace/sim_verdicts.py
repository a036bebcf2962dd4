"""Does sim:0 give CUDA's verdict? Pairs every scenario cell on sim:0 with the same cell on
cuda:0 in one results file (schema torchplace.results/1) and compares what each observed:
outcome (success/error) and error class.

  python3 -m torchplace.sim_verdicts RESULTS.json    compare a finished run
  python3 -m torchplace.sim_verdicts --suite BINARY [--skip-without-cuda]
                                              run BINARY's sim:0 and cuda:0 cells, then compare

Exit: 0 every pair agrees (at least one pair compared), 1 a pair disagrees, 3 nothing to judge
(no cuda:0 cell ran: CUDA absent) or bad input, 77 the same with --skip-without-cuda (CTest skip),
64 bad arguments.
"""
from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from typing import Any, Dict, List, Optional, Tuple

from torchplace.schema import EXIT_FAIL, EXIT_INPUT, EXIT_OK, EXIT_SKIP, EXIT_USAGE

SIM, CUDA = "device=sim:0", "device=cuda:0"


def verdict(cell: Dict[str, Any]) -> Tuple[Optional[str], Optional[str]]:
    observed = cell["observed"]
    return (observed.get("outcome"), observed.get("error_class"))


def compare(cells: List[Dict[str, Any]]) -> Tuple[int, List[str], List[str]]:
    """(agreeing pairs, disagreement lines, notes on cells not compared)."""
    by_id = {cell["id"]: cell for cell in cells}
    agree, disagree, notes = 0, [], []
    for cell_id, sim in by_id.items():
        if SIM not in cell_id:
            continue
        cuda = by_id.get(cell_id.replace(SIM, CUDA))
        if cuda is None or cuda["status"] == "skip" or sim["status"] == "skip":
            why = (
                "no cuda:0 cell"
                if cuda is None
                else (
                    f"cuda:0 skipped: {cuda['reason']}"
                    if cuda["status"] == "skip"
                    else f"sim:0 skipped: {sim['reason']}"
                )
            )
            notes.append(f"not compared: {cell_id} ({why})")
            continue
        if verdict(sim) == verdict(cuda):
            agree += 1
        else:
            disagree.append(
                f"DIFFERS: {cell_id}: sim {verdict(sim)} vs cuda {verdict(cuda)}; "
                f"sim said {sim['observed'].get('message', '')[:200]!r}, "
                f"cuda said {cuda['observed'].get('message', '')[:200]!r}"
            )
    return agree, disagree, notes


def load_cells(path: str) -> List[Dict[str, Any]]:
    try:
        with open(path, encoding="utf-8") as handle:
            doc = json.load(handle)
        return doc["cells"]
    except (OSError, ValueError, KeyError, TypeError) as error:  # TypeError: not an object
        print(f"sim_verdicts: cannot read results {path}: {error}", file=sys.stderr)
        sys.exit(EXIT_INPUT)


def run_suite(binary: str) -> List[Dict[str, Any]]:
    """The sim:0 cells, then the cuda:0 cells in a process of their own: LibTorch 2.8+ fails
    every CUDA backward in a process that registered the sim (torchplace.command.run
    CELL_GROUPS)."""
    cells: List[Dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as scratch:
        for group in ("sim0", "cuda0"):
            path = f"{scratch}/results-{group}.json"
            subprocess.run(
                [binary, f"--gtest_filter=*device={group}*", f"--torchplace_results={path}"],
                check=False,
                stdout=subprocess.DEVNULL,
            )
            cells += load_cells(path)
    return cells


def main(argv: List[str]) -> int:
    if len(argv) == 1 and not argv[0].startswith("-"):
        cells, nothing_code = load_cells(argv[0]), EXIT_INPUT
    elif argv[:1] == ["--suite"] and len(argv) in (2, 3):
        skip = argv[2:] == ["--skip-without-cuda"]
        if len(argv) == 3 and not skip:
            print(__doc__, file=sys.stderr)
            return EXIT_USAGE
        cells, nothing_code = run_suite(argv[1]), (EXIT_SKIP if skip else EXIT_INPUT)
    else:
        print(__doc__, file=sys.stderr)
        return EXIT_USAGE
    agree, disagree, notes = compare(cells)
    print("\n".join(notes + disagree))
    if disagree:
        print(f"{len(disagree)} sim:0 cells disagree with cuda:0 ({agree} agree)")
        return EXIT_FAIL
    if agree == 0:
        print(
            "SKIP: no sim:0 cell could be compared with a cuda:0 cell that ran "
            "(this host or LibTorch has no CUDA device)"
        )
        return nothing_code
    print(f"all {agree} compared sim:0 cells give cuda:0's verdict")
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
