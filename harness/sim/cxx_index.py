"""An index of ATen's C++/CUDA sources for scalar_rules.py: function bodies by name (structured
meta and impl functions among them), dispatch stubs and their CUDA registrations, macros.

Text-level reading, not a C++ parser: comments and string literals are blanked (line numbers
kept), `#else` branches of `#if AT_USE_JITERATOR...` dropped (a CUDA build takes the jiterator
branch), and function-like macros that define meta/impl functions or register stubs are expanded
where they are invoked (on the invocation's line, so citations name it). No third-party modules.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Dict, Iterator, List, Optional, Tuple

KEYWORDS = {
    "if",
    "for",
    "while",
    "switch",
    "return",
    "catch",
    "sizeof",
    "decltype",
    "defined",
    "static_assert",
    "alignof",
    "typeid",
    "else",
    "do",
    "new",
    "delete",
}
TRIGGERS = (
    "TORCH_META_FUNC",
    "TORCH_IMPL_FUNC",
    "REGISTER_DISPATCH",
    "REGISTER_CUDA_DISPATCH",
    "TORCH_PRECOMPUTE_META_FUNC",
)
STRUCTURED = re.compile(
    r"\b(TORCH_(?:PRECOMPUTE_)?META_FUNC2?|TORCH_IMPL_FUNC)\s*\(\s*(\w+)\s*"
    r"(?:,\s*(\w+)\s*)?\)\s*\("
)
DEFINITION = re.compile(r"(?:[\w>]\s+|[&*]\s*)((?:\w+::)*)(~?\w+)\s*\(")
AFTER_PARAMS = re.compile(
    r"\s*(?:const\s*|noexcept\s*|override\s*|final\s*|->\s*[\w:<>&*, ]+?\s*)*\{"
)
REGISTRATION = re.compile(
    r"\bREGISTER_(?:CUDA_)?DISPATCH\s*\(\s*(\w+)\s*,\s*&?\s*((?:\w+::)*)(\w+)"
)


@dataclass
class Definition:
    name: str
    path: str  # relative to the tree's root
    line: int  # of the name
    body: str  # between the braces, blanked as above
    body_line: int  # line of the opening brace


def blank(text: str) -> str:
    """Comments and string/char literal contents replaced by spaces; newlines kept."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "R" and text.startswith('R"', i) and (i == 0 or not text[i - 1].isalnum()):
            m = re.match(r'R"([^(\s]*)\(', text[i:])
            end = text.find(")" + (m.group(1) if m else "") + '"', i) if m else -1
            j = n if end < 0 else end + len(m.group(1)) + 2
            out.append('R""' + re.sub(r"[^\n]", " ", text[i + 3 : j]))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(c + " " * (min(j, n) - i - 1) + (c if j < n else ""))
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def drop_non_jiterator(text: str) -> str:
    """Blanks the #else branch of each `#if AT_USE_JITERATOR...` (newlines kept)."""
    lines, stack = text.split("\n"), []  # stack: [is_jiterator_if, in_else]
    for index, line in enumerate(lines):
        stripped = line.strip()
        if re.match(r"#\s*if", stripped):
            stack.append([bool(re.match(r"#\s*if\s+AT_USE_JITERATOR\b", stripped)), False])
        elif re.match(r"#\s*(else|elif)", stripped) and stack:
            stack[-1][1] = True
        elif re.match(r"#\s*endif", stripped) and stack:
            stack.pop()
            continue
        if any(jit and in_else for jit, in_else in stack):
            lines[index] = ""
    return "\n".join(lines)


def balanced(text: str, start: int, open_: str = "(", close: str = ")") -> int:
    """The index just past the bracket that closes the one at `start`, or -1."""
    depth = 0
    for i in range(start, len(text)):
        if text[i] == open_:
            depth += 1
        elif text[i] == close:
            depth -= 1
            if depth == 0:
                return i + 1
    return -1


def split_args(text: str) -> List[str]:
    args, depth, current = [], 0, []
    for c in text:
        if c == "," and depth == 0:
            args.append("".join(current).strip())
            current = []
            continue
        depth += c in "(<[{"
        depth -= c in ")>]}"
        current.append(c)
    args.append("".join(current).strip())
    return args


def substitute(body: str, params: List[str], args: List[str]) -> str:
    for param, arg in zip(params, args):
        body = re.sub(r"#\s*\b%s\b" % re.escape(param), '"' + arg + '"', body)
        body = re.sub(r"\b%s\b" % re.escape(param), arg, body)
    return re.sub(r"\s*##\s*", "", body)


