"""Finds the LibTorch errors in a text: where each message starts and where it ends.

A message starts at a line that carries one of the markers below and runs to the first blank
line, Python traceback or next marker; a TorchScript interpreter's wrapper runs on to the
message line after its code traceback. The classifier itself removes the known prefixes (the
Python exception name, "[enforce fail at ...] ", the wrapper) and the C++ backtrace behind.
"""
import re
from dataclasses import dataclass
from typing import List, Optional

# A message starts at an exception's name, qualified or not ("RuntimeError: ",
# "torch.OutOfMemoryError: ", "torch.distributed.DistBackendError: ", "_pickle.UnpicklingError: "),
# after any bracketed tags ("[rank0]:", a logger's "[E ProcessGroupNCCL.cpp:737]"): the same one
# rule as the classifier's (harness/error_class.cpp front_prefix), which removes them again.
PYTHON_ERROR = re.compile(r"^[A-Za-z_][\w.]*(?:Error|Exception): ")
TAGS = re.compile(r"^(?:\[[^\]\n]*\]:?[ \t]*)+")
# A C++ program that let a c10::Error escape: std::terminate prints "  what():  <message>".
CXX_WHAT = re.compile(r"^\s*what\(\):\s+")
# This suite's own failure output ends its verdict with "raw message:" and the message below.
SUITE_RAW = re.compile(r"raw message:\s*$")
INTERPRETER = "The following operation failed in the TorchScript interpreter."
# A line's own log prefix: ANSI colours, torchrun's "[rank3]: ", pdb's "*** ".
LINE_NOISE = re.compile(r"\x1b\[[0-9;]*m")
RANK = re.compile(r"^\[rank\d+\]: ?")
ENDS = (
    re.compile(r"^Traceback \(most recent call last\)"),
    re.compile(r"^During handling of"),
    re.compile(r"^The above exception was the direct cause"),
)


@dataclass
class Found:
    line: int  # 1-based line where the message starts
    text: str  # the message as written, its known prefixes still on


def clean(line: str) -> str:
    line = LINE_NOISE.sub("", line.rstrip("\r"))
    line = RANK.sub("", line)
    return line[4:] if line.startswith("*** ") else line


def start_of(lines: List[str], index: int) -> Optional[str]:
    """The message's first line if one starts at lines[index], else None."""
    line = lines[index].strip()
    if PYTHON_ERROR.match(TAGS.sub("", line)) or line.startswith(INTERPRETER):
        return line
    what = CXX_WHAT.match(lines[index])
    if what:
        return lines[index][what.end() :]
    if index > 0 and SUITE_RAW.search(lines[index - 1]) and line:
        return line
    return None


def ends_before(line: str) -> bool:
    return not line.strip() or any(end.match(line.strip()) for end in ENDS)


def body_of(lines: List[str], first: str, index: int) -> "tuple[str, int]":
    """The whole message starting with `first` at lines[index]; returns it and the next index."""
    body = [first]
    wrapped = INTERPRETER in first
    index += 1
    while index < len(lines):
        line = lines[index]
        if wrapped:  # the code traceback, up to and with the line that names the error
            body.append(line)
            index += 1
            if PYTHON_ERROR.match(TAGS.sub("", line.strip())):
                wrapped = False
            continue
        if ends_before(line) or start_of(lines, index) is not None:
            break
        body.append(line)
        index += 1
    return "\n".join(body), index


def find_errors(text: str) -> List[Found]:
    """Every LibTorch error message the text holds, in order."""
    lines = [clean(line) for line in text.split("\n")]
    found: List[Found] = []
    index = 0
    while index < len(lines):
        first = start_of(lines, index)
        if first is None:
            index += 1
            continue
        message, after = body_of(lines, first, index)
        found.append(Found(index + 1, message))
        index = after
    return found
