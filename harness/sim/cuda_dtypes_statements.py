"""cuda_dtypes.py's statement reader: a function body as a tree of statements (if/else, loops,
switch, return, blocks, expressions), enough to follow which branch reaches which dispatch; and
the text helpers the analysis reads a body with (locals' initialisers, a method's receiver).
"""
import re
from typing import Dict, List, NamedTuple, Optional, Tuple

from cuda_dtypes_macros import substitute
from cuda_dtypes_source import Function, Source, brackets, line_of, split_top

WORD = re.compile(r"[A-Za-z_]\w*")
QUESTION = re.compile(r'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|\?')  # literals skipped


class Buffer(NamedTuple):
    """Text to read statements from: a function's body, lines counted from `first_line`."""

    text: str
    match: Dict[int, int]
    source: Source
    first_line: int

    def where(self, position: int) -> str:
        return f"{self.source.path}:{self.first_line + self.text.count(chr(10), 0, position)}"


class Stmt(NamedTuple):
    kind: str  # expr, return, if, loop, switch, case, block, jump
    span: Tuple[int, int]  # its expression, condition or label
    children: List["Stmt"]  # if: [then, else]; loop, switch: [body]; block: its statements


def skip_space(buffer: Buffer, i: int) -> int:
    while i < len(buffer.text) and buffer.text[i].isspace():
        i += 1
    return i


def statement_end(buffer: Buffer, i: int, end: int) -> int:
    """The position of the `;` ending the statement at `i` (brackets skipped), or `end`."""
    text = buffer.text
    while i < end:
        c = text[i]
        if c in "([{" and i in buffer.match:
            i = buffer.match[i] + 1
            continue
        if c in "\"'":
            m = re.compile(r'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'').match(text, i)
            i = m.end() if m else i + 1
            continue
        if c == ";" or c == "}":
            return i
        i += 1
    return end


def parse_block(buffer: Buffer, start: int, end: int) -> List[Stmt]:
    statements, i = [], skip_space(buffer, start)
    while i < end:
        stmt, i = parse_one(buffer, i, end)
        if stmt is not None:
            statements.append(stmt)
        i = skip_space(buffer, i)
    return statements


def parenthesised(buffer: Buffer, i: int) -> Tuple[Tuple[int, int], int]:
    """The span inside the parentheses at or after `i`, and the position after them."""
    opened = buffer.text.index("(", i)
    closed = buffer.match.get(opened, opened)
    return (opened + 1, closed), closed + 1


def parse_one(buffer: Buffer, i: int, end: int) -> Tuple[Optional[Stmt], int]:
    text = buffer.text
    word = WORD.match(text, i)
    keyword = word.group(0) if word else ""
    if text[i] == "{":
        closed = buffer.match.get(i, end)
        return Stmt("block", (i, closed), parse_block(buffer, i + 1, closed)), closed + 1
    if text[i] in ";}":
        return None, i + 1
    if keyword == "if":
        after = re.compile(r"if\s*(constexpr)?\s*").match(text, i).end()
        cond, j = parenthesised(buffer, after)
        then, j = parse_one(buffer, skip_space(buffer, j), end)
        k = skip_space(buffer, j)
        other = None
        if text.startswith("else", k) and not (k + 4 < len(text) and text[k + 4].isalnum()):
            other, j = parse_one(buffer, skip_space(buffer, k + 4), end)
        return Stmt("if", cond, [then or empty(), other or empty()]), j
    if keyword in ("for", "while", "switch"):
        head, j = parenthesised(buffer, word.end())
        body, j = parse_one(buffer, skip_space(buffer, j), end)
        return Stmt("switch" if keyword == "switch" else "loop", head, [body or empty()]), j
    if keyword == "do":
        body, j = parse_one(buffer, skip_space(buffer, word.end()), end)
        return Stmt("loop", (j, j), [body or empty()]), statement_end(buffer, j, end) + 1
    if keyword in ("case", "default"):
        colon = re.compile(r"(?<!:):(?!:)").search(text, i)
        return Stmt("case", (i, colon.start()), []), colon.end()
    if keyword == "try":
        body, j = parse_one(buffer, skip_space(buffer, word.end()), end)
        while text.startswith("catch", skip_space(buffer, j)):
            _, j = parenthesised(buffer, skip_space(buffer, j))
            _, j = parse_one(buffer, skip_space(buffer, j), end)  # a handler: not followed
        return body, j
    kind = {
        "return": "return",
        "break": "jump",
        "continue": "jump",
        "goto": "jump",
        "throw": "throw",
    }.get(keyword, "expr")
    stop = statement_end(buffer, i, end)
    start = word.end() if kind != "expr" else i
    return Stmt(kind, (start, stop), []), stop + 1


def empty() -> Stmt:
    return Stmt("block", (0, 0), [])


def body_buffer(function: Function) -> Buffer:
    """The function's body with the file's own function-like macros expanded in place
    (Sort.cpp's TOTENSOR), each expansion on its call's first line."""
    source = function.source
    text = source.text[function.body[0] : function.body[1]]
    for name, define in source.defines.items():
        if define.params is None or name.startswith(("AT_", "TORCH_", "C10_")):
            continue
        for m in reversed(list(re.finditer(rf"\b{name}\s*\(", text))):
            closed = brackets(text).get(m.end() - 1)
            if closed is not None:
                call = text[m.start() : closed + 1]
                body = substitute(define, split_top(text[m.end() : closed])).replace("\n", " ")
                text = text[: m.start()] + body + "\n" * call.count("\n") + text[closed + 1 :]
    return Buffer(text, brackets(text), source, line_of(source, function.body[0]))


def initialisers(text: str, name: str) -> List[str]:
    """What a local variable is declared or assigned from in `text`."""
    found = [m.group(1) for m in re.finditer(rf"(?<![\w.>:]){name}\s*=(?!=)\s*([^;]+);", text)]
    found += [m.group(1) for m in re.finditer(rf"[\w:>&*]\s+{name}\s*[({{]([^;]*)[)}}]\s*;", text)]
    return found


def receiver_of(buffer: Buffer, dot: int) -> str:
    """The expression a method is called on: `a.b(c)->d` before `.e(...)`."""
    text, i = buffer.text, dot
    while True:
        j = i
        while j > 0 and text[j - 1].isspace():
            j -= 1
        if j > 0 and text[j - 1] in ")]":
            j = buffer.match.get(j - 1, j - 1)
        while j > 0 and (text[j - 1].isalnum() or text[j - 1] == "_"):
            j -= 1
        if text[j - 2 : j] in ("->", "::") or text[j - 1 : j] == ".":
            i = j - (1 if text[j - 1 : j] == "." else 2)
            continue
        if text[j - 1 : j] == "*" and not text[j - 2 : j - 1].isalnum():
            j -= 1
        return text[j:dot].strip()


def question_mark(text: str, start: int, end: int, skipped: List[Tuple[int, int]]) -> int:
    """The first `?` of a conditional expression (not in a literal or a brace group), or `end`."""
    for m in QUESTION.finditer(text, start, end):
        if m.group(0) == "?" and not any(a <= m.start() < b for a, b in skipped):
            return m.start()
    return end


def lambda_spans(buffer: Buffer, start: int, end: int) -> List[Tuple[int, int]]:
    """The brace groups in an expression (lambda bodies, initialiser lists)."""
    spans, i = [], buffer.text.find("{", start, end)
    while 0 <= i < end:
        close = buffer.match.get(i, end)
        spans.append((i, close))
        i = buffer.text.find("{", close + 1, end)
    return spans
