"""python3 -m torchplace.conformance: the sweeps of the sim against PyTorch's own databases
(`ci/torchplace conformance`; harness/sim/CONFORMANCE.md).

  --sweeps ops,modules   which (ops: op_db, modules: module_db, models: torchvision, mixed:
                         mixed placement)
  --dtypes LIST          float32,float64,int64,bool (default: all four)
  --only NAME,...        these entries only; --sample SEED: every entry, in an order drawn from
                         SEED (with --budget-s, a different sample per seed)
  --budget-s N           each sweep stops starting entries after N seconds (what ran is judged)
  --workers N --timeout-s N --limit N (samples per dtype) --out DIR
  --device cuda          the same sweeps on cuda:0 (mixed: cuda:0 and cuda:1), CUDA's own
                         verdicts against the CPU: the reference the sim is compared with
                         (versus.py), not judged by the sim's listed differences
  --trace                every pair's verdict and what the device raised, in each entry

It runs in this Python, whose torch the sim library must match (torchplace.sim). Exit: 0 every
entry run agrees or is a listed difference (with --device cuda: entries ran), 1 a new or stale
difference, 3 nothing could be judged (no torch, no op_db, no sim library or no CUDA device, no
entry run), 64 bad arguments.
"""
from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from pathlib import Path
from typing import Any, Dict, List

from torchplace import schema
from torchplace.conformance import isolate, judge

SWEEPS = ("ops", "modules", "models", "mixed")
DTYPES = ("float32", "float64", "int64", "bool")


def parse(argv: List[str]) -> Any:
    parser = schema.ArgumentParser(prog="torchplace conformance")
    parser.add_argument("--sweeps", default="ops,modules")
    parser.add_argument("--dtypes", default=",".join(DTYPES))
    parser.add_argument("--only", default="")
    parser.add_argument("--sample", default="")
    parser.add_argument("--budget-s", type=float, default=3600.0)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--timeout-s", type=float, default=300.0)
    parser.add_argument("--limit", type=int, default=0)
    parser.add_argument("--out", default="out/conformance")
    parser.add_argument("--device", choices=("sim", "cuda"), default="sim")
    parser.add_argument("--trace", action="store_true")
    options = parser.parse_args(argv)
    for sweep in options.sweeps.split(","):
        if sweep not in SWEEPS:
            parser.error(f"--sweeps: unknown sweep '{sweep}' (one of {', '.join(SWEEPS)})")
    for dtype in options.dtypes.split(","):
        if dtype not in DTYPES:
            parser.error(f"--dtypes: unknown dtype '{dtype}' (of {', '.join(DTYPES)})")
    return options


def entry_names(sweep: str) -> List[str]:
    if sweep in ("ops", "mixed"):
        from torchplace.conformance import ops

        return list(ops.database())
    if sweep == "modules":
        from torchplace.conformance import modules

        return list(modules.database())
    from torchplace.conformance import models

    return list(models.database())


def ordered(names: List[str], options: Any) -> List[str]:
    if options.only:
        wanted = options.only.split(",")
        unknown = [name for name in wanted if name not in names]
        if unknown:
            raise schema.InputError(f"--only: no such entries: {', '.join(unknown)}")
        return wanted
    if options.sample:
        return sorted(
            names, key=lambda name: hashlib.sha256(f"{options.sample}:{name}".encode()).hexdigest()
        )
    return names


def run_sweep(sweep: str, options: Any, deadline: float) -> List[Dict[str, Any]]:
    names = ordered(entry_names(sweep), options)
    argv = [
        sys.executable,
        "-m",
        "torchplace.conformance.worker",
        sweep,
        "--dtypes",
        options.dtypes,
        "--limit",
        str(options.limit),
        "--device",
        options.device,
    ] + (["--trace"] if options.trace else [])
    results = []
    for result in isolate.run(
        argv,
        dict(os.environ),
        names,
        options.workers,
        options.timeout_s,
        max(0.0, deadline - time.monotonic()),
    ):
        results.append(result)
    order = {name: index for index, name in enumerate(names)}
    return sorted(results, key=lambda result: order[result["name"]])


def needs_devices(torch: Any, options: Any) -> None:
    """The sim library loads here before any worker; --device cuda needs a GPU, two for mixed."""
    if options.device == "sim":
        import torchplace.sim  # noqa: F401

        return
    wanted = 2 if "mixed" in options.sweeps.split(",") else 1
    if torch.cuda.device_count() < wanted:
        raise RuntimeError(
            f"--device cuda: {torch.cuda.device_count()} CUDA devices, the sweeps need {wanted}"
        )


def main(argv: List[str]) -> int:
    options = parse(argv)
    try:
        import torch

        needs_devices(torch, options)
    except (ImportError, RuntimeError) as error:
        print(f"torchplace conformance: cannot judge: {error}", file=sys.stderr)
        return schema.EXIT_ENV
    version = ".".join(torch.__version__.split(".")[:2])
    known, failed, out = judge.load_known(), False, Path(options.out)
    out.mkdir(parents=True, exist_ok=True)
    for sweep in options.sweeps.split(","):
        try:
            results = run_sweep(sweep, options, time.monotonic() + options.budget_s)
        except (ImportError, RuntimeError, schema.InputError) as error:
            print(f"torchplace conformance: {sweep}: cannot judge: {error}", file=sys.stderr)
            return schema.EXIT_ENV
        figures, problems = judge.judge(sweep, results, version, known)
        if options.device == "cuda":
            problems = []  # CUDA's own verdicts: the reference, not judged by the sim's list
        document = {
            "schema": schema.CONFORMANCE_SCHEMA,
            "sweep": sweep,
            "device": options.device,
            "torch": torch.__version__,
            "dtypes": options.dtypes.split(","),
            "figures": figures,
            "problems": problems,
            "entries": results,
        }
        schema.write_atomically(out / f"{sweep}.json", json.dumps(document, indent=1) + "\n")
        print(
            f"{sweep} on {options.device}, torch {torch.__version__}: {figures['agree']} of "
            f"{figures['cpu_runs']} entries the CPU runs agree ({figures['exact']} bit for bit); "
            f"{figures['listed']} listed differences, {figures['new']} new, "
            f"{figures['stale']} stale; {len(results)} entries run"
        )
        for problem in problems:
            print(f"  {problem}")
        if not results:
            print(f"torchplace conformance: {sweep}: no entry ran", file=sys.stderr)
            return schema.EXIT_ENV
        failed = failed or bool(problems)
    return schema.EXIT_FAIL if failed else schema.EXIT_OK


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
