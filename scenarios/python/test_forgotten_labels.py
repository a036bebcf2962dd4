"""Forgotten labels: the model and its inputs moved to the device, the labels left on the CPU.
On a GPU (and the sim) the loss raises CUDA's DeviceMismatch; on the CPU the mistake is latent."""
import pytest
from training import Classifier, assert_trains_like, classify_loss, data, reference_losses, train


@pytest.mark.torchplace_broken("DeviceMismatch")
def test_labels_left_on_cpu(device):
    inputs, labels = data()
    model = Classifier().to(device)
    train(model, classify_loss(inputs.to(device), labels))


def test_labels_moved(device):
    inputs, labels = data()
    model = Classifier().to(device)
    losses = train(model, classify_loss(inputs.to(device), labels.to(device)))
    assert_trains_like(losses, reference_losses())
