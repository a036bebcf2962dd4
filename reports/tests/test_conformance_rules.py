#!/usr/bin/env python3
"""The mixed sweep's oracle (torchplace.conformance.rules) on synthetic calls: each rule the sim's
fallback applies, predicted from the committed tables (harness/sim/device_checks.inc,
scalar_rules.inc) and the installed torch's yaml. Devices are torch.device values only (no
tensor is made, no GPU is needed); the messages are the families' source texts."""
import unittest

import torch

from torchplace.conformance import rules

GPU, CPU = torch.device("cuda", 0), torch.device("cpu")


def tensor(argument, device, dim=1, kwarg_only=False, written=False, is_out=False):
    return rules.Tensor(argument, kwarg_only, written, is_out, False, device, dim)


def out(device, dim=1):
    return tensor("out", device, dim, kwarg_only=True, written=True, is_out=True)


class Families(unittest.TestCase):
    def test_each_family_from_its_message(self):
        same = "Expected all tensors to be on the same device, but found at least two devices, "
        cases = {
            same + "cuda:0 and cpu!": "iterator",
            same + "cuda:0 and cpu! (when checking argument for argument target in method "
            "wrapper_nll_loss_forward)": "wrapper",
            "Trying to pass too many CPU scalars to non-CPU kernel!": "cpu_scalars",
            'iter.device(arg).is_cuda() INTERNAL ASSERT FAILED at "aten/src/ATen/native/cuda/'
            'Loops.cuh":89, please report a bug to PyTorch. argument 2: expected a CUDA device '
            "but found cpu": "kernel",
            "expected self and mask to be on the same device, but got mask on cpu and self on "
            "cuda:0": "own",
            "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)": "other",
        }
        for message, family in cases.items():
            with self.subTest(message=message[:40]):
                self.assertEqual(rules.family(message), family)


class Predictions(unittest.TestCase):
    def expect(self, key, tensors, outcome, family=None):
        prediction = rules.predict(key, tensors)
        self.assertEqual(
            (prediction.outcome, prediction.family), (outcome, family), f"{key}: {prediction.why}"
        )

    def test_one_cpu_scalar_passes_an_accepting_iterator_a_second_does_not(self):
        self.expect("add.Tensor", [tensor("self", GPU), tensor("other", CPU, 0)], rules.RUN)
        self.expect(
            "add.out",
            [tensor("self", CPU, 0), tensor("other", CPU, 0), out(GPU)],
            rules.RAISE,
            "cpu_scalars",
        )
        self.expect(
            "add.Tensor", [tensor("self", GPU), tensor("other", CPU)], rules.RAISE, "iterator"
        )

    def test_an_iterator_without_allow_cpu_scalars_refuses_it(self):
        self.expect(
            "binary_cross_entropy.",
            [tensor("self", GPU, 0), tensor("target", CPU, 0)],
            rules.RAISE,
            "iterator",
        )

    def test_a_kernel_launched_with_gpu_kernel_refuses_it(self):
        self.expect(
            "mse_loss.", [tensor("self", GPU, 0), tensor("target", CPU, 0)], rules.RAISE, "kernel"
        )

    def test_the_wrapper_refuses_any_cpu_tensor_but_keyword_only_ones(self):
        self.expect(
            "nll_loss_forward.",
            [tensor("self", GPU, 2), tensor("target", CPU, 0)],
            rules.RAISE,
            "wrapper",
        )
        sorter = tensor("sorter", CPU, kwarg_only=True)
        self.expect(
            "searchsorted.Tensor",
            [tensor("sorted_sequence", GPU), tensor("self", GPU), sorter],
            rules.RAISE,
            "own",
        )

    def test_what_the_rules_cannot_see_is_unpredicted(self):
        self.expect(
            "logical_and.out",
            [tensor("self", GPU), tensor("other", CPU, 0), out(GPU)],
            rules.UNPREDICTED,
        )  # undecided in scalar_rules.inc
        self.expect(
            "allclose.", [tensor("self", GPU), tensor("other", CPU)], rules.UNPREDICTED
        )  # a composite: no CUDA kernel, no wrapper


if __name__ == "__main__":
    unittest.main()
