"""Reads a run folder: results.json and matrix.json (at least one of them), bench.json (optional),
and the gate's verdict on that run when given (--gate GATE_JSON: its behaviour regressions).

A version matrix folder (ci/torchplace matrix) holds matrix.json and no results.json of its own;
its report shows the version matrix and says that no single-run results are present.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Dict, Optional

from torchplace import schema as data

from torchplace.gate.report import SCHEMA as GATE_SCHEMA

from . import bench as benchmod


@dataclass
class RunInputs:
    folder: str
    results: Optional[Dict[str, Any]]  # None: no results.json, only a version matrix
    bench: Optional[benchmod.BenchData]  # None: no bench.json in the folder
    matrix: Optional[Dict[str, Any]]  # None: no matrix.json
    gate: Optional[Dict[str, Any]] = None  # the gate's gate.json on these results, when given


def load_gate(path: str) -> Dict[str, Any]:
    """gate.json (torchplace.gate/1) with its behaviour regressions checked; InputError if not."""
    doc = data.load_json(path, "the gate's verdict")
    if not isinstance(doc, dict) or doc.get("schema") != GATE_SCHEMA:
        raise data.InputError(f"{path}: not a gate verdict (schema {GATE_SCHEMA})")
    behaviour = doc.get("behaviour") or {}
    regressions = behaviour.get("regressions", [])
    if not isinstance(regressions, list):
        raise data.InputError(f"{path}: behaviour.regressions is not a list")
    for index, regression in enumerate(regressions):
        data.require(
            regression, ("id", "kind", "detail"), f"{path}: behaviour.regressions[{index}]"
        )
    return doc


def load_run(folder: str, gate_path: Optional[str] = None) -> RunInputs:
    """Everything the report needs; InputError names the file and the problem."""
    if not os.path.isdir(folder):
        raise data.InputError(f"{folder}: not a folder")
    matrix_path = os.path.join(folder, "matrix.json")
    matrix = data.load_matrix(matrix_path) if os.path.exists(matrix_path) else None
    results_path = os.path.join(folder, "results.json")
    results = None
    if matrix is None or os.path.exists(results_path):  # without a matrix, results are required
        results = data.load_results(results_path)
        for index, cell in enumerate(results["cells"]):
            data.require(cell["observed"], ("outcome",), f"{results_path}: cells[{index}].observed")
    bench_path = os.path.join(folder, "bench.json")
    bench = benchmod.load(bench_path) if os.path.exists(bench_path) else None
    gate = load_gate(gate_path) if gate_path is not None else None
    return RunInputs(folder, results, bench, matrix, gate)
