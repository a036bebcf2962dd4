"""Helpers of the report's unit tests (test_report_*.py): synthetic bench.json entries, results
cells and the Analysis made from them, in process. Every number and name here is hand-made test
data, not a measurement."""
import json
import os
import tempfile

from render_helpers import TableCollector
from torchplace.report import analysis, bench
from torchplace.report.inputs import RunInputs

MIB = 1 << 20


def entry(run_name, real_time=1000.0, time_unit="ns", **counters):
    """One synthetic repetition of a benchmark (run_type iteration)."""
    return {
        "name": run_name,
        "run_name": run_name,
        "run_type": "iteration",
        "iterations": 10,
        "real_time": real_time,
        "time_unit": time_unit,
        **counters,
    }


def reps(run_name, key, values, **other):
    """One synthetic entry per value of the counter `key` (e.g. bytes_per_second)."""
    return [entry(run_name, **{key: value}, **other) for value in values]


def skipped(run_name, reason):
    return {
        "name": run_name,
        "run_name": run_name,
        "run_type": "iteration",
        "skipped": True,
        "skip_message": reason,
    }


def failed(run_name, message):
    return {
        "name": run_name,
        "run_name": run_name,
        "run_type": "iteration",
        "error_occurred": True,
        "error_message": message,
    }


def load_bench(entries, context=None):
    """bench.load of a synthetic bench.json written to a temporary folder."""
    folder = tempfile.mkdtemp(prefix="tp-report-unit-")
    path = os.path.join(folder, "bench.json")
    doc = {"context": {"torchplace_fingerprint": "{}"} if context is None else context}
    doc["benchmarks"] = entries
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(doc, handle)
    try:
        return bench.load(path)
    finally:
        os.remove(path)
        os.rmdir(folder)


def cell(ident, device="cpu", category="passed", status="pass", **more):
    """A synthetic results.json cell."""
    scenario, variant = ident.split("/")[:2]
    value = {
        "id": ident,
        "scenario": scenario,
        "axes": {"variant": variant},
        "device": device,
        "expected": {"outcome": "success", "error_class": None},
        "observed": {"outcome": "success", "message": "", "error_class": None},
        "status": status,
        "category": category,
        "reason": "",
        "metrics": {},
        "notes": [],
    }
    value.update(more)
    return value


def results(cells, **fingerprint):
    return {"fingerprint": {"libtorch_version": "9.9.9", **fingerprint}, "cells": cells}


def analyse(results=None, bench_data=None, matrix=None, gate=None):
    return analysis.analyse(RunInputs("synthetic", results, bench_data, matrix, gate))


def tables_of(html):
    """Every <table> of an HTML text as rows of cell texts."""
    collector = TableCollector()
    collector.feed(html)
    return collector.tables


FIGURES = {  # stand-ins for the PNGs: the page embeds whatever bytes it is given
    name: name.encode()
    for name in (
        "outcome_matrix.png",
        "version_matrix.png",
        "transfer_bandwidth.png",
        "pinned_pageable_ratio.png",
        "small_tensors.png",
        "cpu_copy.png",
        "batch_mover.png",
    )
}
