"""`torch.sim` on torch 2.x: the Python module that torch looks up for a renamed PrivateUse1
device (torch.get_device_module("sim")). Without one, 2.14.1 refused the first `.to("sim")`
("No module named 'torch.sim'") and, once the sim was the process's accelerator, every Adam and
SGD step, even on the CPU ("Device 'sim' does not have a corresponding module registered as
'torch.sim'": the optimizers' graph-capture check asks the accelerator is_available()).
torchplace.sim registers it (torch._register_device_module) when it enables the sim.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch


def is_available() -> bool:
    return True  # registered only once the library is loaded and the device enabled


def device_count() -> int:
    from torchplace import sim

    return sim.device_count()


def is_initialized() -> bool:
    return True


def current_device() -> int:
    """The calling thread's current simulated device (a device guard sets it, as CUDA's does)."""
    from torchplace import sim

    return int(sim.library().torchplace_sim_current_device())


def synchronize(device: object = None) -> None:
    """Nothing to wait for: every copy and operator of the sim is synchronous."""
    del device


def _is_in_bad_fork() -> bool:
    return False  # host memory and no driver: a forked child may use it


def manual_seed_all(seed: int) -> None:
    """Nothing: the sim's generator is the CPU's, which torch.manual_seed seeds itself."""
    del seed


def manual_seed(seed: int) -> None:
    del seed  # as manual_seed_all


def get_rng_state(device: object = "sim") -> "torch.Tensor":
    """The CPU generator's state: the sim's random operators draw from it."""
    import torch

    del device
    return torch.get_rng_state()


def set_rng_state(state: "torch.Tensor", device: object = "sim") -> None:
    import torch

    del device
    torch.set_rng_state(state)


def get_amp_supported_dtype() -> "list":
    """What torch.autocast("sim") may cast to: the sim registers CUDA's autocast policy for its
    device from 2.4 (harness/sim/autocast.cpp), and computes float16 and bfloat16 on the CPU."""
    import torch

    return [torch.float16, torch.bfloat16]
