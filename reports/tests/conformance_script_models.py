#!/usr/bin/env python3
"""CTest fixture conformance.models_script: scripts torchvision's models (random weights) with
this Python's torch and saves them, with manifest.json, for torchplace_sim_model_tests
(harness/tests/sim_models_test.cpp), which loads them onto sim:0 in C++:

    conformance_script_models.py DIRECTORY [NAME...]

An earlier manifest is removed first. Exit 0 saved, 77 (skip, with the reason) without
torchvision or when this torch is not the LibTorch that CMake built against
(TORCHPLACE_LIBTORCH_VERSION, major.minor), 64 for bad arguments.
"""
import sys
from pathlib import Path

from torchplace.schema import EXIT_OK, EXIT_SKIP, EXIT_USAGE


def main(argv):
    if not argv or argv[0].startswith("-"):
        print(__doc__, file=sys.stderr)
        return EXIT_USAGE
    directory = Path(argv[0])
    (directory / "manifest.json").unlink(missing_ok=True)
    from torchplace.conformance import models, torchscript

    reason = models.skip_reason()
    if reason:
        print(f"SKIP: {reason}")
        return EXIT_SKIP

    unknown = [name for name in argv[1:] if name not in models.BY_NAME]
    if unknown:
        print(f"unknown model(s) {unknown}; known: {sorted(models.BY_NAME)}", file=sys.stderr)
        return EXIT_USAGE
    manifest = torchscript.save_all(directory, argv[1:])
    print(
        f"saved {len(manifest['models'])} models (torch {manifest['torch']}, torchvision "
        f"{manifest['torchvision']}) and the manifest in {directory}"
    )
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
