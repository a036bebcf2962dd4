"""Token-level mutation operators for C++ (issue 26): each mutant changes one line of a file.

The operators (name: what it does):
  rel_flip       `<` <-> `<=`, `>` <-> `>=` (binary operators only: clang-format spaces them,
                 so ` < ` is a comparison and `optional<bool>` a template)
  eq_flip        `==` <-> `!=`
  logic_swap     ` && ` <-> ` || `
  not_drop       drops a logical `!`
  bool_flip      `true` <-> `false`
  negate_if      `if (c)` -> `if (!(c))`, also `while (c)`
  delete_branch  `if (c)` -> `if (false)`
  unguard        `if (c) stmt;` -> `stmt;` (the guard of a one-line branch dropped)
  const_plus / const_minus   a numeric literal +1 / -1 (bounds and constants)
  minmax_swap    `min(` <-> `max(`
  delete_stmt    a whole one-line statement removed (not a declaration-looking or return line)
  return_value   `return X;` -> `return {};` (value-initialised: false, 0, empty, nullopt); not
                 where X is already that value (VALUE_INITIALISED: the same program)
Comments, string and character literals and preprocessor lines are never mutated. A mutant that
does not compile proves nothing and is recorded as a build failure, never as killed. A mutant in
the first branch of `#if NAME` / `#ifdef NAME` carries `needs = NAME`: a build where NAME is off
(TORCHPLACE_WITH_CUDA without CUDA) does not compile that line, so it cannot judge the mutant; one
in any other branch (`#if TP_SIM_AT_LEAST(2, 1)`, `#elif`, `#else`) carries BRANCH, and the
preprocessor says whether this build compiles it.
"""
import hashlib
import re
from collections import Counter
from dataclasses import dataclass, replace
from typing import Callable, Dict, List, Optional

from torchplace.mutation import operators_cpp_slips as slips


@dataclass(frozen=True)
class Mutant:
    path: str  # relative to the repository root
    line: int  # 1-based
    operator: str
    index: int  # the operator's n-th site on that line (0-based)
    old: str  # the whole original line
    new: str  # the whole mutated line ("" for a deleted statement: the line is emptied)
    site: str = ""  # [enclosing function:]hash of the line's text: stamp() sets it
    needs: str = ""  # the macro of an enclosing `#if NAME` branch: compiled only where NAME is on

    @property
    def id(self) -> str:
        """`path:[function:]hash:operator:index`: no line number, so that an edit elsewhere in
        the file keeps the id; index counts the same operator at the same site (the same line
        text in the same function) in file order."""
        return f"{self.path}:{self.site or self.line}:{self.operator}:{self.index}"


def stamp(mutants: list, lines: List[str], scope_of: Callable[[int], str]) -> list:
    """The mutants with their stable site and index (see Mutant.id)."""
    seen: Counter = Counter()
    stamped = []
    for mutant in mutants:
        digest = hashlib.sha1(lines[mutant.line - 1].strip().encode()).hexdigest()[:6]
        scope = scope_of(mutant.line)
        site = f"{scope}:{digest}" if scope else digest
        index = seen[(site, mutant.operator)]
        seen[(site, mutant.operator)] += 1
        stamped.append(replace(mutant, site=site, index=index))
    return stamped


def code_mask(text: str) -> list:
    """Per line, a copy in which comments and string/char literals are blanked with spaces, so
    operators never match inside them (same length as the line)."""
    out: List[str] = []
    line: List[str] = []
    state, i = "code", 0
    raw_delim: Optional[str] = None
    while i < len(text):
        c = text[i]
        nxt = text[i + 1] if i + 1 < len(text) else ""
        if c == "\n":
            out.append("".join(line))
            line = []
            if state == "line_comment":
                state = "code"
            i += 1
            continue
        if state == "code":
            if c == "/" and nxt == "/":
                state = "line_comment"
            elif c == "/" and nxt == "*":
                state = "block_comment"
                line.append("  ")
                i += 2
                continue
            elif c == "R" and nxt == '"' and (i == 0 or not text[i - 1].isalnum()):
                close = text.find("(", i)
                raw_delim = ")" + text[i + 2 : close] + '"'
                state = "raw"
                line.append("R")
                i += 1
                continue
            elif c == '"':
                state = "string"
            elif c == "'" and not (i > 0 and text[i - 1].isalnum()):  # not a digit separator
                state = "char"
            line.append(c if state == "code" else (c if c in "\"'" else " "))
            i += 1
            continue
        if state in ("line_comment",):
            line.append(" ")
        elif state == "block_comment":
            if c == "*" and nxt == "/":
                line.append("  ")
                i += 2
                state = "code"
                continue
            line.append(" ")
        elif state == "raw":
            if raw_delim is not None and text.startswith(raw_delim, i):
                line.append(" " * (len(raw_delim) - 1) + '"')
                i += len(raw_delim)
                state = "code"
                continue
            line.append(" ")
        elif state in ("string", "char"):
            quote = '"' if state == "string" else "'"
            if c == "\\":
                line.append("  ")
                i += 2
                continue
            if c == quote:
                state = "code"
                line.append(c)
            else:
                line.append(" ")
        i += 1
    out.append("".join(line))
    return out


