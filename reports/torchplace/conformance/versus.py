"""python3 -m torchplace.conformance.versus CUDA_DIR SIM_DIR [--out DIR]: the sim judged by CUDA
itself, pair by pair. Both folders hold sweeps run with --trace over the same entries (`--device
cuda` on a GPU, the sim with the same torch; ci/gpu/session.sh). For every pair both ran (entry,
dtype, sample, stage) it compares what each device did against the same CPU run:

  raises_where_cuda_runs   the sim raised, CUDA ran: a false alarm, judged by CUDA
  runs_where_cuda_raises   CUDA raised, the sim ran: a missed error
  other_exception          both raised, another exception type
  other_family             both raised the same type, another placement family (rules.family)
  output_device            both ran, and one put an output on another device
  values                   both ran; one matched the CPU's values and the other did not (CUDA's
                           numerics or the sim's: counted, not a placement difference)

Writes DIR/versus.json (every difference) and DIR/versus.md. Exit: 0 no placement difference,
1 some, 3 no pair to compare, 64 bad arguments.
"""
from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

from torchplace import schema

KEYS = ("dtype", "requires_grad", "training", "sample", "desc", "stage")
KINDS = (
    "raises_where_cuda_runs",
    "runs_where_cuda_raises",
    "other_exception",
    "other_family",
    "output_device",
    "values",
)
PLACEMENT = KINDS[:-1]


def traces(folder: Path, sweep: str) -> Dict[str, Dict[tuple, Dict[str, Any]]]:
    """entry -> pair key -> the pair's trace record, from FOLDER/SWEEP.json (or .json.gz, as
    reports/reference keeps them)."""
    path = folder / f"{sweep}.json"
    if not path.is_file() and path.with_suffix(".json.gz").is_file():
        with gzip.open(path.with_suffix(".json.gz"), "rt", encoding="utf-8") as packed:
            document = json.load(packed)
    elif path.is_file():
        document = json.loads(path.read_text())
    else:
        return {}
    found: Dict[str, Dict[tuple, Dict[str, Any]]] = {}
    for entry in document["entries"]:
        if "trace" in entry:
            found[entry["name"]] = {pair_key(record): record for record in entry["trace"]}
    return found


def pair_key(record: Dict[str, Any]) -> tuple:
    return tuple(str(record.get(key)) for key in KEYS)


def exception_type(record: Dict[str, Any]) -> Optional[str]:
    raised = record.get("raised")
    return raised.split(":", 1)[0] if raised else None


def family(raised: str) -> str:
    """The placement family (rules.family: the mixed sweep's) of a trace's "Type: message"."""
    from torchplace.conformance import rules  # imports torch

    return rules.family(raised.split(": ", 1)[-1])


def kind_of(cuda: Dict[str, Any], sim: Dict[str, Any], family: Callable[[str], str]) -> str:
    """The kind of difference between two pair records, or "" when they agree."""
    on_cuda, on_sim = exception_type(cuda), exception_type(sim)
    if on_sim and not on_cuda:
        return "raises_where_cuda_runs"
    if on_cuda and not on_sim:
        return "runs_where_cuda_raises"
    if on_cuda and on_sim:
        if on_cuda != on_sim:
            return "other_exception"
        return "" if family(cuda["raised"]) == family(sim["raised"]) else "other_family"
    if cuda["verdict"] == sim["verdict"]:
        return ""
    details = f"{cuda.get('detail') or ''} {sim.get('detail') or ''}"
    return "output_device" if "output on " in details else "values"


def compare(
    cuda: Dict[str, Dict[tuple, Any]], sim: Dict[str, Dict[tuple, Any]], family: Callable
) -> Iterator[Dict[str, Any]]:
    """Every difference of the entries both traced, then a count line per entry."""
    for name in sorted(set(cuda) & set(sim)):
        pairs = set(cuda[name]) & set(sim[name])
        for key in sorted(pairs):
            kind = kind_of(cuda[name][key], sim[name][key], family)
            if kind:
                where = dict(zip(KEYS, key))
                yield {
                    "entry": name,
                    "kind": kind,
                    "where": where,
                    "cuda": cuda[name][key],
                    "sim": sim[name][key],
                }
        yield {"entry": name, "pairs": len(pairs)}


def summary(rows: List[Dict[str, Any]], sweep: str) -> Dict[str, Any]:
    differences = [row for row in rows if "kind" in row]
    counts = {kind: sum(row["kind"] == kind for row in differences) for kind in KINDS}
    entries = {
        kind: sorted({row["entry"] for row in differences if row["kind"] == kind}) for kind in KINDS
    }
    return {
        "sweep": sweep,
        "entries_compared": sum("pairs" in row for row in rows),
        "pairs_compared": sum(row.get("pairs", 0) for row in rows),
        "pairs_differing": counts,
        "entries_differing": entries,
        "differences": differences,
    }


def markdown(results: List[Dict[str, Any]], torch_versions: Tuple[str, str]) -> str:
    lines = [
        f"# The sim against CUDA, pair by pair (torch {torch_versions[0]} on CUDA, "
        f"{torch_versions[1]} with the sim)",
        "",
    ]
    for result in results:
        lines += [
            f"## {result['sweep']}: {result['entries_compared']} entries, "
            f"{result['pairs_compared']} pairs compared",
            "",
            "| kind | pairs | entries |",
            "| --- | ---: | --- |",
        ]
        for kind in KINDS:
            names = result["entries_differing"][kind]
            shown = ", ".join(names[:12]) + (
                f" and {len(names) - 12} more" if len(names) > 12 else ""
            )
            lines.append(f"| {kind} | {result['pairs_differing'][kind]} | {shown} |")
        lines.append("")
    return "\n".join(lines)


def torch_of(folder: Path) -> str:
    for path in sorted(folder.glob("*.json")):
        return str(json.loads(path.read_text()).get("torch"))
    for path in sorted(folder.glob("*.json.gz")):
        with gzip.open(path, "rt", encoding="utf-8") as packed:
            return str(json.load(packed).get("torch"))
    return "?"


def main(argv: List[str]) -> int:
    parser = schema.ArgumentParser(prog="torchplace.conformance.versus")
    parser.add_argument("cuda_dir")
    parser.add_argument("sim_dir")
    parser.add_argument("--out", default="out/versus")
    options = parser.parse_args(argv)
    cuda_dir, sim_dir, results = Path(options.cuda_dir), Path(options.sim_dir), []
    for sweep in ("ops", "modules"):
        rows = list(compare(traces(cuda_dir, sweep), traces(sim_dir, sweep), family))
        if rows:
            results.append(summary(rows, sweep))
    if not any(result["pairs_compared"] for result in results):
        print("versus: no traced pair is in both folders", file=sys.stderr)
        return schema.EXIT_ENV
    out = Path(options.out)
    out.mkdir(parents=True, exist_ok=True)
    schema.write_atomically(out / "versus.json", json.dumps(results, indent=1) + "\n")
    text = markdown(results, (torch_of(cuda_dir), torch_of(sim_dir)))
    schema.write_atomically(out / "versus.md", text + "\n")
    print(text)
    placement = sum(result["pairs_differing"][kind] for result in results for kind in PLACEMENT)
    return schema.EXIT_FAIL if placement else schema.EXIT_OK


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
