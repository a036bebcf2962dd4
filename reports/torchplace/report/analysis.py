"""Everything the page, the summary and the figures show, computed once from the inputs."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Tuple

from . import matrix, tables
from .bench import BenchData
from .inputs import RunInputs


@dataclass
class Analysis:
    inputs: RunInputs
    grid: Optional[matrix.Grid]  # of results.json; None in a matrix-only folder
    version_grid: Optional[matrix.Grid] = None  # when matrix.json exists
    curves: tables.Curves = field(default_factory=dict)  # tables.transfer_curves
    percent: Dict[str, Dict[str, Dict[int, float]]] = field(default_factory=dict)  # percent_of_raw
    device_copy: Dict[str, Dict[str, Dict[int, float]]] = field(default_factory=dict)  # medians
    ratios: Dict[str, List[tables.Point]] = field(default_factory=dict)  # pinned_pageable_ratio
    small: Dict[str, Dict[str, tables.Spread]] = field(default_factory=dict)  # small_tensor_bars
    prefetch: List[Dict[str, Any]] = field(default_factory=list)  # tables.prefetch_rows
    cpu_curves: Dict[str, List[tables.Point]] = field(default_factory=dict)  # cpu_copy_curves
    cpu_percent: Dict[str, Tuple[str, Dict[int, float]]] = field(default_factory=dict)  # percent
    mover_rows: List[tables.MoverRow] = field(default_factory=list)  # tables.batch_mover_rows

    @property
    def bench(self) -> Optional[BenchData]:
        return self.inputs.bench

    def regressions(self) -> Dict[str, Tuple[str, str]]:
        """{cell id: (kind, detail)} of the gate's behaviour regressions (--gate); {} without."""
        gate = self.inputs.gate or {}
        found = (gate.get("behaviour") or {}).get("regressions", [])
        return {r["id"]: (str(r["kind"]), str(r["detail"])) for r in found}

    def failed_cells(self) -> List[Dict[str, Any]]:
        results = self.inputs.results
        return [] if results is None else [c for c in results["cells"] if c["status"] == "fail"]


def analyse(inputs: RunInputs) -> Analysis:
    grid = matrix.from_results(inputs.results) if inputs.results is not None else None
    result = Analysis(inputs, grid)
    if inputs.matrix is not None:
        result.version_grid = matrix.from_version_matrix(inputs.matrix)
    bench = inputs.bench
    if bench is not None:
        result.curves = tables.transfer_curves(bench)
        result.percent = tables.percent_of_raw(result.curves)
        result.device_copy = tables.device_copy_medians(bench)
        result.ratios = tables.pinned_pageable_ratio(result.curves)
        result.small = tables.small_tensor_bars(bench)
        result.prefetch = tables.prefetch_rows(bench)
        result.cpu_curves = tables.cpu_copy_curves(bench)
        result.cpu_percent = tables.cpu_copy_percent(result.cpu_curves)
        result.mover_rows = tables.batch_mover_rows(bench)
    return result


def figures(result: Analysis) -> Dict[str, bytes]:
    """{file name: PNG bytes} for whatever data there is."""
    from . import matrix_figure, plots  # matplotlib is imported only when drawing

    pngs: Dict[str, bytes] = {}
    if result.grid is not None:
        pngs["outcome_matrix.png"] = matrix_figure.outcome_matrix(result.grid)
    if result.version_grid is not None:
        pngs["version_matrix.png"] = matrix_figure.outcome_matrix(result.version_grid)
    drawers: Tuple[Tuple[str, Any, Callable[[Any], bytes]], ...] = (
        ("transfer_bandwidth.png", result.curves, plots.transfer_bandwidth),
        ("pinned_pageable_ratio.png", result.ratios, plots.pinned_pageable),
        ("small_tensors.png", result.small, plots.small_tensors),
        ("cpu_copy.png", result.cpu_curves, plots.cpu_copy),
        ("batch_mover.png", result.mover_rows, plots.batch_mover),
    )
    for name, values, draw in drawers:
        if values:
            pngs[name] = draw(values)
    return pngs