SIMPLE = [  # (operator, regex on the masked line, replacement of the matched text)
    ("rel_flip", r" <= ", " < "),
    ("rel_flip", r" < ", " <= "),
    ("rel_flip", r" >= ", " > "),
    ("rel_flip", r" > ", " >= "),
    ("eq_flip", r" == ", " != "),
    ("eq_flip", r" != ", " == "),
    ("logic_swap", r" && ", " || "),
    ("logic_swap", r" \|\| ", " && "),
    ("bool_flip", r"\btrue\b", "false"),
    ("bool_flip", r"\bfalse\b", "true"),
    ("minmax_swap", r"\bmin(?=\()", "max"),
    ("minmax_swap", r"\bmax(?=\()", "min"),
    ("not_drop", r"!(?!=)", ""),
]
# Returned values `return {};` gives again (a bool, a pointer, an optional): no mutant to make.
VALUE_INITIALISED = {"{}", "false", "nullptr", "std::nullopt", "c10::nullopt"}
NUMBER = re.compile(r"(?<![\w.])(\d+\.\d*|\d*\.\d+|\d+)(e[-+]?\d+)?([fFuUlL]*)(?![\w.])")
NOT_A_STATEMENT = re.compile(
    r"^\s*(return\b|using\b|namespace\b|template\b|struct\b|class\b|enum\b|case\b|default\b|"
    r"public:|private:|protected:|static_assert\b|constexpr\b|const\b|static\b|auto\b|"
    r"[\w:<>,]+[&*]?\s+[&*]?\w+(\s*=|\s*\{|\s*\(|;))"
)


def _number_variants(match: re.Match[str]) -> list[tuple[str, str]]:
    body, exponent, suffix = match.group(1), match.group(2) or "", match.group(3)
    if "." in body or exponent:
        value = float(body + exponent)
        return [("const_plus", repr(value + 1) + suffix), ("const_minus", repr(value - 1) + suffix)]
    value = int(body)
    variants = [("const_plus", str(value + 1) + suffix)]
    if value > 0:  # an unsigned 0 - 1 is a build failure or a wrap, not a bound moved
        variants.append(("const_minus", str(value - 1) + suffix))
    return variants


def _matching_paren(masked: str, open_at: int) -> int:
    depth = 0
    for at in range(open_at, len(masked)):
        depth += {"(": 1, ")": -1}.get(masked[at], 0)
        if depth == 0:
            return at
    return -1


def is_statement(masked: str, previous_code: str) -> bool:
    """A whole one-line statement, not a declaration-looking or return line."""
    stripped = masked.strip()
    starts = previous_code.endswith((";", "{", "}", ":")) or previous_code == ""
    return bool(
        starts
        and stripped.endswith(";")
        and re.search(r"\w", stripped)
        and not NOT_A_STATEMENT.match(masked)
        and stripped.count("(") == stripped.count(")")
    )


def _line_mutants(
    path: str, number: int, line: str, masked: str, previous_code: str
) -> list[Mutant]:
    sites = []  # (operator, start, end, replacement)
    if masked.lstrip().startswith("#"):
        return []
    slips = slips_of(line, masked)  # whole new lines
    sites += [(operator, 0, len(line), new) for operator, new in slips]
    for operator, pattern, replacement in SIMPLE:
        for match in re.finditer(pattern, masked):
            sites.append((operator, match.start(), match.end(), replacement))
    for match in NUMBER.finditer(masked):
        for operator, text in _number_variants(match):
            sites.append((operator, match.start(), match.end(), text))
    for match in re.finditer(r"\b(if|while) \(", masked):
        close = _matching_paren(masked, match.end() - 1)
        if close > 0:
            condition = line[match.end() : close]
            sites.append(("negate_if", match.end(), close, f"!({condition})"))
            if match.group(1) == "if":
                sites.append(("delete_branch", match.end(), close, "false"))
                rest = masked[close + 1 :].strip()
                if rest.endswith(";") and not masked[: match.start()].strip():  # `if (c) stmt;`
                    sites.append(("unguard", match.start(), close + 2, ""))
    returned = re.match(r"^(\s*)return (.+);\s*$", masked)
    if returned and returned.group(2).strip() not in VALUE_INITIALISED:
        sites.append(("return_value", 0, len(line), f"{returned.group(1)}return {{}};"))
    if is_statement(masked, previous_code):
        sites.append(("delete_stmt", 0, len(line), ""))
    mutants: list[Mutant] = []
    seen: dict[str, int] = {}
    for operator, start, end, replacement in sorted(sites, key=lambda s: (s[1], s[0])):
        index = seen.get(operator, 0)
        seen[operator] = index + 1
        new = line[:start] + replacement + line[end:]
        if new != line:
            mutants.append(Mutant(path, number, operator, index, line, new))
    return mutants


