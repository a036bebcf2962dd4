"""Mixed placements on the sim, judged by the source-derived rules (rules.py).

For each OpInfo sample with two or more tensor arguments, each tensor argument in turn is left on
the CPU (as a 0-dim tensor: its first element; and as the full tensor) or moved to device1, the
rest on device0. A placement the CPU cannot run at all (every tensor on the CPU, the same values)
is skipped, as is a sample the sim cannot run with every tensor on device0. Otherwise the call
runs on the sim under a TorchDispatchMode that logs each aten call it reaches with its tensors'
devices; the oracle applies the rules to those calls in order (rules.predict) up to the first one
predicted to raise or not predicted, and the result is compared with what the sim did:
  agree        the sim ran where the rules say CUDA runs, or raised the family they predict
  differs      anything else: the first such placement is reported
  unpredicted  the rules cannot say (a NoCheck operator without a decided rule, a keyword-only
               tensor, a tensor list, a composite whose calls the trace does not see, an error
               raised outside the call the rules are about): counted apart, never as agreement
An entry's verdict: differs if any placement differs, else agree if any agrees, else unpredicted
if any was judged, else no_placement. `check` returns it with the counts, the first difference and
the commonest reasons for unpredicted placements.
"""
from __future__ import annotations

import copy
from typing import Any, Dict, Iterable, Iterator, List, Optional, Tuple

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from torchplace.conformance import ops, rules, values

AGREE, DIFFERS, NO_PLACEMENT = "agree", "differs", "no_placement"
PLACEMENTS = ("cpu_0dim", "cpu_full", "device1")
Path = Tuple[Any, ...]


def tensor_paths(value: Any, path: Path = ()) -> Iterator[Path]:
    """Where each tensor sits in a nest of lists, tuples and dicts."""
    if isinstance(value, torch.Tensor):
        yield path
    elif isinstance(value, (list, tuple)) and not isinstance(value, torch.Size):
        for index, item in enumerate(value):
            yield from tensor_paths(item, path + (index,))
    elif isinstance(value, dict):
        for key in sorted(value, key=str):
            yield from tensor_paths(value[key], path + (key,))


def get(value: Any, path: Path) -> Any:
    for step in path:
        value = value[step]
    return value


def replaced(value: Any, path: Path, new: Any) -> Any:
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        return {k: replaced(v, rest, new) if k == head else v for k, v in value.items()}
    items = [replaced(v, rest, new) if i == head else v for i, v in enumerate(value)]
    return type(value)(*items) if hasattr(value, "_fields") else type(value)(items)


def displaced(
    tensor: torch.Tensor, placement: str, device1: torch.device
) -> Optional[torch.Tensor]:
    """The tensor as the placement leaves it (None: no 0-dim form of an empty tensor)."""
    tensor = tensor.detach()
    if placement == "cpu_0dim":
        return tensor.reshape(-1)[0].clone() if tensor.numel() else None
    return tensor.clone() if placement == "cpu_full" else tensor.to(device1)


