#!/usr/bin/env python3
"""Writes the gate's test fixtures into ci/gate/tests/fixtures/ (deterministic: fixed seeds).

Speed fixtures are Google Benchmark 1.7.1 JSON as the suite writes it (every repetition, then the
aggregates, planned skips as error_message "skip: ..."); timings are drawn from a log-normal
around each benchmark's median with 2 % spread. Behaviour fixtures are results.json documents of
a GPU run and the committed expectations they are checked against. Every fixture is marked as
hand-made in its fingerprint ("synthetic") or benchmark context ("torchplace_synthetic").
Rerun after changing it: /usr/bin/python3 ci/gate/tests/make_fixtures.py
"""
import copy
import json
import math
import os
import random
import statistics

import make_speed_adversarial
from behaviour_fixtures import behaviour_fixtures

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")
REPS = 12
# name -> (median, time_unit)
BENCHMARKS = {
    "cpu_copy/path:memcpy/bytes:1048576": (40.0, "us"),
    "cpu_copy/path:clone/bytes:1048576": (61.0, "us"),
    "cpu_copy/path:memcpy/bytes:4096": (20.0, "ns"),
    "batch_mover/impl:mover/tensors:64": (210.0, "us"),
    "transfer/direction:h2d/strategy:pinned_staging_reuse/bytes:67108864/device:cuda:0": (
        1.26,
        "ms",
    ),
    "prefetch_overlap/device:cuda:0": (5.1, "ms"),
}
SKIPPED = "transfer/direction:d2h/strategy:pageable/bytes:4096/device:cuda:1"
CONTEXT = {
    "torchplace_synthetic": "hand-made test data, not a measurement: the speed gate's "
    "test fixtures (ci/gate/tests/make_fixtures.py)",
    "date": "2026-11-29T12:00:00+00:00",
    "host_name": "runner",
    "executable": "build/scenarios/torchplace_bench",
    "num_cpus": 16,
    "mhz_per_cpu": 2000,
    "cpu_scaling_enabled": False,
    "caches": [],
    "load_avg": [0.1, 0.1, 0.1],
    "library_build_type": "release",
    "libtorch_version": "2.5.1",
    "gpu": "NVIDIA H200",
    "driver": "560.35.03",
}


# The speed cases' policy: fixed here so that tuning ci/gate/policy.json does not move the tests.
POLICY = {
    "schema": "torchplace.gate-policy/1",
    "alpha": 0.01,
    "default": {"max_ratio": 1.10, "min_abs_ns": 50, "min_reps": 8, "informational": False},
    "patterns": [{"match": "prefetch_overlap/*", "informational": True}],
    "benchmarks": {},
}


def entry(name, index, run_type, unit, value, extra, reps=REPS):
    return {
        "name": name,
        "family_index": index,
        "per_family_instance_index": 0,
        "run_name": name,
        "run_type": run_type,
        "repetitions": reps,
        **extra,
        "threads": 1,
        "iterations": 1000,
        "real_time": value,
        "cpu_time": value,
        "time_unit": unit,
    }


def benchmark_entries(index, name, times, unit):
    rows = [
        entry(name, index, "iteration", unit, t, {"repetition_index": r}, len(times))
        for r, t in enumerate(times)
    ]
    if len(times) < 2:
        return rows  # Google Benchmark writes no aggregates for one repetition
    aggregates = {
        "mean": statistics.mean(times),
        "median": statistics.median(times),
        "stddev": statistics.stdev(times),
    }
    for aggregate, value in aggregates.items():
        row = entry(
            name, index, "aggregate", unit, value, {"aggregate_name": aggregate}, len(times)
        )
        rows.append(dict(row, name=f"{name}_{aggregate}", iterations=len(times)))
    return rows


def skipped_entries(index):
    return [
        dict(
            entry(SKIPPED, index, "iteration", "ns", 0.0, {"repetition_index": r}),
            error_occurred=True,
            error_message="skip: device absent: cuda:1 needs 2 GPUs",
        )
        for r in range(REPS)
    ]


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
                name = (
                    f"transfer/direction:{direction}/strategy:{strategy}/bytes:{size}/device:cuda:0"
                )
                many.setdefault(name, (size / bandwidth * 1e6, "us"))
    return many


def many_doc(seed, factors=None):
    rng = random.Random(seed)
    out = []
    for index, (name, (median, unit)) in enumerate(many_benchmarks().items()):
        centre = median * (factors or {}).get(name, 1.0)
        times = [centre * math.exp(rng.gauss(0.0, 0.02)) for _ in range(MANY_REPS)]
        out += [
            row
            for row in benchmark_entries(index, name, times, unit)
            if row["run_type"] == "iteration"
        ]
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
        "aggregates_only.json": dict(
            base, benchmarks=[b for b in base["benchmarks"] if b["run_type"] == "aggregate"]
        ),
        "missing.json": without(bench_doc(2), "batch_mover/"),
        "errored.json": errored(bench_doc(2), "batch_mover/", "CUDA error: out of memory"),
        "other_tool.json": {"benchmarks": [{"name": "x", "gpu_time": 1.0}]},
        "many_base.json": many_doc(10),
        "many_slower.json": many_doc(11, {"cpu_copy/path:memcpy/bytes:1048576": 1.3}),
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
    make_speed_adversarial.write_all(write)


if __name__ == "__main__":
    main()
