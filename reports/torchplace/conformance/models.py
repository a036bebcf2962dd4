"""torchvision's models on the sim: one training step (forward, loss, backward, optimizer step) on
the CPU and the same step on sim:0, from the same random weights (no download) and the same seed.

Compared, tensor for tensor: the outputs, the loss, every parameter's gradient, every parameter
and buffer (batch norm statistics) after the step; each of the sim's must be on sim:0. The sim
computes with the CPU's kernels and the CPU's generator, so the two should be bit-identical; a
difference within TOLERANCE (torch.testing's own for float32) still agrees, and says it is not
exact. Detection trains on SYNTHETIC boxes and labels (made up here, no data set).
"""
from __future__ import annotations

import copy
import importlib.util
import os
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Tuple

import torch

from torchplace.conformance import values

SEED = 1234
TOLERANCE = {"rtol": 1.3e-6, "atol": 1e-5}  # torch.testing.assert_close's float32 default
Batch = Tuple[List[Any], Any]  # (the forward's arguments, the loss's target)


def skip_reason() -> Optional[str]:
    """Why this Python cannot run the comparison here, or None: no torchvision, or a torch that
    is not the LibTorch the sim was built against (TORCHPLACE_LIBTORCH_VERSION, major.minor, as
    CMake passes it). Asked before the sim's library is loaded: one built for another torch
    crashes the process as it loads (2.14.1's into 1.13.1: a segmentation fault), before
    torchplace.sim can compare versions."""
    if importlib.util.find_spec("torchvision") is None:
        return "needs torchvision (apt-get install python3-torchvision)"
    wanted = os.environ.get("TORCHPLACE_LIBTORCH_VERSION", "")
    if wanted and wanted.split(".")[:2] != torch.__version__.split(".")[:2]:
        return (
            f"this Python's torch is {torch.__version__}, the build's LibTorch {wanted}: "
            "set TORCHPLACE_PYTHON to a Python with that torch"
        )
    return None


@dataclass(frozen=True)
class Model:
    """One entry: how to build it, a batch on the CPU, its loss and its optimizer."""

    name: str
    build: Callable[[], torch.nn.Module]
    batch: Callable[[], Batch]
    loss: Callable[[Any, Any], torch.Tensor]
    optimizer: str = "sgd"  # "sgd" (momentum 0.9) or "adam"
    synthetic: bool = False  # trained on made-up targets
    kwargs: Dict[str, Any] = field(default_factory=dict)  # what build passed torchvision


def _images(count: int, size: int) -> torch.Tensor:
    return torch.rand(count, 3, size, size, generator=torch.Generator().manual_seed(SEED))


def _labels(count: int, classes: int) -> torch.Tensor:
    return torch.randint(classes, (count,), generator=torch.Generator().manual_seed(SEED + 1))


def _classifier(name: str, optimizer: str, **kwargs: Any) -> Model:
    """A classification model: 2 images of 32x32, 10 classes, cross entropy on random labels."""
    kwargs = {"num_classes": 10, **kwargs}

    def build() -> torch.nn.Module:
        import torchvision

        return getattr(torchvision.models, name)(weights=None, **kwargs)

    return Model(
        name,
        build,
        lambda: ([_images(2, 32)], _labels(2, 10)),
        torch.nn.functional.cross_entropy,
        optimizer,
        kwargs=kwargs,
    )


# SYNTHETIC detection targets: boxes (x1, y1, x2, y2) in a 64x64 image, labels 1..2 (0 is
# the background); drawn by hand, not from a data set.
SYNTHETIC_BOXES = [[[4.0, 6.0, 30.0, 40.0], [20.0, 10.0, 60.0, 50.0]], [[10.0, 12.0, 50.0, 44.0]]]
SYNTHETIC_LABELS = [[1, 2], [2]]


def synthetic_targets() -> List[Dict[str, torch.Tensor]]:
    return [
        {"boxes": torch.tensor(boxes), "labels": torch.tensor(labels)}
        for boxes, labels in zip(SYNTHETIC_BOXES, SYNTHETIC_LABELS)
    ]


