"""The Markdown documents' shape (lint.py docs): what a bad merge or split leaves behind.

Each tracked *.md file: its code fences balanced and each opened with a language; every relative
link resolving (a file, and a heading of a Markdown target for #anchor); no section that starts or
ends mid-sentence; every C++ block accounted for by the marker on the line before it:

  <!-- snippet: excerpt PATH -->      its lines are a contiguous part of PATH, a file CMake compiles
  <!-- snippet: downstream NAME -->   ci/downstream/check.sh builds it (`snippet NAME`)
  <!-- snippet: not compiled: WHY --> listed on every run, with why

A marker that names no PATH, NAME or WHY is a fault.

And every example in a tracked header's comments (an indented block of lines ending in `;`) is a
contiguous part of EXAMPLES, which CTest compiles and runs (docs.examples).
"""
import os
import re
from typing import Dict, Iterator, List, Optional, Tuple

EXAMPLES = "harness/tests/docs_examples_test.cpp"
DOWNSTREAM = "ci/downstream/check.sh"
FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([^\s`]*)\s*$")
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$")
LINK = re.compile(r"\]\(([^)\s]+)\)")
MARKER = re.compile(r"^\s*<!-- snippet: (excerpt|downstream|not compiled:)\s*(.*?)\s*-->\s*$")
CPP = ("cpp", "c++", "cxx")
# A section's first line cannot begin a sentence with these: a lowercase word, a closing bracket
# or a punctuation mark, or an indented line (a code block's or a list's leftover).
BAD_START = re.compile(r"^(\s{2,}\S|[a-z]|[)\],.;:])")
# Nor can its last line end a paragraph so: a comma, an open bracket, "and", "or", "the".
BAD_END = re.compile(r"(,|\(|;|\b(and|or|the|a|of|to|with))$")
# Nor can any paragraph begin with a list's tail ("`b`, `c`, ..." cut from "labels: `a`,").
CONTINUATION = re.compile(r"^`[^`]+`, `")

Block = Tuple[int, str, List[str]]  # (line number of the opening fence, language, lines)


def scan(text: str) -> Tuple[List[str], List[Block], List[Tuple[int, str]], List[str]]:
    """Splits a document: its prose lines (code blanked), code blocks, headings, fence faults.

    A fence never closed is reported and read as a line of prose, so the rest is still checked.
    """
    lines, stray, faults = text.splitlines(), set(), []  # type: List[str], set, List[str]
    while True:
        prose, blocks, headings, unclosed = _split(lines, stray)
        if unclosed is None:
            break
        faults.append(f"{unclosed}: a code block that is never closed")
        stray.add(unclosed)
    for number, language, _ in blocks:
        if not language:
            faults.append(f"{number}: a code block opened without a language (a stray fence?)")
    for number in sorted(stray):
        faults.append(f"{number}: the section holds a stray fence")
    return prose, blocks, headings, faults


def _split(
    lines: List[str], stray: set
) -> Tuple[List[str], List[Block], List[Tuple[int, str]], Optional[int]]:
    prose, blocks, headings = [], [], []  # type: List[str], List[Block], List[Tuple[int, str]]
    fence: Optional[Tuple[int, str, str]] = None  # (line, marker, language)
    body: List[str] = []
    for number, line in enumerate(lines, 1):
        match = None if number in stray else FENCE.match(line)
        if fence is None and match:
            fence, body = (number, match.group(2), match.group(3)), []
        elif fence is not None:
            if match and not match.group(3) and match.group(2).startswith(fence[1]):
                blocks.append((fence[0], fence[2], body))
                fence = None
            else:
                body.append(line)
        else:
            heading = HEADING.match(line)
            if heading:
                headings.append((number, heading.group(1)))
        prose.append(line if fence is None and not match else "")
    return prose, blocks, headings, fence[0] if fence else None


def anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lowercase, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")


def links(root: str, path: str, prose: List[str]) -> Iterator[str]:
    for number, line in enumerate(prose, 1):
        for match in LINK.finditer(line):
            target, _, fragment = match.group(1).partition("#")
            if re.match(r"[a-z][a-z0-9+.-]*:", target):
                continue  # an absolute URL
            # a bare #anchor is the document's own: its name, beside itself
            here = os.path.basename(path)
            full = os.path.normpath(os.path.join(root, os.path.dirname(path), target or here))
            if not os.path.exists(full):
                yield f"{number}: the link {match.group(1)} points at nothing"
            elif fragment and full.endswith(".md") and fragment not in headings_of(full):
                yield f"{number}: the link {match.group(1)} names no heading of {target or path}"


def headings_of(path: str) -> List[str]:
    with open(path, encoding="utf-8") as handle:
        return [anchor(title) for _, title in scan(handle.read())[2]]


def sections(text: str, prose: List[str], headings: List[Tuple[int, str]]) -> Iterator[str]:
    """A section whose first line, or whose last before the next heading, is mid-sentence."""
    lines = text.splitlines()
    for number, line in enumerate(prose, 1):
        if CONTINUATION.match(line) and (number == 1 or not prose[number - 2].strip()):
            yield f"{number}: a paragraph starts mid-sentence: {line.strip()[:60]!r}"
    starts = [number for number, _ in headings] + [len(lines) + 1]
    for start, following in zip(starts, starts[1:]):
        body = [n for n in range(start + 1, following) if lines[n - 1].strip()]
        if not body:
            continue
        first, last = body[0], body[-1]
        if prose[first - 1] and BAD_START.match(lines[first - 1]):
            yield f"{first}: the section starts mid-sentence: {lines[first - 1].strip()[:60]!r}"
        if prose[last - 1] and BAD_END.search(lines[last - 1].rstrip()):
            yield f"{last}: the section ends mid-sentence: {lines[last - 1].strip()[-60:]!r}"


def normalized(lines: List[str]) -> str:
    """The lines as one text, whitespace runs as one space: formatting and line breaks aside."""
    return " " + " ".join(" ".join(line.split()) for line in lines if line.strip()) + " "


def contains(whole: str, part: str) -> bool:
    return bool(part.strip()) and part in whole


class Repo:
    """The checkout: its root, the CMakeLists.txt files that say what is compiled, a read cache."""

    def __init__(self, root: str, cmake: List[str]) -> None:
        self.root, self.cmake, self._texts = root, cmake, {}  # type: str, List[str], Dict[str, str]

    def read(self, path: str) -> str:
        if path not in self._texts:
            full = os.path.join(self.root, path)
            if not os.path.isfile(full):
                return ""
            with open(full, encoding="utf-8") as handle:
                self._texts[path] = handle.read()
        return self._texts[path]

    def compiled(self, source: str) -> bool:
        """Whether some CMakeLists.txt names the file (the build compiles it)."""
        return any(os.path.basename(source) in self.read(cmake) for cmake in self.cmake)


def snippets(repo: Repo, path: str, blocks: List[Block]) -> Iterator[Tuple[bool, str]]:
    """(is a fault, message) for each block with a marker, checked, and each C++ one without."""
    lines = repo.read(path).splitlines()
    for number, language, body in blocks:
        marker = MARKER.match(lines[number - 2]) if number > 1 else None
        if not marker:
            if language.lower() in CPP:
                yield True, f"{number}: a C++ block without a <!-- snippet: ... --> marker above it"
            continue
        kind, argument = marker.groups()
        if not argument:  # no file, no snippet name (which "snippet " matched), no reason
            yield True, f"{number}: its marker <!-- snippet: {kind} --> names nothing"
        elif kind == "not compiled:":
            yield False, f"{path}:{number}: not compiled: {argument}"
        elif kind == "downstream" and f"snippet {argument}" not in repo.read(DOWNSTREAM):
            yield True, f"{number}: {DOWNSTREAM} does not build `snippet {argument}`"
        elif kind == "excerpt":
            fault = excerpt_fault(repo, argument, body)
            if fault:
                yield True, f"{number}: {fault}"


def excerpt_fault(repo: Repo, source: str, body: List[str]) -> Optional[str]:
    """Why `body` is not a compiled part of `source`, or None."""
    text = repo.read(source)
    if not text:
        return f"the excerpt's source {source} does not exist or is empty"
    if not repo.compiled(source):
        return f"no CMakeLists.txt names {os.path.basename(source)}: {source} is not compiled"
    if not contains(normalized(text.splitlines()), normalized(body)):
        return f"the block is not, word for word, a part of {source}"
    return None


def header_examples(repo: Repo, header: str) -> Iterator[str]:
    """Each example in a header's comments that EXAMPLES does not hold word for word."""
    compiled = normalized(repo.read(EXAMPLES).splitlines())
    if not repo.compiled(EXAMPLES):
        yield f"{header}: no CMakeLists.txt names {os.path.basename(EXAMPLES)}: it is not compiled"
        return
    example: List[str] = []
    for number, line in enumerate(repo.read(header).splitlines() + [""], 1):
        code = re.match(r"^//   (.*)$", line)
        if code:
            example.append(code.group(1))
            continue
        if any(re.search(r";\s*(//.*)?$", row) for row in example):
            if not contains(compiled, normalized(example)):
                yield f"{header}:{number - len(example)}: its example is not in {EXAMPLES}"
        example = []


def check(repo: Repo, documents: List[str], headers: List[str]) -> Tuple[List[str], List[str]]:
    """(faults, notes) of the documents and of the headers' examples."""
    faults: List[str] = []
    notes: List[str] = []
    for path in documents:
        text = repo.read(path)
        prose, blocks, headings, fence_faults = scan(text)
        found = fence_faults + list(links(repo.root, path, prose))
        found += list(sections(text, prose, headings))
        for fault, message in snippets(repo, path, blocks):
            (found if fault else notes).append(message)
        faults += [f"{path}:{message}" for message in found]
    for header in headers:
        faults += list(header_examples(repo, header))
    return faults, notes
