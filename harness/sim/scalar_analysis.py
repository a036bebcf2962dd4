"""The reading behind scalar_rules.py: for one operator of one source tree, the TensorIterators its
CUDA implementation builds (with or without `allow_cpu_scalars`) and the kernel launchers its
stubs reach (`gpu_kernel` refuses a CPU operand; the `*_with_scalars` family takes one), and the
verdict on a 0-dim CPU input that follows. Every finding carries its `file:line`.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Set, Tuple

from cxx_index import Definition, Index

TI_FILE = "aten/src/ATen/TensorIterator.cpp"
STATIC_BUILDERS = {
    "binary_op",
    "borrowing_binary_op",
    "binary_float_op",
    "comparison_op",
    "unary_op",
    "unary_float_op",
    "nullary_op",
    "borrowing_nullary_op",
    "reduce_op",
}
SCALAR_LAUNCHERS = {
    "gpu_kernel_with_scalars",
    "opmath_gpu_kernel_with_scalars",
    "opmath_symmetric_gpu_kernel_with_scalars",
    "opmath_jitted_gpu_kernel_with_scalars",
}
PLAIN_LAUNCHERS = {
    "gpu_kernel",
    "jitted_gpu_kernel",
    "gpu_kernel_multiple_outputs",
    "gpu_kernel_nocast",
}
OTHER_LAUNCHERS = {"gpu_reduce_kernel", "gpu_kernel_with_index", "launch_kernel"}
LAUNCHERS = SCALAR_LAUNCHERS | PLAIN_LAUNCHERS | OTHER_LAUNCHERS
# An operator that compares devices or moves tensors itself (2.6.0's where moves 0-dim CPU
# tensors to the device before its iterator): what reaches the iterator is not what was given.
OWN_DEVICE = re.compile(r"\.device\(\)\s*[!=]=|[!=]=\s*\w+\.device\(\)|\bis_cpu\(\)|\bout_device\(")
# A copy is an operator of its own (copy_: Copy.cpp), not the caller's iterator; resizing an
# output (Resize.cpp) compares the output's device, not an input's.
NOT_FOLLOWED = {"copy_", "copy_impl", "build", "resize_output", "resize_output_check"}
CALL = re.compile(r"(?<![\w.>:])((?:native::|at::native::)?)(\w+)\s*(?:<[^;{}()]*?>)?\s*\(")
LAUNCH = re.compile(r"\b(%s)\s*(?:<[^;{}]*?>)?\s*\(" % "|".join(sorted(LAUNCHERS, key=len)[::-1]))
ACCEPT, BY_ITERATOR, BY_KERNEL, UNDECIDED = "accept", "iterator", "kernel", "undecided"


@dataclass
class Findings:
    iterators: List[Tuple[bool, str, str]] = field(default_factory=list)  # (allow, how, where)
    unchecked: List[str] = field(default_factory=list)  # check_all_same_device(false), where
    own_device: List[str] = field(default_factory=list)  # the operator's own device logic, where
    launchers: List[Tuple[str, str]] = field(default_factory=list)  # (launcher, where)
    guarded: List[Tuple[str, str]] = field(default_factory=list)  # after is_cpu_scalar's removal
    handles_cpu_scalar: List[Tuple[int, str]] = field(default_factory=list)  # is_cpu_scalar(i)
    stubs: List[str] = field(default_factory=list)  # "stub -> kernel at where"
    seen: Set[Tuple[str, int, bool]] = field(default_factory=set)


def where(index: Index, definition: Definition, offset: int) -> str:
    return f"{short(definition.path)}:{index.line_of(definition, offset)}"


def short(path: str) -> str:
    return path.replace("aten/src/ATen/native/", "").replace("aten/src/ATen/", "")


class Builders:
    """TensorIterator.cpp's builders: which set allow_cpu_scalars(true), and where."""

    def __init__(self, index: Index) -> None:
        self.index = index
        raw = index.texts[TI_FILE]
        self.macros = {
            m.group(1): (m.group(2), raw.count("\n", 0, m.start()) + 1)
            for m in re.finditer(r"#define (\w+)\(\)((?:[^\n]*\\\n)*[^\n]*)", raw)
        }
        self.table: Dict[str, Tuple[bool, str]] = {}
        for name, definitions in index.functions.items():
            for d in definitions:
                if d.path == TI_FILE and (name.startswith("build_") or name in STATIC_BUILDERS):
                    self.table[name] = self._allow(d, set())

    def _allow(self, d: Definition, visiting: Set[str]) -> Tuple[bool, str]:
        """(sets allow_cpu_scalars(true), where: the builder and the line that sets it)."""
        m = re.search(r"allow_cpu_scalars\s*\(\s*true", d.body)
        if m:
            return True, where(self.index, d, m.start())
        for name, (body, line) in self.macros.items():
            at = body.find("allow_cpu_scalars(true)")
            if re.search(r"\b%s\s*\(" % name, d.body) and at >= 0:
                return True, f"TensorIterator.cpp:{line + body.count(chr(92), 0, at)} ({name})"
        for m in re.finditer(r"\b(\w+)\s*\(", d.body):
            callee = m.group(1)
            if callee in visiting or callee == d.name:
                continue
            for c in self.index.find(callee):
                if c.path == TI_FILE:
                    allow, line = self._allow(c, visiting | {d.name})
                    if allow:
                        return True, line
        return False, f"{short(d.path)}:{d.line}"