CONDITIONAL = re.compile(r"^\s*#\s*(if|ifdef|ifndef|elif|else|endif)\b(.*)$")
IDENTIFIER = re.compile(r"^\w+$")


# The `needs` of a line in any other conditional branch (`#if A && B`, `#elif`, `#else`,
# `#ifndef`): whether it is compiled is the preprocessor's answer (macros.line_compiled).
BRANCH = "(branch)"


def continued_directives(lines: List[str]) -> Dict[int, int]:
    """Each line (1-based) that continues a conditional directive (`#if A || \\`), to the
    directive's first line: it is evaluated where the directive is, outside its branch."""
    continued: Dict[int, int] = {}
    first = 0  # the directive the line before continues, or 0
    for number, line in enumerate(lines, start=1):
        if first:
            continued[number] = first
        elif CONDITIONAL.match(line):
            first = number
        if not line.rstrip().endswith("\\"):
            first = 0
    return continued


def needed_macros(lines: List[str]) -> List[str]:
    """Per line, what its innermost enclosing conditional branch needs: NAME in the first branch
    of `#if NAME` or `#ifdef NAME`, BRANCH in any other branch, "" outside any."""
    stack: List[str] = []
    needs: List[str] = []
    continued = continued_directives(lines)
    for number, line in enumerate(lines, start=1):
        if number in continued:  # the directive's own needs: those outside its branch
            needs.append(needs[continued[number] - 1])
            continue
        match = CONDITIONAL.match(line)
        outer = stack[-1] if stack else ""
        if match:
            kind, condition = match.group(1), match.group(2).split("//")[0].strip()
            named = kind in ("if", "ifdef") and IDENTIFIER.match(condition)
            if kind in ("if", "ifdef", "ifndef"):
                stack.append(condition if named else BRANCH)
            elif kind in ("elif", "else"):
                outer = stack[-2] if len(stack) > 1 else ""
                stack[-1:] = [BRANCH]
            else:
                stack[-1:] = []
        needs.append(outer if match else (stack[-1] if stack else ""))
    return needs


def slips_of(line: str, masked: str) -> list[tuple[str, str]]:
    return (
        slips.arg_swaps(line, masked)
        + slips.loop_moves(line, masked)
        + slips.aug_assigns(line, masked)
    )


def _file_slips(path: str, lines: List[str], masked: List[str], regexes: bool) -> list:
    """The operators that need more than the line: regexes (in a file that holds them), a
    family's neighbour, the statement above (dup_stmt)."""
    found, previous_code, above = [], "", ""
    for number, (line, mask) in enumerate(zip(lines, masked), start=1):
        new_lines = slips.family_swaps(lines, number)
        new_lines += slips.regex_edits(line, mask) if regexes else []
        statement = not mask.lstrip().startswith("#") and is_statement(mask, previous_code)
        if statement and above:
            indent = line[: len(line) - len(line.lstrip())]
            if above[: len(above) - len(above.lstrip())] == indent:
                new_lines.append(("dup_stmt", above))
        above = line if statement else ("" if mask.strip() else above)
        if mask.strip() and not mask.lstrip().startswith("#"):
            previous_code = mask.strip()
        seen: dict[str, int] = {}
        for operator, new in new_lines:
            if new == line:  # the same class above, the same statement above
                continue
            seen[operator] = seen.get(operator, -1) + 1
            found.append(Mutant(path, number, operator, seen[operator], line, new))
    return found


def mutants_of(path: str, text: str) -> list:
    """Every mutant of one C++ file, in line order, ids stable for an unchanged file."""
    lines, masked = text.split("\n"), code_mask(text)
    needs = needed_macros(lines)
    mutants: List[Mutant] = []
    previous_code = ""
    for number, (line, mask) in enumerate(zip(lines, masked), start=1):
        found = _line_mutants(path, number, line, mask, previous_code)
        mutants += [replace(m, needs=needs[number - 1]) for m in found]
        if mask.strip() and not mask.lstrip().startswith("#"):
            previous_code = mask.strip()
    more = _file_slips(path, lines, masked, slips.is_regex_file(text))
    mutants += [replace(m, needs=needs[m.line - 1]) for m in more]
    mutants.sort(key=lambda m: m.line)  # stable: each line's own order kept
    return stamp(mutants, lines, lambda number: "")


def apply(text: str, mutant: Mutant) -> str:
    lines = text.split("\n")
    if lines[mutant.line - 1] != mutant.old:
        raise ValueError(f"{mutant.id}: line {mutant.line} changed since the mutant was made")
    lines[mutant.line - 1] = mutant.new
    return "\n".join(lines)
