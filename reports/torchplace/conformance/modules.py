"""module_db on the sim: every ModuleInfo, every module input, per dtype, in training and in eval
mode where they differ: the module built on the CPU under a fixed seed, a copy moved to sim:0;
the forward's outputs, the buffers after it (running statistics), and the gradients of the inputs
and parameters against a fixed random cotangent. A ModuleInfo agrees when every pair agrees.
"""
from __future__ import annotations

import copy
from typing import Any, Dict, Iterable, List, Optional

import torch

from torchplace.conformance import values
from torchplace.conformance.ops import CPU, DTYPES, SEED, Tally, cotangents


def database() -> Dict[str, Any]:
    from torch.testing._internal.common_modules import module_db

    return {info.name: info for info in module_db}


def _inputs(info: Any, dtype: torch.dtype, training: bool) -> List[Any]:
    torch.manual_seed(SEED)
    return list(
        info.module_inputs_func(
            info, device="cpu", dtype=dtype, requires_grad=True, training=training
        )
    )


def _build(info: Any, module_input: Any, dtype: torch.dtype, training: bool) -> torch.nn.Module:
    torch.manual_seed(SEED)
    ctor = module_input.constructor_input
    module = info.module_cls(*ctor.args, **ctor.kwargs).to(dtype)
    return module.train(training)


def _step(module: torch.nn.Module, forward: Any, device: torch.device) -> Dict[str, Any]:
    """Forward, then the gradients of the inputs and parameters: all that is compared."""
    torch.manual_seed(SEED)
    output = module(*forward.args, **forward.kwargs)
    grads: List[Any] = []
    inputs = values.leaves_requiring_grad([forward.args, forward.kwargs])
    wrt = inputs + [p for p in module.parameters() if p.requires_grad]
    outputs = [o for o in values.flatten(output) if isinstance(o, torch.Tensor) and o.requires_grad]
    if wrt and outputs:
        found = torch.autograd.grad(
            outputs, wrt, [c.to(device) for c in cotangents(outputs)], allow_unused=True
        )
        grads = list(found)  # None where there is no gradient, on both devices
    buffers = [b for b in module.buffers()]
    return {"output": output, "buffers": buffers, "grads": grads}


def check_input(
    info: Any, module_input: Any, dtype: torch.dtype, training: bool, device: torch.device
) -> Dict[str, Any]:
    """The pair of runs of one module input."""
    cpu_module = _build(info, module_input, dtype, training)
    sim_module = copy.deepcopy(cpu_module).to(device)
    forward = module_input.forward_input
    on_cpu, on_sim = copy.copy(forward), copy.copy(forward)
    on_cpu.args, on_cpu.kwargs = values.move((forward.args, forward.kwargs), CPU)
    on_sim.args, on_sim.kwargs = values.move((forward.args, forward.kwargs), device)
    cpu = values.attempt(lambda: _step(cpu_module, on_cpu, torch.device("cpu")))
    sim = values.attempt(lambda: _step(sim_module, on_sim, device))
    return values.verdict(cpu, sim, device)


def check(
    info: Any,
    device: torch.device,
    dtype_names: Iterable[str],
    limit: Optional[int] = None,
    trace: bool = False,
) -> Dict[str, Any]:
    """Every module input of every dtype named that the ModuleInfo lists."""
    tally = Tally(trace)
    modes = [True, False] if info.train_and_eval_differ else [True]
    for name in dtype_names:
        dtype = DTYPES[name]
        if dtype not in info.dtypes:
            continue
        for training in modes:
            for index, module_input in enumerate(_inputs(info, dtype, training)[:limit]):
                result = check_input(info, module_input, dtype, training, device)
                tally.add(
                    result, dtype=name, sample=index, training=training, desc=module_input.desc
                )
    return tally.summary()
