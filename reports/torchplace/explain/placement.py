"""Which tensor is on which device, read from a device-mismatch message in its own order.

Each wording names its operands in a fixed order; the order is LibTorch's, as each source builds
the message:
  - the 1.9-2.7 wrapper check (aten/src/ATen/core/adaption.cpp common_device_check_failure):
    "found at least two devices, <the other tensors'> and <the argument's>! (when checking
    argument for argument <name> ...)";
  - the ~2.8 wrapper check: "but got <name> is on <its device>, different from other tensors on
    <theirs>";
  - advanced indexing (aten/src/ATen/native/TensorAdvancedIndexing.cpp, 1.13+): "indices should
    be either on cpu or on the same device as the indexed tensor (<the indexed tensor's>)": the
    indices are on another device, not the CPU;
  - checkSameGPU / masked_fill / RNN / the prims' check: both names and devices spelled out.
"""
import re
from typing import Dict, List

OTHERS = "the other tensors"
WORDINGS = (
    (
        re.compile(
            r"found at least two devices, (\S+) and (\S+?)! \(when checking argument for "
            r"argument (\w+)"
        ),
        lambda m: [(OTHERS, m[1]), (m[3], m[2])],
    ),
    (
        re.compile(r"found at least two devices, (\S+) and (\S+?)!"),
        lambda m: [("a tensor", m[1]), ("another tensor", m[2])],
    ),
    (
        re.compile(r"but got (\w+) is on (\S+), different from other tensors on ([\w:]+)"),
        lambda m: [(m[1], m[2]), (OTHERS, m[3])],
    ),
    (
        re.compile(
            r"^indices should be either on (\w+) or on the same device as the indexed "
            r"tensor \((\S+?)\)"
        ),
        lambda m: [("the indexed tensor", m[2]), ("indices", f"a device other than {m[1]}")],
    ),
    (
        re.compile(
            r"for argument #\d+ '(\w+)' to have the same device as tensor for argument "
            r"#\d+ '(\w+)'; but device (\S+) does not equal (\S+?)\b"
        ),
        lambda m: [(m[1], m[3]), (m[2], m[4])],
    ),
    (
        re.compile(r"but got (\w+) on (\S+) and (\w+) on (\S+)"),
        lambda m: [(m[1], m[2]), (m[3], m[4])],
    ),
    (
        re.compile(r"found (\w+) tensor at (\S+) and (\w+) tensor at (\S+)"),
        lambda m: [(m[1], m[2]), (m[3], m[4])],
    ),
    (
        re.compile(r"^Tensor on device (\S+) is not on the expected device (\S+?)!"),
        lambda m: [("a tensor", m[1]), ("the expected device", m[2])],
    ),
)


def placement(core: str) -> List[Dict[str, str]]:
    """[{"tensor", "device"}] in the message's order; [] when the wording names no pairs."""
    first = core.split("\n", 1)[0]
    for pattern, pairs in WORDINGS:
        found = pattern.search(first)
        if found:
            return [{"tensor": t, "device": d} for t, d in pairs(found)]
    return []


def indices_on_host(where: List[Dict[str, str]]) -> bool:
    """True when the indices are the CPU side and the indexed tensor is on the device; False
    when it is the other way round (a CPU weight, say from a checkpoint, with device indices)."""
    for place in where:
        if place["tensor"] in ("index", "indices"):
            return place["device"] == "cpu"
    indexed = [p for p in where if p["tensor"] in ("the indexed tensor", OTHERS)]
    return bool(indexed) and indexed[0]["device"] != "cpu"
