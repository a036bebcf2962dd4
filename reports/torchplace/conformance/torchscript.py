"""The models of torchplace.conformance.models as TorchScript files, for the C++ test that loads
them onto sim:0 (harness/tests/sim_models_test.cpp): each scripted (torch.jit.script) with its
random weights, saved, and listed in manifest.json with what the C++ side needs to train it
(its batch's shape, classes, optimizer, the SYNTHETIC detection targets, torchvision's library).
"""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any, Dict, List, Optional

import torch

from torchplace.conformance import models

MANIFEST = "manifest.json"


def kind_of(entry: models.Model) -> str:
    if entry.synthetic:
        return "detection"
    return "segmentation" if entry.name.startswith("lraspp") else "classifier"


def batch_shape(entry: models.Model) -> List[int]:
    arguments, _ = entry.batch()
    images = arguments[0]
    return [len(images), *images[0].shape] if isinstance(images, list) else list(images.shape)


def torchvision_library() -> Optional[str]:
    """torchvision's C++ operators (nms, roi_align), which the C++ test loads: its `_C` extension
    (0.14.1: links LibTorch only) or `_C_stable` (0.29.1: also libtorch_python.so, which needs a
    Python interpreter's symbols; the C++ test then skips detection, naming the symbol)."""
    for name in ("torchvision._C", "torchvision._C_stable"):
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.origin:
            return spec.origin
    return None


def describe(entry: models.Model, file: str) -> Dict[str, Any]:
    """What the C++ test needs to know about one entry."""
    described: Dict[str, Any] = {
        "name": entry.name,
        "file": file,
        "kind": kind_of(entry),
        "batch": batch_shape(entry),
        "optimizer": entry.optimizer,
        "classes": entry.kwargs["num_classes"],
    }
    if entry.synthetic:
        described.update(
            synthetic_boxes=models.SYNTHETIC_BOXES, synthetic_labels=models.SYNTHETIC_LABELS
        )
    return described


def save(entry: models.Model, directory: Path) -> Dict[str, Any]:
    """Scripts one entry with its seeded random weights and saves it under `directory`."""
    torch.manual_seed(models.SEED)
    scripted = torch.jit.script(entry.build().train())
    file = f"{entry.name}.pt"
    scripted.save(str(directory / file))
    return describe(entry, file)


def save_all(directory: Path, names: List[str]) -> Dict[str, Any]:
    """Every named entry (every entry for none) saved, and the manifest written last."""
    import torchvision

    directory.mkdir(parents=True, exist_ok=True)
    chosen = [models.BY_NAME[name] for name in names] or models.MODELS
    manifest = {
        "torch": torch.__version__,
        "torchvision": torchvision.__version__,
        "torchvision_library": torchvision_library(),
        "seed": models.SEED,
        "models": [save(entry, directory) for entry in chosen],
    }
    (directory / MANIFEST).write_text(json.dumps(manifest, indent=1), encoding="utf-8")
    return manifest
