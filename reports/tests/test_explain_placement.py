#!/usr/bin/env python3
"""torchplace.explain.placement in process: which tensor is on which device, in each wording's
own order, with each device's index kept; and which side the indices are on. The messages are
real (a public thread, this suite's cells or the H200 run) unless marked synthetic: LibTorch's
wording from its source, with devices made up."""
import unittest

from torchplace.explain import placement as module
from torchplace.explain.placement import OTHERS, indices_on_host, placement

# (message, where it was seen, the pairs in the message's order)
WORDINGS = [
    (
        "Expected all tensors to be on the same device, but found at least two devices, sim:0 "
        "and cpu! (when checking argument for argument target in method "
        "wrapper_SIM_nll_loss_forward_output)",
        "corpus.json: cell:amp/variant=targets_on_cpu/device=sim:0",
        [(OTHERS, "sim:0"), ("target", "cpu")],
    ),
    (
        "Expected all tensors to be on the same device, but found at least two devices, meta and "
        "cpu!",
        "corpus.json: probe:add_meta_cpu",
        [("a tensor", "meta"), ("another tensor", "cpu")],
    ),
    (
        "Expected all tensors to be on the same device, but got target is on cpu, different from "
        "other tensors on cuda:0 (when checking argument in method wrapper_CUDA_nll_loss_forward)",
        "reports/reference/h200-libtorch2.11/results.json",
        [("target", "cpu"), (OTHERS, "cuda:0")],
    ),
    (
        "Expected all tensors to be on the same device, but got target is on cpu, different from "
        "other tensors on sim:0 (when checking argument in method wrapper_SIM_nll_loss_forward)",
        "reports/reference/h200-libtorch2.11/results.json",
        [("target", "cpu"), (OTHERS, "sim:0")],
    ),
    (
        "indices should be either on cpu or on the same device as the indexed tensor (cpu)",
        "https://github.com/deepspeedai/DeepSpeedExamples/issues/743",
        [("the indexed tensor", "cpu"), ("indices", "a device other than cpu")],
    ),
    (
        "indices should be either on cpu or on the same device as the indexed tensor (cuda:0)",
        "synthetic: TensorAdvancedIndexing.cpp's wording, the indexed tensor's device made up",
        [("the indexed tensor", "cuda:0"), ("indices", "a device other than cpu")],
    ),
    (
        "RuntimeError: Expected tensor for argument #1 'input' to have the same device as tensor "
        "for argument #2 'weight'; but device 0 does not equal 1 (while checking arguments for "
        "cudnn_convolution)",
        "https://github.com/TadaoYamaoka/DeepLearningShogi/issues/40",
        [("input", "0"), ("weight", "1")],
    ),
    (
        "expected self and mask to be on the same device, but got mask on cpu and self on cuda:1",
        "synthetic: cuda/Indexing.cu masked_fill__cuda's wording, devices made up",
        [("mask", "cpu"), ("self", "cuda:1")],
    ),
    (
        "RuntimeError: Input and hidden tensors are not at the same device, found input tensor at "
        "cuda:0 and hidden tensor at cpu",
        "https://github.com/Lightning-AI/pytorch-lightning/issues/3738",
        [("input", "cuda:0"), ("hidden", "cpu")],
    ),
    (
        "Tensor on device cpu is not on the expected device cuda:1!",
        "synthetic: torch/_prims_common's wording, devices made up",
        [("a tensor", "cpu"), ("the expected device", "cuda:1")],
    ),
]


class Placement(unittest.TestCase):
    def test_each_wording_names_its_pairs_in_its_order(self):
        for message, seen, expected in WORDINGS:
            with self.subTest(seen=seen):
                found = [(p["tensor"], p["device"]) for p in placement(message)]
                self.assertEqual(found, expected)

    def test_only_the_first_line_is_read_and_no_wording_is_no_pairs(self):
        message, _, expected = WORDINGS[0]
        self.assertEqual(len(placement(message + "\nmore text")), len(expected))
        self.assertEqual(placement("a second line\n" + message), [])
        self.assertEqual(placement("CUDA out of memory."), [])

    def test_a_name_or_device_left_out_is_never_an_empty_pair(self):
        # each wording's message with one captured name or device blanked (as no LibTorch prints
        # it): placement may find another wording or none, but never names an empty one
        for message, seen, _ in WORDINGS:
            first = message.split("\n", 1)[0]
            found = next(p.search(first) for p, _ in module.WORDINGS if p.search(first))
            for group in range(1, (found.lastindex or 0) + 1):
                start, end = found.span(group)
                blanked = first[:start] + first[end:]
                with self.subTest(seen=seen, group=group):
                    for pair in placement(blanked):
                        self.assertTrue(pair["tensor"] and pair["device"], (blanked, pair))


class IndicesOnHost(unittest.TestCase):
    def test_the_indices_side_decides(self):
        self.assertTrue(indices_on_host([{"tensor": "indices", "device": "cpu"}]))
        self.assertFalse(indices_on_host([{"tensor": "index", "device": "cuda:0"}]))

    def test_else_the_indexed_tensor_or_the_other_tensors_off_the_cpu(self):
        self.assertTrue(indices_on_host([{"tensor": OTHERS, "device": "cuda:0"}]))
        self.assertFalse(indices_on_host([{"tensor": "the indexed tensor", "device": "cpu"}]))
        self.assertFalse(indices_on_host([{"tensor": "weight", "device": "cuda:0"}]))
        self.assertFalse(indices_on_host([]))


if __name__ == "__main__":
    unittest.main()
