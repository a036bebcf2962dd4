#!/usr/bin/python3
"""Writes scalar_rules.inc: for each operator whose CUDA implementation builds a TensorIterator,
whether CUDA accepts a 0-dim CPU tensor as an input, and why, per LibTorch version, read from
that version's source tree; tp::sim's fallback applies it (README "Which operators check").

The mapping, per operator of native_functions.yaml: a structured out= operator (structured_inherits
TensorIteratorBase) -> its meta function TORCH_META_FUNC(name[_overload]) (the iterator it
builds) and TORCH_IMPL_FUNC(<its CUDA kernel name>) (the stub it calls); any other operator ->
the function its `CUDA:` dispatch entry names; then each stub -> its REGISTER_DISPATCH in
native/cuda -> the kernel -> the launcher (aten/src/ATen/native/cuda/Loops.cuh, JitLoops.cuh),
following calls five deep. The rules read (TensorIterator.cpp compute_types, Loops.cuh):
  accept     every iterator sets allow_cpu_scalars and every launcher takes a CPU scalar
             (the *_with_scalars family, or the kernel's own iter.is_cpu_scalar handling)
  iterator   no iterator sets allow_cpu_scalars: compute_types refuses the CPU tensor
  kernel     allow_cpu_scalars, but the kernel launches gpu_kernel & co, whose
             TORCH_INTERNAL_ASSERT(iter.device(arg).is_cuda()) refuses it
  undecided  anything else (none found, both kinds, an iterator without the device check, the
             operator's own device logic before its iterator, as 2.6.0's where)
Operators whose functional/in-place form delegates (structured_delegate) get the out= row's.
Also listed: the structured iterator operators and their forms (meta_checked: an older column's
`iterator` verdict is not applied to them, their installed meta function decides), and the forms
the sim checks as called (as_called: structured forms whose CUDA wrapper checks, as
clamp_min.Tensor does where clamp_min.Tensor_out is NoCheck; CUDA kernels beside a
CompositeExplicitAutograd one).

Usage: scalar_rules.py OUT.inc VERSION=SOURCE_TREE ...
  e.g. scalar_rules.py scalar_rules.inc 1.13.1=/var/cache/torchplace/sources/1.13.1 \\
       2.6.0=/var/cache/torchplace/sources/2.6.0
Versions in ascending order; the fallback reads the newest listed one not newer than the installed
LibTorch (2.14.1, whose source is not available, reads 2.6.0's).
Exit: 0 written, 3 a tree could not be read, 64 bad arguments (reports/torchplace/schema.py).
"""
from __future__ import annotations

import os
import re
import sys
from typing import Dict, List, Optional, Tuple

import cxx_index  # beside this script: Python puts the script's folder first on its path
import scalar_analysis as sa

YAML = "aten/src/ATen/native/native_functions.yaml"
FUNC = re.compile(r"^- func: ([A-Za-z0-9_]+)(?:\.([A-Za-z0-9_]+))?\(")


def parse_yaml(text: str) -> Dict[Tuple[str, str], dict]:
    """(name, overload) -> {nocheck, comment, structured, ti, delegate, cuda, ufunc, keys}."""
    entries: Dict[Tuple[str, str], dict] = {}
    current: Optional[dict] = None
    in_dispatch = False
    for line in text.splitlines():
        m = FUNC.match(line)
        if m:
            current = dict(structured=False, ti=False, delegate=None, cuda=None, ufunc=False)
            current.update(nocheck=False, comment="", keys=set())
            entries[(m.group(1), m.group(2) or "")] = current
            in_dispatch = False
        elif current is not None and line.startswith("    ") and in_dispatch and ":" in line:
            keys, value = (part.strip() for part in line.split(":", 1))
            current["keys"].update(k.strip() for k in keys.split(","))
            if "CUDA" in [k.strip() for k in keys.split(",")]:
                current["cuda"] = value.split("#")[0].strip()
        elif current is not None and line.startswith("  "):
            in_dispatch = line.strip() == "dispatch:"
            _entry_key(current, line.strip())
    return entries


def _entry_key(entry: dict, stripped: str) -> None:
    """One `key: value` line of a yaml entry (outside `dispatch:`)."""
    if stripped.startswith("device_check: NoCheck"):
        entry["nocheck"] = True
        entry["comment"] = stripped.partition("#")[2].strip()
    elif stripped.startswith("structured: True"):
        entry["structured"] = True
    elif stripped.startswith("structured_inherits: TensorIteratorBase"):
        entry["ti"] = True
    elif stripped.startswith("structured_delegate:"):
        entry["delegate"] = stripped.split(":", 1)[1].split("#")[0].strip()
    elif stripped.startswith("ufunc_inner_loop:"):
        entry["ufunc"] = True


