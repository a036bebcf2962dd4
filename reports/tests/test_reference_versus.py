#!/usr/bin/env python3
"""The sim against CUDA on the committed H200 reference (reports/reference/h200-libtorch2.11: op_db
and module_db traced on cuda:0 and on sim:0, pip's torch 2.11): every placement difference that
torchplace.conformance.versus finds there is one harness/sim/README.md lists ("Judged by CUDA"),
and every listed one is still found."""
import json
import tempfile
import unittest
from pathlib import Path

from torchplace.conformance import versus

REFERENCE = Path(__file__).resolve().parents[1] / "reference" / "h200-libtorch2.11"
# (sweep, kind, entry): README.md "Judged by CUDA" says why each one stands.
LISTED = {
    ("modules", "runs_where_cuda_raises", "nn.GRU"),  # cuDNN: backward only in training mode
    ("modules", "runs_where_cuda_raises", "nn.LSTM"),
    ("modules", "runs_where_cuda_raises", "nn.RNN"),
    ("ops", "raises_where_cuda_runs", "jiterator_2inputs_2outputs"),  # CUDA code NVRTC compiles
    ("ops", "raises_where_cuda_runs", "jiterator_binary"),
    ("ops", "raises_where_cuda_runs", "jiterator_binary_return_by_ref"),
    ("ops", "raises_where_cuda_runs", "jiterator_unary"),
    ("ops", "raises_where_cuda_runs", "to_sparse"),  # sparse tensors are not simulated
}


class Reference(unittest.TestCase):
    def test_the_placement_differences_are_the_listed_ones(self):
        out = Path(tempfile.mkdtemp())
        cuda, sim = REFERENCE / "conformance-cuda", REFERENCE / "conformance-sim"
        code = versus.main([str(cuda), str(sim), "--out", str(out)])
        self.assertEqual(code, 1)  # placement differences exist: the listed ones
        found = set()
        for result in json.loads((out / "versus.json").read_text()):
            for kind in versus.PLACEMENT:
                found |= {(result["sweep"], kind, e) for e in result["entries_differing"][kind]}
        self.assertEqual(found, LISTED)


if __name__ == "__main__":
    unittest.main()
