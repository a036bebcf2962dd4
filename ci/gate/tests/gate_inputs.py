"""Synthetic inputs for the behaviour gate's rule and property tests (test_rules.py,
test_properties.py): results.json cells as the harness writes them, runs on a CPU-only host or
a GPU host, expectations made from cells, and the gate run as a command in a scratch folder.
Every document here is synthetic: made by these functions, never recorded from a real run."""
import json
import os
import subprocess
import sys
import tempfile

from behaviour_fixtures import FINGERPRINT, cell
from torchplace.gate import behaviour

CPU_HOST = dict(
    FINGERPRINT, cuda={"built_with_cuda": False, "available": False, "device_count": 0, "gpus": []}
)
CUDA_NO_DEVICE = dict(
    FINGERPRINT, cuda=dict(FINGERPRINT["cuda"], available=False, device_count=0, gpus=[])
)
GPU_HOST = FINGERPRINT  # one GPU
SYNTHETIC = "synthetic (ci/gate/tests/gate_inputs.py), not recorded from a run"

FIX_CPU = "forgotten_labels/loss=nll/variant=manual_to/device=cpu"
BROKEN_CPU = "forgotten_labels/loss=nll/variant=broken/device=cpu"
FIX_SIM = "forgotten_labels/loss=nll/variant=manual_to/device=sim:0"
FIX_CUDA = "forgotten_labels/loss=nll/variant=manual_to/device=cuda:0"
BROKEN_CUDA = "forgotten_labels/loss=nll/variant=broken/device=cuda:0"
WITH_CUDA_CPU = "checkpoint_map_location/case=default_load_with_cuda/device=cpu"


def passing(cell_id, error_class=None, category=None):
    """A cell that ran and held: success (category passed unless given) or its expected error."""
    return cell(cell_id, error_class, error_class, expected_category=category)


def skipping(cell_id, code, error_class=None, category=None, reason="synthetic skip reason"):
    return cell(
        cell_id,
        error_class,
        status="skip",
        reason=reason,
        skip_code=code,
        expected_category=category,
    )


def results(cells, fingerprint=CPU_HOST):
    return {
        "schema": "torchplace.results/1",
        "about": SYNTHETIC,
        "fingerprint": fingerprint,
        "cells": list(cells),
    }


def entry_of(one, skip_codes=()):
    entry = {
        "outcome": one["expected"]["outcome"],
        "error_class": one["expected"]["error_class"],
        "category": one["expected"]["category"],
    }
    return dict(entry, skip_codes=list(skip_codes)) if skip_codes else entry


def expectations(cells, skip_codes=None):
    """Committed expectations of these cells; skip_codes {id: codes} their allowed need codes."""
    skip_codes = skip_codes or {}
    return {
        "schema": "torchplace.expectations/1",
        "refresh": SYNTHETIC,
        "cells": {c["id"]: entry_of(c, skip_codes.get(c["id"], ())) for c in cells},
    }


def write_json(path, doc):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(doc if isinstance(doc, str) else json.dumps(doc))
    return path


def write_in(folder, name, doc):
    return write_json(os.path.join(folder, name), doc)


class Gate:
    """The gate run as `python3 -m torchplace.gate` in a scratch folder: its exit code, output,
    and gate.json (None when it wrote none)."""

    def __init__(self, root=None):
        self.root = root or tempfile.mkdtemp(prefix="gate-rules-")
        self.out = os.path.join(self.root, "out")

    def run(self, results_doc, expectations_doc, *extra, env=None, out=True):
        run_dir = os.path.join(self.root, "run")
        write_json(os.path.join(run_dir, "results.json"), results_doc)
        committed = write_json(os.path.join(self.root, "expectations.json"), expectations_doc)
        args = ["--results", run_dir, "--expectations", committed, *extra]
        return self.command(args + (["--out", self.out] if out else []), env)

    def command(self, args, env=None):
        done = subprocess.run(
            [sys.executable, "-m", "torchplace.gate", *args],
            capture_output=True,
            env=dict(os.environ, **(env or {})),
        )
        self.code = done.returncode
        self.output = (done.stdout + done.stderr).decode("utf-8", errors="backslashreplace")
        self.verdict = self.read_verdict()
        return self.code

    def read_verdict(self):
        path = os.path.join(self.out, "gate.json")
        if not os.path.exists(path):
            return None
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)

    def kinds(self):
        return sorted(
            r["kind"] for r in ((self.verdict or {}).get("behaviour") or {}).get("regressions", [])
        )


def judged(run_cells, committed_cells):
    """The behaviour section of a run of run_cells against committed_cells' expectations."""
    with tempfile.TemporaryDirectory() as folder:
        committed = write_in(folder, "expectations.json", expectations(committed_cells))
        write_in(folder, "results.json", results(run_cells))
        return behaviour.compare(os.path.join(folder, "results.json"), committed)
