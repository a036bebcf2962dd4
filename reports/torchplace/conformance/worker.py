"""A sweep's worker process: `python -m torchplace.conformance.worker KIND [--dtypes LIST]
[--limit N] [--device sim|cuda] [--trace]` loads the sim (or takes cuda:0) and the database of
KIND (ops, modules, mixed, models), then, for each entry name read from stdin, one per line,
writes its result as one JSON line to the descriptor that the environment variable
TORCHPLACE_RESULTS_FD names.
Its stdout and stderr are the entries' own noise (warnings); isolate.py keeps them apart.
"""
from __future__ import annotations

import json
import os
import sys
import time
import traceback
from typing import Any, Callable, Dict

from torchplace import schema

CHECKS = ("ops", "modules", "mixed", "models")


def _devices(name: str) -> Any:
    """The device the sweep runs on and a second one (mixed placement): sim:0 and sim:1, or
    cuda:0 and cuda:1 (None with one GPU)."""
    import torch

    if name == "cuda":
        second = torch.device("cuda:1") if torch.cuda.device_count() > 1 else None
        return torch.device("cuda:0"), second
    import torchplace.sim as sim  # loads and registers the device

    return sim.device(0), sim.device(1)


def _checker(kind: str, options: Any) -> Callable[[str], Dict[str, Any]]:
    device, second = _devices(options.device)
    dtypes, limit, trace = options.dtypes.split(","), options.limit or None, options.trace
    if kind == "ops":
        from torchplace.conformance import ops

        db = ops.database()
        return lambda name: ops.check(db[name], device, dtypes, limit, trace)
    if kind == "modules":
        from torchplace.conformance import modules

        db = modules.database()
        return lambda name: modules.check(db[name], device, dtypes, limit, trace)
    if kind == "mixed":
        from torchplace.conformance import mixed, ops

        db = ops.database()
        return lambda name: mixed.check(db[name], device, second, dtypes)
    from torchplace.conformance import models

    db = models.database()
    return lambda name: models.check(db[name], device)


def main(argv: list) -> int:
    parser = schema.ArgumentParser(prog="torchplace.conformance.worker")
    parser.add_argument("kind", choices=CHECKS)
    parser.add_argument("--dtypes", default="float32")
    parser.add_argument("--limit", type=int, default=0, help="samples per dtype (0: all)")
    parser.add_argument("--device", choices=("sim", "cuda"), default="sim")
    parser.add_argument("--trace", action="store_true", help="every pair's verdict (ops, modules)")
    options = parser.parse_args(argv)
    import torch  # after the arguments: a usage error needs no torch

    torch.set_num_threads(1)  # one worker per core
    results = os.fdopen(int(os.environ["TORCHPLACE_RESULTS_FD"]), "w", buffering=1)
    check = _checker(options.kind, options)
    results.write(json.dumps({"ready": True, "torch": torch.__version__}) + "\n")
    for line in sys.stdin:
        name = line.strip()
        started = time.monotonic()
        try:
            result = check(name)
        except Exception as error:  # noqa: BLE001 - the harness's own failure on this entry
            result = {
                "agree": False,
                "error": f"{type(error).__name__}: {error}",
                "traceback": traceback.format_exc()[-2000:],
            }
        result.update(name=name, seconds=round(time.monotonic() - started, 3))
        results.write(json.dumps(result, default=str) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
