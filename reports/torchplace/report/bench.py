"""Google Benchmark JSON -> measurements by benchmark, with planned skips and failures apart.

Every repetition is kept: the plots draw the median with whiskers from the minimum to the maximum
repetition, so a single noisy repetition shows instead of hiding in a mean.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Tuple

import numpy as np
import numpy.typing as npt

from torchplace import schema as data

# Benchmark families the suite writes; a Google Benchmark file with none of them (and no
# torchplace fingerprint in its context) comes from some other program.
KNOWN_FAMILIES = (
    "transfer",
    "small_tensors",
    "nested_batch",
    "prefetch_overlap",
    "cpu_copy",
    "batch_mover",
)
ITERATION_FIELDS = ("run_name", "iterations", "real_time", "time_unit")


@dataclass
class Measurement:
    """All repetitions of one benchmark (one run_name)."""

    run_name: str
    family: str
    fields: Dict[str, str]
    entries: List[Dict[str, Any]] = field(default_factory=list)

    def seconds(self) -> npt.NDArray[np.float64]:
        """Wall time per iteration of each repetition, in seconds."""
        return np.array([data.seconds(entry) for entry in self.entries])

    def gbps(self) -> npt.NDArray[np.float64]:
        """Each repetition's bandwidth in GB/s (1e9 bytes/s): bytes_per_second, else bytes/time."""
        values = []
        for entry in self.entries:
            if "bytes_per_second" in entry:
                values.append(float(entry["bytes_per_second"]) / 1e9)
            else:
                moved = int(self.fields.get("bytes", 0)) * int(self.fields.get("count", 1))
                values.append(moved / data.seconds(entry) / 1e9 if moved else float("nan"))
        return np.array(values)

    def has_counter(self, name: str) -> bool:
        """True when any repetition reports the user counter `name` (then all must)."""
        return any(name in entry for entry in self.entries)

    def counter(self, name: str) -> npt.NDArray[np.float64]:
        """A user counter of each repetition (entries lacking it are missing fields)."""
        for entry in self.entries:
            data.require(entry, (name,), f"benchmark {entry['name']}")
        return np.array([float(entry[name]) for entry in self.entries])


@dataclass
class BenchData:
    """bench.json, sorted out: measurements by run_name, planned skips and real failures."""

    path: str
    context: Dict[str, Any]
    measurements: Dict[str, Measurement]
    skips: List[Tuple[str, str]]  # (run_name, reason)
    failures: List[Tuple[str, str]]  # (run_name, message)

    def family(self, name: str) -> List[Measurement]:
        return [m for m in self.measurements.values() if m.family == name]


def spread(values: Iterable[float] | npt.NDArray[np.float64]) -> Tuple[float, float, float]:
    """(median, min, max) of the repetitions; NaN-free input expected."""
    values = np.asarray(values, dtype=float)
    return float(np.median(values)), float(values.min()), float(values.max())


def load(path: str) -> BenchData:
    """Reads bench.json; InputError names the file and the problem."""
    doc = data.load_benchmarks(path)
    measurements: Dict[str, Measurement] = {}
    skips: Dict[str, str] = {}
    failures: Dict[str, str] = {}
    for run_name, group in data.iteration_groups(doc, path, required=ITERATION_FIELDS).items():
        if group["skip"] is not None:
            skips[run_name] = group["skip"]
        if group["error"] is not None:
            failures[run_name] = group["error"] or "error"
        if group["entries"]:
            family, fields = data.parse_benchmark_name(run_name)
            fields = {key: value for key, value in fields.items() if value != ""}
            measurements[run_name] = Measurement(run_name, family, fields, list(group["entries"]))
    _check_origin(path, doc, measurements, skips, failures)
    for measurement in measurements.values():
        measurement.seconds()  # rejects an unknown time_unit now, before anything is drawn
    return BenchData(
        path, doc["context"], measurements, sorted(skips.items()), sorted(failures.items())
    )


def _check_origin(
    path: str,
    doc: Dict[str, Any],
    measurements: Dict[str, Measurement],
    skips: Dict[str, str],
    failures: Dict[str, str],
) -> None:
    """Rejects Google Benchmark output of some other program."""
    if "torchplace_fingerprint" in doc["context"]:
        return
    names = list(measurements) + [name for name, _ in skips.items()] + list(failures)
    if not any(data.parse_benchmark_name(name)[0] in KNOWN_FAMILIES for name in names):
        raise data.InputError(
            f"{path}: Google Benchmark JSON, but not from torchplace's benchmarks (no "
            f"torchplace_fingerprint in its context and none of the families "
            f"{', '.join(KNOWN_FAMILIES)})"
        )