def _detection() -> Model:
    """fasterrcnn_mobilenet_v3_large_320_fpn in train mode (it takes targets and returns its
    losses): 2 images of 64x64, resized to 64 (min_size, max_size), 3 classes."""
    kwargs = {"num_classes": 3, "min_size": 64, "max_size": 64}

    def build() -> torch.nn.Module:
        from torchvision.models import detection

        return detection.fasterrcnn_mobilenet_v3_large_320_fpn(
            weights=None, weights_backbone=None, **kwargs
        )

    def batch() -> Batch:
        return [list(_images(2, 64)), synthetic_targets()], None

    return Model(
        "fasterrcnn_mobilenet_v3_large_320_fpn",
        build,
        batch,
        lambda losses, _: sum(losses.values()),
        "sgd",
        True,
        kwargs,
    )


def _segmentation() -> Model:
    """lraspp_mobilenet_v3_large, 3 classes, 2 images of 64x64, cross entropy per pixel."""

    def build() -> torch.nn.Module:
        from torchvision.models import segmentation

        return segmentation.lraspp_mobilenet_v3_large(
            weights=None, weights_backbone=None, num_classes=3
        )

    def batch() -> Batch:
        pixels = torch.randint(3, (2, 64, 64), generator=torch.Generator().manual_seed(SEED))
        return [_images(2, 64)], pixels

    return Model(
        "lraspp_mobilenet_v3_large",
        build,
        batch,
        lambda out, target: torch.nn.functional.cross_entropy(out["out"], target),
        "adam",
        kwargs={"num_classes": 3},
    )


MODELS: List[Model] = [
    _classifier("resnet18", "sgd"),
    _classifier("mobilenet_v3_small", "adam"),
    _classifier("efficientnet_b0", "sgd"),
    _classifier("densenet121", "adam"),
    _classifier("convnext_tiny", "sgd"),
    _classifier("vit_b_16", "sgd", image_size=32),
    _detection(),
    _segmentation(),
]
BY_NAME = {model.name: model for model in MODELS}


def database() -> Dict[str, Model]:
    """The entries by name, for the sweep's runner (worker.py)."""
    return {entry.name: entry for entry in MODELS}


def _optimizer(kind: str, parameters: List[torch.nn.Parameter]) -> torch.optim.Optimizer:
    # foreach=False on both devices: torch 2.x picks the foreach Adam/SGD for a PrivateUse1
    # device and the for-loop one for the CPU (torch/utils/_foreach_utils.py), two orders of
    # operations, not the device's doing. (1.13.1's stubs lack the argument; its code has it.)
    options: Dict[str, Any] = {"foreach": False}
    if kind == "adam":
        return torch.optim.Adam(parameters, lr=1e-3, **options)
    return torch.optim.SGD(parameters, lr=0.01, momentum=0.9, **options)


def named_leaves(value: Any, name: str = "output") -> Dict[str, Any]:
    """The leaves of an output by their path in it (output/out, output/loss_classifier, ...)."""
    if isinstance(value, dict):
        items = sorted(value.items())
    elif isinstance(value, (list, tuple)):
        items = list(enumerate(value))
    else:
        return {name: value}
    return {
        path: leaf
        for key, item in items
        for path, leaf in named_leaves(item, f"{name}/{key}").items()
    }


def train_step(entry: Model, model: torch.nn.Module, device: torch.device) -> Dict[str, Any]:
    """One step of a copy of `model` on `device`: per category, its tensors by name."""
    model = copy.deepcopy(model).to(device).train()
    optimizer = _optimizer(entry.optimizer, list(model.parameters()))
    arguments, target = values.move(entry.batch(), device)
    torch.manual_seed(SEED)  # dropout, stochastic depth, the detector's sampling
    start = time.perf_counter()
    output = model(*arguments)
    loss = entry.loss(output, target)
    loss.backward()
    optimizer.step()
    seconds = time.perf_counter() - start
    named = dict(model.named_parameters())
    return {
        "outputs": named_leaves(output),
        "loss": {"loss": loss.detach()},
        "gradients": {n: p.grad if p.grad is not None else "no gradient" for n, p in named.items()},
        "parameters": {n: p.detach() for n, p in named.items()},
        "buffers": dict(model.named_buffers()),
        "seconds": seconds,
    }


