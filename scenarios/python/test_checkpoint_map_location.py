"""A checkpoint loaded without map_location. A GPU run's checkpoint tags its tensors cuda:0 and
torch.load puts them back there: on a host without CUDA (a CPU-only CI runner, the sim's host)
that raises BackendUnavailable; on a GPU host it loads (latent). The fix maps it to the CPU and
lets load_state_dict copy it onto the model's device."""
import pytest
import torch
import torch.serialization
from training import Classifier, assert_trains_like, classify_loss, data, reference_losses, train

_tagging = False


def _tag_as_cuda(storage):
    return "cuda:0" if _tagging else None


# Registered once, inert unless tagging: its deserializer restores nothing (the others do).
torch.serialization.register_package(0, _tag_as_cuda, lambda storage, location: None)


def gpu_checkpoint(path):
    """Writes a fresh Classifier's state_dict as a GPU run writes it: each storage tagged cuda:0.
    Synthetic: made here by torch.save with a tagger ahead of the CPU's, the tag a CUDA storage
    gets (torch.serialization's location tags)."""
    global _tagging
    _tagging = True
    try:
        torch.save(Classifier().state_dict(), path)
    finally:
        _tagging = False
    return path


@pytest.mark.torchplace_broken(
    "BackendUnavailable", latent=lambda device: torch.cuda.is_available()
)
def test_load_without_map_location(device, tmp_path):
    model = Classifier().to(device)
    model.load_state_dict(torch.load(gpu_checkpoint(tmp_path / "model.pt")))


def test_load_mapped_to_cpu(device, tmp_path):
    model = Classifier().to(device)
    model.load_state_dict(torch.load(gpu_checkpoint(tmp_path / "model.pt"), map_location="cpu"))
    assert {p.device for p in model.parameters()} == {torch.device(device)}
    inputs, labels = data()
    losses = train(model, classify_loss(inputs.to(device), labels.to(device)))
    assert_trains_like(losses, reference_losses())
