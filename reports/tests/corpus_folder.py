"""The corpus tests' synthetic version-matrix folders (test_matrix_corpus*.py): a matrix.json of
columns 2.6.0 and 1.13.1, the 2.6.0 column's message probe, the committed corpus entries, and
main() in process. Messages are copied from harness/messages/corpus.json (real LibTorch
messages); the folders, cells and versions around them are synthetic."""
import contextlib
import io
import json
import os
import tempfile
import unittest
from typing import Any, Dict, List
from unittest import mock

from torchplace import schema
from torchplace.matrix import corpus

COMMITTED = corpus.DEFAULT_CORPUS  # before any test points it at a scratch file

MISMATCH = "Expected all tensors to be on the same device, but found at least two devices, "
ON_SIM = MISMATCH + "sim:0 and cpu! (when checking argument for argument target in method "
ON_SIM += "wrapper_SIM_nll_loss_forward_output)"
ON_META = MISMATCH + "meta and cpu!"
MISSING = "open file failed because of errno 2 on fopen: No such file or directory, file path: "
GUIDE = {  # a committed entry of the corpus, with its "…"
    "version": "2.14.1",
    "source": "guide:privateuse1_nll_target",
    "message": "Expected all tensors to be on the same device, but got target is on cpu, "
    "different from other tensors on privateuseone:0 (when checking argument in method "
    "…nll_loss_forward)",
    "expected_class": "DeviceMismatch",
}


def seen(status: str, outcome: str, category: str, **fields: Any) -> Dict[str, Any]:
    """One cell's by_version entry."""
    return dict(status=status, observed_outcome=outcome, category=category, **fields)


def matrix_cell(ident: str, **by_version: Dict[str, Any]) -> Dict[str, Any]:
    scenario = ident.split("/")[0]
    return {
        "id": ident,
        "scenario": scenario,
        "axes": {},
        "device": "cpu",
        "by_version": by_version,
    }


ERROR = dict(expected_class="DeviceMismatch", message=ON_SIM)
CELLS = [
    matrix_cell(  # evidence on 2.6.0 only: it failed on 1.13.1
        "amp/variant=targets_on_cpu/device=sim:0",
        **{"2.6.0": seen("pass", "error", "expected_error", **ERROR)},
        **{"1.13.1": seen("fail", "error", "failed", **ERROR)},
    ),
    matrix_cell(  # no evidence: a success, and an error without an expected class
        "amp/variant=fixed/device=sim:0",
        **{"2.6.0": seen("pass", "success", "passed", expected_class="DeviceMismatch")},
        **{"1.13.1": seen("pass", "error", "passed", expected_class=None, message=ON_SIM)},
    ),
]


class Folder(unittest.TestCase):
    def setUp(self) -> None:
        scratch = tempfile.TemporaryDirectory()
        self.addCleanup(scratch.cleanup)
        self.out = scratch.name
        self.corpus = os.path.join(self.out, "corpus.json")
        # a slip that writes the default corpus writes this one, not the committed one
        default = mock.patch.object(
            corpus, "DEFAULT_CORPUS", os.path.join(self.out, "default.json")
        )
        default.start()
        self.addCleanup(default.stop)

    def write(self, name: str, doc: Any) -> None:
        path = os.path.join(self.out, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as handle:
            json.dump(doc, handle)

    def matrix(self, cells: List[Dict[str, Any]] = CELLS) -> None:
        """matrix.json of columns 2.6.0 and 1.13.1 with `cells`; 2.6.0 has a message probe."""
        versions = [
            {"version": "2.6.0", "status": "ok"},
            {"version": "1.13.1", "status": "ok"},
        ]
        self.write(
            "matrix.json",
            {"schema": schema.MATRIX_SCHEMA, "versions": versions, "cells": cells},
        )
        observations = [
            {
                "probe": "add_meta_cpu",
                "expected_class": "DeviceMismatch",
                "outcome": "error",
            },
            {"probe": "add_cpu", "expected_class": None, "outcome": "success"},
        ]
        observations[0]["message"] = ON_META
        self.write("2.6.0/messages.json", {"observations": observations})

    def main(self, *args: str) -> "tuple[int, str, str]":
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = corpus.main(["corpus.py", *args])
        return code, out.getvalue(), err.getvalue()

    def entries(self) -> List[Dict[str, Any]]:
        with open(self.corpus, encoding="utf-8") as handle:
            doc = json.load(handle)
        self.assertEqual(doc["schema"], corpus.CORPUS_SCHEMA)
        return doc["entries"]


def entry(version: str, source: str, message: str) -> Dict[str, Any]:
    return {
        "version": version,
        "source": source,
        "message": message,
        "expected_class": "DeviceMismatch",
    }
