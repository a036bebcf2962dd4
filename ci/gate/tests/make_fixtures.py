#!/usr/bin/env python3
"""Writes the gate's test fixtures into ci/gate/tests/fixtures/ (deterministic: fixed seeds).

Speed fixtures are Google Benchmark 1.7.1 JSON as the suite writes it (every repetition, then the
aggregates, planned skips as error_message "skip: ..."); timings are drawn from a log-normal
around each benchmark's median with 2 % spread. Behaviour fixtures are results.json documents of
a GPU run and the committed expectations they are checked against.
Rerun after changing it: /usr/bin/python3 ci/gate/tests/make_fixtures.py
"""
import copy
import json
import math
import os
import random
import statistics

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")
REPS = 12
# name -> (median, time_unit)
BENCHMARKS = {
    "cpu_copy/path:memcpy/bytes:1048576": (40.0, "us"),
    "cpu_copy/path:clone/bytes:1048576": (61.0, "us"),
    "cpu_copy/path:memcpy/bytes:4096": (20.0, "ns"),
    "batch_mover/impl:mover/tensors:64": (210.0, "us"),
    "transfer/direction:h2d/strategy:pinned_staging_reuse/bytes:67108864/device:cuda:0": (1.26, "ms"),
    "prefetch_overlap/device:cuda:0": (5.1, "ms"),
}
SKIPPED = "transfer/direction:d2h/strategy:pageable/bytes:4096/device:cuda:1"
CONTEXT = {"date": "2026-11-29T12:00:00+00:00", "host_name": "runner", "executable":
           "build/scenarios/torchplace_bench", "num_cpus": 16, "mhz_per_cpu": 2000,
           "cpu_scaling_enabled": False, "caches": [], "load_avg": [0.1, 0.1, 0.1],
           "library_build_type": "release", "libtorch_version": "2.5.1", "gpu": "NVIDIA H200",
           "driver": "560.35.03"}


# The speed cases' policy: fixed here so that tuning ci/gate/policy.json does not move the tests.
POLICY = {"schema": "torchplace.gate-policy/1", "alpha": 0.01,
          "default": {"max_ratio": 1.10, "min_abs_ns": 50, "min_reps": 8, "informational": False},
          "patterns": [{"match": "prefetch_overlap/*", "informational": True}], "benchmarks": {}}


def entry(name, index, run_type, unit, value, extra, reps=REPS):
    return {"name": name, "family_index": index, "per_family_instance_index": 0, "run_name": name,
            "run_type": run_type, "repetitions": reps, **extra, "threads": 1,
            "iterations": 1000, "real_time": value, "cpu_time": value, "time_unit": unit}


def benchmark_entries(index, name, times, unit):
    rows = [entry(name, index, "iteration", unit, t, {"repetition_index": r}, len(times))
            for r, t in enumerate(times)]
    if len(times) < 2:
        return rows  # Google Benchmark writes no aggregates for one repetition
    aggregates = {"mean": statistics.mean(times), "median": statistics.median(times),
                  "stddev": statistics.stdev(times)}
    for aggregate, value in aggregates.items():
        row = entry(name, index, "aggregate", unit, value, {"aggregate_name": aggregate}, len(times))
        rows.append(dict(row, name=f"{name}_{aggregate}", iterations=len(times)))
    return rows


def skipped_entries(index):
    return [dict(entry(SKIPPED, index, "iteration", "ns", 0.0, {"repetition_index": r}),
                 error_occurred=True, error_message="skip: device absent: cuda:1 needs 2 GPUs")
            for r in range(REPS)]


def bench_doc(seed, factors=None, spread=0.02, reps=REPS):
    """A run; factors scales the median of the named benchmarks (1.3 = 30 % slower)."""
    rng = random.Random(seed)
    out = []
    for index, (name, (median, unit)) in enumerate(BENCHMARKS.items()):
        centre = median * (factors or {}).get(name, 1.0)
        times = [centre * math.exp(rng.gauss(0.0, spread)) for _ in range(reps)]
        out += benchmark_entries(index, name, times, unit)
    return {"context": CONTEXT, "benchmarks": out + skipped_entries(len(BENCHMARKS))}


# The power cases: many gated benchmarks, few repetitions, as an interleaved A/B run writes them
# (iterations only). 34 gated x min p 4.1e-4 (9 a side) >= alpha 0.01: nothing can be SLOWER.
MANY_REPS = 9
MANY_BANDWIDTH = {"pinned_resident": 50e9, "pinned_staging_reuse": 45e9, "pageable": 15e9}  # B/s


