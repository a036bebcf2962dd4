"""The speed gate's adversarial fixtures (issue 14): inputs the gate cannot judge, each of which
must be refused (exit 3) or judged correctly, never passed. Written by make_fixtures.py into
fixtures/speed/adv/; every fixture is a small edit of a clean run of make_fixtures.bench_doc.
"""
import copy
import json
import math

import make_fixtures as mf

MEMCPY = "cpu_copy/path:memcpy/bytes:1048576"
CLONE = "cpu_copy/path:clone/bytes:1048576"
MOVER = "batch_mover/impl:mover/tensors:64"


def set_time(doc, name, repetition, value, field="real_time"):
    """A copy of doc with one repetition's time replaced (NaN, inf, 0, -1, None, text...)."""
    out = copy.deepcopy(doc)
    for row in out["benchmarks"]:
        if (
            row["run_name"] == name
            and row["run_type"] == "iteration"
            and row["repetition_index"] == repetition
        ):
            row[field] = value
    return out


def edit_entries(doc, change):
    out = copy.deepcopy(doc)
    for row in out["benchmarks"]:
        change(row)
    return out


def hundred_doc(seed, factor):
    """100 gated benchmarks at 8 repetitions and one at 16, all `factor` x slower or not."""
    rng, out = mf.random.Random(seed), []
    for index in range(101):
        reps, name = (
            (8, f"cpu_copy/path:clone/bytes:{4096 * (index + 1)}") if index < 100 else (16, MEMCPY)
        )
        times = [10.0 * factor * math.exp(rng.gauss(0.0, 0.02)) for _ in range(reps)]
        out += [
            row
            for row in mf.benchmark_entries(index, name, times, "us")
            if row["run_type"] == "iteration"
        ]
    return {"context": mf.CONTEXT, "benchmarks": out}


UNIT_SECONDS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}


def unit_changed(doc, unit):
    """Every time of doc in another time_unit, the same durations."""

    def change(row):
        factor = UNIT_SECONDS[row["time_unit"]] / UNIT_SECONDS[unit]
        row.update(
            real_time=row["real_time"] * factor, cpu_time=row["cpu_time"] * factor, time_unit=unit
        )

    return edit_entries(doc, change)


def duplicated(doc, name, keep_index):
    """doc with `name`'s repetitions pasted a second time; without repetition_index anywhere
    when keep_index is False (then only the declared count tells)."""
    out = copy.deepcopy(doc)
    out["benchmarks"] += [
        copy.deepcopy(r)
        for r in out["benchmarks"]
        if r["run_name"] == name and r["run_type"] == "iteration"
    ]
    if not keep_index:
        for row in out["benchmarks"]:
            row.pop("repetition_index", None)
    return out


def two_families(doc):
    """MOVER's run_name measured again under a second family (another family_index)."""
    out = copy.deepcopy(doc)
    rows = [
        dict(r, family_index=99)
        for r in out["benchmarks"]
        if r["run_name"] == MOVER and r["run_type"] == "iteration"
    ]
    out["benchmarks"] += rows
    return out


def old_format(doc):
    """Google Benchmark < 1.5: no run_type, run_name, repetition_index or aggregate_name."""
    keep = ("name", "iterations", "real_time", "cpu_time", "time_unit")
    return dict(
        doc,
        benchmarks=[
            {k: r[k] for k in keep} for r in doc["benchmarks"] if not r.get("error_occurred")
        ],
    )


def rounded(doc):
    """Times rounded to whole units, as a coarse timer gives them: ties within and across sides."""
    return edit_entries(
        doc,
        lambda r: r.update(real_time=float(round(r["real_time"])))
        if not r.get("error_occurred")
        else None,
    )


def skipped_in(doc, name):
    return edit_entries(
        doc,
        lambda r: r.update(error_occurred=True, error_message="skip: no GPU")
        if r["run_name"] == name
        else None,
    )


