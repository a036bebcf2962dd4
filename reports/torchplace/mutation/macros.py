"""Whether a file's `#if NAME` code is compiled in a build (generated.py's not_built): NAME on
the compile command of the target that compiles the file (-DNAME, -DNAME=V; CMake's flags for
that file, found in compile_commands.json, through a unity batch that includes it), else as what
the file includes leaves it (compat.h's TP_HAS_C10D_GLOO, autocast.cpp's TP_SIM_HAS_AUTOCAST):
the preprocessor's answer, `-E -dM` with that command. A header is judged with the flags of a
file of the kill-set binary that includes it, else with any of that binary's. Code in any other
conditional branch (`#if TP_SIM_AT_LEAST(2, 1)`, `#elif`, `#else`; operators_cpp.BRANCH) is
compiled when the preprocessor, with the same command, keeps a line of its branch (`-E`)."""
import functools
import json
import re
import shlex
import subprocess
from pathlib import Path
from typing import FrozenSet, List, Optional, Tuple

from torchplace.mutation.operators_cpp import CONDITIONAL, continued_directives
from torchplace.mutation.run import CannotJudge
from torchplace.schema import EXIT_ENV

PREPROCESS_TIMEOUT_S = 300
CODELESS = re.compile(r"^\s*(#|//|/\*|\*)")  # a directive or a comment line


@functools.lru_cache(maxsize=None)
def _entries(build: Path) -> Tuple[Tuple[str, str, str], ...]:
    """(file, output, command) of each compile command."""
    listed = json.loads((build / "compile_commands.json").read_text())
    return tuple((e["file"], e.get("output", ""), e["command"]) for e in listed)


@functools.lru_cache(maxsize=None)
def _text(path: str) -> str:
    try:
        return Path(path).read_text(errors="replace")
    except OSError:
        return ""


def command_for(build: Path, source: Path, binary: str) -> Optional[List[str]]:
    """The compile command that compiles `source` (itself, or a unity batch including it); for a
    header, one of `binary`'s that includes it, else any of `binary`'s."""
    name = str(source)
    ours = [e for e in _entries(build) if f"/{binary}.dir/" in f"/{e[1]}"]
    for file, _, command in _entries(build):
        if file == name or (Path(file).suffix == ".cxx" and f'"{name}"' in _text(file)):
            return shlex.split(command)
    header = source.name
    for file, _, command in ours:
        if header in _text(file):
            return shlex.split(command)
    return shlex.split(ours[0][2]) if ours else None


def without_output(command: List[str]) -> List[str]:
    """A compile command less its `-o OUTPUT` and `-c INPUT`: the compiler and its flags."""
    args: List[str] = []
    skip = False
    for word in command:
        if skip:
            skip = False
        elif word in ("-o", "-c"):
            skip = True
        else:
            args.append(word)
    return args


def _value(words: List[str], macro: str) -> Optional[str]:
    for word in words:
        if word == f"-D{macro}":
            return "1"
        if word.startswith(f"-D{macro}="):
            return word.split("=", 1)[1]
    return None


def _preprocessed(build: Path, source: Path, binary: str, *flags: str) -> str:
    """`source` run through the preprocessor with the flags it is compiled with in `build`."""
    command = command_for(build, source, binary)
    if command is None:  # unjudged is not "not built": that would skip its mutants silently
        raise CannotJudge(EXIT_ENV, f"{source}: no compile command for it or {binary} in {build}")
    done = subprocess.run(
        [*without_output(command), "-E", *flags, "-x", "c++", str(source)],
        capture_output=True,
        text=True,
        timeout=PREPROCESS_TIMEOUT_S,
    )
    if done.returncode != 0:
        raise CannotJudge(EXIT_ENV, f"{source}: cannot preprocess it: {done.stderr[-500:]}")
    return done.stdout


@functools.lru_cache(maxsize=None)
def macro_on(build: Path, source: Path, binary: str, macro: str) -> bool:
    """Whether `#if macro` is true where `source` is compiled in `build`."""
    given = _value(command_for(build, source, binary) or [], macro)
    if given is not None:
        return given.strip() not in ("0", "")
    for line in _preprocessed(build, source, binary, "-dM").splitlines():
        parts = line.split(None, 2)
        if len(parts) >= 2 and parts[0] == "#define" and parts[1] == macro:
            return len(parts) < 3 or parts[2].strip() not in ("0", "")
    return False


LINEMARKER = re.compile(r'^# (\d+) "(.*)"')


@functools.lru_cache(maxsize=None)
def _kept_lines(build: Path, source: Path, binary: str) -> FrozenSet[int]:
    """The lines of `source` its preprocessed text keeps, not blank (the linemarkers say which)."""
    kept, current, number = set(), "", 0
    for text in _preprocessed(build, source, binary).splitlines():
        marker = LINEMARKER.match(text)
        if marker:
            number, current = int(marker.group(1)), marker.group(2)
            continue
        if current == str(source) and text.strip():
            kept.add(number)
        number += 1
    return frozenset(kept)


def branch_lines(text: str, line: int) -> range:
    """The lines of the innermost `#if`/`#elif`/`#else` branch around `line` (1-based), less
    its directives (a continued one's lines too); `line` alone outside any."""
    lines = text.splitlines()
    continued = continued_directives(lines)
    line = continued.get(line, line)  # a directive's condition: where the directive is
    starts: List[int] = []
    for number, source in enumerate(lines, start=1):
        match = CONDITIONAL.match(source)
        if not match or number in continued:
            continue
        if match.group(1) in ("elif", "else", "endif") and starts:
            if starts[-1] <= line < number:  # an inner branch closes before an outer one
                return range(starts[-1], number)
            starts.pop()
        if match.group(1) != "endif":
            starts.append(max([number, *(n for n, f in continued.items() if f == number)]) + 1)
    return range(line, line + 1)


def line_compiled(build: Path, source: Path, binary: str, line: int) -> bool:
    """Whether `source`'s `line` is compiled in `build`: its branch keeps a line through the
    preprocessor, or has no code of its own to tell by (directives, comments: then judged)."""
    text = _text(str(source))
    lines = text.splitlines()
    branch = branch_lines(text, line)
    code = [n for n in branch if lines[n - 1].strip() and not CODELESS.match(lines[n - 1])]
    kept = _kept_lines(build, source, binary)
    return not code or any(n in kept for n in branch)
