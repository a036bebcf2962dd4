"""Whether a merged version matrix is all ok: every column built and ran (merge.py's statuses:
run_crashed, run_incomplete, build_failed, ...), the CUDA compile-only column (--cuda-compile)
compiled, and no cell failed on any version. Prints one line per thing that is not ok.

usage: python3 -m torchplace.matrix.status MATRIX_JSON
exit: 0 all ok, 1 something is not ok, 3 unreadable or malformed input, 64 bad arguments
"""
from __future__ import annotations

import sys
from typing import List

from torchplace import schema


def not_ok(matrix: schema.JsonObject) -> List[str]:
    """What is not ok in a matrix document, one line each (empty: all ok)."""
    bad = [
        f"{v['version']}: {v['status']}" + (f" ({v['problem']})" if v.get("problem") else "")
        for v in matrix["versions"]
        if v["status"] != "ok"
    ]
    cuda = matrix.get("cuda_compile")  # --cuda-compile: must build
    if cuda and cuda["status"] != "compiled":
        bad.append(
            f"CUDA compile-only cell: {cuda['status']} "
            f"({cuda.get('first_error') or 'see its build.log'})"
        )
    bad += [
        f"{cell['id']} on {version}"
        for cell in matrix["cells"]
        for version, entry in cell["by_version"].items()
        if entry["status"] == "fail"
    ]
    return bad


def main(argv: List[str]) -> int:
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return schema.EXIT_USAGE
    try:
        bad = not_ok(schema.load_matrix(argv[1]))
    except (schema.InputError, KeyError, TypeError) as error:
        print(f"torchplace: matrix: bad input: {error}", file=sys.stderr)
        return schema.EXIT_INPUT
    for line in bad:
        print("torchplace: matrix: not ok:", line, file=sys.stderr)
    return schema.EXIT_FAIL if bad else schema.EXIT_OK


if __name__ == "__main__":
    sys.exit(main(sys.argv))
