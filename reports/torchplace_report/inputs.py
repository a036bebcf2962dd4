"""Reads a run folder: results.json (required), bench.json and matrix.json (optional)."""
import os
from dataclasses import dataclass
from typing import Optional

import torchplace_data as data

from . import bench as benchmod

VERSION_FIELDS = ("version", "status")
MATRIX_CELL_FIELDS = ("id", "scenario", "axes", "device", "by_version")
BY_VERSION_FIELDS = ("status", "observed_outcome")


@dataclass
class RunInputs:
    folder: str
    results: dict
    bench: Optional[benchmod.BenchData]  # None: no bench.json in the folder
    matrix: Optional[dict]  # None: no matrix.json


def load_run(folder):
    """Everything the report needs; InputError names the file and the problem."""
    if not os.path.isdir(folder):
        raise data.InputError(f"{folder}: not a folder")
    results_path = os.path.join(folder, "results.json")
    results = data.load_results(results_path)
    for index, cell in enumerate(results["cells"]):
        data.require(cell["observed"], ("outcome",), f"{results_path}: cells[{index}].observed")
    bench_path = os.path.join(folder, "bench.json")
    bench = benchmod.load(bench_path) if os.path.exists(bench_path) else None
    matrix_path = os.path.join(folder, "matrix.json")
    matrix = load_matrix(matrix_path) if os.path.exists(matrix_path) else None
    return RunInputs(folder, results, bench, matrix)


def load_matrix(path):
    """A version matrix document (schema torchplace.matrix/1)."""
    doc = data.load_json(path, "version matrix")
    data.require(doc, ("schema", "versions", "cells"), path)
    if doc["schema"] != data.MATRIX_SCHEMA:
        raise data.InputError(
            f"{path}: schema is {doc['schema']!r}, expected {data.MATRIX_SCHEMA!r}")
    for index, version in enumerate(doc["versions"]):
        data.require(version, VERSION_FIELDS, f"{path}: versions[{index}]")
    for index, cell in enumerate(doc["cells"]):
        where = f"{path}: cells[{index}]"
        data.require(cell, MATRIX_CELL_FIELDS, where)
        for version, entry in cell["by_version"].items():
            data.require(entry, BY_VERSION_FIELDS, f"{where}.by_version[{version!r}]")
    return doc