def read(
    index: Index,
    builders: Builders,
    definition: Definition,
    found: Findings,
    depth: int,
    cuda_only: bool = False,
    guarded: bool = False,
) -> None:
    """Collects into `found` what `definition` and what it calls (to `depth`) build and launch;
    `guarded`: reached only after the kernel took its CPU scalar out (remove_operand)."""
    key = (definition.path, definition.line, guarded)
    if key in found.seen or depth < 0:
        return
    found.seen.add(key)
    _sites(index, builders, definition, found, cuda_only, guarded)
    body = definition.body
    tokens = re.findall(r"\b\w+\b", body)
    for stub in dict.fromkeys(t for t in tokens if t in index.stubs):  # called, or passed on
        _stub(index, builders, stub, found, depth)
    for m in CALL.finditer(body):
        name = m.group(2)
        skip = LAUNCHERS | NOT_FOLLOWED | builders.table.keys() | index.stubs
        if name in skip:
            continue
        for callee in index.find(name, cuda_only=cuda_only):
            if callee.path != TI_FILE:
                after = guarded or _after_removal(body, m.start())
                read(index, builders, callee, found, depth - 1, cuda_only, after)


def _sites(
    index: Index, builders: Builders, d: Definition, found: Findings, cuda_only: bool, guarded: bool
) -> None:
    """The iterators, launchers and CPU-scalar handling written in one definition."""
    body = d.body
    _iterators(index, builders, d, found)
    if not cuda_only:  # the operator's code, not a stub's kernel: device logic of its own
        for m in OWN_DEVICE.finditer(body):
            found.own_device.append(where(index, d, m.start()))
    for m in LAUNCH.finditer(body):
        taken = guarded or _after_removal(body, m.start())
        (found.guarded if taken else found.launchers).append(
            (m.group(1), where(index, d, m.start()))
        )
    for m in re.finditer(r"\bis_cpu_scalar\s*\(\s*(\d)", body):
        found.handles_cpu_scalar.append((int(m.group(1)), where(index, d, m.start())))


def _after_removal(body: str, offset: int) -> bool:
    before = body[:offset]  # after any removal: the branches that follow took theirs out
    return "is_cpu_scalar(" in before and "remove_operand(" in before


def _stub(index: Index, builders: Builders, stub: str, found: Findings, depth: int) -> None:
    registered = index.registered(stub)
    if not registered and stub in index.ufunc_stubs:  # registered by torchgen's ufunc codegen
        found.stubs.append(f"{stub} -> the generated ufunc kernel ({index.ufunc_site})")
        found.launchers.append(("ufunc", index.ufunc_site))
    for kernel, path, line in registered:
        label = f"{stub} -> {kernel} ({short(path)}:{line})"
        if label not in found.stubs:
            found.stubs.append(label)
        for k in index.find(kernel, cuda_only=True):
            read(index, builders, k, found, depth - 1, cuda_only=True)


