"""The behaviour gate's fixtures: results.json documents of a GPU run (and of a CPU-only and a
2-GPU one) and the committed expectations they are checked against. Written by make_fixtures.py."""


# Hand-made, and says so in its own fingerprint (reports and gates show it as synthetic).
SYNTHETIC_MARK = (
    "hand-made test data, not a measurement: the behaviour gate's test fixtures "
    "(ci/gate/tests/behaviour_fixtures.py)"
)
FINGERPRINT = {
    "synthetic": SYNTHETIC_MARK,
    "libtorch_version": "2.5.1",
    "cuda": {
        "built_with_cuda": True,
        "available": True,
        "device_count": 1,
        "runtime_version": "12.4",
        "cudnn_version": "90100",
        "driver": "560.35.03",
        "gpus": [
            {
                "index": 0,
                "name": "NVIDIA H200",
                "total_memory_bytes": 150000000000,
                "compute_capability": "9.0",
            }
        ],
    },
    "compiler": "gcc 12.2.0",
    "cxx_standard": 201703,
    "cpu_model": "x",
    "cpu_cores": 16,
    "torch_threads": 16,
    "os": "Debian GNU/Linux 12 (bookworm)",
}
MISMATCH = (
    "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!"
)


def observed_category(status, observed_class, expected_category):
    """As harness/internal/results.cpp: the status first, then what the cell observed and
    expected."""
    if status != "pass":
        return "skipped" if status == "skip" else "failed"
    return "expected_error" if observed_class else expected_category


def cell(
    cell_id,
    expected_class=None,
    observed_class=None,
    status="pass",
    reason="",
    skip_code=None,
    message=None,
    expected_category=None,
    category=None,
):
    """A results.json cell; a class means 'error' with that class, None means success.
    skip_code "absent" leaves the field out (a results.json from before skip codes).
    expected_category defaults to expected_error or passed; category (observed) to what the
    harness derives from the status."""
    expected_category = expected_category or ("expected_error" if expected_class else "passed")
    category = category or observed_category(status, observed_class, expected_category)
    scenario, *parts = cell_id.split("/")
    axes = dict(part.split("=", 1) for part in parts[:-1])
    outcome = lambda cls: "error" if cls else "success"  # noqa: E731
    observed = {
        "outcome": outcome(observed_class),
        "error_class": observed_class,
        "message": message or (MISMATCH if observed_class else ""),
    }
    if status == "skip":
        observed = {"outcome": "not_run", "error_class": None, "message": ""}
    out = {
        "id": cell_id,
        "scenario": scenario,
        "axes": axes,
        "device": parts[-1].split("=")[1],
        "expected": {
            "outcome": outcome(expected_class),
            "error_class": expected_class,
            "note": "",
            "category": expected_category,
        },
        "observed": observed,
        "status": status,
        "category": category,
        "reason": reason,
        "skip_code": skip_code,
        "duration_ms": 3.0,
        "metrics": {},
        "notes": [],
    }
    if skip_code == "absent":
        del out["skip_code"]
    return out


BROKEN = "forgotten_labels/loss=nll/variant=broken/device=cuda:0"
FIXED = "forgotten_labels/loss=nll/variant=manual_to/device=cuda:0"
PAIR = "cross_device/variant=broken/devices=cuda:0+cuda:1"
RACE = "pinned_non_blocking/case=d2h_unsynchronized/device=cuda:0"
CPU_FIX = "forgotten_labels/loss=nll/variant=manual_to/device=cpu"


def good_cells():  # PAIR last (second_gpu replaces it)
    return [
        cell(
            "forgotten_labels/loss=nll/variant=broken/device=cpu",
            expected_category="latent_unexercised",
        ),
        cell(CPU_FIX, expected_category="ran_unexercised"),
        cell(RACE, expected_category="race_shown"),
        cell(BROKEN, "DeviceMismatch", "DeviceMismatch"),
        cell(FIXED),
        cell(
            "cpu_indices/op=embedding/variant=broken/device=cuda:0",
            "DeviceMismatch",
            "DeviceMismatch",
        ),
        cell(
            PAIR,
            "DeviceMismatch",
            status="skip",
            reason="device absent: needs 2 GPUs, found 1",
            skip_code="too_few_gpus",
        ),
    ]


def results(change=None, fingerprint=None):
    """A results document; change(cells) edits the cell list."""
    cells = good_cells()
    if change:
        change(cells)
    return {
        "schema": "torchplace.results/1",
        "fingerprint": fingerprint or FINGERPRINT,
        "cells": cells,
    }


def both(*changes):
    def change(cells):
        for each in changes:
            each(cells)

    return change


def replace(cell_id, new_cell):
    def change(cells):
        cells[[c["id"] for c in cells].index(cell_id)] = new_cell

    return change


SHAPE_ERROR = "mat1 and mat2 shapes cannot be multiplied (4x8 and 16x2)"
NEW_FAILING = cell(
    "cpu_indices/op=index_select/variant=manual_to/device=cuda:0",
    None,
    "Unclassified",
    "fail",
    "expected success, but LibTorch raised Unclassified",
    message=SHAPE_ERROR,
)
CPU_ONLY = dict(
    FINGERPRINT, cuda={"built_with_cuda": False, "available": False, "device_count": 0, "gpus": []}
)
TWO_GPUS = dict(FINGERPRINT, cuda=dict(FINGERPRINT["cuda"], device_count=2))


