"""What the shell needs to know about this Python's pip torch (ci/gpu/run.sh):

  python3 -m torchplace.torch_info cmake_prefix_path   torch.utils.cmake_prefix_path
  python3 -m torchplace.torch_info cuda                the CUDA release torch was built for, or ""
  python3 -m torchplace.torch_info nvrtc               the libnvrtc that pip installed beside torch
                                                       (site-packages/nvidia/*/lib), or ""
  python3 -m torchplace.torch_info cuda_include        the CUDA libraries' headers pip installed
                                                       beside torch (cusparse.h's folder), or ""
exit: 0 printed, 3 no torch in this Python, 64 bad arguments
"""
from __future__ import annotations

import sys
from pathlib import Path
from types import ModuleType
from typing import Callable, Dict, List

from torchplace.schema import EXIT_ENV, EXIT_OK, EXIT_USAGE


def beside(torch: ModuleType, pattern: str) -> str:
    """The first file pip's nvidia-* wheels installed beside torch that matches `pattern`."""
    found = sorted((Path(str(torch.__file__)).resolve().parent.parent / "nvidia").glob(pattern))
    return str(found[0]) if found else ""


def nvrtc(torch: ModuleType) -> str:
    """A CUDA wheel's own libnvrtc (nvidia-cuda-nvrtc): for a toolkit that ships none."""
    return beside(torch, "*/lib/libnvrtc.so.*") or beside(torch, "*/lib/libnvrtc.so")


def cuda_include(torch: ModuleType) -> str:
    """The wheels' headers (cusparse.h, cublas_v2.h: ATen/cuda includes them)."""
    header = beside(torch, "*/include/cusparse.h")
    return str(Path(header).parent) if header else ""


FIELDS: Dict[str, Callable[[ModuleType], str]] = {
    "cmake_prefix_path": lambda torch: torch.utils.cmake_prefix_path,
    "cuda": lambda torch: torch.version.cuda or "",
    "nvrtc": nvrtc,
    "cuda_include": cuda_include,
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
