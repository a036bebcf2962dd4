"""op_db on the sim: every OpInfo, every sample, per dtype. The samples are made for sim:0 by
the OpInfo's own sample function (as PyTorch's tests make them for cuda:0: it decides which
tensors stay on the CPU), then run as made and, for the reference, with every tensor on the CPU:
forward values and devices, and gradients where the op has autograd for the dtype.

Where op_db says CUDA does not support a dtype the CPU does (dtypesIfCUDA), the sim must raise
too. An OpInfo agrees when every pair agrees (values.GOOD); the CPU "runs" it when at least one
sample ran on the CPU: those are the figure's denominator.
"""
from __future__ import annotations

import copy
from typing import Any, Callable, Dict, Iterable, List, Optional, Tuple

import torch

from torchplace.conformance import values

DTYPES = {
    "float32": torch.float32,
    "float64": torch.float64,
    "int64": torch.int64,
    "bool": torch.bool,
}
# Their outputs are uninitialised memory: shape, dtype and device are compared, not values.
UNDEFINED_VALUES = {"empty", "empty_like", "new_empty", "new_empty_strided", "empty_strided"}
SEED = 1234
CPU = torch.device("cpu")


def op_id(op: Any) -> str:
    return op.name + (f".{op.variant_test_name}" if op.variant_test_name else "")


def database() -> Dict[str, Any]:
    from torch.testing._internal.common_methods_invocations import op_db

    return {op_id(op): op for op in op_db}


def seeded(call: Callable[[], Any]) -> Callable[[], Any]:
    def run() -> Any:
        torch.manual_seed(SEED)
        return call()

    return run


def cotangents(outputs: List[torch.Tensor]) -> List[torch.Tensor]:
    """A fixed random cotangent per output, made on the CPU."""
    generator = torch.Generator().manual_seed(SEED)
    return [torch.randn(o.shape, dtype=o.dtype, generator=generator) for o in outputs]


def _forward(op: Any, sample: Any) -> Any:
    return op(sample.input, *sample.args, **sample.kwargs)


def _backward(op: Any, sample: Any, device: torch.device) -> List[Optional[torch.Tensor]]:
    """The gradients of the op's (processed) outputs against a fixed random cotangent."""
    inputs = values.leaves_requiring_grad([sample.input, sample.args, sample.kwargs])
    outputs = [
        leaf
        for leaf in values.flatten(sample.output_process_fn_grad(_forward(op, sample)))
        if isinstance(leaf, torch.Tensor) and leaf.requires_grad
    ]
    if not inputs or not outputs:
        return []
    return list(
        torch.autograd.grad(
            outputs, inputs, [c.to(device) for c in cotangents(outputs)], allow_unused=True
        )
    )  # None where an input has no gradient


def _copied(sample: Any, device: Optional[torch.device]) -> Any:
    """The sample with fresh copies of its tensors: on `device`, or where they are when None."""
    copied = copy.copy(sample)
    copied.input, copied.args, copied.kwargs = values.move(
        (sample.input, sample.args, sample.kwargs), device
    )
    return copied


def _output_device(sample: Any, device: torch.device) -> torch.device:
    """Where CUDA puts the outputs: the device a factory function is given, else the sample's
    tensors' device (`device` when any is on it, the CPU when none is: torch.arange(2))."""
    if "device" in sample.kwargs:  # "cuda" (no index, op_db on a GPU host) names cuda:0 there
        return torch.empty(0, device=sample.kwargs["device"]).device
    on = [
        leaf.device
        for leaf in values.flatten([sample.input, sample.args, sample.kwargs])
        if isinstance(leaf, torch.Tensor)
    ]
    return device if device in on else CPU


# The tests of PyTorch's own that hold what each stage compares: where op_db marks one skipped or
# expected to fail for an op (on CUDA or on every device), PyTorch itself does not expect it to
# hold, and the sweep does not compare that stage: it records why (values.NOT_COMPARED).
FORWARD_VALUES = ("TestCommon", "test_compare_cpu")  # CUDA against the CPU (2.x)
GRADIENTS = ("TestGradients", "test_fn_grad")


def opted_out(op: Any, test: Tuple[str, str], dtype: torch.dtype) -> Optional[str]:
    """Why op_db opts this op and dtype out of `test` (skip or expectedFailure), or None."""
    for info in list(op.decorators) + list(getattr(op, "skips", ())):
        if (getattr(info, "cls_name", None), getattr(info, "test_name", None)) != test:
            continue
        dtypes = getattr(info, "dtypes", None)
        if (
            getattr(info, "device_type", None) not in (None, "cuda")
            or (dtypes is not None and dtype not in dtypes)
            or not getattr(info, "active_if", True)
        ):
            continue
        kinds = [getattr(d, "__qualname__", str(d)) for d in getattr(info, "decorators", ())]
        return f"op_db marks {test[0]}.{test[1]} {', '.join(kinds)}"
    return None


