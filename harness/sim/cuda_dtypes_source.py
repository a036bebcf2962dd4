"""cuda_dtypes.py's reading of aten's C++ text: comments dropped, the preprocessor's #if chosen
as a CUDA build of that version chooses it, #defines collected, function definitions indexed,
stubs' CUDA registrations found. Standard library only; nothing here knows about dtypes.
"""
import os
import re
import warnings
from typing import Dict, List, NamedTuple, Optional, Tuple

LITERAL = r'R"(\w*)\(.*?\)\1"|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\''
TOKENS = re.compile(LITERAL + r"|//[^\n]*|/\*.*?\*/", re.S)
BRACKETS = re.compile(LITERAL + r"|[()\[\]{}]", re.S)
IDENT = re.compile(r"[A-Za-z_]\w*")
DEFINE = re.compile(r"#\s*define\s+(\w+)(\(([^)]*)\))?\s?(.*)", re.S)
REGISTER = re.compile(r"\bREGISTER_(?:CUDA_)?DISPATCH\s*\(\s*(\w+)\s*,\s*&?\s*([\w:]+)\s*\)")
QUALIFIERS = re.compile(
    r"\s*(?:const\s*)?(?:override\s*)?(?:noexcept\s*)?(?:->\s*[\w:<>&,\s]+?)?\s*\{"
)
NOT_CALLS = {
    "if",
    "for",
    "while",
    "switch",
    "return",
    "catch",
    "sizeof",
    "decltype",
    "static_assert",
    "alignas",
    "defined",
    "operator",
    "new",
    "delete",
    "throw",
}


class Define(NamedTuple):
    params: Optional[List[str]]  # None: an object-like macro
    body: str


class Source(NamedTuple):
    path: str  # relative to the tree's root
    text: str  # comments and inactive #if branches blanked, line breaks kept
    match: Dict[int, int]  # position of each ( [ { to its partner, and back
    defines: Dict[str, Define]


class Function(NamedTuple):
    name: str
    source: Source
    params: List[Tuple[str, str, bool]]  # (C++ type, name, has a default)
    body: Tuple[int, int]  # the text between the braces
    line: int


def strip_comments(text: str) -> str:
    """Comments as spaces (line breaks kept); string and character literals untouched."""

    def blank(m: "re.Match[str]") -> str:
        return m.group(0) if m.group(0)[0] in "\"'R" else re.sub(r"[^\n]", " ", m.group(0))

    return TOKENS.sub(blank, text)


def literal_end(text: str, start: int) -> int:
    """Where the string or character literal opened at `start` ends."""
    m = TOKENS.match(text, start - 1 if text[start - 1 : start] == "R" else start)
    return m.end() if m else start + 1


def evaluate_if(expression: str, known: Dict[str, int]) -> bool:
    """A #if condition as the preprocessor would: `known` macros, every other identifier 0."""
    expr = re.sub(
        r"defined\s*\(?\s*(\w+)\s*\)?", lambda m: str(int(m.group(1) in known)), expression
    )
    expr = re.sub(r"(\w+)\s*\(\s*\)", lambda m: str(known.get(m.group(1) + "()", 0)), expr)
    expr = re.sub(r"\b(0x[0-9a-fA-F]+|\d+)[uUlL]*\b", r"\1", expr)
    expr = re.sub(r"\b[A-Za-z_]\w*\b", lambda m: str(known.get(m.group(0), 0)), expr)
    expr = expr.replace("&&", " and ").replace("||", " or ")
    expr = re.sub(r"!(?!=)", " not ", expr)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return bool(eval(expr, {"__builtins__": {}}))  # digits and operators only by now
    except Exception:  # noqa: BLE001 - an #if we cannot read keeps its first branch
        return True


def preprocess(text: str, known: Dict[str, int]) -> Tuple[str, Dict[str, Define]]:
    """Inactive #if branches and every directive blanked; the #defines of active text."""
    lines, out, defines = text.split("\n"), [], {}
    stack: List[Tuple[bool, bool]] = []  # (this branch active, some branch taken)
    i = 0
    while i < len(lines):
        line, count = lines[i], 1
        while line.endswith("\\") and i + count < len(lines):
            line, count = line[:-1] + "\n" + lines[i + count], count + 1
        active = all(entry[0] for entry in stack)
        directive = re.match(r"\s*#\s*(\w+)\s*(.*)", line, re.S)
        if directive:
            word, rest = directive.group(1), directive.group(2)
            if word in ("if", "ifdef", "ifndef"):
                cond = {
                    "ifdef": lambda: rest.split()[0] in known,
                    "ifndef": lambda: rest.split()[0] not in known,
                }.get(word, lambda: evaluate_if(rest, known))()
                stack.append((cond, cond))
            elif word == "elif" and stack:
                cond = not stack[-1][1] and evaluate_if(rest, known)
                stack[-1] = (cond, stack[-1][1] or cond)
            elif word == "else" and stack:
                stack[-1] = (not stack[-1][1], True)
            elif word == "endif" and stack:
                stack.pop()
            elif word == "define" and active:
                found = DEFINE.match(line.strip())
                if found:
                    params = found.group(2) and [p.strip() for p in found.group(3).split(",")]
                    defines[found.group(1)] = Define(params, found.group(4).strip())
            out.extend([""] * count)
        else:
            out.extend(lines[i : i + count] if active else [""] * count)
        i += count
    return "\n".join(out), defines


