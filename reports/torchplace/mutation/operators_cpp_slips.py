"""The C++ operators of issue 45, the slips a tired person commits (operators_cpp.py has the
standard ones; the same masked lines: comments and strings blanked, same length):
  arg_swap          two adjacent arguments of a one-line call swapped: `f(a, b)` -> `f(b, a)`
                    (not of GoogleTest's EQ/NE checks: symmetric, their operands differ only in
                    the failure's wording)
  loop_start        a `for` loop's start moved: `for (int i = 0;` -> `for (int i = 0 + 1;`
  loop_bound        its bound moved: `; i < n;` -> `; i < n - 1;`
  aug_assign        `+=` (also `-=`, `*=`, `|=`) turned into `=`
  dup_stmt          a one-line statement replaced by a copy of the statement above it
  regex_drop_alt, regex_quantifier   inside a raw string literal of a file that uses std::regex
                    or holds the message families (operators_regex.py)
  family_swap       a message family's class (`E::kX`) swapped with its neighbour family's
Each returns (operator, the whole new line) pairs; operators_cpp makes the mutants.
"""
import re
from typing import List, Optional, Tuple

from torchplace.mutation import operators_regex

NOT_CALLS = {"if", "while", "for", "switch", "return", "sizeof", "catch", "decltype", "alignof"}
SYMMETRIC = {"EXPECT_EQ", "EXPECT_NE", "ASSERT_EQ", "ASSERT_NE"}
CALL = re.compile(r"\b(\w+)\(")
AUG = re.compile(r" (\+|-|\*|\|)= ")
FOR = re.compile(r"\bfor \(([^;()]*(?:\([^;()]*\))*[^;()]*);([^;]*);")
FAMILY = re.compile(r"^\s*\{E::(k\w+),")
RAW = re.compile(r'R"\(')


def _closing(masked: str, open_at: int) -> int:
    depth = 0
    for at in range(open_at, len(masked)):
        depth += {"(": 1, ")": -1, "[": 1, "]": -1, "{": 1, "}": -1}.get(masked[at], 0)
        if depth == 0:
            return at
    return -1


def _arguments(masked: str, start: int, end: int) -> List[Tuple[int, int]]:
    """The spans of the top-level arguments between the call's parentheses."""
    spans, depth, first = [], 0, start
    for at in range(start, end):
        depth += {"(": 1, ")": -1, "[": 1, "]": -1, "{": 1, "}": -1}.get(masked[at], 0)
        if masked[at] == "," and depth == 0:
            spans.append((first, at))
            first = at + 1
    return spans + [(first, end)]


def arg_swaps(line: str, masked: str) -> List[Tuple[str, str]]:
    found = []
    for match in CALL.finditer(masked):
        if match.group(1) in NOT_CALLS or match.group(1) in SYMMETRIC:
            continue
        close = _closing(masked, match.end() - 1)
        if close < 0:
            continue
        spans = _arguments(masked, match.end(), close)
        for (a, b), (c, d) in zip(spans, spans[1:]):
            left, right = line[a:b].strip(), line[c:d].strip()
            declared = re.search(r"\w[\w:<>]*[&*]?\s+[&*]?\w+$", masked[a:b].strip())
            if left and right and left != right and not declared:
                new = line[:a] + line[a:b].replace(left, right, 1) + ","
                new += line[c:d].replace(right, left, 1) + line[d:]
                found.append(("arg_swap", new))
    return found


def loop_moves(line: str, masked: str) -> List[Tuple[str, str]]:
    found = []
    for match in FOR.finditer(masked):
        init_end, cond_start, cond_end = match.end(1), match.start(2), match.end(2)
        if " = " in masked[match.start(1) : init_end]:
            found.append(("loop_start", line[:init_end] + " + 1" + line[init_end:]))
        if masked[cond_start:cond_end].strip():
            found.append(("loop_bound", line[:cond_end] + " - 1" + line[cond_end:]))
    return found


def aug_assigns(line: str, masked: str) -> List[Tuple[str, str]]:
    return [
        ("aug_assign", line[: m.start()] + " = " + line[m.end() :]) for m in AUG.finditer(masked)
    ]


def regex_edits(line: str, masked: str) -> List[Tuple[str, str]]:
    """Each raw string literal `R"(...)"` of the line, edited as a regex."""
    found = []
    for match in RAW.finditer(line):
        if masked[match.start()] != "R":  # inside a comment or another literal
            continue
        close = masked.find('"', match.start() + 2)
        body_start, body_end = match.end(), close - 1  # the body ends before `)"`
        if close < 0 or line[body_end] != ")":
            continue
        for operator, body in operators_regex.variants(line[body_start:body_end]):
            found.append((operator, line[:body_start] + body + line[body_end:]))
    return found


def family_swaps(lines: List[str], number: int) -> List[Tuple[str, str]]:
    """A family line (1-based number) given the class of the family above or below it."""
    own = FAMILY.match(lines[number - 1])
    if not own:
        return []
    found = []
    for step in (-1, 1):
        other = _neighbour_family(lines, number - 1, step)
        if other:  # the same class: the same line, dropped by the caller
            new = lines[number - 1].replace(f"E::{own.group(1)},", f"E::{other},", 1)
            found.append(("family_swap", new))
    return found


def _neighbour_family(lines: List[str], at: int, step: int) -> Optional[str]:
    at += step
    while 0 <= at < len(lines):
        match = FAMILY.match(lines[at])
        if match:
            return match.group(1)
        if lines[at].strip() and not lines[at].lstrip().startswith("//"):
            return None  # the table ended
        at += step
    return None


def is_regex_file(text: str) -> bool:
    return "std::regex" in text or "MessageFamily" in text
