"""`matrix`: the LibTorch version matrix. Builds and runs the suite (scenarios and a short
benchmark pass) against each LibTorch version, each in its own cached Debian root (1.13.1 on the
host when the host is Debian 12 with libtorch-dev 1.13.1), then merges the columns into
DIR/matrix.json and DIR/matrix.md and renders the report. Columns land in DIR/<version>/.
ci/matrix/README.md describes every option; the roots are bash (ci/matrix/column.sh: apt,
debootstrap, chroot), run once a column.

Exit: 0 all columns built, ran and passed; 1 a column failed to build or run, or a cell failed;
2 --gate found a regression; 3 unknown version, unreachable mirror, no root; 64 bad arguments.
"""

import os
import subprocess
import sys
from pathlib import Path
from typing import List

from torchplace import schema
from torchplace.command import common
from torchplace.command.common import die, log

SEE = "see ci/matrix/README.md"


def column_script() -> str:
    return str(common.root() / "ci" / "matrix" / "column.sh")


def known_versions() -> List[str]:
    """The versions the roots know (ci/matrix/roots.sh: the one list), oldest first."""
    done = subprocess.run(
        ["bash", column_script(), "--versions"], stdout=subprocess.PIPE, text=True
    )
    if done.returncode != 0:
        die(schema.EXIT_ENV, "matrix: cannot list the known LibTorch versions (ci/matrix/roots.sh)")
    return [line.split()[0] for line in done.stdout.splitlines() if line.strip()]


def chosen_versions(requested: str, known: List[str]) -> List[str]:
    """ "1.13.1,2.14.1" (commas or spaces) -> the known ones, oldest first; unknown is exit 3."""
    names = requested.replace(",", " ").split()
    for name in names:
        if name not in known:
            die(
                schema.EXIT_ENV,
                f"matrix: unknown LibTorch version '{name}' (known: {' '.join(known)})",
            )
    chosen = [version for version in known if version in names]
    if not chosen:
        die(schema.EXIT_USAGE, "matrix: --versions is empty")
    return chosen


def command(args: List[str]) -> int:
    known = known_versions()
    versions = ",".join(known)
    out = str(common.root() / "out" / "matrix")
    gate = cuda = cuda_only = False
    mode = "all"
    while args:
        arg = args.pop(0)
        if arg == "--versions":
            versions = common.take_value(
                args, "matrix: --versions needs a list, e.g. 1.13.1,2.14.1"
            )
        elif arg == "--out":
            out = common.take_value(args, "matrix: --out needs a folder")
        elif arg == "--roots":
            os.environ["TORCHPLACE_ROOTS"] = common.take_value(
                args, "matrix: --roots needs a folder"
            )
        elif arg == "--gate":
            gate = True
        elif arg == "--fresh":
            os.environ["TORCHPLACE_MATRIX_FRESH"] = "1"
        elif arg == "--bookworm-root":
            os.environ["TORCHPLACE_MATRIX_NO_HOST"] = "1"
        elif arg == "--cuda-compile":
            cuda = True
        elif arg == "--cuda-only":
            cuda = cuda_only = True
        elif arg in ("--columns-only", "--merge-only"):
            if mode != "all":
                die(schema.EXIT_USAGE, "matrix: --columns-only and --merge-only exclude each other")
            mode = arg[2:]
        else:
            die(schema.EXIT_USAGE, f"matrix: unknown argument '{arg}' ({SEE})")
    chosen = chosen_versions(versions, known)
    if cuda_only and mode != "columns-only":
        die(schema.EXIT_USAGE, "matrix: --cuda-only goes with --columns-only")
    if mode == "merge-only":
        if not os.path.isdir(out):
            die(schema.EXIT_ENV, f"matrix: --merge-only: no columns folder {out}")
        flags = ["--require-cuda-compile"] if cuda else []
        return finish(Path(out).resolve(), gate, [*chosen, *flags])
    if os.geteuid() != 0:
        die(schema.EXIT_ENV, "matrix: needs root (debootstrap, chroot, mount)")
    try:
        os.makedirs(out, exist_ok=True)
    except OSError:
        die(schema.EXIT_ENV, f"matrix: cannot create {out}")
    folder = Path(out).resolve()
    columns = ([] if cuda_only else chosen) + (["cuda"] if cuda else [])
    for column in columns:
        code = common.call(["bash", column_script(), column, str(folder)])
        if code != 0:
            raise common.Exit(code)  # column.sh said why
    if mode == "columns-only":
        log(f"matrix: columns made in {folder} (merge them with --merge-only)")
        return schema.EXIT_OK
    # Each column's run.json names its root (prepare.root): bare versions are enough.
    return finish(folder, gate, chosen)


def finish(out: Path, gate: bool, columns: List[str]) -> int:
    """Merges, renders the report, gates; returns the exit code."""
    python = common.report_python() or sys.executable
    merge = [python, "-m", "torchplace.matrix.merge", str(out), *columns]
    if common.call(merge) != 0:
        die(
            schema.EXIT_ENV,
            "matrix: merging the columns failed (a column missing or unreadable: see above)",
        )
    log(f"matrix: {out}/matrix.json and {out}/matrix.md")
    code = common.call([python, "-m", "torchplace", "report", str(out)])
    if code != 0:
        log(f"matrix: the report could not be rendered (exit {code})")
    if gate:
        gated = [python, "-m", "torchplace.matrix.gate", f"{out}/matrix.json"]
        code = common.call([*gated, "--out", f"{out}/matrix-gate.json"])
        if code != 0:
            return code
    # Columns that did not build or run, a CUDA compile that failed, failed cells: one line each.
    return common.call([python, "-m", "torchplace.matrix.status", f"{out}/matrix.json"])