def meta_name(entries, out_key: Tuple[str, str]) -> Optional[str]:
    """torchgen's meta name: the functional member's `name[_overload]` (api/meta.py)."""
    target = out_key[0] + ("." + out_key[1] if out_key[1] else "")
    for (name, overload), entry in entries.items():
        if entry["delegate"] == target and not name.endswith("_"):
            return name + ("_" + overload if overload else "")
    return None


def analyse(index, builders, entries, key, ufunc_site: str) -> Optional[Tuple[str, str, str]]:
    entry, found = entries[key], sa.Findings()
    if entry["structured"]:
        meta = index.meta.get(meta_name(entries, key) or "", [])
        impl = index.impl.get(entry["cuda"] or "", [])
        for definition in meta + impl:
            sa.read(index, builders, definition, found, 5)
        if entry["ufunc"]:
            return sa.verdict(found, ufunc_site)
    elif entry["cuda"]:
        for definition in index.find(entry["cuda"]):
            sa.read(index, builders, definition, found, 5)
    else:
        return None
    if not found.iterators and "TensorIterator" not in entry["comment"]:
        return None  # not TensorIterator-based
    return sa.verdict(found, None)


def ufunc_site(root: str) -> str:
    """Where torchgen's generated CUDA ufunc kernel takes a CPU scalar (dest/ufunc.py)."""
    path = os.path.join(root, "torchgen", "dest", "ufunc.py")
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if "iter.is_cpu_scalar" in line:
                return f"torchgen/dest/ufunc.py:{number} (is_cpu_scalar)"
    return "torchgen/dest/ufunc.py"


def launcher_asserts(root: str, index) -> Dict[str, Tuple[str, str, str]]:
    """launcher -> (its TORCH_INTERNAL_ASSERT's condition, file:line, the message template)."""
    found = {}
    for name in sorted(sa.PLAIN_LAUNCHERS):
        for d in index.find(name, cuda_only=True):
            m = re.search(r"TORCH_INTERNAL_ASSERT\s*\(", d.body)
            if not m or name in found:
                continue
            line = index.line_of(d, m.start())
            with open(os.path.join(root, d.path), encoding="utf-8") as handle:
                raw = handle.read().split("\n")
            statement = " ".join(raw[line - 1 : line + 4])
            statement = statement[statement.find("TORCH_INTERNAL_ASSERT") :]
            end = cxx_index.balanced(statement, statement.find("("))
            args = cxx_index.split_args(statement[statement.find("(") + 1 : end - 1])
            template = "".join(a[1:-1] if a.startswith('"') else "{" + a + "}" for a in args[1:])
            found[name] = (" ".join(args[0].split()), f"{d.path}:{line}", template)
    return found


def read_version(root: str):
    index = cxx_index.Index(root)
    builders = sa.Builders(index)
    with open(os.path.join(root, YAML), encoding="utf-8") as handle:
        entries = parse_yaml(handle.read())
    site, rows = ufunc_site(root), {}
    index.ufunc_site = site
    index.ufunc_stubs = {name + "_stub" for (name, _), e in entries.items() if e["ufunc"]}
    for key, entry in entries.items():
        if entry["delegate"] is None:
            result = analyse(index, builders, entries, key, site)
            if result:
                rows[key] = result
    for key, entry in entries.items():
        if entry["delegate"]:
            name, _, overload = entry["delegate"].partition(".")
            if (name, overload) in rows:
                verdict, launcher, why = rows[(name, overload)]
                rows[key] = (verdict, launcher, f"as {entry['delegate']}: {why}")
    return rows, launcher_asserts(root, index), as_called(entries), meta_checked(entries)


def meta_checked(entries) -> set:
    """Structured TensorIterator operators and their forms: their meta function builds the
    iterator, and LibTorch runs it on the sim too (the generic structured kernel's), so for a
    version without a column of its own the installed LibTorch's iterator is the better witness."""
    found = {key for key, entry in entries.items() if entry["structured"] and entry["ti"]}
    for key, entry in entries.items():
        if entry["delegate"] and tuple(entry["delegate"].partition(".")[::2]) in found:
            found.add(key)
    return found


