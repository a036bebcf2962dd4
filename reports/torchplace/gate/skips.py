"""The behaviour gate's closed set of skip reasons, and the devices a run must have.

The harness gives every skip it makes a code (harness/skip_code.h, results.json "skip_code").
A cell may be skipped only for one of SKIP_CODES, and only where the code is true: a
device-absence code (DEVICE_ABSENT) on a CUDA cell whose device the run's fingerprint shows
absent; a need code (NEED_CODES: needs_cuda, needs_no_cuda, not_on_sim, no_c10d_gloo,
needs_newer_libtorch: only on a LibTorch older than the cell's needs_libtorch) where the run
agrees and
the cell's committed entry lists it in "skip_codes"; covered_by_other_cell where the committed
expectation is a skip. needs_no_cuda is never true of a CUDA cell. Any other skip
(device_unusable, unlisted, no code at all, a code the cell's device does not justify) is a
regression.
"""
from __future__ import annotations

import re
from typing import Dict, Optional, Tuple

from torchplace.schema import InputError, JsonObject

# code -> what it means; the harness's SkipCode names (harness/skip_code.h)
SKIP_CODES = {
    "no_cuda_build": "the cell needs CUDA, this LibTorch is built without it",
    "no_cuda_device": "a CUDA LibTorch, no CUDA device on this host",
    "too_few_gpus": "the cell needs more GPUs than this host has",
    "needs_cuda": "the check needs a CUDA LibTorch and device",
    "needs_no_cuda": "the check needs a LibTorch or host without CUDA",
    "covered_by_other_cell": "the committed expectation is a skip: another cell covers it",
    "not_on_sim": "the simulated device (sim:0) lacks what the cell needs",
    "no_c10d_gloo": "this LibTorch lacks c10d's Gloo backend (or the Gloo headers)",
    "needs_newer_libtorch": "the check needs the LibTorch the cell names (needs_libtorch)",
}
NOT_ACCEPTED = {
    "device_unusable": "an earlier cell's sticky CUDA error broke the device",
    "unlisted": "a skip the harness did not code (a GTEST_SKIP in a body)",
}
CUDA_INDEX = re.compile(r"cuda:(\d+)")
# Codes that the cell's own device makes true: a CUDA cell (cuda:N, cuda:0+cuda:1) on a run whose
# fingerprint shows that device absent. They need no entry in the committed expectations.
DEVICE_ABSENT = ("no_cuda_build", "no_cuda_device", "too_few_gpus")
# Codes a cell's needs() gives (harness/scenario.h): accepted only where the cell's committed
# entry lists them ("skip_codes", written by --refresh-expectations from a run that skipped it so).
NEED_CODES = (
    "needs_cuda",
    "needs_no_cuda",
    "not_on_sim",
    "no_c10d_gloo",
    "needs_newer_libtorch",
)
VERSION = re.compile(r"(\d+)\.(\d+)")


def _gpus_needed(device_label: str) -> int:
    """'cuda:0+cuda:1' -> 2, 'cpu' -> 0."""
    return max((int(index) + 1 for index in CUDA_INDEX.findall(device_label)), default=0)


def _cuda(fingerprint: JsonObject) -> Tuple[bool, int]:
    cuda = fingerprint["cuda"]  # its types: torchplace.schema.check_fingerprint
    return cuda["built_with_cuda"], cuda["device_count"]


def _older(cell: JsonObject, fingerprint: JsonObject) -> Optional[str]:
    """Why the run contradicts a needs_newer_libtorch skip, or None: the cell names no version
    (results.json "needs_libtorch"), or the run's LibTorch is that version or newer."""
    needed = VERSION.fullmatch(cell.get("needs_libtorch") or "")
    if not needed:
        named = cell.get("needs_libtorch")
        return f"it names no LibTorch version it needs (needs_libtorch: {named!r})"
    ran = VERSION.match(fingerprint["libtorch_version"])
    if not ran:
        return f"the run's LibTorch version {fingerprint['libtorch_version']!r} reads as no version"
    if tuple(map(int, ran.groups())) < tuple(map(int, needed.groups())):
        return None
    return f"the run's LibTorch {fingerprint['libtorch_version']} is {needed.group(0)} or newer"


