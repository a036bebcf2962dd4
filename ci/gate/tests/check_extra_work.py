#!/usr/bin/env python3
"""Checks the calibration's injected slowdown on the CPU benchmarks: with
--torchplace_extra_work=0.2 every benchmark (4 KiB copies and 1 MiB ones, 10 tensors and 1000)
runs 20 % extra steps of its own, reported as counter torchplace_extra_ratio; without the flag
it runs none and reports no counter.

  check_extra_work.py BUILD/scenarios/torchplace_bench
Exits 0 when both hold, 1 with the offending benchmarks listed.
"""
import json
import os
import subprocess
import sys
import tempfile

FILTER = (
    "^(cpu_copy/path:(memcpy|clone)/bytes:(4096|1048576)|"
    "batch_mover/impl:mover/tensors:(10|1000))(/real_time)?$"
)
SHARE, SLACK = 0.2, 0.05  # a short run ends mid-cycle: >= 20 iterations keep it within 0.05


def shares(binary, extra):
    """run_name -> torchplace_extra_ratio (None when absent) of one short run."""
    with tempfile.TemporaryDirectory(prefix="extra-work-") as scratch:
        out = os.path.join(scratch, "run.json")
        subprocess.run(
            [
                binary,
                f"--benchmark_filter={FILTER}",
                "--benchmark_min_time=0.01",
                f"--torchplace_extra_work={extra}",
                f"--benchmark_out={out}",
                "--benchmark_out_format=json",
            ],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        with open(out, encoding="utf-8") as handle:
            entries = json.load(handle)["benchmarks"]
    return {
        e["run_name"]: e.get("torchplace_extra_ratio")
        for e in entries
        if e["run_type"] == "iteration" and not e.get("error_occurred")
    }


def main(binary):
    failures = []
    injected, plain = shares(binary, SHARE), shares(binary, 0)
    if len(injected) < 6:
        failures.append(f"only {len(injected)} of 6 benchmarks ran: {sorted(injected)}")
    for name, share in sorted(injected.items()):
        print(f"{name}: torchplace_extra_ratio {share}")
        if share is None or not SHARE - SLACK <= share <= SHARE + 1e-9:
            failures.append(f"{name}: extra share {share}, expected {SHARE} (-{SLACK})")
    failures += [
        f"{name}: counter {share} without extra work"
        for name, share in plain.items()
        if share is not None
    ]
    for failure in failures:
        print(f"FAIL {failure}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
