"""`torch.sim` on torch 2.x: the Python module that torch looks up for a renamed PrivateUse1
device (torch.get_device_module("sim")). Without one, 2.14.1 refused the first `.to("sim")`
("No module named 'torch.sim'") and, once the sim was the process's accelerator, every Adam and
SGD step, even on the CPU ("Device 'sim' does not have a corresponding module registered as
'torch.sim'": the optimizers' graph-capture check asks the accelerator is_available()).
torchplace.sim registers it (torch._register_device_module) when it enables the sim.
"""
from __future__ import annotations


def is_available() -> bool:
    return True  # registered only once the library is loaded and the device enabled


def device_count() -> int:
    from torchplace import sim

    return sim.device_count()


def current_device() -> int:
    import torch

    accelerator = getattr(torch, "accelerator")  # 2.x only: not in 1.13.1's stubs (mypy)
    return int(accelerator.current_device_index())


def _is_in_bad_fork() -> bool:
    return False  # host memory and no driver: a forked child may use it


def manual_seed_all(seed: int) -> None:
    """Nothing: the sim's generator is the CPU's, which torch.manual_seed seeds itself."""
    del seed