def check_sample(
    op: Any, sample: Any, device: torch.device, dtype: torch.dtype, grad: bool
) -> List[Dict[str, Any]]:
    """The forward pair and, with `grad`, the backward pair of one sample made for `device`."""
    undefined = op.name in UNDEFINED_VALUES or bool(opted_out(op, FORWARD_VALUES, dtype))
    device = _output_device(sample, device)
    stages = [("forward", lambda s, d: _forward(op, s))]
    if grad and not undefined:
        stages.append(("backward", lambda s, d: _backward(op, s, d)))
    results: List[Dict[str, Any]] = []
    for stage, call in stages:
        why_not = opted_out(op, GRADIENTS, dtype) if stage == "backward" else None
        if why_not:
            results.append({"verdict": values.NOT_COMPARED, "detail": why_not, "stage": stage})
            break
        on_cpu, on_sim = _copied(sample, CPU), _copied(sample, None)
        sim = values.attempt(seeded(lambda: call(on_sim, device)))
        cpu = values.attempt(seeded(lambda: call(on_cpu, CPU)))
        results.append(dict(values.verdict(cpu, sim, device, undefined), stage=stage))
        if results[-1]["verdict"] != values.AGREE:
            break
    return results


def check_refused(op: Any, samples: List[Any]) -> Dict[str, Any]:
    """A dtype op_db says CUDA does not support for the operator: the sim must refuse it. op_db
    says so of the operator, not of each sample (CUDA's code returns before its dtype dispatch
    on some empty or 0-dim inputs: harness/sim/CUDA_RULES.md "Dtypes CUDA refuses"), so one refused
    sample agrees; the count of those the sim ran is kept."""
    refused = sum(
        values.attempt(seeded(lambda: _forward(op, _copied(sample, None))))[1] is not None
        for sample in samples
    )
    verdict = values.REFUSED_AS_ON_CUDA if refused else values.RUNS_WHERE_CUDA_DOES_NOT
    detail = f"the sim refused {refused} of {len(samples)} samples"
    return {"verdict": verdict, "detail": detail, "stage": "forward"}


def _samples(op: Any, device: torch.device, dtype: torch.dtype, grad: bool) -> List[Any]:
    torch.manual_seed(SEED)
    return list(op.sample_inputs(device, dtype, requires_grad=grad))


def check(
    op: Any,
    device: torch.device,
    dtype_names: Iterable[str],
    limit: Optional[int] = None,
    trace: bool = False,
) -> Dict[str, Any]:
    """Every sample of every dtype named (those the CPU supports) of one OpInfo: forward without
    gradients, then forward and backward with them where the op and the dtype have autograd."""
    supported, on_cuda = op.supported_dtypes("cpu"), op.supported_dtypes("cuda")
    backward = op.supported_backward_dtypes("cpu") if op.supports_autograd else set()
    tally = Tally(trace)
    for name in dtype_names:
        dtype = DTYPES[name]
        if dtype not in supported:
            continue
        if dtype not in on_cuda:
            made, error = values.attempt(lambda: _samples(op, device, dtype, False))
            if made:
                tally.add(check_refused(op, made[:limit]), dtype=name)
            continue
        grads = [False] + ([True] if dtype in backward and dtype.is_floating_point else [])
        for grad in grads:
            made, error = values.attempt(lambda: _samples(op, device, dtype, grad))
            if error is not None or made is None:
                detail = f"making the samples on {device}: {type(error).__name__}: {error}"
                tally.add(
                    {"verdict": values.FALSE_ALARM, "detail": detail[:400]},
                    dtype=name,
                    stage="samples",
                    requires_grad=grad,
                )
                continue
            for index, sample in enumerate(made[:limit]):
                for result in check_sample(op, sample, device, dtype, grad):
                    tally.add(result, dtype=name, sample=index, requires_grad=grad)
    return tally.summary()


class Tally:
    """The verdicts of one entry's pairs: counts, the first failure, exactness; with `trace`,
    every pair's verdict and what the device raised (the sim against CUDA, pair by pair)."""

    def __init__(self, trace: bool = False) -> None:
        self.counts: Dict[str, int] = {}
        self.first_failure: Optional[Dict[str, Any]] = None
        self.exact = True
        self.trace: Optional[List[Dict[str, Any]]] = [] if trace else None

    def add(self, result: Dict[str, Any], **where: Any) -> None:
        self.counts[result["verdict"]] = self.counts.get(result["verdict"], 0) + 1
        self.exact = self.exact and result.get("exact", True)
        if result["verdict"] not in values.GOOD and self.first_failure is None:
            self.first_failure = dict(result, **where)
        if self.trace is not None:
            kept = {key: result[key] for key in TRACED if result.get(key) is not None}
            self.trace.append(dict(where, **kept))

    def summary(self) -> Dict[str, Any]:
        pairs = sum(self.counts.values())
        ran = pairs - self.counts.get(values.BOTH_RAISE, 0)  # the CPU ran, or CUDA refuses
        summary = {
            "pairs": pairs,
            "counts": self.counts,
            "cpu_runs": ran > 0,
            "agree": self.first_failure is None and pairs > 0,
            "exact": self.exact,
            "first_failure": self.first_failure,
        }
        if self.trace is not None:
            summary["trace"] = self.trace
        return summary


TRACED = ("stage", "verdict", "raised", "detail")
