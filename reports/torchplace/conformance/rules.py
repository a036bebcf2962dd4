"""The source-derived device rules as a Python oracle, for the mixed-placement sweep (mixed.py).

Read from the sim's own tables (harness/sim): device_checks.inc (which operators are
`device_check: NoCheck`, from each version's native_functions.yaml) and scalar_rules.inc (how a
TensorIterator operator's iterator and kernel treat a CPU operand, from each version's source).
For one aten call with its tensors' devices, `predict` says what CUDA would do, by the same rules
the sim's fallback applies: the wrapper's check (out and positional tensors) unless NoCheck; for a
NoCheck operator the table's iterator rule; anything else is "unpredicted", never a guess.

Families of an outcome (`family` names one from a message):
  wrapper      "... found at least two devices ... (when checking argument ...)" (to ~2.7) or
               "... but got <arg> is on ..." (2.8+): the generated wrapper's check
  iterator     "... found at least two devices, A and B!": TensorIterator's compute_types
  cpu_scalars  "Trying to pass too many CPU scalars to non-CPU kernel!"
  kernel       "... INTERNAL ASSERT FAILED ... expected a CUDA device but found ...": gpu_kernel
  own          another device message of one operator (masked_fill, indices, searchsorted, ...)
  other        any other error (not a device check)
"""
from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import Dict, List, NamedTuple, Optional, Tuple

import torch

from torchplace.schema import ROOT

SIM = ROOT / "harness" / "sim"
RUN, RAISE, UNPREDICTED = "run", "raise", "unpredicted"
_OWN = re.compile(
    r"expected self and mask to be on the same device|indices should be either on|"
    r"torch\.searchsorted\(\): .* same device|on the same device|Cannot compare two "
    r"tensors on different devices|must be a CUDA tensor"
)


class Tensor(NamedTuple):
    """One tensor an aten call received: where it sits in the schema, and where it lives."""

    argument: str
    kwarg_only: bool
    written: bool  # out= or in-place self
    is_out: bool
    in_list: bool  # a member of a Tensor[] / Tensor?[]
    device: torch.device
    dim: int


class Prediction(NamedTuple):
    outcome: str  # RUN, RAISE or UNPREDICTED
    family: Optional[str]
    why: str


def family(message: str) -> str:
    if message.startswith("Trying to pass too many CPU scalars"):
        return "cpu_scalars"
    if "INTERNAL ASSERT FAILED" in message and "expected a CUDA device" in message:
        return "kernel"
    if message.startswith("Expected all tensors to be on the same device"):
        wrapper = (
            "(when checking argument" in message or ", different from other tensors" in message
        )
        return "wrapper" if wrapper else "iterator"
    return "own" if _OWN.search(message) else "other"


def _versions(text: str, macro: str) -> List[str]:
    """The version list a table's `#define <macro>` names."""
    line = re.search(r"#define %s (.*)" % macro, text)
    return re.findall(r'"([\d.]+)"', line.group(1)) if line else []


def _column(versions: List[str]) -> int:
    installed = tuple(int(p) for p in re.findall(r"\d+", torch.__version__)[:2])
    column = 0
    for index, version in enumerate(versions):
        if tuple(int(p) for p in version.split(".")[:2]) <= installed:
            column = index
    return column


@lru_cache(maxsize=None)
def nocheck() -> frozenset:
    """{"name.overload"} of the NoCheck operators in the installed version's column."""
    text = (SIM / "device_checks.inc").read_text()
    versions = _versions(text, "TP_SIM_DEVICE_CHECK_VERSION_LIST")
    column = _column(versions)
    found = set()
    for m in re.finditer(
        r'^TP_SIM_NOCHECK\("(\w+)", "(\w*)", "(?:[^"\\]|\\.)*", ([\d, ]+)\)$', text, re.M
    ):
        if m.group(3).split(", ")[column] == "1":
            found.add(f"{m.group(1)}.{m.group(2)}")
    return frozenset(found)


@lru_cache(maxsize=None)
def cuda_kernels() -> frozenset:
    """{"name.overload"} with a CUDA kernel of their own in the installed torch's yaml
    (torchgen/packaged/ATen/native/native_functions.yaml): a `CUDA` dispatch entry, a ufunc, or a
    structured delegate to such an out= form. The others (composite) get no wrapper on CUDA."""
    import torchgen  # noqa: PLC0415 - the installed torch's own

    path = Path(torchgen.__file__).parent / "packaged" / "ATen" / "native" / "native_functions.yaml"
    own, delegates, current, dispatch = set(), {}, "", False
    for line in path.read_text().splitlines():
        m = re.match(r"^- func: ([\w]+)(?:\.([\w]+))?\(", line)
        if m:
            current, dispatch = f"{m.group(1)}.{m.group(2) or ''}", False
        elif line.startswith("  structured_delegate:"):
            delegates[current] = line.split(":", 1)[1].split("#")[0].strip()
        elif line.startswith("  ufunc_inner_loop:"):
            own.add(current)
        elif line.startswith("  ") and not line.startswith("    "):
            dispatch = line.strip() == "dispatch:"
        elif dispatch and "CUDA" in [k.strip() for k in line.split(":")[0].split(",")]:
            own.add(current)
    for form, out in delegates.items():
        if (out if "." in out else out + ".") in own:
            own.add(form)
    return frozenset(own)


