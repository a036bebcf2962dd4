"""Mutations of a regular expression's text (issue 45), for the regexes held in string literals:
the classifier's message families (harness/message_families.cpp), the raw strings of a C++ file
that uses std::regex, and the first argument of Python's re.compile/match/search/... calls.

  regex_drop_alt    one alternative of a group dropped: `(a|b|c)` -> `(b|c)`, `(a|c)`, `(a|b)`
  regex_quantifier  `+` -> `*`, `*` -> `+`, a `?` quantifier dropped (the optional part required)
Character classes (`[...]`) and escapes are left alone; `(?`, `(?:`, `(?=` open no quantifier.
"""
from typing import List, Tuple


def _structure(body: str) -> Tuple[List[int], List[Tuple[int, int]]]:
    """(the indices of quantifier characters, (open, close) of each balanced group), outside
    escapes and character classes."""
    quantifiers: List[int] = []
    groups: List[Tuple[int, int]] = []
    opened: List[int] = []
    at, in_class = 0, False
    while at < len(body):
        c = body[at]
        if c == "\\":
            at += 2
            continue
        if in_class:
            in_class = c != "]"
        elif c == "[":
            in_class = True
        elif c == "(":
            opened.append(at)
        elif c == ")" and opened:
            groups.append((opened.pop(), at))
        elif c in "+*?" and at > 0 and body[at - 1] not in "(+*?":
            quantifiers.append(at)
        at += 1
    return quantifiers, sorted(groups)


def _alternatives(body: str, start: int, end: int) -> List[Tuple[int, int]]:
    """The spans of a group's top-level alternatives (one span: no alternation)."""
    spans, depth, at, first, in_class = [], 0, start + 1, start + 1, False
    if body.startswith("?", start + 1):  # (?: (?= (?!: the alternatives start after the marker
        first = at = start + 3 if body[start + 2] in ":=!" else start + 1
    while at < end:
        c = body[at]
        if c == "\\":
            at += 2
            continue
        if in_class:
            in_class = c != "]"
        elif c == "[":
            in_class = True
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif c == "|" and depth == 0:
            spans.append((first, at))
            first = at + 1
        at += 1
    return spans + [(first, end)]


def variants(body: str) -> List[Tuple[str, str]]:
    """(operator, mutated body) for every site, in text order."""
    quantifiers, groups = _structure(body)
    found = []
    for start, end in groups:
        spans = _alternatives(body, start, end)
        if len(spans) < 2:
            continue
        for k, (a, b) in enumerate(spans):
            # drop the alternative and the `|` that joins it to a neighbour
            cut = (a - 1, b) if k == len(spans) - 1 else (a, b + 1)
            found.append(("regex_drop_alt", body[: cut[0]] + body[cut[1] :]))
    for at in quantifiers:
        replacement = {"+": "*", "*": "+", "?": ""}[body[at]]
        found.append(("regex_quantifier", body[:at] + replacement + body[at + 1 :]))
    return [(op, new) for op, new in found if new != body]
