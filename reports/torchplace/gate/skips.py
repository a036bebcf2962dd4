"""The behaviour gate's closed set of skip reasons, and the devices a run must have.

The harness gives every skip it makes a code (harness/skip_code.h, results.json "skip_code").
A cell may be skipped only for one of SKIP_CODES, and a device-absence code must agree with the
run's fingerprint; any other skip (device_unusable, unlisted, no code at all) is a regression.
"""
import re

from torchplace.schema import InputError

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
}
NOT_ACCEPTED = {
    "device_unusable": "an earlier cell's sticky CUDA error broke the device",
    "unlisted": "a skip the harness did not code (a GTEST_SKIP in a body)",
}
CUDA_INDEX = re.compile(r"cuda:(\d+)")


def _gpus_needed(device_label):
    """'cuda:0+cuda:1' -> 2, 'cpu' -> 0."""
    return max((int(index) + 1 for index in CUDA_INDEX.findall(device_label)), default=0)


def _cuda(fingerprint):
    cuda = fingerprint.get("cuda") or {}
    return bool(cuda.get("built_with_cuda")), int(cuda.get("device_count") or 0)


def skip_problem(cell, committed, fingerprint):
    """Why a skipped cell is a regression, as text, or None when its skip is accepted."""
    code = cell.get("skip_code")
    if not cell["reason"].strip():
        return "skipped without a stated reason"
    if code is None:
        return f"skipped with no skip_code (reason: {cell['reason']!r}); only {sorted(SKIP_CODES)}"
    if code not in SKIP_CODES:
        meaning = NOT_ACCEPTED.get(code, "not a code the harness knows")
        return f"skip_code {code!r} ({meaning}) is not an accepted skip: {cell['reason']}"
    built, count = _cuda(fingerprint)
    needed = _gpus_needed(cell["device"])
    contradiction = {
        "no_cuda_build": built,
        "no_cuda_device": not built or count > 0,
        "too_few_gpus": needed == 0 or count >= needed,
        "needs_cuda": count > 0,  # the scenarios' needs() ask torch::cuda::is_available()
        "needs_no_cuda": count == 0,
        "covered_by_other_cell": committed is not None and committed["outcome"] != "skip",
        "not_on_sim": not cell["device"].startswith("sim"),
        # the run's fingerprint must say the suite was built without c10d's Gloo
        "no_c10d_gloo": fingerprint.get("c10d_gloo") is not False,
    }.get(code, False)
    if contradiction:
        return (f"skip_code {code!r} contradicts the run (built_with_cuda={built}, "
                f"{count} CUDA device(s), cell on {cell['device']}, committed {committed})")
    return None


def parse_required(text):
    """'cuda=2' -> {'cuda': 2}; InputError on anything else."""
    match = re.fullmatch(r"cuda=(\d+)", text or "")
    if not match:
        raise InputError(f"--require-devices {text!r}: expected cuda=N (N CUDA devices)")
    return {"cuda": int(match.group(1))}


def device_problem(required, fingerprint, path):
    """Why the run's fingerprint shows fewer devices than required, or None."""
    if not required:
        return None
    built, count = _cuda(fingerprint)
    if count < required["cuda"]:
        return (f"{path}: the run needs {required['cuda']} CUDA device(s) (--require-devices) but "
                f"its fingerprint shows {count} (built_with_cuda={built}): its CUDA cells "
                "were skipped, not judged")
    return None
