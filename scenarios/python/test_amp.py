"""AMP: autocast changes the dtype an op computes in, never its device. Under autocast, targets
left on the CPU still raise DeviceMismatch on a GPU; the fix moves them, and the loss computed
in the low precision stays close to float32's. On the CPU (bfloat16) the mistake is latent.
torch 1.13's autocast takes only 'cuda' and 'cpu' (torch/amp/autocast_mode.py), so the sim's
cells skip there, saying so."""
import pytest
import torch
from torch import nn
from training import Classifier, data, reference_losses


def autocast_on(device: torch.device):
    if device.type not in ("cpu", "cuda") and int(torch.__version__.split(".")[0]) < 2:
        reason = f"torch {torch.__version__}'s autocast takes only cuda and cpu devices"
        pytest.skip(f"not_on_sim: {reason}")
    dtype = torch.bfloat16 if device.type == "cpu" else torch.float16
    return torch.autocast(device.type, dtype=dtype), dtype


def first_loss(device: torch.device, labels_device: torch.device) -> torch.Tensor:
    inputs, labels = data()
    model = Classifier().to(device)
    autocast, dtype = autocast_on(torch.device(device))
    with autocast:
        logits = model(inputs.to(device))
        assert logits.dtype == dtype and logits.device == torch.device(device)
        return nn.functional.cross_entropy(logits.float(), labels.to(labels_device))


@pytest.mark.torchplace_broken("DeviceMismatch")
def test_targets_on_cpu(device):
    first_loss(device, torch.device("cpu"))


def test_targets_moved(device):
    loss = first_loss(device, device)
    assert loss.device == torch.device(device)
    torch.testing.assert_close(float(loss.cpu()), reference_losses()[0], rtol=2e-2, atol=0.0)
