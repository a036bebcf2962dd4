"""Renders the torchplace report of a run folder from its JSON.

usage: python3 -m torchplace.report IN_DIR [--out DIR]

Reads IN_DIR/results.json (required unless IN_DIR/matrix.json exists: a version-matrix folder),
IN_DIR/bench.json and IN_DIR/matrix.json (optional) and writes
index.html, summary.md and the PNGs into DIR (default IN_DIR). Everything is rendered in memory
first; on bad input nothing is written. Each file is written atomically (temporary file, rename).
Exit codes: 0 written, 64 bad arguments, 3 bad input or no matplotlib.
"""
import os
import sys

from torchplace import schema as data
from torchplace.schema import EXIT_INPUT, EXIT_OK

PROG = "python3 -m torchplace.report"
INSTALL_HINT = ("matplotlib is missing from this Python ({python}); install it: "
                "apt-get install python3-matplotlib python3-scipy, then run the report with "
                "/usr/bin/python3 (or set TORCHPLACE_PYTHON)")


def parse_args(argv):
    parser = data.ArgumentParser(prog=PROG, description=__doc__.split("\n")[1])
    parser.add_argument("in_dir", help="run folder holding results.json or matrix.json (bench.json optional)")
    parser.add_argument("--out", help="folder to write the report into (default: IN_DIR)")
    return parser.parse_args(argv)  # exits EXIT_USAGE on bad arguments


def render(in_dir):
    """{file name: bytes or str} of the whole report; raises data.InputError on bad input."""
    from torchplace.report import analysis, inputs, page, summary

    run = inputs.load_run(in_dir)
    try:
        result = analysis.analyse(run)
        files = analysis.figures(result)
    except (AttributeError, KeyError, TypeError, ValueError) as error:  # a field of the wrong type
        raise data.InputError(f"{in_dir}: unexpected content ({type(error).__name__}: {error})")
    files["summary.md"] = summary.render(result)
    files["index.html"] = page.render(result, files)
    return files


def write(out_dir, files):
    """PNGs first, the pages last, each atomically."""
    os.makedirs(out_dir, exist_ok=True)
    order = sorted(files, key=lambda name: (name in ("summary.md", "index.html"), name))
    for name in order:
        content = files[name]
        if isinstance(content, str):
            content = content.encode("utf-8")  # whatever the locale: the page declares utf-8
        data.write_atomically(os.path.join(out_dir, name), content, "wb")


def main(argv):
    args = parse_args(argv)
    try:
        import matplotlib  # noqa: F401  (only checks that it is there)
    except ImportError:
        print(f"torchplace report: {INSTALL_HINT.format(python=sys.executable)}", file=sys.stderr)
        return EXIT_INPUT
    try:
        files = render(args.in_dir)
    except data.InputError as error:
        print(f"torchplace report: bad input, nothing written: {error}", file=sys.stderr)
        return EXIT_INPUT
    out_dir = args.out or args.in_dir
    write(out_dir, files)
    print(f"torchplace report: wrote {len(files)} files to {out_dir}: {', '.join(sorted(files))}")
    return EXIT_OK

