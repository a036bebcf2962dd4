"""Comparing a CPU run with a sim run: samples moved to a device, outputs flattened, a verdict.

A verdict is one of:
  agree        both ran and every output matches (values, dtype, shape; the sim's on the sim)
  both_raise   both raised the same exception type
  false_alarm  the CPU ran and the sim raised: a correct program refused
  false_pass   the CPU raised and the sim ran
  runs_where_cuda_does_not   the sim ran a dtype that op_db says CUDA does not support
  refused_as_on_cuda         the sim refused a dtype that op_db says CUDA does not support
  not_compared               op_db opts the op out of PyTorch's own test of that stage
  differs      both ran, and an output differs (its value, dtype, shape or device)
"""
from __future__ import annotations

import math
from typing import Any, Callable, Dict, List, Optional, Tuple

import torch

AGREE, BOTH_RAISE = "agree", "both_raise"
FALSE_ALARM, FALSE_PASS, DIFFERS = "false_alarm", "false_pass", "differs"
REFUSED_AS_ON_CUDA, RUNS_WHERE_CUDA_DOES_NOT = "refused_as_on_cuda", "runs_where_cuda_does_not"
NOT_COMPARED = "not_compared"  # PyTorch's op_db opts the op out of the test that holds it
GOOD = (AGREE, BOTH_RAISE, REFUSED_AS_ON_CUDA, NOT_COMPARED)


def move(value: Any, device: Optional[torch.device]) -> Any:
    """`value` with every tensor copied (a fresh leaf, requires_grad kept) to `device`, or on its
    own device when `device` is None; with a device, every `device=` value naming another device
    names `device` instead."""
    if isinstance(value, torch.Tensor):
        moved = value.detach().to(device or value.device, copy=True)
        grad = value.requires_grad and (moved.is_floating_point() or moved.is_complex())
        return moved.requires_grad_(grad)
    if device is not None and isinstance(value, (torch.device, str)) and _is_device(value):
        return device
    if isinstance(value, dict):
        return {key: move(item, device) for key, item in value.items()}
    if isinstance(value, list):
        return [move(item, device) for item in value]
    if isinstance(value, tuple) and not isinstance(value, torch.Size):
        items = [move(item, device) for item in value]
        return type(value)(*items) if hasattr(value, "_fields") else tuple(items)
    return value


def _is_device(value: Any) -> bool:
    if isinstance(value, torch.device):
        return True
    try:
        torch.device(value)
        return True
    except (RuntimeError, TypeError):
        return False


def flatten(value: Any) -> List[Any]:
    """The leaves of an output: tensors and plain values, in order."""
    if isinstance(value, (list, tuple)) and not isinstance(value, torch.Size):
        return [leaf for item in value for leaf in flatten(item)]
    if isinstance(value, dict):
        return [leaf for key in sorted(value) for leaf in flatten(value[key])]
    return [value]


def leaves_requiring_grad(value: Any) -> List[torch.Tensor]:
    return [
        leaf
        for leaf in flatten(value)
        if isinstance(leaf, torch.Tensor) and leaf.requires_grad and leaf.is_leaf
    ]


def _same_tensor(
    cpu: torch.Tensor, sim: torch.Tensor, device: torch.device, exact_only: bool
) -> Tuple[Optional[str], bool]:
    """(why they differ or None, bit-identical)."""
    if sim.device != device:
        return f"output on {sim.device}, not {device}", False
    if cpu.dtype != sim.dtype or cpu.shape != sim.shape:
        return (
            f"{sim.dtype}{list(sim.shape)} on the sim, {cpu.dtype}{list(cpu.shape)} on the CPU",
            False,
        )
    if exact_only:
        return None, True  # undefined values (empty): shape, dtype and device only
    here = sim.detach().cpu()
    cpu = cpu.detach()
    if cpu.layout != torch.strided or here.layout != torch.strided:
        cpu, here = cpu.to_dense(), here.to_dense()
    try:
        torch.testing.assert_close(here, cpu, rtol=0, atol=0, equal_nan=True)
        return None, True
    except AssertionError:
        pass
    try:
        torch.testing.assert_close(here, cpu, equal_nan=True)  # torch's own tolerance per dtype
        return None, False
    except AssertionError as error:
        return str(error).splitlines()[0][:300], False


def _same_value(cpu: Any, sim: Any) -> bool:
    if isinstance(cpu, float) and isinstance(sim, float):
        return (
            cpu == sim
            or (math.isnan(cpu) and math.isnan(sim))
            or math.isclose(cpu, sim, rel_tol=1e-6)
        )
    return type(cpu) is type(sim) and cpu == sim


def compare_outputs(
    cpu: Any, sim: Any, device: torch.device, undefined_values: bool = False
) -> Tuple[Optional[str], bool]:
    """(the first difference or None, every tensor bit-identical)."""
    cpu_leaves, sim_leaves = flatten(cpu), flatten(sim)
    if len(cpu_leaves) != len(sim_leaves):
        return f"{len(sim_leaves)} outputs on the sim, {len(cpu_leaves)} on the CPU", False
    exact = True
    for index, (left, right) in enumerate(zip(cpu_leaves, sim_leaves)):
        if isinstance(left, torch.Tensor) and isinstance(right, torch.Tensor):
            why, identical = _same_tensor(left, right, device, undefined_values)
            exact = exact and identical
        elif isinstance(left, torch.Tensor) or isinstance(right, torch.Tensor):
            why = f"{type(right).__name__} on the sim, {type(left).__name__} on the CPU"
        else:
            why = None if _same_value(left, right) else f"{right!r} on the sim, {left!r} on the CPU"
        if why:
            return f"output {index}: {why}", False
    return None, exact


Outcome = Tuple[Optional[Any], Optional[BaseException]]


def attempt(call: Callable[[], Any]) -> Outcome:
    """(the result, None) or (None, what it raised)."""
    try:
        return call(), None
    except Exception as error:  # noqa: BLE001 - the exception is the observation
        return None, error


def raised(error: BaseException) -> str:
    """What the device's run raised, as a trace keeps it: the type and the message's start."""
    return f"{type(error).__name__}: {str(error)[:240]}"


def verdict(
    cpu: Outcome, sim: Outcome, device: torch.device, undefined_values: bool = False
) -> Dict[str, Any]:
    """The verdict of one pair of runs, with what it saw."""
    (cpu_value, cpu_error), (sim_value, sim_error) = cpu, sim
    if cpu_error is not None and sim_error is not None:
        same = type(cpu_error) is type(sim_error)
        return {
            "verdict": BOTH_RAISE if same else DIFFERS,
            "raised": raised(sim_error),
            "detail": None
            if same
            else f"{type(sim_error).__name__} on the sim, "
            f"{type(cpu_error).__name__} on the CPU: {str(sim_error)[:300]}",
        }
    if sim_error is not None:
        return {
            "verdict": FALSE_ALARM,
            "detail": f"{type(sim_error).__name__}: {str(sim_error)[:400]}",
            "raised": raised(sim_error),
        }
    if cpu_error is not None:
        return {
            "verdict": FALSE_PASS,
            "detail": f"the CPU raised {type(cpu_error).__name__}: " f"{str(cpu_error)[:300]}",
        }
    why, exact = compare_outputs(cpu_value, sim_value, device, undefined_values)
    return {"verdict": DIFFERS if why else AGREE, "detail": why, "exact": exact}
