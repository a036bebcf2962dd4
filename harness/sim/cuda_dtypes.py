#!/usr/bin/python3
"""Writes cuda_dtypes.inc: per LibTorch version, the dtypes each aten operator's CUDA kernel
refuses, and CUDA's words for it, read from that version's source tree.

For each operator with a CUDA kernel in native_functions.yaml (`CUDA: fn`, or its structured
delegate's), the kernel is found in aten/src/ATen/native/cuda/*.cu|*.cpp (native/*.cpp for a
shared one) and followed down its helpers, its stubs' REGISTER_DISPATCH kernels and the operators
it calls (cuda_dtypes_flow.py) to what refuses a dtype there:
  - an AT_DISPATCH_* or AT_DISPATCH_V2 whose cases lack it (their types read from that version's
    Dispatch.h, cuda_dtypes_macros.py): "\"<name>\" not implemented for '<dtype>'";
  - a TORCH_CHECK* on the dtype with a literal message (Sort.cpp's "Sort currently does not
    support bool dtype on CUDA.").
A dtype is refused when every path through the kernel that it can take (`if (x.is_complex())`
paths only for complex ones) refuses it with the same message; a test of an argument being 0-dim
splits paths as a dtype test does, emptiness is read as below.
Where nothing decides it (the dispatch reads what the analysis cannot follow, a TensorIterator's
common dtype, say), an operator gets no row: the sim keeps running the CPU kernel.

Rows: TP_SIM_CUDA_DTYPES(name, overload, argument, dims, empty, kind, message, dtypes CUDA runs,
file:line, in VERSION...). `argument` is the operator's argument whose dtype decides, or
`return:N` (a functional op whose out= kernel dispatches on its result); `dims` says for which
of its ranks the row holds: `any`, `1+` (a kernel takes another path for a 0-dim one: sort's,
Sorting.cpp:919 @1.13.1), `0`; `empty` 1 when it holds with an empty tensor among the arguments
too (the analysis run again reading no emptiness test; 0: a kernel returns early for them, as
addmm's, Blas.cpp:201 @1.13.1); kind is `dispatch` or the check macro.

Usage: cuda_dtypes.py OUT.inc VERSION=SOURCE_TREE ...   (a tree unpacked from Debian's
pytorch_VERSION+dfsg.orig.tar.xz: /var/cache/torchplace/sources/VERSION). Exit: 0 written,
3 a tree could not be read, 64 bad arguments.
"""
import hashlib
import os
import sys
from typing import Dict, List, Optional, Tuple

from cuda_dtypes_flow import Flow, TooComplex
from cuda_dtypes_macros import Macros, scalar_types
from cuda_dtypes_ops import Ops, read_yaml
from cuda_dtypes_source import Tree

# A CUDA build of each version as PyTorch's own wheels were built (CUDA 11.7 for 1.13, 12.4 for
# 2.6; cuDNN and MAGMA on, ROCm off): what the preprocessor's #if sees.
BUILD = {"1.13": {"CUDA_VERSION": 11070}, "2.6": {"CUDA_VERSION": 12040}}
ALWAYS = {
    "AT_CUDNN_ENABLED()": 1,
    "AT_MAGMA_ENABLED()": 1,
    "AT_USE_JITERATOR()": 1,
    "AT_CUSPARSELT_ENABLED()": 1,
    "AT_ROCM_ENABLED()": 0,
}
YAML = "aten/src/ATen/native/native_functions.yaml"
Row = Tuple[str, str, str, str, str, str, str, str, str]


def decide(paths, universe) -> Dict[Tuple[str, str, str, str], set]:
    """(argument, kind, message, where) -> the (dtype, 0-dim) values refused so: those for which
    every path they can take refuses them first with that message."""
    refused: Dict[Tuple[str, str, str], list] = {}
    for source in sorted({f.source for p in paths for f in p.facts}):
        for value in universe:
            feasible = [p for p in paths if value in dict(p.guards).get(source, (value,))]
            firsts = [
                next((f for f in p.facts if f.source == source and value not in f.allowed), None)
                for p in feasible
            ]
            if feasible and all(firsts) and len({(f.kind, f.message) for f in firsts}) == 1:
                key = (source, firsts[0].kind, firsts[0].message)
                refused.setdefault(key, [set(), firsts[0].where])[0].add(value)
    return {key + (where,): values for key, (values, where) in refused.items()}


def by_rank(values: set) -> Dict[str, set]:
    """Refused (dtype, 0-dim) values as dtypes per rank: `any`, `1+` (>= 1-D only), `0`."""
    full, zero = {d for d, z in values if not z}, {d for d, z in values if z}
    ranks = {"any": full & zero, "1+": full - zero, "0": zero - full}
    return {rank: dtypes for rank, dtypes in ranks.items() if dtypes}


