"""Everything the page, the summary and the figures show, computed once from the inputs."""
from dataclasses import dataclass, field

from . import matrix, tables


@dataclass
class Analysis:
    inputs: object  # inputs.RunInputs
    grid: object  # matrix.Grid of results.json; None in a matrix-only folder
    version_grid: object = None  # matrix.Grid when matrix.json exists
    curves: dict = field(default_factory=dict)  # tables.transfer_curves
    percent: dict = field(default_factory=dict)  # tables.percent_of_raw
    device_copy: dict = field(default_factory=dict)  # tables.device_copy_medians
    ratios: dict = field(default_factory=dict)  # tables.pinned_pageable_ratio
    small: dict = field(default_factory=dict)  # tables.small_tensor_bars
    prefetch: list = field(default_factory=list)  # tables.prefetch_rows
    cpu_curves: dict = field(default_factory=dict)  # tables.cpu_copy_curves
    cpu_percent: dict = field(default_factory=dict)  # tables.cpu_copy_percent
    mover_rows: list = field(default_factory=list)  # tables.batch_mover_rows

    @property
    def bench(self):
        return self.inputs.bench

    def failed_cells(self):
        results = self.inputs.results
        return [] if results is None else [c for c in results["cells"] if c["status"] == "fail"]


def analyse(inputs):
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


def figures(result):
    """{file name: PNG bytes} for whatever data there is."""
    from . import matrix_figure, plots  # matplotlib is imported only when drawing

    pngs = {}
    if result.grid is not None:
        pngs["outcome_matrix.png"] = matrix_figure.outcome_matrix(result.grid)
    if result.version_grid is not None:
        pngs["version_matrix.png"] = matrix_figure.outcome_matrix(result.version_grid)
    drawers = (
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
