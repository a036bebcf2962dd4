#!/usr/bin/env python3
"""torchplace.conformance.versus on synthetic traces (hand-made records in the shape of --trace's;
the messages are the placement families' source texts, as in test_conformance_rules.py): each
kind of difference from one changed pair, pairs only one side ran left out, and the exit codes."""
import json
import tempfile
import unittest
from pathlib import Path

from torchplace.conformance import versus

SAME = "RuntimeError: Expected all tensors to be on the same device, but found at least two "
ITERATOR = SAME + "devices, cuda:0 and cpu!"
WRAPPER = ITERATOR + " (when checking argument for argument index in method wrapper_index_select)"


def pair(sample, verdict="agree", raised=None, detail=None, stage="forward"):
    record = {"dtype": "float32", "sample": sample, "requires_grad": False, "stage": stage}
    record["verdict"] = verdict
    if raised:
        record["raised"] = raised
    if detail:
        record["detail"] = detail
    return record


def write(folder, traces):
    entries = [{"name": name, "trace": trace} for name, trace in traces.items()]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "ops.json").write_text(json.dumps({"torch": "synthetic", "entries": entries}))


class Versus(unittest.TestCase):
    def setUp(self):
        self.dir = Path(tempfile.mkdtemp())
        self.cuda = [pair(0), pair(1), pair(2, "both_raise", ITERATOR), pair(3)]

    def kinds(self, sim, cuda=None):
        write(self.dir / "cuda", {"op": cuda or self.cuda})
        write(self.dir / "sim", {"op": sim})
        code = versus.main(
            [str(self.dir / "cuda"), str(self.dir / "sim"), "--out", str(self.dir / "out")]
        )
        result = json.loads((self.dir / "out" / "versus.json").read_text())[0]
        return code, {kind: n for kind, n in result["pairs_differing"].items() if n}, result

    def test_identical_traces_agree(self):
        code, kinds, result = self.kinds(list(self.cuda))
        self.assertEqual((code, kinds, result["pairs_compared"]), (0, {}, 4))

    def test_each_kind_from_one_changed_pair(self):
        cases = {
            "raises_where_cuda_runs": (0, pair(0, "false_alarm", ITERATOR)),
            "runs_where_cuda_raises": (2, pair(2, "false_pass")),
            "other_exception": (2, pair(2, "both_raise", "TypeError: no")),
            "other_family": (2, pair(2, "both_raise", WRAPPER)),
            "output_device": (1, pair(1, "differs", detail="output 0: output on cpu, not sim:0")),
            "values": (3, pair(3, "differs", detail="output 0: Tensor-likes are not close!")),
        }
        for kind, (index, changed) in cases.items():
            with self.subTest(kind=kind):
                sim = list(self.cuda)
                sim[index] = changed
                code, kinds, _ = self.kinds(sim)
                self.assertEqual(kinds, {kind: 1})
                self.assertEqual(code, 0 if kind == "values" else 1)

    def test_a_pair_one_side_did_not_run_is_not_compared(self):
        sim = self.cuda[:2] + [pair(9, "false_alarm", ITERATOR)]
        code, kinds, result = self.kinds(sim)
        self.assertEqual((code, kinds, result["pairs_compared"]), (0, {}, 2))

    def test_nothing_in_common_is_an_error(self):
        write(self.dir / "cuda", {"op": self.cuda})
        write(self.dir / "sim", {"other": self.cuda})
        self.assertEqual(versus.main([str(self.dir / "cuda"), str(self.dir / "sim")]), 3)


if __name__ == "__main__":
    unittest.main()
