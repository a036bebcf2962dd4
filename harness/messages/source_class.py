"""The one rule that gives a LibTorch source string its error class (source_strings.py).

Input: the message's literal text (placeholders as {}) and the checked expression (the condition
of a TORCH_CHECK, the `if` test around a Python raise; "" when none). The vocabularies are tried
in this order, and the first that holds decides:

  OutOfMemory         the text speaks of memory running out
  CollectiveTimeout   collective vocabulary (NCCL, Gloo, process group, watchdog, ...) + a timeout
  CollectiveFailure   collective vocabulary + a failure (error, failed, aborted, closed, ...)
  HostSync            a synchronizing operation refused (CUDA's sync-debug mode)
  MissingKey          state_dict / serialized keys missing or unexpected
  CorruptArchive      archive vocabulary (zip, pickle, PytorchStreamReader, ...) + a failure
  FileNotFound        a file that does not exist
  BackendUnavailable  a backend not compiled or linked in, or not available
  DeviceMismatch      device vocabulary + a relation (same, expected, must be, ...), or the
                      checked expression compares devices and the text names one
  DtypeMismatch       dtype vocabulary + a relation, or the expression compares dtypes and the
                      text speaks of types
  Unclassified        anything else (shapes, indices, values, internal bugs, ...)

The class names are tp::ErrorClass's (harness/error_class.h).
"""
import re
from typing import Pattern


def _words(pattern: str) -> Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


MEMORY = _words(r"out of memory|can't allocate memory|not enough memory")
COLLECTIVE = _words(
    r"\bnccl|\bgloo\b|\bc10d\b|process ?group|\bcollective|watchdog|\bProcessGroup|"
    r"\bTCPStore\b|\bmpi\b|\bucc\b|rendezvous"
)
TIMEOUT = _words(r"timed out|time ?out\b|timeout")
FAILURE = _words(
    r"\berror\b|\bfailed\b|\bfailure\b|abort|closed|connection reset|crash|\bexited\b|"
    r"terminat|\bhang\b|unhandled"
)
SYNC = _words(r"synchronizing (CUDA )?operation")
MISSING_KEY = _words(
    r"missing key\(s\)|unexpected key\(s\)|no such serialized|loading state_dict|"
    r"(key|parameter|buffer)s? .*(missing|not found) in (the )?(state_dict|checkpoint|archive)"
)
ARCHIVE = _words(
    r"PytorchStreamReader|\bzip\b|archive|unpickl|\.pkl\b|magic number|central directory"
)
ARCHIVE_FAILURE = _words(r"fail|corrupt|invalid|unexpected|truncat|overran|not a|cannot|can't|bad")
FILE = _words(r"no such file|file not found|file does not exist|errno 2\b")
BACKEND = _words(
    r"not (compiled|linked|built) with|compiled without|built without|"
    r"(support|backend) (is )?not (available|enabled)|is not available|"
    r"no (CUDA|NVIDIA|HIP|ROCm|MPS|XPU) (GPUs?|driver|devices?)|requires? (a )?(CUDA|MPS|XPU)"
    r"( support| build| enabled)|without (CUDA|MPS|XPU) support|driver (version )?is too old"
)
DEVICE = _words(
    r"\bdevices?\b|\bcpu\b|\bcuda\b|\bgpu\b|\bmps\b|\bxla\b|\bxpu\b|\bhip\b|\bprivateuseone\b"
)
RELATION = _words(
    r"\bsame\b|different|expected|expects|\bmust\b|\bshould\b|to be on|\bis on\b|are on\b|"
    r"but (got|found)|mismatch|does not match|doesn't match|does not equal"
)
DTYPE = _words(r"\bdtypes?\b|scalar ?types?\b|\bfloat\b|\bhalf\b|\bdouble\b|bfloat16")
# device() also matches get_device(), so that needs no alternative of its own.
DEVICE_EXPR = re.compile(
    r"\.device\b|device\(\)|is_cuda\b|is_cpu\b|is_mps\b|is_xla\b|is_xpu\b|device_type\(\)|"
    r"is_privateuseone\b|device\.type\b"
)
DTYPE_EXPR = re.compile(r"scalar_type\(\)|\.dtype\b|dtype\(\)|scalarType\(\)")

CLASSES = (
    "DeviceMismatch",
    "BackendUnavailable",
    "DtypeMismatch",
    "MissingKey",
    "FileNotFound",
    "CorruptArchive",
    "OutOfMemory",
    "CollectiveTimeout",
    "CollectiveFailure",
    "HostSync",
    "Unclassified",
)


def class_of(text: str, expression: str) -> str:
    """The class of a source string: its literal text and the expression it checks."""
    literal = text.replace("{}", " ")
    if MEMORY.search(literal):
        return "OutOfMemory"
    if COLLECTIVE.search(literal) and TIMEOUT.search(literal):
        return "CollectiveTimeout"
    if COLLECTIVE.search(literal) and FAILURE.search(literal):
        return "CollectiveFailure"
    if SYNC.search(literal):
        return "HostSync"
    if MISSING_KEY.search(literal):
        return "MissingKey"
    if ARCHIVE.search(literal) and ARCHIVE_FAILURE.search(literal):
        return "CorruptArchive"
    if FILE.search(literal):
        return "FileNotFound"
    if BACKEND.search(literal):
        return "BackendUnavailable"
    device = DEVICE.search(literal)
    if device and (RELATION.search(literal) or DEVICE_EXPR.search(expression)):
        return "DeviceMismatch"
    dtype = DTYPE.search(literal)
    if dtype and (RELATION.search(literal) or DTYPE_EXPR.search(expression)):
        return "DtypeMismatch"
    return "Unclassified"
