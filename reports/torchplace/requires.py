"""Whether this Python can run a part of torchplace: the shell's interpreter probe
(torchplace.command.common.python_with).

  python3 -m torchplace.requires [MODULE ...]   exit 0 when torchplace and every MODULE import,
                                                3 naming the missing ones (to stderr)
"""
from __future__ import annotations

import importlib
import sys
from typing import Iterable, List

from torchplace.schema import EXIT_ENV, EXIT_OK


def missing(modules: Iterable[str]) -> List[str]:
    """The modules of `modules` that do not import here, in order."""
    absent = []
    for name in modules:
        try:
            importlib.import_module(name)
        except ImportError:
            absent.append(name)
    return absent


def main(argv: List[str]) -> int:
    absent = missing(argv)
    if absent:
        packages = " ".join(f"python3-{name}" for name in absent)
        print(
            f"torchplace: {sys.executable} lacks {', '.join(absent)} "
            f"(apt-get install {packages})",
            file=sys.stderr,
        )
        return EXIT_ENV
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
