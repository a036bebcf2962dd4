"""The error messages of LibTorch's C++ source (source_strings.py): every TORCH_CHECK*,
AT_ERROR, AT_ASSERTM, TORCH_INTERNAL_ASSERT*, C10_THROW_ERROR call and torch/csrc's
`throw TypeError("...%s...", ...)`, as (line, macro, template, checked expression).

A template is the message as c10::str builds it from the macro's message arguments: each string
literal as written (adjacent literals joined, escapes decoded), every other argument a
placeholder {} (a literal { or } is doubled). A call with no string literal among its message
arguments gives no template (TORCH_CHECK(cond) says "Expected cond to be true ...").
"""
import re
from typing import Iterator, List, Optional, Tuple

# Macro -> how many leading arguments are not the message: the checked condition, the error
# type (TORCH_CHECK_WITH, C10_THROW_ERROR), the argument number (TORCH_CHECK_ARG).
MACRO = re.compile(
    r"\b(TORCH_CHECK_WITH|TORCH_CHECK_ARG|TORCH_CHECK(?:_[A-Z_]+)?|AT_ERROR|AT_ASSERTM|"
    r"TORCH_INTERNAL_ASSERT(?:_DEBUG_ONLY)?|C10_THROW_ERROR|"
    r"throw\s+(?:torch::)?(?:TypeError|ValueError|IndexError|AttributeError|NotImplementedError))"
    r"\s*\("
)
SKIPPED = re.compile(r"TORCH_CHECK_(EQ|NE|LE|LT|GE|GT|MSG|WITH_MSG)$")
ESCAPES = {"n": "\n", "t": "\t", '"': '"', "'": "'", "\\": "\\", "0": "", "r": "\r"}
STRING = re.compile(r'(?:u8|L|u|U)?"((?:[^"\\\n]|\\.)*)"|R"(\w*)\((.*?)\)\2"', re.S)
PRINTF = re.compile(r"%[-+ #0]*\d*(?:\.\d*)?(?:l|ll|z|h)?[sdifuxcgp]")


def leading(macro: str) -> int:
    if macro.startswith("throw") or macro == "AT_ERROR":
        return 0
    return 2 if macro in ("TORCH_CHECK_WITH", "TORCH_CHECK_ARG") else 1


TOKENS = re.compile(r"//[^\n]*|/\*.*?(?:\*/|\Z)|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'", re.S)


def blank_comments(text: str) -> str:
    """The text with every comment replaced by spaces (newlines kept): strings stay."""
    return TOKENS.sub(
        lambda m: m.group(0) if m.group(0)[0] in "\"'" else re.sub(r"[^\n]", " ", m.group(0)), text
    )


def call_arguments(text: str, start: int) -> Optional[List[str]]:
    """The top-level arguments of the call whose '(' is at text[start], or None if unclosed."""
    depth, args, begin, i = 0, [], start + 1, start
    while i < len(text):
        c = text[i]
        if c in "\"'":
            end = i + 1
            while end < len(text) and text[end] != c:
                end += 2 if text[end] == "\\" else 1
            i = end
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                args.append(text[begin:i].strip())
                return args
        elif c == "," and depth == 1:
            args.append(text[begin:i].strip())
            begin = i + 1
        i += 1
    return None


def decode(body: str) -> str:
    return re.sub(r"\\(.)", lambda m: ESCAPES.get(m.group(1), m.group(1)), body)


def literal_of(argument: str) -> Optional[str]:
    """The string an argument spells when it is only string literals (joined), else None."""
    parts, rest = [], argument.strip()
    while rest:
        found = STRING.match(rest)
        if not found:
            return None
        parts.append(found.group(3) if found.group(3) is not None else decode(found.group(1)))
        rest = rest[found.end() :].strip()
    return "".join(parts) if parts else None


def brace(text: str) -> str:
    return text.replace("{", "{{").replace("}", "}}")


def template_of(macro: str, message: List[str]) -> Optional[str]:
    pieces = [literal_of(arg) for arg in message]
    if all(piece is None for piece in pieces):
        return None
    if macro.startswith("throw"):  # printf-style: the format, then its arguments
        return PRINTF.sub("{}", brace(pieces[0])) if pieces[0] is not None else None
    return "".join("{}" if piece is None else brace(piece) for piece in pieces)


def messages(text: str) -> Iterator[Tuple[int, str, str, str]]:
    """(line, macro, template, checked expression) of every error call in a C++ file."""
    if not MACRO.search(text):
        return
    code = blank_comments(text)
    for found in MACRO.finditer(code):
        macro = re.sub(r"\s+", " ", found.group(1))
        if SKIPPED.match(macro):
            continue
        args = call_arguments(code, found.end() - 1)
        if args is None:
            continue
        skip = leading(macro)
        template = template_of(macro, args[skip:])
        if template is None or not template.strip("{} \n"):
            continue
        condition = args[skip - 1] if skip and macro != "C10_THROW_ERROR" else ""
        if macro == "TORCH_CHECK_ARG":  # (cond, argN, ...): the condition comes first
            condition = args[0]
        line = code.count("\n", 0, found.start()) + 1
        yield line, macro.split()[-1], template, re.sub(r"\s+", " ", condition)
