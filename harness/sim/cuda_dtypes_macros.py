"""cuda_dtypes.py's reading of the AT_DISPATCH macros: which dtypes a call of one covers, from
that version's ATen/Dispatch.h (and Dispatch_v2.h): each AT_DISPATCH_X is expanded through its
#define down to AT_DISPATCH_SWITCH and its AT_DISPATCH_CASE(type) entries, its extra SCALARTYPE
arguments substituted; AT_DISPATCH_V2's type list through AT_EXPAND and the type-list macros.
A file's own #defines (Loss.cu's AT_DISPATCH_NLL_LOSS_INDEX_TYPES) are read the same way.
"""
import os
import re
from typing import Dict, FrozenSet, List, NamedTuple, Optional, Set

from cuda_dtypes_source import Define, IDENT, preprocess, split_top, strip_comments

CASES = {
    "AT_DISPATCH_CASE",
    "AT_PRIVATE_CASE_TYPE_USING_HINT",
    "AT_DISPATCH_CASE_QINT",
    "AT_QINT_SUB_BYTE_PRIVATE_CASE_TYPE",
}
SCALAR_TYPES = re.compile(r"_\(\s*[^,()]+(?:<[^>]*>)?[^,()]*,\s*(\w+)\s*\)")


class Dispatch(NamedTuple):
    type_expression: str  # what the switch reads: `self.scalar_type()`, `iter.common_dtype()`
    name: str  # the NAME argument as written (a string literal, or not)
    types: FrozenSet[str]  # ScalarType names it has a case for


def scalar_types(root: str) -> List[str]:
    """c10's ScalarType names at this version, in enum order."""
    with open(os.path.join(root, "c10", "core", "ScalarType.h"), encoding="utf-8") as handle:
        text = strip_comments(handle.read())
    start = text.index("#define AT_FORALL_SCALAR_TYPES_WITH_COMPLEX_AND_QINTS(_)")
    end = text.index("\n\n", start)
    return SCALAR_TYPES.findall(text[start:end])


class Macros:
    """The AT_DISPATCH family of one version."""

    def __init__(self, root: str, known: Dict[str, int]):
        self.defines: Dict[str, Define] = {}
        for name in ("Dispatch.h", "Dispatch_v2.h"):
            path = os.path.join(root, "aten", "src", "ATen", name)
            if os.path.exists(path):
                with open(path, encoding="utf-8") as handle:
                    self.defines.update(preprocess(strip_comments(handle.read()), known)[1])
        self.names = set(scalar_types(root))

    def dtype(self, token: str) -> Optional[str]:
        """`at::ScalarType::Half`, `kHalf`, `c10::kHalf` -> "Half"; None for anything else."""
        bare = re.sub(r"^(?:::)?(?:at::|c10::)?(?:ScalarType::)?", "", token.strip())
        for name in (bare, bare[1:] if bare.startswith("k") else ""):
            if name in self.names:
                return name
        return None

    def is_dispatch(self, name: str, local: Dict[str, Define]) -> bool:
        return name.startswith("AT_DISPATCH_") and (name in local or name in self.defines)

    def call(self, name: str, args: List[str], local: Dict[str, Define]) -> Optional[Dispatch]:
        """What a call `name(args)` dispatches on and over; None if it cannot be read."""
        if name == "AT_DISPATCH_V2":
            types = self.type_list(args[3:], local)
            return Dispatch(args[0], args[1], frozenset(types)) if types is not None else None
        found = self.expand(name, args, local)
        return found if isinstance(found, Dispatch) else None

    def expand(self, name: str, args: List[str], local: Dict[str, Define], depth: int = 0):
        """A Dispatch for a switch, a set of type names for a run of cases, None if unreadable."""
        if name in CASES:
            dtype = self.dtype(args[0]) if args else None
            return {dtype} if dtype else None
        if name == "AT_DISPATCH_SWITCH":
            types = self.cases(" , ".join(args[2:]), local, depth)
            return Dispatch(args[0], args[1], frozenset(types)) if types is not None else None
        define = local.get(name) or self.defines.get(name)
        if define is None or define.params is None or depth > 12:
            return None
        body = substitute(define, args)
        calls = top_calls(body)
        if len(calls) == 1 and calls[0][0] == "AT_DISPATCH_SWITCH":
            return self.expand(calls[0][0], calls[0][1], local, depth + 1)
        return self.cases(body, local, depth)

    def cases(self, text: str, local: Dict[str, Define], depth: int) -> Optional[Set[str]]:
        types: Set[str] = set()
        for name, args in top_calls(text):
            found = self.expand(name, args, local, depth + 1)
            if not isinstance(found, set):
                return None
            types |= found
        return types

    def type_list(self, args: List[str], local: Dict[str, Define]) -> Optional[Set[str]]:
        """AT_DISPATCH_V2's trailing arguments: types and AT_EXPAND(list macro)."""
        pending, types = [a for a in args if a], set()
        for _ in range(1000):
            if not pending:
                return types
            item = pending.pop()
            wrapped = re.fullmatch(r"AT_EXPAND\s*\((.*)\)", item, re.S)
            define = local.get(item) or self.defines.get(item)
            if wrapped:
                pending.extend(split_top(wrapped.group(1)))
            elif define is not None and define.params is None:
                pending.extend(p for p in split_top(define.body) if p)
            elif self.dtype(item):
                types.add(self.dtype(item))
            else:
                return None
        return None


def substitute(define: Define, args: List[str]) -> str:
    """A function-like macro's body with its arguments in place (`##` pastes)."""
    values = dict(zip(define.params, args))
    if define.params and define.params[-1] in ("...", "__VA_ARGS__"):
        fixed = len(define.params) - 1
        values["__VA_ARGS__"] = ", ".join(args[fixed:])
    body = IDENT.sub(lambda m: values.get(m.group(0), m.group(0)), define.body)
    return re.sub(r"\s*##\s*", "", body)


def top_calls(text: str) -> List[tuple]:
    """The macro or function calls at the top level of `text`: (name, arguments)."""
    calls, i = [], 0
    for m in re.finditer(r"\b([A-Za-z_]\w*)\s*\(", text):
        if m.start() < i:
            continue
        end = closing(text, m.end() - 1)
        calls.append((m.group(1), split_top(text[m.end() : end])))
        i = end + 1
    return calls


def closing(text: str, opened: int) -> int:
    """The position of the bracket closing the one at `opened` (literals skipped)."""
    depth, i = 0, opened
    while i < len(text):
        c = text[i]
        if c in "\"'":
            m = re.compile(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'').match(text, i)
            i = m.end() if m else i + 1
            continue
        depth += c in "([{"
        depth -= c in ")]}"
        if depth == 0:
            return i
        i += 1
    return len(text)
