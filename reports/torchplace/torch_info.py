"""What the shell needs to know about this Python's pip torch (ci/gpu/run.sh):

  python3 -m torchplace.torch_info cmake_prefix_path   torch.utils.cmake_prefix_path
  python3 -m torchplace.torch_info cuda                the CUDA release torch was built for, or ""
exit: 0 printed, 3 no torch in this Python, 64 bad arguments
"""
from __future__ import annotations

import sys
from types import ModuleType
from typing import Callable, Dict, List

from torchplace.schema import EXIT_ENV, EXIT_OK, EXIT_USAGE

FIELDS: Dict[str, Callable[[ModuleType], str]] = {
    "cmake_prefix_path": lambda torch: torch.utils.cmake_prefix_path,
    "cuda": lambda torch: torch.version.cuda or "",
}


def main(argv: List[str]) -> int:
    if len(argv) != 1 or argv[0] not in FIELDS:
        print(__doc__, file=sys.stderr)
        return EXIT_USAGE
    try:
        import torch
    except ImportError as error:
        print(f"torch_info: no torch in {sys.executable}: {error}", file=sys.stderr)
        return EXIT_ENV
    print(FIELDS[argv[0]](torch))
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
