"""C++ mutant schemata (issue 45): a file's mutants compiled into one build, each chosen at run
time by its number (TORCHPLACE_MUTANT=k), so that a file costs one rebuild, not one a mutant.

Each C++ mutant replaces one line. Where that line lies inside a function body (strictly between
its braces), the schema copies the body once per mutant, with the line replaced, as the cases of
a switch on the mutant's number; `default` is the original body. `#line` directives give every
copy the original's line numbers (__LINE__, TORCH_CHECK's locations). A first build numbers
copy k from (k + 1) * STRIDE instead, so that a compile error names its copy: those mutants
leave the schema. They, and mutants outside a body (a table at namespace scope, a signature
line), are built one by one, as before. constexpr bodies are never copied (their copies would
read the number at compile time).
"""
import re
from dataclasses import dataclass
from typing import Dict, Iterable, List, Optional, Set, Tuple

from torchplace.mutation.operators_cpp import Mutant, code_mask

ENV = "TORCHPLACE_MUTANT"
STRIDE = 100_000  # a copy's numbered lines: (k + 1) * STRIDE + its line (files are shorter)
PRELUDE = f"""#ifndef TORCHPLACE_SCHEMATA_PRELUDE
#define TORCHPLACE_SCHEMATA_PRELUDE
#include <cstdlib>
namespace torchplace_schemata {{
inline long active() {{
  static const long chosen = [] {{
    const char* value = std::getenv("{ENV}");
    return value ? std::atol(value) : -1L;
  }}();
  return chosen;
}}
}}  // namespace torchplace_schemata
#endif
#line 1
"""
# what may stand between a function's `)` and its body's `{`
_QUALIFIER = re.compile(r"(\b(const|override|final|mutable|noexcept)|noexcept\s*\([^()]*\))\s*$")
_TRAILING_RETURN = re.compile(r"->\s*[\w:<>,\s*&]+$")
_CONSTANT = re.compile(r"\b(constexpr|consteval)\b")
_ERROR_AT = re.compile(r"^(?P<path>[^\s:]+):(?P<line>\d+):(\d+:)? ")


@dataclass(frozen=True)
class Body:
    """A function body: its braces' (0-based line, column)."""

    open_line: int
    open_col: int
    close_line: int
    close_col: int

    def holds(self, line: int) -> bool:
        """Whether 1-based `line` lies strictly between the braces' lines."""
        return self.open_line + 1 < line < self.close_line + 1


def _code_lines(text: str) -> List[str]:
    """The masked lines (code_mask), with preprocessor lines (and their continuations) blanked."""
    masked, inside = code_mask(text), False
    for number, line in enumerate(masked):
        directive = inside or line.lstrip().startswith("#")
        inside = directive and line.rstrip().endswith("\\")
        if directive:
            masked[number] = " " * len(line)
    return masked


def _opens_body(tail: str) -> bool:
    """Whether a `{` after this statement text opens a function (or lambda) body."""
    if _CONSTANT.search(tail):
        return False
    text = tail.rstrip()
    while True:
        stripped = _QUALIFIER.sub("", text).rstrip()
        stripped = _TRAILING_RETURN.sub("", stripped).rstrip()
        if stripped == text:
            return text.endswith(")")
        text = stripped


def bodies(text: str) -> List[Body]:
    """The outermost function and lambda bodies of a C++ text (lambdas inside a body are part
    of it), in file order."""
    found: List[Body] = []
    stack: List[Tuple[str, int, int]] = []  # (body | inner | other, line, column) per open `{`
    tail: List[str] = []  # the code since the last `;`, `{` or `}`
    for number, line in enumerate(_code_lines(text)):
        for column, char in enumerate(line):
            if char not in "{};":
                tail.append(char)
                continue
            if char == "{":
                if any(kind in ("body", "inner") for kind, _, _ in stack):
                    stack.append(("inner", number, column))
                else:
                    kind = "body" if _opens_body("".join(tail)) else "other"
                    stack.append((kind, number, column))
            elif char == "}" and stack:
                kind, open_line, open_col = stack.pop()
                if kind == "body":
                    found.append(Body(open_line, open_col, number, column))
            tail = []
        tail.append(" ")
    kept: List[Body] = []  # a body that opens on the line another closes cannot be copied
    for body in sorted(found, key=lambda body: body.open_line):
        if not kept or body.open_line > kept[-1].close_line:
            kept.append(body)
    return kept


def placeable(text: str, mutants: Iterable[Mutant]) -> Dict[Mutant, Body]:
    """The mutants a schema can hold, each with its body."""
    found = bodies(text)
    return {m: b for m in mutants for b in found if b.holds(m.line)}


def _copy(lines: List[str], body: Body, mutant: Optional[Mutant]) -> List[str]:
    """The body's text between its braces, with the mutant's line replaced."""
    inner = [lines[body.open_line][body.open_col + 1 :]]
    inner += lines[body.open_line + 1 : body.close_line]
    inner.append(lines[body.close_line][: body.close_col])
    if mutant is not None:
        inner[mutant.line - 1 - body.open_line] = mutant.new
    return inner


def _body_schema(
    lines: List[str], body: Body, cases: List[Tuple[int, Mutant]], numbered: bool
) -> List[str]:
    """The lines replacing the body's lines: the switch, one case a mutant, the original."""
    first = body.open_line + 1  # the 1-based line of the text after `{`
    switch = " switch (::torchplace_schemata::active()) {"
    out = [lines[body.open_line][: body.open_col + 1] + switch]
    for number, mutant in cases:
        copy = _copy(lines, body, mutant)
        start = (number + 1) * STRIDE + first if numbered else first
        out += [f"#line {start}", f"case {number}: {{" + copy[0], *copy[1:-1]]
        out.append(copy[-1] + "} break;")
    copy = _copy(lines, body, None)
    out += [f"#line {first}", "default: {" + copy[0], *copy[1:-1], copy[-1] + "}", "}"]
    return out + [f"#line {body.close_line + 1}", lines[body.close_line][body.close_col :]]


def schema(text: str, numbered: Dict[int, Mutant], by_number: bool = False) -> str:
    """The file's text with every numbered mutant in a case of its body's switch (placeable
    mutants only); by_number: copy k's lines numbered from (k + 1) * STRIDE (error_copies)."""
    lines = text.split("\n")
    held = placeable(text, numbered.values())
    out: List[str] = []
    done = 0  # the next original line to copy
    for body in bodies(text):
        cases = [(k, m) for k, m in sorted(numbered.items()) if held.get(m) == body]
        if not cases:
            continue
        out += lines[done : body.open_line]
        out += _body_schema(lines, body, cases, by_number)
        done = body.close_line + 1
    return PRELUDE + "\n".join(out + lines[done:])


def spellings(path: str) -> Tuple[str, ...]:
    """The paths a compiler may name `path` by: a header under harness/ is included as
    <torchplace/...>, through the build's include/torchplace link to harness/."""
    if path.startswith("harness/"):
        return (path, "include/torchplace/" + path[len("harness/") :])
    return (path,)


def error_copies(output: str, path: str) -> Tuple[Set[int], bool]:
    """From a build's output of a by_number schema of `path`: (the mutant numbers whose copies
    an error names, whether an error names a line outside every copy)."""
    named: Set[int] = set()
    outside = False
    names = spellings(path)
    for line in output.splitlines():
        match = _ERROR_AT.match(line.strip())
        if not match or not match["path"].endswith(names):
            continue
        number = int(match["line"]) // STRIDE - 1
        if number >= 0:
            named.add(number)
        elif ": error:" in line:
            outside = True
    return named, outside