def fixtures():
    base, aa = mf.bench_doc(1), mf.bench_doc(2)
    slower3 = mf.bench_doc(3, {MEMCPY: 3.0})
    docs = {
        "nan_plus_slower.json": set_time(slower3, MOVER, 4, float("nan")),
        "inf.json": set_time(aa, MOVER, 2, float("inf")),
        "minus_inf.json": set_time(aa, MOVER, 2, float("-inf")),
        "zero.json": set_time(aa, MOVER, 2, 0.0),
        "negative.json": set_time(aa, MOVER, 2, -5.0),
        "null_time.json": set_time(aa, MOVER, 2, None),
        "text_time.json": set_time(aa, MOVER, 2, "fast"),
        "bool_time.json": set_time(aa, MOVER, 2, True),
        "context_string.json": dict(aa, context="runner"),
        "numeric_name.json": edit_entries(
            aa, lambda r: r.update(name=123, run_name=123) if r["run_name"] == MOVER else None
        ),
        "unknown_unit.json": edit_entries(
            aa, lambda r: r.update(time_unit="fortnights") if r["run_name"] == MOVER else None
        ),
        "empty_list.json": dict(aa, benchmarks=[]),
        "old_format.json": old_format(aa),
        "two_families.json": two_families(aa),
        "twice_indexed.json": duplicated(aa, MOVER, True),
        "twice_unindexed.json": duplicated(aa, MOVER, False),
        "cand_skipped.json": skipped_in(aa, MOVER),
        "base_skipped.json": skipped_in(base, MOVER),
        "other_machine.json": dict(aa, context=dict(mf.CONTEXT, num_cpus=4)),
        "debug_build.json": dict(aa, context=dict(mf.CONTEXT, library_build_type="debug")),
        "other_host.json": dict(aa, context=dict(mf.CONTEXT, host_name="runner-2")),
        "aa_in_ms.json": unit_changed(aa, "ms"),
        "slower3_in_s.json": unit_changed(slower3, "s"),
        "ties_base.json": rounded(base),
        "ties_slower.json": rounded(slower3),
        "hundred_base.json": hundred_doc(20, 1.0),
        "hundred_slower.json": hundred_doc(21, 3.0),
    }
    for reps in (2, 3, 7):
        docs[f"reps{reps}_base.json"] = mf.bench_doc(30 + reps, reps=reps)
        docs[f"reps{reps}_slower.json"] = mf.bench_doc(40 + reps, {MEMCPY: 3.0}, reps=reps)
    return docs


def policies():
    """Policies with a threshold that would make a 20 % slowdown read SAME, or worse."""
    bad = {
        "policy_nan_ratio.json": ("default", "max_ratio", float("nan")),
        "policy_inf_ratio.json": ("default", "max_ratio", float("inf")),
        "policy_inf_floor.json": ("default", "min_abs_ns", float("inf")),
        "policy_nan_floor.json": ("default", "min_abs_ns", float("nan")),
        "policy_negative_floor.json": ("default", "min_abs_ns", -1.0),
        "policy_fractional_reps.json": ("default", "min_reps", 7.5),
        "policy_nan_alpha.json": (None, "alpha", float("nan")),
        "policy_text_alpha.json": (None, "alpha", "0.01"),
    }
    out = {}
    for name, (where, key, value) in bad.items():
        doc = copy.deepcopy(mf.POLICY)
        (doc[where] if where else doc)[key] = value
        out[name] = doc
    everything_info = copy.deepcopy(mf.POLICY)
    everything_info["patterns"].append({"match": "*", "informational": True})
    out["policy_all_informational.json"] = everything_info
    few_gated = copy.deepcopy(mf.POLICY)
    few_gated["patterns"].append({"match": "cpu_copy/path:clone/*", "informational": True})
    out["policy_hundred_informational.json"] = few_gated
    return out


def write_all(write):
    for name, doc in {**fixtures(), **policies()}.items():
        compact = name.startswith("hundred_")  # 1,016 entries: one line each keeps them small
        text = (
            json.dumps(doc, separators=(",", ":")).replace("},{", "},\n{")
            if compact
            else json.dumps(doc, indent=1)
        )
        write(f"speed/adv/{name}", text + "\n")
