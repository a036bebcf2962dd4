"""The sim's library loaded, the device not registered: what needs only its C entry points (the
classifier) imports this, not torchplace.sim, whose import registers the device.

Why apart: beside a GPU, LibTorch 2.8+ takes a registered PrivateUse1 backend for its accelerator
and every CUDA backward of that process then fails (harness/sim/README.md, "Beside a GPU").
Loading the library registers nothing: torchplace_sim_enable() does.
"""
from __future__ import annotations

import ctypes
import os
import re
import struct
from pathlib import Path
from typing import Optional

import torch

LIBRARY_NAME = "libtorchplace_sim_python.so"
_library: Optional[ctypes.CDLL] = None


class SimUnavailable(RuntimeError):
    """The sim's library is missing, or was built for another torch."""


# Its public name, as a traceback prints it: the classifier's family matches
# "torchplace.sim.SimUnavailable: " (harness/other_families.cpp).
SimUnavailable.__module__ = "torchplace.sim"


def library_path() -> Path:
    """The library to load: TORCHPLACE_SIM_LIBRARY, else the one installed with torchplace.sim."""
    named = os.environ.get("TORCHPLACE_SIM_LIBRARY")
    path = Path(named) if named else Path(__file__).parent / "sim" / LIBRARY_NAME
    if not path.is_file():
        raise SimUnavailable(
            f"torchplace.sim: no sim library at {path} (build the target torchplace_sim_python "
            f"against this torch, {torch.__version__}, and set TORCHPLACE_SIM_LIBRARY to it)"
        )
    return path


def built_for(path: Path, data: Optional[bytes] = None) -> str:
    """The LibTorch version the library at `path` (its bytes: `data`, else read) was built
    against."""
    data = path.read_bytes() if data is None else data
    found = re.search(rb"torchplace-sim-torch-version=([0-9][0-9A-Za-z.+]*);", data)
    if not found:
        raise SimUnavailable(f"torchplace.sim: {path} is not a torchplace sim library")
    return found.group(1).decode()


def elf_end(data: bytes) -> int:
    """Where a 64-bit little-endian ELF file's last part ends, by its own header: the section
    header table, or a loaded segment's bytes; 0 for any other file (ELF-64 object format)."""
    if len(data) < 64 or data[:6] != b"\x7fELF\x02\x01":
        return 0
    phoff, shoff = struct.unpack_from("<QQ", data, 0x20)
    phentsize, phnum, shentsize, shnum = struct.unpack_from("<HHHH", data, 0x36)
    end = shoff + shentsize * shnum
    for index in range(phnum):
        at = phoff + index * phentsize
        if at + 56 > len(data):
            return max(end, at + 56)
        kind, _, offset, _, _, size = struct.unpack_from("<IIQQQQ", data, at)
        if kind == 1:  # PT_LOAD
            end = max(end, offset + size)
    return end


def _check_whole(path: Path, data: bytes) -> None:
    """A library cut short (a copy interrupted) is refused: dlopen maps its segments past the
    file's end, and the first read there kills the process with SIGBUS."""
    if elf_end(data) > len(data):
        raise SimUnavailable(
            f"torchplace.sim: cannot load {path}: cut short, {len(data)} bytes where its ELF "
            f"header says {elf_end(data)}"
        )


def _check_version(path: Path, data: bytes) -> None:
    built = built_for(path, data)
    if built.split(".")[:2] != torch.__version__.split(".")[:2]:
        raise SimUnavailable(
            f"torchplace.sim: {path} was built against LibTorch {built}, but this torch is "
            f"{torch.__version__}: build torchplace_sim_python against this torch"
        )


def load() -> ctypes.CDLL:
    """The library, loaded once and its version checked; the device is not registered."""
    global _library
    if _library is not None:
        return _library
    path = library_path()
    data = path.read_bytes()  # about 1.6 MB, read once for both checks
    _check_version(path, data)
    _check_whole(path, data)
    try:
        # RTLD_LOCAL: its symbols stay its own. Loaded RTLD_GLOBAL, the next extensions bound to
        # them: importing op_db then died of SIGSEGV in ml_dtypes (numba-cuda imports it), pip's
        # torch 2.11 on an H200.
        library = ctypes.CDLL(str(path), mode=ctypes.RTLD_LOCAL)
    except OSError as error:
        raise SimUnavailable(f"torchplace.sim: cannot load {path}: {error}") from error
    library.torchplace_sim_error.restype = ctypes.c_char_p
    library.torchplace_classify.restype = ctypes.c_char_p
    library.torchplace_classify.argtypes = [ctypes.c_char_p]
    library.torchplace_sim_log_start.restype = ctypes.c_void_p
    library.torchplace_sim_log_json.restype = ctypes.c_char_p
    _library = library
    return library


def classify(message: str) -> str:
    """The error class of `message` (the suite's classifier), registering no device."""
    return load().torchplace_classify(message.encode("utf-8", "replace")).decode()
