"""An unregistered buffer: a constant kept as a plain tensor attribute. Module.to() moves
parameters and registered buffers only, so it stays on the CPU and the forward raises
DeviceMismatch on a GPU; register_buffer is the fix. On the CPU the mistake is latent."""
import pytest
import torch
from training import Classifier, assert_trains_like, classify_loss, data, train

SCALE = 0.5


class Scaled(Classifier):
    def __init__(self, registered: bool) -> None:
        super().__init__()
        scale = torch.full((8,), SCALE)
        if registered:
            self.register_buffer("scale", scale)
        else:
            self.scale = scale  # the mistake: Module.to() does not see it

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        return super().forward(inputs * self.scale)


def steps(device, registered: bool):
    inputs, labels = data()
    model = Scaled(registered).to(device)
    return train(model, classify_loss(inputs.to(device), labels.to(device)))


@pytest.mark.torchplace_broken("DeviceMismatch")
def test_plain_attribute(device):
    steps(device, registered=False)


def test_registered_buffer(device):
    assert_trains_like(steps(device, registered=True), steps(torch.device("cpu"), True))
