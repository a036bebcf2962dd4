#!/usr/bin/python3
"""Writes the error messages LibTorch can raise, read from each version's source, and the
classifier's generated families made from them (README.md "Families from the source"):

  source_strings.jsonl.gz  every message template: {"v": version, "at": "file:line",
                           "by": macro or exception, "template", "expr", "class"}, after one
                           header line naming each version's root and what it holds
  source_families.inc      the templates with a class, once each, for message_families.cpp

The class comes from one rule (source_class.py) over the template and the checked expression.
Sources: 1.13.1 and 2.6.0 from Debian's orig tarballs (C++ under aten/src, c10, torch/csrc,
caffe2/serialize; Python under torch/); 2.14.1 from its pip wheel only (headers under
torch/include and torch/*.py): its C++ source tarball is not in Debian's pool here.

usage: source_strings.py [--check] [VERSION=ROOT ...]   (default: the roots below)
exit: 0 written (or, --check, the committed files equal the tool's output); 1 --check found a
difference; 3 a source tree missing (writing); 64 bad arguments; 77 --check without the source
trees (a skip, with the reason).
"""
import gzip
import io
import json
import sys
from pathlib import Path
from typing import Dict, Iterator, List, Tuple

import source_class  # beside this script (run as one: its folder is on the path)
import source_cxx
import source_families
import source_python

HERE = Path(__file__).resolve().parent
SOURCES = "/var/cache/torchplace/sources"
WHEEL_2_14_1 = "/opt/tpvenv214/lib/python3.11/site-packages/torch"
ROOTS = {"1.13.1": f"{SOURCES}/1.13.1", "2.6.0": f"{SOURCES}/2.6.0", "2.14.1": WHEEL_2_14_1}
TREE = "Debian's orig tarball: aten/src, c10, torch/csrc, caffe2/serialize (C++), torch/ (Python)"
WHEEL = (
    "the pip wheel only: torch/include (C++ headers) and torch/*.py; the C++ source tarball "
    "of 2.14.1 is not in Debian's pool here, so its .cpp/.cu files are not read"
)
CXX_DIRS = ("aten/src", "c10", "torch/csrc", "caffe2/serialize")
WHEEL_CXX_DIRS = ("include/ATen", "include/c10", "include/torch/csrc", "include/caffe2/serialize")
CXX_SUFFIXES = {".cpp", ".cc", ".h", ".hpp", ".cu", ".cuh", ".mm"}
# Folders left out, C++ and Python alike; in Python also the wheel's include/ (C++ headers).
NOT_LIBTORCH = frozenset({"test", "tests", "testing", "third_party", "benchmarks"})
NOT_LIBTORCH_PY = NOT_LIBTORCH | {"include"}
DATA = HERE / "source_strings.jsonl.gz"
FAMILIES = HERE / "source_families.inc"


def is_wheel(root: Path) -> bool:
    return (root / "include").is_dir() and not (root / "aten").is_dir()


def kept(path: Path, root: Path, left_out: frozenset = NOT_LIBTORCH_PY) -> bool:
    return not left_out.intersection(path.relative_to(root).parts[:-1])


def files(root: Path) -> Iterator[Tuple[Path, str]]:
    """(file, 'cxx' or 'py') for every file read, in a fixed order; paths relative to root."""
    wheel = is_wheel(root)
    for folder in WHEEL_CXX_DIRS if wheel else CXX_DIRS:
        for path in sorted((root / folder).rglob("*")):
            if path.suffix in CXX_SUFFIXES and kept(path, root, NOT_LIBTORCH) and path.is_file():
                yield path, "cxx"
    python = root if wheel else root / "torch"
    for path in sorted(python.rglob("*.py")):
        if kept(path, python) and path.is_file():
            yield path, "py"


def strings(version: str, root: Path) -> List[Dict[str, str]]:
    out = []
    top = root.parent if is_wheel(root) else root  # paths as torch/... in the wheel
    for path, kind in files(root):
        text = path.read_bytes().decode("utf-8", errors="replace")
        found = (source_cxx if kind == "cxx" else source_python).messages(text)
        where = path.relative_to(top).as_posix()
        for line, by, template, expr in found:
            out.append(
                {
                    "v": version,
                    "at": f"{where}:{line}",
                    "by": by,
                    "template": template,
                    "expr": expr[:160],
                    "class": source_class.class_of(template, expr),
                }
            )
    return out


def render(roots: Dict[str, Path]) -> Tuple[bytes, str]:
    """The bytes of source_strings.jsonl.gz and the text of source_families.inc."""
    header = {
        "schema": "torchplace.source_strings/1",
        "made_by": "harness/messages/source_strings.py (class: source_class.py)",
        "versions": {v: WHEEL if is_wheel(r) else TREE for v, r in roots.items()},
    }
    rows = [row for version, root in roots.items() for row in strings(version, root)]
    lines = [json.dumps(header, sort_keys=True)] + [json.dumps(r, sort_keys=True) for r in rows]
    buffer = io.BytesIO()
    with gzip.GzipFile(fileobj=buffer, mode="wb", mtime=0, filename="") as out:
        out.write(("\n".join(lines) + "\n").encode())
    return buffer.getvalue(), source_families.render(rows)


def parse(argv: List[str]) -> Tuple[bool, Dict[str, Path]]:
    check = "--check" in argv
    given = [a for a in argv if a != "--check"]
    if any("=" not in a for a in given):
        raise ValueError("arguments are --check and VERSION=ROOT")
    pairs = [a.split("=", 1) for a in given] or list(ROOTS.items())
    return check, {v: Path(r) for v, r in pairs}


def main(argv: List[str]) -> int:
    try:
        check, roots = parse(argv)
    except ValueError as error:
        print(f"source_strings.py: {error}\n{__doc__}", file=sys.stderr)
        return 64
    missing = [f"{v} ({r})" for v, r in roots.items() if not r.is_dir()]
    if missing:
        print(f"SKIP: no source tree for {', '.join(missing)}", file=sys.stderr)
        return 77 if check else 3
    data, families = render(roots)
    if not check:
        DATA.write_bytes(data)
        FAMILIES.write_text(families)
        return 0
    stale = [
        p.name
        for p, new in ((DATA, data), (FAMILIES, families.encode()))
        if not p.is_file() or p.read_bytes() != new
    ]
    if stale:
        print(
            f"source_strings.py: {', '.join(stale)} differ from the tool's output: run "
            "harness/messages/source_strings.py and commit the result",
            file=sys.stderr,
        )
        return 1
    print("source_strings.py: the committed data equals the tool's output")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
