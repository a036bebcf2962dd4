"""Assembles index.html from the sections."""
from __future__ import annotations

from html import escape
from typing import Dict, Tuple

from . import html_bench, html_page
from .analysis import Analysis
from .html_page import image, section, table


NO_RESULTS = (
    "No results.json in this folder: no single-run results are present (a version "
    "matrix folder); the version matrix below shows each cell per LibTorch version."
)


def render(result: Analysis, figures: Dict[str, bytes]) -> str:
    results = result.inputs.results
    parts = [
        _outcomes_section(result, figures),
        _version_section(result, figures),
        html_bench.transfer_section(result, figures),
        html_bench.cpu_section(result, figures),
        html_bench.failures_section(result),
    ]
    if results is not None:
        parts += [
            html_page.skips_section(results, result.bench),
            html_page.cells_section(results, result.regressions()),
            html_page.fingerprint_section(results, result.bench),
        ]
    anchors = [
        ("outcomes", "Outcomes"),
        ("versions", "Versions"),
        ("transfers", "Transfers"),
        ("cpu", "CPU baselines"),
        ("bench-failures", "Benchmark failures"),
        ("skips", "Skips"),
        ("cells", "Cells"),
        ("fingerprint", "Fingerprint"),
    ]
    body = "".join(parts)
    nav = " ".join(f'<a href="#{a}">{t}</a>' for a, t in anchors if f'id="{a}"' in body)
    title, header = _heading(result)
    synthetic = html_page.synthetic_sources(results, result.inputs.matrix, result.bench)
    title = f"SYNTHETIC — {title}" if synthetic else title
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{escape(title)}</title><style>{html_page.CSS}</style></head><body>"
        f"{html_page.synthetic_banner(synthetic)}"
        f"<h1>{escape(title)}</h1>{header}<nav>{nav}</nav>{body}</body></html>\n"
    )


def _heading(result: Analysis) -> Tuple[str, str]:
    """(title, HTML lines under it): the run's machine and counts, or the matrix's versions."""
    results = result.inputs.results
    if results is None:
        assert result.inputs.matrix is not None  # inputs.load_run reads one of the two
        versions = [v["version"] for v in result.inputs.matrix["versions"]]
        return (
            f"torchplace report — LibTorch version matrix ({', '.join(versions)})",
            f"<p>{escape(NO_RESULTS)}</p>",
        )
    assert result.grid is not None  # analyse() draws it from every results.json
    headline = ", ".join(f"{n} {category}" for category, n in result.grid.counts().items() if n)
    proved, ran = result.grid.evidence()
    headline += f"; {proved} of the {ran} cells that ran are evidence"
    title = f"torchplace report — LibTorch {results['fingerprint'].get('libtorch_version', '?')}"
    return title, (
        f"<p>{escape(html_page.machine_line(results['fingerprint']))}</p>"
        f"<p>{len(results['cells'])} scenario cells: {escape(headline)}.</p>"
    )


def _outcomes_section(result: Analysis, figures: Dict[str, bytes]) -> str:
    if result.grid is None:
        return section("outcomes", "Scenario outcome matrix", f"<p>{escape(NO_RESULTS)}</p>")
    body = html_page.legend_html() + "<p>Hover over a cell for its reason or error class.</p>"
    body += html_page.grid_table(result.grid)
    body += (
        "<details><summary>The same matrix as an image (outcome_matrix.png)</summary>"
        + image(figures["outcome_matrix.png"], "outcome matrix")
        + "</details>"
    )
    return section("outcomes", "Scenario outcome matrix", body)


def _version_section(result: Analysis, figures: Dict[str, bytes]) -> str:
    doc = result.inputs.matrix
    if doc is None:
        return ""
    assert result.version_grid is not None  # analyse() draws it from every matrix.json
    rows = [
        (
            escape(v["version"]),
            escape(str(v.get("root", ""))),
            escape(v["status"]),
            f'<div class="msg">{escape(v.get("first_error") or "")}</div>',
            escape(", ".join(f"{k} {s:g} s" for k, s in (v.get("timings_s") or {}).items())),
        )
        for v in doc["versions"]
    ]
    body = table(("LibTorch", "root", "status", "first error", "timings"), rows)
    body += "<p>Hover over a cell for its message.</p>" + html_page.grid_table(result.version_grid)
    body += (
        "<details><summary>The same matrix as an image (version_matrix.png)</summary>"
        + image(figures["version_matrix.png"], "outcome matrix by LibTorch version")
        + "</details>"
    )
    differences = [
        (
            escape(d.get("id", "")),
            escape(d.get("kind", "")),
            "<br>".join(
                f'<b>{escape(k)}</b>: <span class="msg">{escape(str(v))}</span>'
                for k, v in (d.get("versions") or {}).items()
            ),
        )
        for d in doc.get("differences", [])
    ]
    body += f"<h3>Differences between versions ({len(differences)})</h3>"
    body += table(("cell", "kind", "by version"), differences) if differences else "<p>None.</p>"
    return section("versions", "LibTorch version matrix", body)