def skipped(cell_id, reason, code):
    """Replaces cell_id with the same cell, skipped with that reason and skip code."""

    def change(cells):
        index = [c["id"] for c in cells].index(cell_id)
        old = cells[index]
        cells[index] = cell(
            cell_id,
            old["expected"]["error_class"],
            status="skip",
            reason=reason,
            skip_code=code,
            expected_category=old["expected"]["category"],
        )

    return change


def cpu_only_run(cells):
    """Every CUDA cell skipped as a CPU-only LibTorch skips it."""
    for each in [c["id"] for c in cells if "cuda" in c["device"]]:
        skipped(
            each, "device absent: needs CUDA, this LibTorch has no CUDA device", "no_cuda_build"
        )(cells)


def second_gpu(observed_class, status="pass"):
    """Adds the cuda:1 cell of FIXED's kind, as a 2-GPU run lists it; the pair cell runs."""
    second = FIXED.replace("cuda:0", "cuda:1")

    def change(cells):
        cells[-1] = cell(PAIR, "DeviceMismatch", "DeviceMismatch")
        cells.append(
            cell(second, None, observed_class, status, "" if status == "pass" else "raised")
        )

    return change


def gate_fixtures():
    """The fail-closed cases (issue 13): failed new cells, skips outside the closed set, cuda:1
    cells, and runs on fewer devices than required."""
    anything = skipped(FIXED, "needs: anything", "absent")
    return {
        "results_new_cell_failing/results.json": results(lambda c: c.append(NEW_FAILING)),
        "results_issue13/results.json": results(both(lambda c: c.append(NEW_FAILING), anything)),
        "results_skip_no_code/results.json": results(anything),
        "results_skip_unlisted/results.json": results(
            skipped(FIXED, "needs: anything", "unlisted")
        ),
        "results_skip_device_unusable/results.json": results(
            skipped(
                FIXED, "not run: cuda:0 was left unusable by a sticky CUDA error", "device_unusable"
            )
        ),
        "results_skip_contradicts/results.json": results(
            skipped(FIXED, "device absent: cuda:0 needs CUDA", "no_cuda_device")
        ),
        "results_cpu_only/results.json": results(cpu_only_run, CPU_ONLY),
        "results_second_gpu_ok/results.json": results(second_gpu(None), TWO_GPUS),
        "results_second_gpu_failing/results.json": results(
            second_gpu("DeviceMismatch", "fail"), TWO_GPUS
        ),
    }


def ran_outputs(c):
    """What a refresh keeps of a cell that ran: its notes, its metrics less the transfer counts."""
    kept = {k: v for k, v in c.get("metrics", {}).items() if not k.startswith("transfer.")}
    return {"notes": c.get("notes", []), "metrics": kept}


def behaviour_fixtures():
    expectations = {
        "schema": "torchplace.expectations/1",
        "refresh": "fixture",
        "cells": {
            c["id"]: {
                "outcome": c["expected"]["outcome"],
                "error_class": c["expected"]["error_class"],
                "category": c["expected"]["category"],
                **({} if c["status"] == "skip" else ran_outputs(c)),
                "expected_note": c["expected"]["note"],  # skipped or not (gate/stated.py)
            }
            for c in good_cells()
        },
    }
    unexplained = cell(PAIR, "DeviceMismatch", status="skip", reason="")
    new_cell = cell(
        "cpu_indices/op=index_select/variant=broken/device=cuda:0",
        "DeviceMismatch",
        "DeviceMismatch",
    )
    return {
        "expectations.json": expectations,
        "results_ok/results.json": results(),
        "results_stopped_raising/results.json": results(
            replace(BROKEN, cell(BROKEN, "DeviceMismatch", None, "fail", "expected DeviceMismatch"))
        ),
        "results_weakened/results.json": results(replace(BROKEN, cell(BROKEN))),
        "results_class_changed/results.json": results(
            replace(BROKEN, cell(BROKEN, "DeviceMismatch", "Unclassified", "fail", "class differs"))
        ),
        "results_started_failing/results.json": results(
            replace(FIXED, cell(FIXED, None, "DeviceMismatch", "fail", "raised"))
        ),
        "results_vanished/results.json": results(lambda cells: cells.pop(3)),
        # a race control that never went wrong: it ran, status pass, but proved nothing
        "results_race_not_shown/results.json": results(
            replace(RACE, cell(RACE, expected_category="race_shown", category="race_not_shown"))
        ),
        # a fix that proved its claim declared unexercised: a weakened expectation
        "results_fix_unexercised/results.json": results(
            replace(FIXED, cell(FIXED, expected_category="ran_unexercised"))
        ),
        "results_no_category/results.json": results(lambda cells: cells[0].pop("category")),
        "results_new_cell/results.json": results(lambda cells: cells.append(new_cell)),
        "results_unexplained_skip/results.json": results(replace(PAIR, unexplained)),
        "results_bad_schema/results.json": dict(results(), schema="torchplace.results/0"),
        **gate_fixtures(),
    }
