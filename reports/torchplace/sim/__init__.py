"""The simulated accelerator (harness/sim/README.md) in a Python process.

    import torch, torchplace.sim as sim
    d = sim.device(0)       # sim:0 on torch 2.x, privateuseone:0 on 1.13
    x = torch.randn(4, 3).to(d)
    with sim.TransferLog() as log:   # host<->device copies and bytes, syncs by operator
        train_step()
    log.counts()

Importing this module loads libtorchplace_sim_python.so, the sim built against this process's
torch (the same LibTorch: a library built for another version is refused by its version), and
registers the device; on 2.x it is named `sim`, so `torch.device("sim:0")` and `t.to("sim")` work.
The library is the one TORCHPLACE_SIM_LIBRARY names, else the one installed beside this file.
"""
from __future__ import annotations

import ctypes
from typing import Optional

import torch

from torchplace.sim_library import SimUnavailable, built_for, library_path, load

_library: Optional[ctypes.CDLL] = None


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
    library = load()  # torchplace.sim_library: loaded, version checked
    if library.torchplace_sim_enable() != 0:
        raise SimUnavailable(f"torchplace.sim: {library.torchplace_sim_error().decode()}")
    if _torch_major() >= 2:  # 2.x's API, absent before (getattr: typed against 1.13 too)
        from torchplace.sim import runtime

        getattr(torch.utils, "rename_privateuse1_backend")("sim")
        getattr(torch, "_register_device_module")("sim", runtime)  # torch.sim: runtime.py
        getattr(torch.utils, "generate_methods_for_privateuse1_backend")()
    _library = library


def library() -> ctypes.CDLL:
    """The loaded library (enable() first)."""
    enable()
    assert _library is not None
    return _library


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

from torchplace.sim.transfer_log import TransferLog  # noqa: E402 - needs the library loaded

__all__ = [
    "SimUnavailable",
    "TransferLog",
    "built_for",
    "device",
    "device_count",
    "enable",
    "library_path",
    "type_name",
]