def brackets(text: str) -> Dict[int, int]:
    """Each bracket's partner, both ways; string and character literals skipped."""
    match: Dict[int, int] = {}
    stack: List[int] = []
    pairs = {")": "(", "]": "[", "}": "{"}
    for m in BRACKETS.finditer(text):
        c, i = m.group(0), m.start()
        if c in "([{":
            stack.append(i)
        elif c in pairs:
            while stack and text[stack[-1]] != pairs[c]:
                stack.pop()  # an unbalanced one: dropped
            if stack:
                opened = stack.pop()
                match[opened], match[i] = i, opened
    return match


def split_top(text: str, separator: str = ",") -> List[str]:
    """`text` split at `separator` outside brackets and literals."""
    parts, depth, start, i = [], 0, 0, 0
    while i < len(text):
        c = text[i]
        if c in "\"'":
            i = literal_end(text, i)
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif depth == 0 and text.startswith(separator, i):
            parts.append(text[start:i])
            start = i + len(separator)
            i = start
            continue
        i += 1
    parts.append(text[start:])
    return [p.strip() for p in parts]


def parameters(text: str) -> List[Tuple[str, str, bool]]:
    """A parameter list's (type, name, has a default)."""
    found = []
    for part in split_top(text):
        declared = split_top(part, "=")
        words = IDENT.findall(declared[0])
        if words and declared[0] != "void":
            found.append(
                (declared[0][: declared[0].rfind(words[-1])].strip(), words[-1], len(declared) > 1)
            )
    return found


def line_of(source: Source, position: int) -> int:
    return source.text.count("\n", 0, position) + 1


def definitions(source: Source) -> List[Function]:
    """Every function defined in the file: `name(params) [qualifiers] {`, TORCH_IMPL_FUNC(name)."""
    text, found = source.text, []
    for m in re.finditer(r"\b(?:TORCH_IMPL_FUNC\s*\(\s*(\w+)\s*\)|([A-Za-z_]\w*))\s*\(", text):
        name = m.group(1) or m.group(2)
        before = text[max(0, m.start() - 8) : m.start()]
        if (
            name in NOT_CALLS
            or re.search(r"(\.|->|=|\breturn|\bnew)\s*$", before)
            and not before.endswith("::")
        ):
            continue
        closed = source.match.get(m.end() - 1)
        after = closed is not None and QUALIFIERS.match(text, closed + 1)
        end = after and source.match.get(after.end() - 1)
        if end:
            found.append(
                Function(
                    name,
                    source,
                    parameters(text[m.end() : closed]),
                    (after.end(), end),
                    line_of(source, m.start()),
                )
            )
    return found


class Tree:
    """A version's aten/src/ATen/native: its CUDA files and the shared ones beside them."""

    def __init__(self, root: str, known: Dict[str, int]):
        native = os.path.join(root, "aten", "src", "ATen", "native")
        self.root, self.sources, self.functions = root, [], {}
        self.stubs: Dict[str, List[Tuple[str, Source]]] = {}
        for folder, cuda in ((os.path.join(native, "cuda"), True), (native, False)):
            for name in sorted(os.listdir(folder)):
                if not name.endswith((".cu", ".cpp", ".cuh", ".h")):
                    continue
                self.add(os.path.join(folder, name), known, cuda)

    def add(self, path: str, known: Dict[str, int], cuda: bool) -> None:
        if path.endswith(".cu"):
            known = dict(known, __CUDACC__=1)
        with open(path, encoding="utf-8", errors="replace") as handle:
            text, defines = preprocess(strip_comments(handle.read()), known)
        source = Source(os.path.relpath(path, self.root), text, brackets(text), defines)
        self.sources.append(source)
        for function in definitions(source):
            self.functions.setdefault(function.name, []).append(function)
        for m in REGISTER.finditer(text) if cuda else ():
            self.stubs.setdefault(m.group(1), []).append((m.group(2).split("::")[-1], source))

    def define(self, name: str, source: Source) -> Optional[Define]:
        return source.defines.get(name)

    def candidates(self, name: str, near: Optional[Source], arity: int) -> List[Function]:
        """The definitions a call of `name` with `arity` arguments may reach: the caller's file
        first, then the CUDA folder, then the shared files."""
        found = [
            f
            for f in self.functions.get(name, ())
            if sum(not p[2] for p in f.params) <= arity <= len(f.params)
        ]
        same = [f for f in found if near is not None and f.source is near]
        cuda = [f for f in found if "/cuda/" in f.source.path]
        return same or cuda or found