def _untrue(code: str, cell: JsonObject, fingerprint: JsonObject) -> Optional[str]:
    """Why the run itself contradicts `code` on this cell, or None: a device-absence code needs a
    CUDA cell and that device absent; needs_cuda CUDA absent; needs_no_cuda a non-CUDA cell and
    CUDA present; not_on_sim a sim cell; no_c10d_gloo a fingerprint saying c10d Gloo is absent;
    needs_newer_libtorch a run older than the version the cell names (_older)."""
    built, count = _cuda(fingerprint)
    needed = _gpus_needed(cell["device"])
    device = cell["device"]
    return {
        "no_cuda_build": (needed == 0 and f"{device} is no CUDA device")
        or (built and "this LibTorch is built with CUDA"),
        "no_cuda_device": (needed == 0 and f"{device} is no CUDA device")
        or (not built and "this LibTorch has no CUDA: that is no_cuda_build")
        or (count > 0 and f"the run saw {count} CUDA device(s)"),
        "too_few_gpus": (needed == 0 and f"{device} is no CUDA device")
        or (count >= needed and f"the run saw {count} CUDA device(s), {device} " f"needs {needed}"),
        "needs_cuda": count > 0 and f"the run saw {count} CUDA device(s)",
        "needs_no_cuda": (needed > 0 and f"{device} is a CUDA cell: it always has CUDA")
        or (count == 0 and "the run has no CUDA"),
        "not_on_sim": not device.startswith("sim") and f"{device} is not the simulated device",
        "no_c10d_gloo": fingerprint.get("c10d_gloo") is not False
        and "the run's fingerprint does not say c10d Gloo is absent",
        "needs_newer_libtorch": code == "needs_newer_libtorch" and _older(cell, fingerprint),
    }.get(code) or None


def allowed_codes(committed: Optional[JsonObject]) -> Tuple[str, ...]:
    """The need codes a committed entry allows (none for a new cell or an entry without any)."""
    return tuple((committed or {}).get("skip_codes", ()))


def skip_problem(
    cell: JsonObject, committed: Optional[JsonObject], fingerprint: JsonObject
) -> Optional[str]:
    """Why a skipped cell is a regression, as text, or None when its skip is accepted: the code
    is in the closed set, true of the run (_untrue), and either made true by the cell's own device
    (DEVICE_ABSENT) or allowed by the cell's committed entry (a need code; covered_by_other_cell
    where the committed expectation is itself a skip)."""
    code = cell.get("skip_code")
    if not cell["reason"].strip():
        return "skipped without a stated reason"
    if code is None:
        return f"skipped with no skip_code (reason: {cell['reason']!r}); only {sorted(SKIP_CODES)}"
    if code not in SKIP_CODES:
        meaning = NOT_ACCEPTED.get(code, "not a code the harness knows")
        return f"skip_code {code!r} ({meaning}) is not an accepted skip: {cell['reason']}"
    built, count = _cuda(fingerprint)
    untrue = _untrue(code, cell, fingerprint)
    if untrue:
        return (
            f"skip_code {code!r} contradicts the run: {untrue} (built_with_cuda={built}, "
            f"{count} CUDA device(s), cell on {cell['device']})"
        )
    if code == "covered_by_other_cell":
        outcome = (committed or cell["expected"])["outcome"]
        return (
            None
            if outcome == "skip"
            else (
                f"skip_code {code!r}, but the "
                f"{'committed' if committed else 'code' + chr(39) + 's'} "
                f"expectation is {outcome!r}, not a skip"
            )
        )
    if code in NEED_CODES and code not in allowed_codes(committed):
        whose = "its committed entry" if committed else "a new cell has no committed entry and"
        return (
            f"skip_code {code!r} on {cell['device']}: {whose} allows "
            f"{list(allowed_codes(committed)) or 'no need code'}; a needs() that skips what "
            f"it should run is a regression (if intended, refresh the expectations from a "
            f"run that skips it so): {cell['reason']}"
        )
    waits = (committed or {}).get("needs_libtorch")  # the version held (None: none named)
    if code == "needs_newer_libtorch" and cell.get("needs_libtorch") != waits:
        return (
            f"skip_code {code!r} on {cell['device']} waits for LibTorch "
            f"{cell.get('needs_libtorch')}, its committed entry for {waits}: {cell['reason']}"
        )
    return None


def parse_required(text: Optional[str]) -> Dict[str, int]:
    """'cuda=2' -> {'cuda': 2}; InputError on anything else."""
    match = re.fullmatch(r"cuda=(\d+)", text or "")
    if not match:
        raise InputError(f"--require-devices {text!r}: expected cuda=N (N CUDA devices)")
    return {"cuda": int(match.group(1))}


def device_problem(
    required: Optional[Dict[str, int]], fingerprint: JsonObject, path: str
) -> Optional[str]:
    """Why the run's fingerprint shows fewer devices than required, or None."""
    if not required:
        return None
    built, count = _cuda(fingerprint)
    if count < required["cuda"]:
        return (
            f"{path}: the run needs {required['cuda']} CUDA device(s) (--require-devices) but "
            f"its fingerprint shows {count} (built_with_cuda={built}): its CUDA cells "
            "were skipped, not judged"
        )
    return None
