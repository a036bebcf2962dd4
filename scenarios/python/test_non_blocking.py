"""non_blocking from pageable memory. A copy asked non_blocking is asynchronous only from pinned
memory: from pageable memory the CUDA driver stages it while the host waits (the CUDA runtime
API's "API synchronization behavior"), so the overlap the code was written for silently never
happens. Nothing raises: a test catches it by asserting, where the pipeline asks non_blocking,
that its source is pinned. The fix pins the batch (what DataLoader(pin_memory=True) does).
Pinning needs an accelerator: CUDA, or the sim on torch 2.x (its pinned allocator); torch 1.13
pins through CUDA only, so there the fix skips on the sim, saying so. On the CPU nothing is
copied: the mistake is latent."""
import pytest
import torch
from training import Classifier, assert_trains_like, classify_loss, data, reference_losses, train


def to_device_async(batch: torch.Tensor, device: torch.device) -> torch.Tensor:
    """The input pipeline's copy: asynchronous by intent, so its host source must be pinned."""
    if torch.device(device).type != "cpu":
        assert batch.is_pinned(), "non_blocking from pageable memory: CUDA stages it synchronously"
    return batch.to(device, non_blocking=True)


def pinned(batch: torch.Tensor) -> torch.Tensor:
    return batch.pin_memory()


def steps(device, prepare):
    inputs, labels = data()
    model = Classifier().to(device)
    inputs, labels = (to_device_async(prepare(t), device) for t in (inputs, labels))
    return train(model, classify_loss(inputs, labels))


@pytest.mark.torchplace_broken("AssertionError")
def test_pageable_batch(device):
    steps(device, lambda batch: batch)


def test_pinned_batch(device):
    kind = torch.device(device).type
    if kind == "cpu":
        pytest.skip("covered_by_other_cell: the CPU copies nothing; the device cells pin")
    if kind != "cuda" and int(torch.__version__.split(".")[0]) < 2:
        pytest.skip(f"not_on_sim: torch {torch.__version__} pins memory through CUDA only")
    assert_trains_like(steps(device, pinned), reference_losses())
