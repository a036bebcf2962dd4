"""index.html: one self-contained page (PNGs as data URIs, inline CSS, only in-page links)."""
from __future__ import annotations

import base64
import json
from collections import defaultdict
from html import escape
from typing import (
    TYPE_CHECKING,
    Any,
    Collection,
    DefaultDict,
    Dict,
    Iterable,
    List,
    Optional,
    Sequence,
    Tuple,
)

from torchplace import schema as data

from . import matrix, transfer_budget

if TYPE_CHECKING:
    from .bench import BenchData

CSS = """
body{font-family:system-ui,sans-serif;margin:24px auto;max-width:1300px;color:#222;line-height:1.4}
h1{margin-bottom:4px} h2{border-bottom:2px solid #ddd;padding-bottom:4px;margin-top:36px}
nav a{margin-right:14px} table{border-collapse:collapse;margin:8px 0 16px;font-size:14px}
th,td{border:1px solid #ccc;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f3f3f3} td.num{text-align:right;font-variant-numeric:tabular-nums}
img{max-width:100%;border:1px solid #eee} .msg{font-family:monospace;white-space:pre-wrap;
max-width:720px;font-size:12px} .swatch{display:inline-block;width:14px;height:14px;
vertical-align:middle;margin-right:4px} .bad{color:#b00;font-weight:bold} .note{color:#555}
.synthetic{border:4px solid #b00;padding:0 1em;margin:1em 0}
.synthetic-big{font-size:4em;font-weight:bold;color:#b00;margin:0.2em 0}
td.cell{text-align:center;min-width:90px;cursor:help}
"""


# Text colour readable on each category's background.
TEXT_ON = {
    matrix.EXPECTED_ERROR: "#fff",
    matrix.PASSED: "#fff",
    matrix.RACE_SHOWN: "#000",
    matrix.UNEXERCISED: "#000",
    matrix.LATENT: "#000",
    matrix.RACE_NOT_SHOWN: "#fff",
    matrix.SKIPPED: "#000",
    matrix.UNEXPECTED: "#000",
}


