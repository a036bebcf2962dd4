#!/usr/bin/env python3
"""torchvision's models: a training step on sim:0 agrees with the same step on the CPU
(torchplace.conformance.models). CTest runs one model per test (conformance.models.NAME):

    test_conformance_models.py [--tolerance] [--json PATH] [NAME...]   (no NAME: every model)

Prints one line per model (verdict, bit-identical or not, the largest differences, seconds),
and with --json the results. Every model must be bit-identical (measured so on 1.13.1);
with --tolerance, agreeing within models.TOLERANCE is enough. Exit 0 when every model passes,
1 when one does not, 77 (skip, with the reason) without torchvision, with a torch that is not
TORCHPLACE_LIBTORCH_VERSION, or without a sim library built for this torch, 64 for bad arguments
or an unknown model. Needs TORCHPLACE_SIM_LIBRARY (CTest passes the built torchplace_sim_python).
"""
import json
import sys

from torchplace.schema import EXIT_FAIL, EXIT_OK, EXIT_SKIP, EXIT_USAGE


def line(result):
    """A model's verdict, exactness, largest differences per category and seconds."""
    if "categories" not in result:
        return f"{result['model']}: {result['verdict']}: {result.get('detail')}"
    worst = ", ".join(
        f"{name} {found['max_abs']:.3g} (rel {found['max_rel']:.3g})"
        for name, found in result["categories"].items()
    )
    exact = "bit-identical" if result["exact"] else "not bit-identical"
    seconds = result["seconds"]
    text = (
        f"{result['model']}: {result['verdict']}, {exact}; max |sim - cpu|: {worst}; "
        f"step {seconds['cpu']:.2f} s on the CPU, {seconds['sim']:.2f} s on the sim"
    )
    return text + (f"; {result['detail']}" if result["detail"] else "")


def arguments_of(argv):
    """(within tolerance is enough, the --json path or None, the model names), or None."""
    tolerance = argv[:1] == ["--tolerance"]
    argv = argv[1:] if tolerance else argv
    if argv[:1] == ["--json"]:
        return (tolerance, argv[1], argv[2:]) if len(argv) > 1 else None
    return None if any(a.startswith("-") for a in argv) else (tolerance, None, argv)


def passed(result, tolerance):
    return result["verdict"] == "agree" and (tolerance or result["exact"])


def main(argv):
    parsed = arguments_of(argv)
    if parsed is None:
        print(__doc__, file=sys.stderr)
        return EXIT_USAGE
    tolerance, json_path, names = parsed
    from torchplace.conformance import models

    reason = models.skip_reason()
    if reason:
        print(f"SKIP: {reason}")
        return EXIT_SKIP
    try:
        from torchplace import sim
    except RuntimeError as error:  # SimUnavailable: no library, or one built for another torch
        print(f"SKIP: {error}")
        return EXIT_SKIP

    unknown = [name for name in names if name not in models.BY_NAME]
    if unknown:
        print(f"unknown model(s) {unknown}; known: {sorted(models.BY_NAME)}", file=sys.stderr)
        return EXIT_USAGE
    results = [
        models.check(models.BY_NAME[name], sim.device(0))
        for name in names or [model.name for model in models.MODELS]
    ]
    for result in results:
        print(line(result), flush=True)
    if json_path:
        with open(json_path, "w", encoding="utf-8") as handle:
            json.dump(results, handle, indent=1, default=str)
    return EXIT_OK if all(passed(r, tolerance) for r in results) else EXIT_FAIL


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
