"""CPU indices: an embedding whose weight is on the device, looked up with indices left on the
CPU. CUDA's index_select raises DeviceMismatch; on the CPU the mistake is latent."""
import pytest
import torch
from torch import nn
from training import CLASSES, assert_trains_like, data, train

VOCABULARY, DIM = 50, 8


class Tagger(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.embedding = nn.Embedding(VOCABULARY, DIM)
        self.out = nn.Linear(DIM, CLASSES)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.out(self.embedding(tokens))


def tokens() -> torch.Tensor:
    return torch.arange(len(data()[1])) % VOCABULARY


def tag_loss(model_tokens: torch.Tensor, labels: torch.Tensor):
    return lambda model: nn.functional.cross_entropy(model(model_tokens), labels)


@pytest.mark.torchplace_broken("DeviceMismatch")
def test_indices_left_on_cpu(device):
    labels = data()[1].to(device)
    train(Tagger().to(device), tag_loss(tokens(), labels))


def test_indices_moved(device):
    labels = data()[1]
    losses = train(Tagger().to(device), tag_loss(tokens().to(device), labels.to(device)))
    reference = train(Tagger(), tag_loss(tokens(), labels))
    assert_trains_like(losses, reference)
