"""The shared loop's own check (training.py; CTest python.training_check, not one of the examples'
cells): `assert_trains_like` passes a fix only when its losses match the reference and fall. A
run that learns from other data is refused, and so is one that matches its reference but never
learns (its gradients dropped before each step). The data is training.py's synthetic data, on the
CPU."""
import unittest

import torch
from training import Classifier, assert_trains_like, classify_loss, data, train


def drop_gradients(model):
    model.zero_grad()


class AssertTrainsLike(unittest.TestCase):
    def test_a_loss_that_does_not_fall_is_refused(self):
        # kills scenarios/python/training.py:assert_trains_like:a9ea87:delete_stmt:0 (a loss that
        # never fell accepted as training)
        inputs, labels = data()
        loss = classify_loss(inputs, labels)
        losses = train(Classifier().to(torch.device("cpu")), loss, before_step=drop_gradients)
        reference = train(Classifier(), classify_loss(inputs, labels), before_step=drop_gradients)
        with self.assertRaisesRegex(AssertionError, "the loss did not fall"):
            assert_trains_like(losses, reference)

    def test_losses_unlike_the_reference_are_refused(self):
        # a fix that trains but computes another answer (here: half its batch) must fail
        inputs, labels = data()
        half = train(Classifier(), classify_loss(inputs[::2], labels[::2]))
        with self.assertRaises(AssertionError):
            assert_trains_like(half, train(Classifier(), classify_loss(inputs, labels)))

    def test_a_loss_that_falls_like_its_reference_passes(self):
        inputs, labels = data()
        losses = train(Classifier(), classify_loss(inputs, labels))
        assert_trains_like(losses, train(Classifier(), classify_loss(inputs, labels)))


if __name__ == "__main__":
    unittest.main()