def expand_macros(text: str, macros: Dict[str, Tuple[List[str], str]]) -> str:
    """Function-like macros whose body holds a TRIGGERS name: each #define blanked, each
    invocation at a line's start replaced by its expansion on one line (newlines kept)."""
    defines = re.compile(r"^[ \t]*#[ \t]*define[ \t]+(\w+)\(([^)]*)\)((?:[^\n]*\\\n)*[^\n]*)", re.M)
    own = {}
    for m in defines.finditer(text):
        body = m.group(3).replace("\\\n", " ")
        if any(t in body for t in TRIGGERS):
            own[m.group(1)] = ([p.strip() for p in m.group(2).split(",") if p.strip()], body)
    if not own:
        return text
    macros.update(own)
    text = defines.sub(
        lambda m: re.sub(r"[^\n]", " ", m.group(0)) if m.group(1) in own else m.group(0), text
    )
    for _ in range(3):  # macros invoking macros
        pattern = re.compile(r"^[ \t]*(%s)[ \t]*\(" % "|".join(map(re.escape, own)), re.M)
        pieces, last, changed = [], 0, False
        for m in pattern.finditer(text):
            if m.start() < last:
                continue
            end = balanced(text, m.end() - 1)
            if end < 0:
                continue
            params, body = own[m.group(1)]
            expansion = substitute(body, params, split_args(text[m.end() : end - 1]))
            pieces += [text[last : m.start()], expansion, "\n" * text[m.start() : end].count("\n")]
            last, changed = end, True
        text = "".join(pieces) + text[last:]
        if not changed:
            break
    return text


class Index:
    """Every function definition under aten/src/ATen (native/, TensorIterator, Reduce helpers)."""

    def __init__(self, root: str) -> None:
        self.root = root
        self.functions: Dict[str, List[Definition]] = {}
        self.meta: Dict[str, List[Definition]] = {}  # meta name (add_Tensor) -> definitions
        self.impl: Dict[str, List[Definition]] = {}  # TORCH_IMPL_FUNC name -> definitions
        self.stubs: set = set()
        self.cuda_registrations: Dict[
            str, List[Tuple[str, str, int]]
        ] = {}  # stub -> (fn, path, line)
        self.macros: Dict[str, Tuple[List[str], str]] = {}
        self.texts: Dict[str, str] = {}
        self.ufunc_stubs: set = set()  # stubs that torchgen's ufunc codegen registers
        self.ufunc_site = ""
        for path in self._files():
            self._read(path)

    def _files(self) -> Iterator[str]:
        base = os.path.join(self.root, "aten", "src", "ATen")
        yield os.path.join(base, "TensorIterator.cpp")
        for folder, _, names in os.walk(os.path.join(base, "native")):
            for name in sorted(names):
                if name.endswith((".cpp", ".cu", ".cuh", ".h")):
                    yield os.path.join(folder, name)

    def _read(self, path: str) -> None:
        with open(path, encoding="utf-8", errors="replace") as handle:
            raw = handle.read()
        relative = os.path.relpath(path, self.root)
        text = expand_macros(drop_non_jiterator(blank(raw)), self.macros)
        self.texts[relative] = text
        for m in re.finditer(r"DECLARE_DISPATCH\s*\(", text):
            end = balanced(text, m.end() - 1)
            stub = re.search(r"(\w+)\s*\)$", text[m.start() : end]) if end > 0 else None
            if stub:
                self.stubs.add(stub.group(1))
        if "/native/cuda/" in "/" + relative.replace(os.sep, "/"):
            for m in REGISTRATION.finditer(text):
                self.cuda_registrations.setdefault(m.group(1), []).append(
                    (m.group(3), relative, text.count("\n", 0, m.start()) + 1)
                )
        for m in STRUCTURED.finditer(text):
            name = m.group(2) + ("_" + m.group(3) if m.group(3) else "")
            table = self.impl if m.group(1) == "TORCH_IMPL_FUNC" else self.meta
            self._add(table, name, relative, text, m.start(), m.end() - 1)
        for m in DEFINITION.finditer(text):
            if m.group(2) not in KEYWORDS and not m.group(2).startswith("TORCH_"):
                self._add(self.functions, m.group(2), relative, text, m.start(2), m.end() - 1)

    def _add(self, table, name: str, path: str, text: str, at: int, paren: int) -> None:
        close = balanced(text, paren)
        brace = AFTER_PARAMS.match(text, close) if close > 0 else None
        if not brace:
            return
        end = balanced(text, brace.end() - 1, "{", "}")
        if end < 0:
            return
        table.setdefault(name, []).append(
            Definition(
                name,
                path,
                text.count("\n", 0, at) + 1,
                text[brace.end() : end - 1],
                text.count("\n", 0, brace.end()) + 1,
            )
        )

    def line_of(self, definition: Definition, offset: int) -> int:
        """The source line of a position inside a definition's body."""
        return definition.body_line + definition.body.count("\n", 0, offset)

    def registered(self, stub: str) -> List[Tuple[str, str, int]]:
        return self.cuda_registrations.get(stub, [])

    def find(self, name: str, cuda_only: bool = False) -> List[Definition]:
        found = self.functions.get(name, [])
        if cuda_only:
            found = [d for d in found if "/native/cuda/" in "/" + d.path.replace(os.sep, "/")]
        return found


def first(definitions: List[Definition]) -> Optional[Definition]:
    return definitions[0] if definitions else None