def as_called(entries) -> set:
    """The forms the sim must check as called, its fallback their kernel (torchgen writes a device
    check per function: register_dispatch_key.py gen_device_check): (a) structured functional and
    in-place forms that CUDA's wrapper checks (not NoCheck), or whose NoCheck differs from their
    out= form's: the sim would otherwise see only the out= form that the generic structured kernel
    calls, after its meta function's iterator; (b) operators, not NoCheck, with a CUDA kernel of
    their own beside a CompositeExplicitAutograd one, which the sim would otherwise run (addr)."""
    composite = {"CompositeExplicitAutograd", "CompositeExplicitAutogradNonFunctional"}
    found = set()
    for key, entry in entries.items():
        if entry["delegate"]:
            name, _, overload = entry["delegate"].partition(".")
            out = entries.get((name, overload))
            if out is not None and (not entry["nocheck"] or out["nocheck"] != entry["nocheck"]):
                found.add(key)
        elif not entry["nocheck"] and "CUDA" in entry["keys"] and entry["keys"] & composite:
            if key[0] != "is_pinned":  # a query of host memory the sim has none of (README)
                found.add(key)
    return found


def quoted(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', "'") + '"'


HEADER = [
    "// GENERATED by harness/sim/scalar_rules.py; do not edit. Data, not code: per operator,",
    "// whether CUDA takes a 0-dim CPU input (accept), or refuses it in TensorIterator's",
    "// compute_types (iterator) or in the kernel's launcher (kernel), or the reading could",
    "// not tell (undecided; '' where the version has no such TensorIterator operator), and",
    "// why (file:line in that version's source tree, paths under aten/src/ATen[/native]).",
    "// TP_SIM_SCALAR_RULE(name, overload, {verdict, launcher, why} per version)",
    "// TP_SIM_SCALAR_LAUNCHER(launcher, {condition, file:line, message} per version)",
    "// TP_SIM_AS_CALLED(name, overload, 1 per version where the sim checks the form as",
    "//   called, its fallback the form's kernel: scalar_rules.py as_called)",
    "// TP_SIM_META_CHECKED(name, overload, 1 per version where a structured meta function builds",
    "//   its iterator: scalar_rules.py meta_checked)",
]


def write(path: str, versions: List[str], tables, asserts, wrappers, metas) -> None:
    lines = HEADER + [
        f"#define TP_SIM_SCALAR_RULE_VERSIONS {len(versions)}",
        "#define TP_SIM_SCALAR_RULE_VERSION_LIST " + ", ".join(quoted(v) for v in versions),
        "#ifdef TP_SIM_SCALAR_LAUNCHER",
    ]
    for name in sorted(sa.PLAIN_LAUNCHERS):
        cells = [a.get(name, ("", "", "")) for a in asserts]
        lines.append(
            f"TP_SIM_SCALAR_LAUNCHER({quoted(name)}, "
            + ", ".join("{" + ", ".join(quoted(x) for x in c) + "}" for c in cells)
            + ")"
        )
    lines += ["#endif", "#ifdef TP_SIM_AS_CALLED"]
    for key in sorted(set().union(*wrappers)):
        lines.append(
            f"TP_SIM_AS_CALLED({quoted(key[0])}, {quoted(key[1])}, "
            + ", ".join("1" if key in w else "0" for w in wrappers)
            + ")"
        )
    lines += ["#endif", "#ifdef TP_SIM_META_CHECKED"]
    for key in sorted(set().union(*metas)):
        flags = ", ".join("1" if key in m else "0" for m in metas)
        lines.append(f"TP_SIM_META_CHECKED({quoted(key[0])}, {quoted(key[1])}, {flags})")
    lines += ["#endif", "#ifdef TP_SIM_SCALAR_RULE"]
    for key in sorted(set().union(*tables)):
        cells = [t.get(key, ("", "", "")) for t in tables]
        lines.append(
            f"TP_SIM_SCALAR_RULE({quoted(key[0])}, {quoted(key[1])}, "
            + ", ".join("{" + ", ".join(quoted(x) for x in c) + "}" for c in cells)
            + ")"
        )
    lines.append("#endif")
    with open(path, "w") as out:
        out.write("\n".join(lines) + "\n")


def main(argv: List[str]) -> int:
    if len(argv) < 3 or not all("=" in a for a in argv[2:]):
        print(__doc__, file=sys.stderr)
        return 64
    versions, tables, asserts, wrappers, metas = [], [], [], [], []
    for item in argv[2:]:
        version, root = item.split("=", 1)
        if not os.path.isfile(os.path.join(root, YAML)):
            print(f"scalar_rules.py: no {YAML} under {root} ({version})", file=sys.stderr)
            return 3
        rows, launchers, own, meta = read_version(root)
        versions.append(version)
        tables.append(rows)
        asserts.append(launchers)
        wrappers.append(own)
        metas.append(meta)
    write(argv[1], versions, tables, asserts, wrappers, metas)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