def many_benchmarks():
    """BENCHMARKS plus transfers at 5 sizes, 3 strategies, 2 directions: name -> (median, unit)."""
    many = dict(BENCHMARKS)
    for direction in ("h2d", "d2h"):
        for strategy, bandwidth in MANY_BANDWIDTH.items():
            for size in (4096, 4 << 20, 64 << 20, 256 << 20, 1 << 30):
                name = f"transfer/direction:{direction}/strategy:{strategy}/bytes:{size}/device:cuda:0"
                many.setdefault(name, (size / bandwidth * 1e6, "us"))
    return many


def many_doc(seed, factors=None):
    rng = random.Random(seed)
    out = []
    for index, (name, (median, unit)) in enumerate(many_benchmarks().items()):
        centre = median * (factors or {}).get(name, 1.0)
        times = [centre * math.exp(rng.gauss(0.0, 0.02)) for _ in range(MANY_REPS)]
        out += [row for row in benchmark_entries(index, name, times, unit)
                if row["run_type"] == "iteration"]
    context = dict(CONTEXT, torchplace_interleaved=f"rounds={MANY_REPS} batch=1 order=ABBA")
    return {"context": context, "benchmarks": out}


def without(doc, prefix):
    return dict(doc, benchmarks=[b for b in doc["benchmarks"] if not b["name"].startswith(prefix)])


def errored(doc, prefix, message):
    out = copy.deepcopy(doc)
    for row in out["benchmarks"]:
        if row["name"].startswith(prefix):
            row.update(error_occurred=True, error_message=message)
    return out


def speed_fixtures():
    base = bench_doc(1)
    return {
        "base.json": base,
        "aa.json": bench_doc(2),
        "slower.json": bench_doc(3, {"cpu_copy/path:memcpy/bytes:1048576": 1.3}),
        "faster.json": bench_doc(4, {"cpu_copy/path:clone/bytes:1048576": 0.7}),
        "info_slower.json": bench_doc(5, {"prefetch_overlap/device:cuda:0": 1.5}),
        "floor.json": bench_doc(6, {"cpu_copy/path:memcpy/bytes:4096": 1.5}),
        "few_reps.json": bench_doc(7, {"batch_mover/impl:mover/tensors:64": 1.3}, reps=4),
        "noisy.json": bench_doc(8, {"batch_mover/impl:mover/tensors:64": 1.3}, spread=0.6),
        "single_rep.json": bench_doc(9, reps=1),
        "aggregates_only.json": dict(base, benchmarks=[b for b in base["benchmarks"]
                                                       if b["run_type"] == "aggregate"]),
        "missing.json": without(bench_doc(2), "batch_mover/"),
        "errored.json": errored(bench_doc(2), "batch_mover/", "CUDA error: out of memory"),
        "other_tool.json": {"benchmarks": [{"name": "x", "gpu_time": 1.0}]},
        "many_base.json": many_doc(10),
        "many_slower.json": many_doc(11, {"cpu_copy/path:memcpy/bytes:1048576": 1.3}),
    }


FINGERPRINT = {"libtorch_version": "2.5.1", "cuda": {"built_with_cuda": True, "available": True,
               "device_count": 1, "runtime_version": "12.4", "cudnn_version": "90100",
               "driver": "560.35.03", "gpus": [{"index": 0, "name": "NVIDIA H200",
               "total_memory_bytes": 150000000000, "compute_capability": "9.0"}]},
               "compiler": "gcc 12.2.0", "cxx_standard": 201703, "cpu_model": "x", "cpu_cores": 16,
               "torch_threads": 16, "os": "Debian GNU/Linux 12 (bookworm)"}
MISMATCH = "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!"


def observed_category(status, observed_class, expected_category):
    """As harness/results.cpp: the status first, then what the cell observed and expected."""
    if status != "pass":
        return "skipped" if status == "skip" else "failed"
    return "expected_error" if observed_class else expected_category


def cell(cell_id, expected_class=None, observed_class=None, status="pass", reason="",
         expected_category=None, category=None):
    """A results.json cell; a class means 'error' with that class, None means success.
    expected_category defaults to expected_error or passed; category (observed) to what the
    harness derives from the status."""
    expected_category = expected_category or ("expected_error" if expected_class else "passed")
    category = category or observed_category(status, observed_class, expected_category)
    scenario, *parts = cell_id.split("/")
    axes = dict(part.split("=", 1) for part in parts[:-1])
    outcome = lambda cls: "error" if cls else "success"  # noqa: E731
    observed = {"outcome": outcome(observed_class), "error_class": observed_class,
                "message": MISMATCH if observed_class else ""}
    if status == "skip":
        observed = {"outcome": "not_run", "error_class": None, "message": ""}
    return {"id": cell_id, "scenario": scenario, "axes": axes, "device": parts[-1].split("=")[1],
            "expected": {"outcome": outcome(expected_class), "error_class": expected_class, "note": "",
                         "category": expected_category},
            "observed": observed, "status": status, "category": category, "reason": reason,
            "duration_ms": 3.0, "metrics": {}, "notes": []}


