"""The small training loop every example shares: a classifier, its data, a few SGD steps, and
the same steps on the CPU as the reference a fix must match. Synthetic data (seeded random
numbers), made here for the examples."""
from __future__ import annotations

from typing import Callable, List, Optional, Tuple

import torch
from torch import nn

FEATURES, HIDDEN, CLASSES, SAMPLES = 8, 16, 3, 32
STEPS, LEARNING_RATE = 5, 0.5


def data(seed: int = 0) -> Tuple[torch.Tensor, torch.Tensor]:
    """Inputs and labels on the CPU, as a data loader yields them."""
    generator = torch.Generator().manual_seed(seed)
    inputs = torch.randn(SAMPLES, FEATURES, generator=generator)
    labels = torch.randint(0, CLASSES, (SAMPLES,), generator=generator)
    return inputs, labels


class Classifier(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.hidden = nn.Linear(FEATURES, HIDDEN)
        self.out = nn.Linear(HIDDEN, CLASSES)

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        return self.out(torch.relu(self.hidden(inputs)))


Loss = Callable[[nn.Module], torch.Tensor]


def train(
    model: nn.Module,
    loss_of: Loss,
    steps: int = STEPS,
    before_step: Optional[Callable[[nn.Module], None]] = None,
) -> List[float]:
    """SGD steps on `loss_of(model)`, `before_step` (a gradient all_reduce) before each update;
    the losses, read once after the loop."""
    optimizer = torch.optim.SGD(model.parameters(), lr=LEARNING_RATE)
    losses = []
    for _ in range(steps):
        optimizer.zero_grad()
        loss = loss_of(model)
        loss.backward()
        if before_step is not None:
            before_step(model)
        optimizer.step()
        losses.append(loss.detach())
    return [float(loss.cpu()) for loss in losses]


def classify_loss(inputs: torch.Tensor, labels: torch.Tensor) -> Loss:
    return lambda model: nn.functional.cross_entropy(model(inputs), labels)


def reference_losses() -> List[float]:
    """The Classifier's steps on the CPU: what a fix on any device must compute."""
    inputs, labels = data()
    return train(Classifier(), classify_loss(inputs, labels))


def assert_trains_like(losses: List[float], reference: List[float]) -> None:
    """The fix computed the right answer: the CPU's losses (the same kernels on the sim; a
    float32 tolerance on a GPU), and a falling loss."""
    torch.testing.assert_close(losses, reference, rtol=1e-4, atol=1e-5)
    assert losses[-1] < losses[0], f"the loss did not fall: {losses}"
