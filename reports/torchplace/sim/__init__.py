"""The simulated accelerator (harness/sim/README.md) in a Python process.

    import torch, torchplace.sim as sim
    d = sim.device(0)       # sim:0 on torch 2.x, privateuseone:0 on 1.13
    x = torch.randn(4, 3).to(d)

Importing this module loads libtorchplace_sim_python.so, the sim built against this process's
torch (the same LibTorch: a library built for another version is refused by its version), and
registers the device; on 2.x it is named `sim`, so `torch.device("sim:0")` and `t.to("sim")` work.
The library is the one TORCHPLACE_SIM_LIBRARY names, else the one installed beside this file.
"""
from __future__ import annotations

import ctypes
import os
from pathlib import Path
from typing import Optional

import torch

LIBRARY_NAME = "libtorchplace_sim_python.so"
_library: Optional[ctypes.CDLL] = None


class SimUnavailable(RuntimeError):
    """The sim's library is missing, or was built for another torch."""


def library_path() -> Path:
    """The library to load: TORCHPLACE_SIM_LIBRARY, else the one installed beside this file."""
    named = os.environ.get("TORCHPLACE_SIM_LIBRARY")
    path = Path(named) if named else Path(__file__).with_name(LIBRARY_NAME)
    if not path.is_file():
        raise SimUnavailable(
            f"torchplace.sim: no sim library at {path} (build the target torchplace_sim_python "
            f"against this torch, {torch.__version__}, and set TORCHPLACE_SIM_LIBRARY to it)"
        )
    return path


def _torch_major() -> int:
    return int(torch.__version__.split(".")[0])


def type_name() -> str:
    """The device type's name in this torch: `sim` from 2.0, `privateuseone` before."""
    return "sim" if _torch_major() >= 2 else "privateuseone"


def enable() -> None:
    """Loads the library and registers the device, once; raises SimUnavailable naming why not."""
    global _library
    if _library is not None:
        return
    path = library_path()
    try:
        library = ctypes.CDLL(str(path), mode=ctypes.RTLD_GLOBAL)
    except OSError as error:
        raise SimUnavailable(f"torchplace.sim: cannot load {path}: {error}") from error
    library.torchplace_sim_error.restype = ctypes.c_char_p
    library.torchplace_sim_torch_version.restype = ctypes.c_char_p
    built = library.torchplace_sim_torch_version().decode()
    if built.split(".")[:2] != torch.__version__.split(".")[:2]:
        raise SimUnavailable(
            f"torchplace.sim: {path} was built against LibTorch {built}, but this torch is "
            f"{torch.__version__}: build torchplace_sim_python against this torch"
        )
    if library.torchplace_sim_enable() != 0:
        raise SimUnavailable(f"torchplace.sim: {library.torchplace_sim_error().decode()}")
    if _torch_major() >= 2:
        torch.utils.rename_privateuse1_backend("sim")
        torch.utils.generate_methods_for_privateuse1_backend()
        from torchplace.sim import runtime

        torch._register_device_module("sim", runtime)  # torch.sim (runtime.py says why)
    _library = library


def device_count() -> int:
    """2 unless TORCHPLACE_SIM_DEVICES (1..16) said otherwise when the sim was enabled."""
    enable()
    assert _library is not None
    count = _library.torchplace_sim_device_count()
    if count < 0:
        raise SimUnavailable(f"torchplace.sim: {_library.torchplace_sim_error().decode()}")
    return int(count)


def device(index: int = 0) -> torch.device:
    """The simulated device `index`; an index past device_count() is refused by name."""
    count = device_count()
    if not 0 <= index < count:
        raise ValueError(f"torchplace.sim: no simulated device sim:{index}; there are {count}")
    return torch.device(type_name(), index)


enable()