BROKEN = "forgotten_labels/loss=nll/variant=broken/device=cuda:0"
FIXED = "forgotten_labels/loss=nll/variant=manual_to/device=cuda:0"
PAIR = "cross_device/variant=broken/devices=cuda:0+cuda:1"
RACE = "pinned_non_blocking/case=d2h_unsynchronized/device=cuda:0"
CPU_FIX = "forgotten_labels/loss=nll/variant=manual_to/device=cpu"


def good_cells():
    return [cell("forgotten_labels/loss=nll/variant=broken/device=cpu",
                 expected_category="latent_unexercised"),
            cell(CPU_FIX, expected_category="ran_unexercised"),
            cell(RACE, expected_category="race_shown"),
            cell(BROKEN, "DeviceMismatch", "DeviceMismatch"), cell(FIXED),
            cell("cpu_indices/op=embedding/variant=broken/device=cuda:0", "DeviceMismatch",
                 "DeviceMismatch"),
            cell(PAIR, "DeviceMismatch", status="skip", reason="device absent: needs 2 GPUs, found 1")]


def results(change=None):
    """A results document; change(cells) edits the cell list."""
    cells = good_cells()
    if change:
        change(cells)
    return {"schema": "torchplace.results/1", "fingerprint": FINGERPRINT, "cells": cells}


def replace(cell_id, new_cell):
    def change(cells):
        cells[[c["id"] for c in cells].index(cell_id)] = new_cell
    return change


def behaviour_fixtures():
    expectations = {"schema": "torchplace.expectations/1", "refresh": "fixture",
                    "cells": {c["id"]: {"outcome": c["expected"]["outcome"],
                                        "error_class": c["expected"]["error_class"],
                                        "category": c["expected"]["category"]}
                              for c in good_cells()}}
    unexplained = cell(PAIR, "DeviceMismatch", status="skip", reason="")
    new_cell = cell("cpu_indices/op=index_select/variant=broken/device=cuda:0", "DeviceMismatch",
                    "DeviceMismatch")
    return {
        "expectations.json": expectations,
        "results_ok/results.json": results(),
        "results_stopped_raising/results.json": results(replace(
            BROKEN, cell(BROKEN, "DeviceMismatch", None, "fail", "expected DeviceMismatch"))),
        "results_weakened/results.json": results(replace(BROKEN, cell(BROKEN))),
        "results_class_changed/results.json": results(replace(
            BROKEN, cell(BROKEN, "DeviceMismatch", "Unclassified", "fail", "class differs"))),
        "results_started_failing/results.json": results(replace(
            FIXED, cell(FIXED, None, "DeviceMismatch", "fail", "raised"))),
        "results_vanished/results.json": results(lambda cells: cells.pop(3)),
        # a race control that never went wrong: it ran, status pass, but proved nothing
        "results_race_not_shown/results.json": results(replace(
            RACE, cell(RACE, expected_category="race_shown", category="race_not_shown"))),
        # a fix that proved its claim declared unexercised: a weakened expectation
        "results_fix_unexercised/results.json": results(replace(
            FIXED, cell(FIXED, expected_category="ran_unexercised"))),
        "results_no_category/results.json": results(lambda cells: cells[0].pop("category")),
        "results_new_cell/results.json": results(lambda cells: cells.append(new_cell)),
        "results_unexplained_skip/results.json": results(replace(PAIR, unexplained)),
        "results_bad_schema/results.json": dict(results(), schema="torchplace.results/0"),
    }


def write(relative, doc):
    path = os.path.join(HERE, relative)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as out:
        out.write(doc if isinstance(doc, str) else json.dumps(doc, indent=1) + "\n")


def main():
    for name, doc in speed_fixtures().items():
        write(f"speed/{name}", doc)
    base_text = json.dumps(bench_doc(1), indent=1)
    write("speed/truncated.json", base_text[:700])
    write("speed/empty.json", "")
    write("speed/policy.json", POLICY)
    bad_policy = copy.deepcopy(POLICY)
    bad_policy["default"]["max_ratoi"] = 1.2
    write("speed/bad_policy.json", bad_policy)
    few_gated = copy.deepcopy(POLICY)  # the power cases' remedy: fewer gated benchmarks
    few_gated["patterns"].append({"match": "transfer/*", "informational": True})
    write("speed/policy_transfers_informational.json", few_gated)
    for name, doc in behaviour_fixtures().items():
        write(f"behaviour/{name}", doc)


if __name__ == "__main__":
    main()