def refusals(ops: Ops, flow: Flow, op) -> Optional[Dict[Tuple[str, str, str, str], set]]:
    """decide() for the paths through `op`'s CUDA kernel; None when its kernel is not found."""
    sources = {a.name: a.name for a in op.args}
    sources.update({f"return:{i}": f"return:{i}" for i in range(op.returns)})
    paths = ops.paths(flow, op, sources, 0)
    return None if paths is None else decide(paths, flow.universe)


def rows_of(op, decided, with_empties, universe: List[str]) -> List[Row]:
    """An operator's rows: per refusal and rank, whether it holds when some tensor is empty too
    (refused alike when the analysis lets any tensor be empty)."""
    rows = []
    for (source, kind, message, where), values in sorted(decided.items()):
        also = next((v for k, v in with_empties.items() if k[:3] == (source, kind, message)), set())
        for rank, dtypes in by_rank(values).items():
            for empty, part in (
                ("1", dtypes & by_rank(also).get(rank, set())),
                ("0", dtypes - by_rank(also).get(rank, set())),
            ):
                runs = ",".join(d for d in universe if d not in part)
                if part:
                    rows.append(
                        (op.name, op.overload, source, rank, empty, kind, message, runs, where)
                    )
    return rows


def analyse(root: str, major_minor: str) -> Tuple[List[Row], Dict[str, int], List[str]]:
    """The rows of one version's tree, the counts of what was decided, its dtype names."""
    known = dict(ALWAYS, **BUILD.get(major_minor, BUILD["2.6"]))
    tree, macros, universe = Tree(root, known), Macros(root, known), scalar_types(root)
    with open(os.path.join(root, YAML), encoding="utf-8") as handle:
        ops = Ops(read_yaml(handle.read()), tree)
    values = frozenset((d, z) for d in universe for z in (False, True))
    flows = [Flow(tree, macros, ops, values, empties) for empties in (False, True)]
    rows: List[Row] = []
    counts = {
        "with a CUDA kernel": 0,
        "refusing some dtype": 0,
        "kernel not found": 0,
        "too many paths": 0,
        "nothing refused found": 0,
    }
    for op in ops.ops.values():
        if ops.cuda_kernel(op) is None:
            continue
        counts["with a CUDA kernel"] += 1
        try:
            decided = [refusals(ops, flow, op) for flow in flows]
        except TooComplex:
            counts["too many paths"] += 1
            continue
        if decided[0] is None:
            counts["kernel not found"] += 1
            continue
        counts["refusing some dtype" if decided[0] else "nothing refused found"] += 1
        rows += rows_of(op, decided[0], decided[1] or {}, universe)
    return rows, counts, universe


def main(argv: List[str]) -> int:
    if len(argv) < 3 or not all("=" in a for a in argv[2:]):
        print(__doc__, file=sys.stderr)
        return 64
    versions, tables, header = [], [], []
    for item in argv[2:]:
        version, root = item.split("=", 1)
        yaml = os.path.join(root, YAML)
        if not os.path.isfile(yaml):
            print(f"cuda_dtypes.py: no source tree for {version} at {root}", file=sys.stderr)
            return 3
        rows, counts, universe = analyse(root, ".".join(version.split(".")[:2]))
        versions.append(version)
        tables.append((set(rows), universe))
        with open(yaml, "rb") as handle:
            digest = hashlib.sha256(handle.read()).hexdigest()
        header.append(f"//   {version}: {root}, native_functions.yaml sha256 {digest}")
        print(
            f"{version}: "
            + ", ".join(f"{n} {k}" for k, n in counts.items())
            + f"; {counts['with a CUDA kernel'] - counts['refusing some dtype']} not decided "
            f"(no row)",
            file=sys.stderr,
        )
    write(argv[1], versions, tables, header)
    return 0


def write(path: str, versions: List[str], tables, header: List[str]) -> None:
    lines = [
        "// GENERATED by harness/sim/cuda_dtypes.py; do not edit. Data, not code: per",
        "// LibTorch version, the dtypes each operator's CUDA kernel refuses, in CUDA's words",
        "// (cuda_dtypes.py's docstring). From the source trees:",
        *header,
        "// ROW(name, overload, argument, dims, empty, kind, message, dtypes CUDA runs,",
        "//     file:line, " + ", ".join(f"in {v}" for v in versions) + ")",
        f"#define TP_SIM_CUDA_DTYPE_VERSIONS {len(versions)}",
        "#define TP_SIM_CUDA_DTYPE_VERSION_LIST " + ", ".join(f'"{v}"' for v in versions),
        "#define TP_SIM_CUDA_DTYPE_NAMES " + ", ".join(f'"{",".join(u)}"' for _, u in tables),
    ]
    for row in sorted(set().union(*(rows for rows, _ in tables))):
        present = ", ".join("1" if row in rows else "0" for rows, _ in tables)
        lines.append("TP_SIM_CUDA_DTYPES(" + ", ".join(f'"{v}"' for v in row) + f", {present})")
    with open(path, "w") as out:
        out.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    sys.exit(main(sys.argv))