class Trace(TorchDispatchMode):
    """Each aten call as (\"name.overload\", its tensors as rules.Tensor)."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: List[Tuple[str, List[rules.Tensor]]] = []
        self.raised_at: Optional[int] = None  # the call whose own kernel raised

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        kwargs = kwargs or {}
        schema = func._schema
        tensors = []
        for index, argument in enumerate(schema.arguments):
            value = args[index] if index < len(args) else kwargs.get(argument.name)
            alias = argument.alias_info
            written = alias is not None and alias.is_write
            items = value if isinstance(value, (list, tuple)) else [value]
            for item in items:
                if isinstance(item, torch.Tensor):
                    tensors.append(
                        rules.Tensor(
                            argument.name,
                            argument.kwarg_only,
                            written,
                            argument.kwarg_only and written,
                            isinstance(value, (list, tuple)),
                            item.device,
                            item.dim(),
                        )
                    )
        name = schema.name.split("::")[-1]
        self.calls.append((f"{name}.{schema.overload_name}", tensors))
        try:
            return func(*args, **kwargs)
        except Exception:
            self.raised_at = len(self.calls) - 1
            raise


def oracle(calls: List[Tuple[str, List[rules.Tensor]]]) -> Tuple[rules.Prediction, int]:
    """The rules applied in order to the traced calls that mix devices: (the prediction, the index
    of the call it is about, -1 when every call runs)."""
    for index, (key, tensors) in enumerate(calls):
        if len({t.device for t in tensors}) < 2:
            continue
        prediction = rules.predict(key, tensors)
        if prediction.outcome != rules.RUN:
            return prediction, index
    return rules.Prediction(rules.RUN, None, "no call refuses"), -1


def compare(
    prediction: rules.Prediction, at: int, trace: Trace, error: Optional[BaseException]
) -> str:
    """agree, differs or unpredicted. An error raised outside the call the rules are about (in
    composite code the trace does not see, or in an earlier call's own checks) is unpredicted."""
    if prediction.outcome == rules.UNPREDICTED:
        return rules.UNPREDICTED
    if error is None:
        return AGREE if prediction.outcome == rules.RUN else DIFFERS
    raised = trace.raised_at
    mixed_there = raised is not None and len({t.device for t in trace.calls[raised][1]}) > 1
    if prediction.outcome == rules.RUN:
        return DIFFERS if mixed_there else rules.UNPREDICTED
    if raised != at:
        return rules.UNPREDICTED
    return AGREE if rules.family(str(error)) == prediction.family else DIFFERS


def _run(op: Any, call: Any) -> Optional[BaseException]:
    """What the call (input, args, kwargs) raised, or None."""
    torch.manual_seed(ops.SEED)
    _, error = values.attempt(lambda: op(call[0], *call[1], **call[2]))
    return error


def judge(op: Any, on_cpu: Any, on_sim: Any) -> Optional[Dict[str, Any]]:
    """One placement: None when the CPU cannot run it, else the comparison."""
    if _run(op, copy.deepcopy(on_cpu)) is not None:
        return None
    trace = Trace()
    with trace:
        error = _run(op, on_sim)
    prediction, at = oracle(trace.calls)
    seen = rules.family(str(error)) if error is not None else None
    observed = "ran" if error is None else f"raised ({seen})"
    verdict = compare(prediction, at, trace, error)
    expected = prediction.outcome + (f" ({prediction.family})" if prediction.family else "")
    call = trace.calls[at][0] if at >= 0 else ""
    return {
        "verdict": verdict,
        "sim": observed,
        "rules": expected,
        "at": call,
        "why": prediction.why[:300],
        "message": str(error)[:300] if error else None,
    }


def placements(
    sample: Any, device0: torch.device, device1: torch.device
) -> Iterator[Tuple[str, str, Tuple, Tuple]]:
    """(which tensor, placement, the call on the CPU, the call on the sim) for one sample."""
    call = (sample.input, list(sample.args), dict(sample.kwargs))
    paths = list(tensor_paths(call))
    if len(paths) < 2:
        return
    for path in paths:
        for placement in PLACEMENTS:
            moved = displaced(get(call, path), placement, device1)
            if moved is None:
                continue
            cpu_form = moved.cpu() if placement == "cpu_0dim" else get(call, path)
            yield (
                str(path),
                placement,
                replaced(call, path, cpu_form),
                replaced(values.move(call, device0), path, moved),
            )


def check(
    op: Any,
    device0: torch.device,
    device1: torch.device,
    dtype_names: Iterable[str],
    limit: Optional[int] = None,
) -> Dict[str, Any]:
    """Every placement of every sample (up to `limit` a dtype) of one OpInfo, forward only."""
    tally = _Tally()
    supported = op.supported_dtypes("cpu")
    for name in dtype_names:
        if ops.DTYPES[name] not in supported:
            continue
        samples = list(ops._samples(op, ops.CPU, ops.DTYPES[name], False))[:limit]
        for index, sample in enumerate(samples):
            call = (sample.input, list(sample.args), dict(sample.kwargs))
            base, moving = values.attempt(lambda: values.move(call, device0))
            if moving or _run(op, copy.deepcopy(call)) or _run(op, base):
                tally.counts["skipped_sample"] = tally.counts.get("skipped_sample", 0) + 1
                continue
            for which, placement, on_cpu, on_sim in placements(sample, device0, device1):
                tally.add(
                    judge(op, on_cpu, on_sim),
                    dtype=name,
                    sample=index,
                    tensor=which,
                    placement=placement,
                )
    return tally.summary()


class _Tally:
    """One entry's placements: counts, the first difference, why the rest went unpredicted."""

    def __init__(self) -> None:
        self.counts: Dict[str, int] = {}
        self.first: Optional[Dict[str, Any]] = None
        self.unpredicted: Dict[str, int] = {}

    def add(self, result: Optional[Dict[str, Any]], **where: Any) -> None:
        key = "invalid_on_cpu" if result is None else result["verdict"]
        self.counts[key] = self.counts.get(key, 0) + 1
        if result and key == DIFFERS and self.first is None:
            self.first = dict(result, **where)
        if result and key == rules.UNPREDICTED:
            why = f"{result['at'] or '-'}: {result['why'][:80]}"
            self.unpredicted[why] = self.unpredicted.get(why, 0) + 1

    def summary(self) -> Dict[str, Any]:
        reasons = sorted(self.unpredicted.items(), key=lambda item: -item[1])[:3]
        verdict = summary(self.counts)
        return {
            "counts": self.counts,
            "verdict": verdict,
            "first_difference": self.first,
            "unpredicted_why": dict(reasons),
            # for the sweep's judge (judge.py): an entry judged at all, and whether it agrees
            "cpu_runs": verdict in (AGREE, DIFFERS),
            "agree": verdict == AGREE,
            "first_failure": self.first,
        }


def summary(counts: Dict[str, int]) -> str:
    """differs if any placement differs; agree if some agree and none differ; unpredicted if some
    were judged and the rules could say nothing of any; no_placement if none was judged (fewer
    than two tensor arguments, or every placement invalid on the CPU)."""
    if counts.get(DIFFERS):
        return DIFFERS
    if counts.get(AGREE):
        return AGREE
    return rules.UNPREDICTED if counts.get(rules.UNPREDICTED) else NO_PLACEMENT
