"""Renders the torchplace report of a run folder from its JSON.

usage: python3 -m torchplace.report IN_DIR [--out DIR]

Reads IN_DIR/results.json (required unless IN_DIR/matrix.json exists: a version-matrix folder),
IN_DIR/bench.json and IN_DIR/matrix.json (optional) and writes
index.html, summary.md and the PNGs into DIR (default IN_DIR). Everything is rendered and encoded
in memory first; on bad input nothing is written. Then the earlier index.html and summary.md are
removed, the PNGs written, and the pages last, each atomically, SIGTERM held back meanwhile.
Exit codes: 0 written, 64 bad arguments, 3 bad input, a tool error, a folder it cannot write,
SIGTERM, or no matplotlib.
"""
from __future__ import annotations

import sys
from argparse import Namespace
from typing import Any, Dict, List, Mapping, Optional, TextIO, Union

from torchplace import schema as data
from torchplace.schema import EXIT_INPUT, EXIT_OK

PROG = "python3 -m torchplace.report"
INSTALL_HINT = (
    "matplotlib is missing from this Python ({python}); install it: "
    "apt-get install python3-matplotlib python3-scipy, then run the report with "
    "/usr/bin/python3 (or set TORCHPLACE_PYTHON)"
)


def parse_args(argv: List[str]) -> Namespace:
    parser = data.ArgumentParser(prog=PROG, description=__doc__.split("\n")[0])
    parser.add_argument(
        "in_dir", help="run folder holding results.json or matrix.json (bench.json optional)"
    )
    parser.add_argument("--out", help="folder to write the report into (default: IN_DIR)")
    parser.add_argument(
        "--gate", help="the gate's gate.json on these results: its regressions marked as such"
    )
    return parser.parse_args(argv)  # exits EXIT_USAGE on bad arguments


def render(in_dir: str, gate: Optional[str] = None) -> Dict[str, Union[str, bytes]]:
    """{file name: bytes or str} of the whole report; raises data.InputError on bad input."""
    from torchplace.report import analysis, inputs, page, summary

    run = inputs.load_run(in_dir, gate)
    try:
        result = analysis.analyse(run)
        files: Dict[str, Any] = analysis.figures(result)  # the PNGs, then the pages (str)
    except (AttributeError, KeyError, TypeError, ValueError) as error:  # a field of the wrong type
        raise data.InputError(f"{in_dir}: unexpected content ({type(error).__name__}: {error})")
    files["summary.md"] = summary.render(result)
    files["index.html"] = page.render(result, files)
    return files


PAGES = ("index.html", "summary.md")  # an earlier run's pages: removed before new figures land


def write(out_dir: str, files: Mapping[str, Union[str, bytes]]) -> None:
    """Every file encoded first, then the PNGs, summary.md and index.html last, each atomically,
    an earlier index.html and summary.md removed first and SIGTERM held back meanwhile: new
    figures never stand beside an old page (schema.write_set)."""
    data.write_set(out_dir, files, last="index.html", stale=PAGES)


def main(argv: List[str]) -> int:
    args = parse_args(argv)
    data.exit_cleanly_on_sigterm()
    try:
        import matplotlib  # noqa: F401  (only checks that it is there)
    except ImportError:
        print(f"torchplace report: {INSTALL_HINT.format(python=sys.executable)}", file=sys.stderr)
        return EXIT_INPUT
    try:
        files = render(args.in_dir, args.gate)
    except data.InputError as error:
        _say(f"torchplace report: bad input, nothing written: {error}")
        return EXIT_INPUT
    except Exception as error:  # noqa: BLE001  a tool error: exit 3 with its message, never 1
        _say(f"torchplace report: tool error, nothing written: {type(error).__name__}: {error}")
        return EXIT_INPUT
    out_dir = args.out or args.in_dir
    try:
        write(out_dir, files)
    except OSError as error:
        _say(
            f"torchplace report: cannot write the report into {out_dir}: "
            f"{error.strerror or error} ({error.filename or out_dir})"
        )
        return EXIT_INPUT
    _say(
        f"torchplace report: wrote {len(files)} files to {out_dir}: {', '.join(sorted(files))}",
        sys.stdout,
    )
    return EXIT_OK


def _say(text: str, stream: Optional[TextIO] = None) -> None:
    """A message, whatever the stream can encode (a lone surrogate, an ASCII locale)."""
    stream = stream or sys.stderr
    try:
        print(
            text.encode("ascii", "backslashreplace").decode("ascii")
            if (stream.encoding or "").lower() in ("ascii", "ansi_x3.4-1968")
            else text,
            file=stream,
            flush=True,
        )
    except (OSError, ValueError, UnicodeError):
        pass
