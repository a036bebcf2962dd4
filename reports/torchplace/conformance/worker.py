"""A sweep's worker process: `python -m torchplace.conformance.worker KIND [--dtypes LIST]
[--limit N]` loads the sim and the database of KIND (ops, modules, mixed, models), then, for each
entry name read from stdin, one per line, writes its result as one JSON line to the descriptor
that the environment variable TORCHPLACE_RESULTS_FD names.
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


def _checker(kind: str, dtypes: list, limit: int) -> Callable[[str], Dict[str, Any]]:
    import torchplace.sim as sim  # loads and registers the device

    device = sim.device(0)
    if kind == "ops":
        from torchplace.conformance import ops

        db = ops.database()
        return lambda name: ops.check(db[name], device, dtypes, limit or None)
    if kind == "modules":
        from torchplace.conformance import modules

        db = modules.database()
        return lambda name: modules.check(db[name], device, dtypes, limit or None)
    if kind == "mixed":
        from torchplace.conformance import mixed, ops

        db = ops.database()
        second = sim.device(1)
        return lambda name: mixed.check(db[name], device, second, dtypes)
    from torchplace.conformance import models

    db = models.database()
    return lambda name: models.check(db[name], device)


def main(argv: list) -> int:
    parser = schema.ArgumentParser(prog="torchplace.conformance.worker")
    parser.add_argument("kind", choices=CHECKS)
    parser.add_argument("--dtypes", default="float32")
    parser.add_argument("--limit", type=int, default=0, help="samples per dtype (0: all)")
    options = parser.parse_args(argv)
    import torch  # after the arguments: a usage error needs no torch

    torch.set_num_threads(1)  # one worker per core
    results = os.fdopen(int(os.environ["TORCHPLACE_RESULTS_FD"]), "w", buffering=1)
    check = _checker(options.kind, options.dtypes.split(","), options.limit)
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