@lru_cache(maxsize=None)
def scalar_rules() -> Dict[str, Tuple[str, str]]:
    """ "name.overload" -> (verdict, why) in the installed version's column of scalar_rules.inc;
    as the sim (cuda_rules.cpp stale_iterator), a structured operator's `iterator` from another
    version's column is `undecided`: the installed meta function decides it."""
    text = (SIM / "scalar_rules.inc").read_text()
    versions = _versions(text, "TP_SIM_SCALAR_RULE_VERSION_LIST")
    column = _column(versions)
    installed = re.findall(r"\d+", torch.__version__)[:2]
    exact = versions[column].split(".")[:2] == installed
    meta = set()
    for m in re.finditer(r'^TP_SIM_META_CHECKED\("(\w+)", "(\w*)", ([\d, ]+)\)$', text, re.M):
        if m.group(3).split(", ")[column] == "1":
            meta.add(f"{m.group(1)}.{m.group(2)}")
    cell = r'\{"(\w*)", "\w*", "((?:[^"\\]|\\.)*)"\}'
    found = {}
    for m in re.finditer(r'^TP_SIM_SCALAR_RULE\("(\w+)", "(\w*)", (.*)\)$', text, re.M):
        cells = re.findall(cell, m.group(3))
        key = f"{m.group(1)}.{m.group(2)}"
        if len(cells) == len(versions):
            verdict, why = cells[column]
            if verdict == "iterator" and not exact and key in meta:
                verdict, why = "undecided", f"{versions[column]}'s iterator, {why}"
            found[key] = (verdict, why)
    return found


def _wrapper(tensors: List[Tensor]) -> Prediction:
    checked = [t for t in tensors if t.is_out or not t.kwarg_only]
    if len({t.device for t in checked}) > 1:
        return Prediction(RAISE, "wrapper", "the wrapper checks out and positional tensors")
    if len({t.device for t in tensors}) > 1:
        return Prediction(UNPREDICTED, None, "a keyword-only tensor elsewhere: its kernel decides")
    return Prediction(RUN, None, "one device")


def _iterator(verdict: str, why: str, tensors: List[Tensor]) -> Prediction:
    """TensorIterator.cpp compute_types, then the launcher (scalar_rules.inc's verdict)."""
    if any(t.in_list for t in tensors):
        return Prediction(UNPREDICTED, None, "a tensor list: no iterator operand")
    operands = [t for t in tensors if t.written] + [t for t in tensors if not t.is_out]
    common = next((t.device for t in operands if t.device.type != "cpu"), None)
    if common is None:
        return Prediction(RUN, None, "every operand on the CPU: a CPU kernel")
    allow, scalars = verdict in ("accept", "kernel"), 0
    for t in operands:
        if allow and not t.written and t.dim == 0 and t.device.type == "cpu":
            if scalars:
                return Prediction(RAISE, "cpu_scalars", why)
            scalars += 1
        elif t.device != common:
            return Prediction(RAISE, "iterator", why)
    if scalars and verdict == "kernel":
        return Prediction(RAISE, "kernel", why)
    return Prediction(RUN, None, why)


def _own(key: str, tensors: List[Tensor]) -> Optional[Prediction]:
    """Kernels' own checks the sim models: masked_fill's mask against self (cuda/Indexing.cu
    masked_fill__cuda), searchsorted's sorter against the boundaries (BucketizationUtils.h)."""
    pairs = {
        "masked_fill": ("self", "mask"),
        "masked_fill_": ("self", "mask"),
        "searchsorted": ("sorted_sequence", "sorter"),
    }
    names = pairs.get(key.split(".")[0])
    if names is None:
        return None
    found = {t.argument: t.device for t in tensors if t.argument in names}
    if len(found) == 2 and len(set(found.values())) == 2:
        return Prediction(RAISE, "own", f"{key}'s kernel checks {names[1]} against {names[0]}")
    return None


def predict(key: str, tensors: List[Tensor]) -> Prediction:
    """What CUDA does with one aten call ("name.overload") given its tensors."""
    own = _own(key, tensors)
    if key.split(".")[0] in ("masked_fill", "masked_fill_"):  # the functional form: clone, then _
        return own or Prediction(RUN, None, "masked_fill takes a value tensor from anywhere")
    if key not in cuda_kernels():
        return Prediction(
            UNPREDICTED, None, "no CUDA kernel: a composite, whose calls the " "trace does not see"
        )
    if key not in nocheck():
        prediction = _wrapper(tensors)
        return own if own is not None and prediction.outcome != RAISE else prediction
    verdict, why = scalar_rules().get(key, ("", "not a TensorIterator operator in the table"))
    if verdict in ("accept", "iterator", "kernel"):
        return _iterator(verdict, why, tensors)
    return Prediction(UNPREDICTED, None, f"NoCheck, {verdict or 'no rule'}: {why[:120]}")
