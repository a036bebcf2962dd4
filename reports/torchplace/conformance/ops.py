"""op_db on the sim: every OpInfo, every sample, per dtype, on the CPU and with every tensor on
sim:0; forward values and devices, and gradients where the op has autograd.

An OpInfo agrees when every (dtype, sample) pair agrees (values.GOOD). The CPU "runs" it when at
least one sample ran on the CPU; those are the denominator of the figure.
"""
from __future__ import annotations

import copy
from typing import Any, Dict, Iterable, List, Optional

import torch

from torchplace.conformance import values

DTYPES = {"float32": torch.float32, "float64": torch.float64, "int64": torch.int64,
          "bool": torch.bool}
# Their outputs are uninitialised memory: shape, dtype and device are compared, not values.
UNDEFINED_VALUES = {"empty", "empty_like", "new_empty", "new_empty_strided", "empty_strided"}
SEED = 1234


def op_id(op: Any) -> str:
    return op.name + (f".{op.variant_test_name}" if op.variant_test_name else "")


def database() -> Dict[str, Any]:
    from torch.testing._internal.common_methods_invocations import op_db

    return {op_id(op): op for op in op_db}


def _seeded(call):
    def run():
        torch.manual_seed(SEED)
        return call()
    return run


def _forward(op: Any, sample: Any):
    return op(sample.input, *sample.args, **sample.kwargs)


def cotangents(outputs: List[torch.Tensor]) -> List[torch.Tensor]:
    """A fixed random cotangent per output, made on the CPU."""
    generator = torch.Generator().manual_seed(SEED)
    return [torch.randn(o.shape, dtype=o.dtype, generator=generator) for o in outputs]


def _differentiable(output: Any) -> List[torch.Tensor]:
    return [leaf for leaf in values.flatten(output)
            if isinstance(leaf, torch.Tensor) and leaf.requires_grad]


def _backward(op: Any, sample: Any, device: torch.device):
    """The gradients of the op's (processed) outputs against a fixed random cotangent."""
    inputs = values.leaves_requiring_grad([sample.input, sample.args, sample.kwargs])
    outputs = _differentiable(sample.output_process_fn_grad(_forward(op, sample)))
    if not inputs or not outputs:
        return []
    grads = torch.autograd.grad(outputs, inputs, [c.to(device) for c in cotangents(outputs)],
                                allow_unused=True)
    return list(grads)  # None where an input has no gradient, on both devices


def _pair(call_cpu, call_sim, device, undefined) -> Dict[str, Any]:
    return values.verdict(values.attempt(_seeded(call_cpu)), values.attempt(_seeded(call_sim)),
                          device, undefined)


def _moved(sample: Any, device: torch.device) -> Any:
    """A SampleInput whose input, args and kwargs are fresh copies on `device` (values.move)."""
    moved = copy.copy(sample)
    moved.input, moved.args, moved.kwargs = values.move(
        (sample.input, sample.args, sample.kwargs), device)
    return moved


def check_sample(op: Any, sample: Any, device: torch.device, grad: bool) -> List[Dict[str, Any]]:
    """The forward pair and, with `grad`, the backward pair of one sample."""
    undefined = op.name in UNDEFINED_VALUES
    on_cpu, on_sim = _moved(sample, torch.device("cpu")), _moved(sample, device)
    results = [dict(_pair(lambda: _forward(op, on_cpu), lambda: _forward(op, on_sim), device,
                          undefined), stage="forward")]
    if grad and results[0]["verdict"] == values.AGREE and not undefined:
        on_cpu, on_sim = _moved(sample, torch.device("cpu")), _moved(sample, device)
        results.append(dict(_pair(lambda: _backward(op, on_cpu, torch.device("cpu")),
                                  lambda: _backward(op, on_sim, device), device, False),
                            stage="backward"))
    return results


def _samples(op: Any, dtype: torch.dtype, grad: bool) -> Iterable[Any]:
    torch.manual_seed(SEED)
    return list(op.sample_inputs("cpu", dtype, requires_grad=grad))


def check(op: Any, device: torch.device, dtype_names: Iterable[str],
          limit: Optional[int] = None) -> Dict[str, Any]:
    """Every sample of every dtype named (those the CPU supports) of one OpInfo: forward without
    gradients, then forward and backward with them where the op and the dtype have autograd."""
    supported = op.supported_dtypes("cpu")
    backward = op.supported_backward_dtypes("cpu") if op.supports_autograd else set()
    tally = Tally()
    for name in dtype_names:
        dtype = DTYPES[name]
        if dtype not in supported:
            continue
        grads = [False] + ([True] if dtype in backward and dtype.is_floating_point else [])
        for grad in grads:
            for index, sample in enumerate(_samples(op, dtype, grad)[:limit]):
                for result in check_sample(op, sample, device, grad):
                    tally.add(result, dtype=name, sample=index, requires_grad=grad)
    return tally.summary()


class Tally:
    """The verdicts of one entry's pairs: counts, the first failure, exactness."""

    def __init__(self) -> None:
        self.counts: Dict[str, int] = {}
        self.first_failure: Optional[Dict[str, Any]] = None
        self.exact = True

    def add(self, result: Dict[str, Any], **where: Any) -> None:
        self.counts[result["verdict"]] = self.counts.get(result["verdict"], 0) + 1
        self.exact = self.exact and result.get("exact", True)
        if result["verdict"] not in values.GOOD and self.first_failure is None:
            self.first_failure = dict(result, **where)

    def summary(self) -> Dict[str, Any]:
        pairs = sum(self.counts.values())
        ran = sum(self.counts.get(v, 0) for v in (values.AGREE, values.FALSE_ALARM, values.DIFFERS))
        return {"pairs": pairs, "counts": self.counts, "cpu_runs": ran > 0,
                "agree": self.first_failure is None and pairs > 0, "exact": self.exact,
                "first_failure": self.first_failure}