def data_uri(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def image(png: bytes, alt: str) -> str:
    return f'<p><img src="{data_uri(png)}" alt="{escape(alt)}"></p>'


def table(
    header: Iterable[str], rows: Iterable[Sequence[str]], numeric: Collection[int] = ()
) -> str:
    """rows of already-escaped HTML strings; columns listed in numeric are right-aligned."""
    head = "".join(f"<th>{h}</th>" for h in header)
    body = "".join(
        "<tr>"
        + "".join(
            f'<td class="num">{v}</td>' if i in numeric else f"<td>{v}</td>"
            for i, v in enumerate(row)
        )
        + "</tr>"
        for row in rows
    )
    return f"<table><tr>{head}</tr>{body}</table>"


def section(anchor: str, title: str, body: str) -> str:
    return f'<section id="{anchor}"><h2>{escape(title)}</h2>{body}</section>'


def machine_line(fingerprint: Dict[str, Any]) -> str:
    """'LibTorch 2.5.1 · CUDA 12.4 · NVIDIA H200 · driver 550.127.08 · ... · gcc 12.2.0'."""
    cuda = fingerprint.get("cuda") or {}
    gpus = ", ".join(g.get("name", "?") for g in cuda.get("gpus") or []) or "no GPU"
    parts = [
        "SYNTHETIC (not a measurement)" if data.synthetic_reason(fingerprint) else None,
        f"LibTorch {fingerprint.get('libtorch_version', '?')}",
        f"CUDA {cuda['runtime_version']}" if cuda.get("runtime_version") else "CPU-only",
        gpus,
        f"driver {cuda['driver']}" if cuda.get("driver") else None,
        fingerprint.get("cpu_model"),
        fingerprint.get("os"),
        fingerprint.get("compiler"),
    ]
    return " · ".join(str(part) for part in parts if part)


def synthetic_sources(
    results: Optional[Dict[str, Any]], matrix: Optional[Dict[str, Any]], bench: Optional[BenchData]
) -> List[Tuple[str, str]]:
    """(where, why) for every input that says it is hand-made test data, not a measurement."""
    marks = [("results.json", data.synthetic_reason((results or {}).get("fingerprint")))]
    marks += [
        (
            f"matrix.json column {column.get('version')}",
            data.synthetic_reason(column.get("fingerprint")),
        )
        for column in (matrix or {}).get("versions", [])
    ]
    context = bench.context if bench is not None else {}
    mark = context.get(data.SYNTHETIC_CONTEXT_KEY)
    marks.append(("bench.json", mark if isinstance(mark, str) else None))
    return [(where, reason) for where, reason in marks if reason is not None]


def synthetic_banner(sources: List[Tuple[str, str]]) -> str:
    """The page's first lines when any input is synthetic: SYNTHETIC in large type, and why."""
    if not sources:
        return ""
    why = "".join(f"<li>{escape(where)}: {escape(reason)}</li>" for where, reason in sources)
    return (
        '<div class="synthetic"><p class="synthetic-big">SYNTHETIC</p><p>This report was '
        "rendered from hand-made test data, not from a measurement. Nothing in it describes "
        f"a real machine or run.</p><ul>{why}</ul></div>"
    )


def fingerprint_section(results: Dict[str, Any], bench: Optional[BenchData]) -> str:
    rows = _flatten(results["fingerprint"])
    reason = data.synthetic_reason(results["fingerprint"])
    body = (
        (
            f'<p class="bad">SYNTHETIC fingerprint (hand-made test data, not a measurement): '
            f"{escape(reason)}</p>"
        )
        if reason
        else ""
    )
    body += table(("field", "value"), [(escape(k), escape(v)) for k, v in rows])
    if bench is not None:
        context = {
            k: v
            for k, v in bench.context.items()
            if k
            in (
                "libtorch_version",
                "gpu",
                "driver",
                "date",
                "host_name",
                "num_cpus",
                "mhz_per_cpu",
                "library_build_type",
            )
        }
        body += "<h3>Benchmark context (bench.json)</h3>"
        body += table(("field", "value"), [(escape(k), escape(str(v))) for k, v in context.items()])
        if "torchplace_fingerprint" in bench.context:
            try:
                same = json.loads(bench.context["torchplace_fingerprint"]) == results["fingerprint"]
            except (TypeError, ValueError):
                same = False
            body += (
                '<p class="note">The benchmarks ran under the same fingerprint.</p>'
                if same
                else '<p class="bad">The benchmarks carry a different fingerprint '
                "than the scenario results (bench.json context.torchplace_fingerprint).</p>"
            )
    return section("fingerprint", "Fingerprint", body)


def _flatten(value: object, prefix: str = "") -> List[Tuple[str, str]]:
    if isinstance(value, dict):
        return [pair for k, v in value.items() for pair in _flatten(v, f"{prefix}{k}.")]
    if isinstance(value, list) and value and isinstance(value[0], dict):
        return [pair for i, v in enumerate(value) for pair in _flatten(v, f"{prefix}{i}.")]
    return [(prefix.rstrip("."), json.dumps(value) if not isinstance(value, str) else value)]


def legend_html() -> str:
    return (
        "<p>"
        + " ".join(
            f'<span class="swatch" style="background:{matrix.COLOURS[c]}"></span><b>{c}</b>: '
            f"{escape(matrix.LEGEND[c])}<br>"
            for c in matrix.CATEGORIES
        )
        + "</p>"
    )


def grid_table(grid: matrix.Grid) -> str:
    """The matrix as an HTML table; the hover text (title) holds the reason or message."""
    footnotes = grid.footnotes()
    head = "".join(f"<th>{escape(h)}</th>" for h in ["scenario · variant"] + grid.columns)
    body = "".join(
        "<tr><td>"
        + escape(row)
        + "</td>"
        + "".join(_grid_cell(grid.cells.get((row, column)), footnotes) for column in grid.columns)
        + "</tr>"
        for row in grid.rows
    )
    notes = "".join(f"<li>[{n}] {escape(reason)}</li>" for reason, n in footnotes.items())
    notes = f"<p>Skipped:</p><ul>{notes}</ul>" if notes else ""
    return f"<table><tr>{head}</tr>{body}</table>{notes}"


def _grid_cell(cell: Optional[matrix.Cell], footnotes: Dict[str, int]) -> str:
    if cell is None:
        return "<td></td>"
    mark = f"[{footnotes[cell.detail]}]" if cell.category == matrix.SKIPPED else cell.category
    mark = matrix.SHORT.get(cell.category, mark)
    title = escape(f"{cell.cell_id}\n{cell.category}: {cell.detail}", quote=True)
    style = f"background:{matrix.COLOURS[cell.category]};color:{TEXT_ON[cell.category]}"
    return f'<td class="cell" style="{style}" title="{title}">{escape(mark)}</td>'


def cells_section(results: Dict[str, Any], regressions: Dict[str, Tuple[str, str]]) -> str:
    """Every cell; one the gate named a regression (--gate: transfers_grew, started_failing...)
    shows that in its status, whatever the cell's own status says."""
    rows = []
    for cell in results["cells"]:
        expected, observed = cell["expected"], cell["observed"]
        status = escape(f"{cell['status']}: {matrix.BY_MACHINE_VALUE[cell['category']]}")
        if cell["id"] in regressions:
            kind, detail = regressions[cell["id"]]
            status = (
                f'<span class="bad">regression: {escape(kind)}</span> ({status}; {escape(detail)})'
            )
        rows.append(
            (
                escape(cell["id"]),
                _outcome(expected),
                _outcome(observed),
                f'<span class="bad">{status}</span>' if cell["status"] == "fail" else status,
                f'<div class="msg">{escape(observed.get("message") or "")}</div>',
                f'<div class="msg">{escape(cell["reason"])}</div>',
                escape(transfer_budget.cell_text(cell)),
            )
        )
    header = ("cell", "expected", "observed", "status", "raw error message", "reason")
    body = table(header + ("transfers (sim, per step)",), rows)
    return section("cells", f"All cells ({len(rows)}), with raw error messages", body)


def _outcome(part: Dict[str, Any]) -> str:
    outcome = escape(str(part.get("outcome")))
    return outcome + (f" ({escape(part['error_class'])})" if part.get("error_class") else "")


def skips_section(results: Dict[str, Any], bench: Optional[BenchData]) -> str:
    by_reason: DefaultDict[str, List[str]] = defaultdict(list)
    for cell in results["cells"]:
        if cell["status"] == "skip":
            by_reason[cell["reason"] or "(no reason given)"].append(cell["id"])
    body = "<h3>Scenario cells</h3>" + _reason_table(by_reason)
    if bench is not None:
        bench_reasons: DefaultDict[str, List[str]] = defaultdict(list)
        for name, reason in bench.skips:
            bench_reasons[reason].append(name)
        body += "<h3>Benchmarks</h3>" + _reason_table(bench_reasons)
    return section("skips", "Skips and their reasons", body)


def _reason_table(by_reason: Dict[str, List[str]]) -> str:
    if not by_reason:
        return "<p>None.</p>"
    rows = [
        (
            escape(reason),
            str(len(names)),
            f"<details><summary>{escape(names[0])}{' …' if len(names) > 1 else ''}</summary>"
            + "<br>".join(escape(n) for n in names)
            + "</details>",
        )
        for reason, names in sorted(by_reason.items(), key=lambda item: -len(item[1]))
    ]
    return table(("reason", "count", "which"), rows, numeric=(1,))