CATEGORIES = ("outputs", "loss", "gradients", "parameters", "buffers")


def _difference(cpu: Any, sim: Any) -> Tuple[float, float]:
    """max |sim - cpu| of two tensors, and that relative to the largest |cpu| (not element by
    element: a gradient near zero would dominate); 0 for what is not a float tensor."""
    if not isinstance(cpu, torch.Tensor) or not isinstance(sim, torch.Tensor):
        return 0.0, 0.0
    if cpu.numel() == 0 or cpu.shape != sim.shape or not cpu.is_floating_point():
        return 0.0, 0.0
    difference = (sim.detach().cpu().double() - cpu.detach().double()).abs().max().item()
    scale = cpu.detach().double().abs().max().item()
    return difference, difference / scale if scale > 0 else difference


def compare_category(
    cpu: Dict[str, Any], sim: Dict[str, Any], device: torch.device
) -> Dict[str, Any]:
    """The largest absolute and relative difference, bit-identical or not, and the first tensor
    out of TOLERANCE, on another device, or of another shape (values.compare_outputs), named."""
    found: Dict[str, Any] = {"max_abs": 0.0, "max_rel": 0.0, "exact": True, "count": len(cpu)}
    found["difference"] = None
    if sorted(cpu) != sorted(sim):
        return dict(found, exact=False, difference=f"names {sorted(sim)} on the sim, {sorted(cpu)}")
    for name in sorted(cpu):
        why, exact = values.compare_outputs(cpu[name], sim[name], device)
        largest, relative = _difference(cpu[name], sim[name])
        found.update(
            max_abs=max(found["max_abs"], largest),
            max_rel=max(found["max_rel"], relative),
            exact=found["exact"] and exact and not why,
        )
        if why and found["difference"] is None:
            found["difference"] = f"{name}: {why.split(': ', 1)[-1]}"
    return found


def compare(cpu: Dict[str, Any], sim: Dict[str, Any], device: torch.device) -> Dict[str, Any]:
    return {
        category: compare_category(cpu[category], sim[category], device) for category in CATEGORIES
    }


def check(entry: Model, device: torch.device) -> Dict[str, Any]:
    """One entry (as ops.check): the CPU step and the sim step, and the verdict."""
    torch.manual_seed(SEED)
    model = entry.build()  # the same random weights for both
    cpu = values.attempt(lambda: train_step(entry, model, torch.device("cpu")))
    sim = values.attempt(lambda: train_step(entry, model, device))
    result: Dict[str, Any] = {
        "model": entry.name,
        "optimizer": entry.optimizer,
        "synthetic_targets": entry.synthetic,
        "tolerance": TOLERANCE,
    }
    on_cpu, on_sim = cpu[0], sim[0]
    if on_cpu is None or on_sim is None:  # one raised
        return judged(dict(result, **values.verdict(cpu, sim, device), exact=False))
    categories = compare(on_cpu, on_sim, device)
    differs = [
        f"{name} {seen['difference']}" for name, seen in categories.items() if seen["difference"]
    ]
    return judged(
        dict(
            result,
            verdict=values.DIFFERS if differs else values.AGREE,
            detail=differs[0] if differs else None,
            exact=all(found["exact"] for found in categories.values()),
            categories=categories,
            seconds={"cpu": on_cpu["seconds"], "sim": on_sim["seconds"]},
        )
    )


def judged(result: Dict[str, Any]) -> Dict[str, Any]:
    """The fields the sweep's judge reads (judge.py), beside the verdict."""
    good = result["verdict"] in values.GOOD
    return dict(result, agree=good, cpu_runs=True, first_failure=None if good else result)