def _iterators(index: Index, builders: Builders, d: Definition, found: Findings) -> None:
    body = d.body
    for m in re.finditer(
        r"(?:TensorIterator::|\b)(build_\w+|%s)\s*\(" % "|".join(STATIC_BUILDERS), body
    ):
        name = m.group(1)
        static = body[max(0, m.start() - 16) : m.start() + 16].find("TensorIterator::") >= 0
        if name in builders.table and (name.startswith("build_") or static):
            allow, line = builders.table[name]
            found.iterators.append((allow, name, f"{where(index, d, m.start())} ({line})"))
    for m in re.finditer(r"\bTensorIteratorConfig\b", body):
        allow = re.search(r"allow_cpu_scalars\s*\(\s*true", body) is not None
        found.iterators.append((allow, "TensorIteratorConfig", where(index, d, m.start())))
    for m in re.finditer(r"\bmake_reduction\w*\s*\(", body):
        found.iterators.append((False, "make_reduction", where(index, d, m.start())))
    for m in re.finditer(r"check_all_same_device\s*\(\s*false", body):
        found.unchecked.append(where(index, d, m.start()))


def verdict(found: Findings, ufunc: Optional[str]) -> Tuple[str, str, str]:
    """(verdict, the launcher that refuses or '', why: the sites)."""
    if not found.iterators:
        return UNDECIDED, "", "no TensorIterator found"
    if found.unchecked:
        return UNDECIDED, "", "an iterator without the same-device check: " + found.unchecked[0]
    if found.own_device:
        return UNDECIDED, "", "device logic of its own before the iterator: " + found.own_device[0]
    built = "; ".join(f"{how} at {at}" for _, how, at in found.iterators[:3])
    allows = {allow for allow, _, _ in found.iterators}
    if allows == {False}:
        return BY_ITERATOR, "", f"no allow_cpu_scalars: {built}"
    if allows != {True}:
        return UNDECIDED, "", f"iterators with and without allow_cpu_scalars: {built}"
    if ufunc:
        return ACCEPT, "", f"allow_cpu_scalars: {built}; ufunc kernel: {ufunc}"
    return _by_launchers(found, f"allow_cpu_scalars: {built}")


def _by_launchers(found: Findings, built: str) -> Tuple[str, str, str]:
    kernel = "; ".join(found.stubs[:2]) or "no stub"
    handled = sorted({i for i, _ in found.handles_cpu_scalar})
    scalar = [f"{n} {at}" for n, at in found.launchers if n in SCALAR_LAUNCHERS | {"ufunc"}]
    takes = scalar + (
        [f"is_cpu_scalar(1) and (2) at {found.handles_cpu_scalar[0][1]}"]
        if {1, 2} <= set(handled)
        else []
    )
    plain = [(n, at) for n, at in found.launchers if n in PLAIN_LAUNCHERS]
    plain_sites = ", ".join(f"{n} {at}" for n, at in plain[:2])
    if takes and not plain:
        return ACCEPT, "", f"{built}; {kernel}; takes a CPU scalar: {', '.join(takes[:2])}"
    if plain and not takes and not handled:
        names = [n for n, _ in plain]  # gpu_kernel's message where a dtype's path may differ
        launcher = "gpu_kernel" if "gpu_kernel" in names else names[0]
        return BY_KERNEL, launcher, f"{built}; {kernel}; {plain_sites}"
    if plain:
        return (
            UNDECIDED,
            "",
            (
                f"{built}; {kernel}; both a launcher taking a CPU scalar "
                f"({', '.join(takes[:1]) or handled}) and {plain_sites}"
            ),
        )
    if found.guarded:
        return UNDECIDED, "", f"{built}; {kernel}; takes a CPU scalar at position {handled} only"
    return UNDECIDED, "", f"{built}; no launcher found ({kernel})"
