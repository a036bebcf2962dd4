"""cuda_dtypes.py's reading of expressions: which argument's dtype an expression carries (through
views, casts, locals and `X.options()`), and what a condition says about a dtype.

A condition is read three-valued per (argument, value): True, False or None (cannot tell), where
a value is (dtype, 0-dim or not). Some tests read as what they are on a dense CUDA tensor
(`is_cuda()` True; `is_cpu()`, `is_sparse()`, `_is_zerotensor()`, a device compared with kCPU
False), and, unless `empties` (some tensor may be empty), a tensor's emptiness as False
(`numel() == 0`, a size 0). A local bool reads as any of the values it is given.
"""
import re
from typing import Callable, Dict, FrozenSet, List, NamedTuple, Optional, Tuple

from cuda_dtypes_source import brackets, split_top

# Methods and functions whose result has their receiver's (first argument's) dtype.
PRESERVING = {
    "contiguous",
    "expect_contiguous",
    "view",
    "reshape",
    "expand",
    "expand_as",
    "t",
    "transpose",
    "permute",
    "squeeze",
    "unsqueeze",
    "narrow",
    "select",
    "slice",
    "resolve_conj",
    "resolve_neg",
    "conj",
    "clone",
    "flatten",
    "as_strided",
    "unfold",
    "diagonal",
    "movedim",
    "view_as",
    "reshape_as",
    "detach",
    "alias",
    "mT",
    "mH",
    "conj_physical",
    "squeeze_",
    "unsqueeze_",
    "transpose_",
    "t_",
    "get",
    "scalar_type",
    "dtype",
    "options",
    "type",
}
FIRST_ARGUMENT = re.compile(
    r"(?:std::move|(?:c10::)?MaybeOwned<[\w:]*>::(?:borrowed|owned)|(?:c10::)?typeMetaToScalarType"
    r"|(?:at::native::|at::)?expand_size|(?:at::)?(?:empty|zeros|ones)_like|(?:at::native::)?"
    r"(?:const_cast|static_cast)\s*<[^()]*>)\s*\((.*)\)",
    re.S,
)
FACTORY = re.compile(r"at::(?:empty|zeros|ones|empty_strided|full)\s*\((.*)\)", re.S)


class Atom(NamedTuple):
    source: Optional[str]  # None: a constant
    sure: FrozenSet[str]  # dtypes for which the test is True
    maybe: FrozenSet[str]  # dtypes for which it may be True
    value: Optional[bool] = None  # a constant's value
    negate: bool = False  # `!=`: the test's opposite
    zero_dim: bool = False  # a test of the argument being 0-dim, not of its dtype


Tree = Tuple  # ("or"|"and", [Tree]) | ("not", Tree) | ("atom", Optional[Atom])


def strip_parens(text: str) -> str:
    text = text.strip()
    while text.startswith("(") and brackets(text).get(0) == len(text) - 1:
        text = text[1:-1].strip()
    return text


def last_call(text: str) -> Optional[Tuple[str, str, str]]:
    """`receiver.method(args)` or `receiver->method(args)` at the end: the three parts."""
    if not text.endswith(")"):
        return None
    opened = brackets(text).get(len(text) - 1)
    m = opened is not None and re.search(r"(\.|->)\s*(\w+)\s*$", text[:opened])
    if not m:
        return None
    return text[: m.start()], m.group(2), text[opened + 1 : -1]


class Resolver:
    """Resolves expressions in one function: `parameters` maps its parameters to sources (an
    entry argument's name); `locals_of` lists the initialisers of a local variable."""

    def __init__(
        self,
        parameters: Dict[str, Optional[str]],
        locals_of: Callable[[str], List[str]],
        dtype: Callable[[str], Optional[str]],
        empties: bool = False,
    ):
        self.parameters, self.locals_of, self.dtype = parameters, locals_of, dtype
        self.empties = empties

    def source(self, expression: str, seen: FrozenSet[str] = frozenset()) -> Optional[str]:
        e = expression
        for _ in range(30):
            e = strip_parens(e)
            if e.startswith(("*", "&")) and not e.startswith("&&"):
                e = e[1:]
                continue
            first = FIRST_ARGUMENT.fullmatch(e)
            factory = FACTORY.fullmatch(e)
            call = last_call(e)
            if first:
                arguments = split_top(first.group(1))
                if (
                    "_like" in e.split("(")[0]
                    and len(arguments) > 1
                    and not re.search(r"MemoryFormat|LEGACY_CONTIGUOUS", arguments[1])
                ):
                    return None  # empty_like(x, options): the options' dtype
                e = arguments[0]
            elif factory:
                options = re.fullmatch(r"(.*)\.options\(\)", split_top(factory.group(1))[-1], re.S)
                if not options:
                    return None
                e = options.group(1)
            elif call:
                if call[1] not in PRESERVING or call[1] in ("dtype", "options", "type") and call[2]:
                    return None
                e = call[0]
            elif e.endswith("]") and brackets(e).get(len(e) - 1):
                e = e[: brackets(e)[len(e) - 1]]
            elif re.fullmatch(r"\w+", e):
                return self.identifier(e, seen)
            else:
                return None
        return None

    def identifier(self, name: str, seen: FrozenSet[str]) -> Optional[str]:
        initialisers = self.locals_of(name)
        if name in self.parameters:
            return None if initialisers else self.parameters[name]
        if not initialisers or name in seen:
            return None
        found = {self.source(i, seen | {name}) for i in initialisers}
        return found.pop() if len(found) == 1 else None

    def sizes_inlined(self, text: str) -> str:
        """`n == 0` with `n` a local given one size (`batch1.size(0)`): that size compared."""
        m = re.fullmatch(r"!?(\w+)(\s*(?:==|!=|>)\s*0)?", text)
        given = self.locals_of(m.group(1)) if m and m.group(1) not in self.parameters else []
        if len(given) != 1:
            return text
        size = re.sub(
            r"^(?:static_cast|safe_downcast)\s*<[^()]*>\s*\((.*)\)$",
            r"\1",
            given[0].strip(),
            flags=re.S,
        )
        return ("!" if text.startswith("!") else "") + size.strip() + (m.group(2) or "")

    def condition(self, text: str, seen: FrozenSet[str] = frozenset()) -> Tree:
        text = strip_parens(text)
        if re.fullmatch(r"\w+", text) and text not in self.parameters and text not in seen:
            given = self.locals_of(text)
            if given:
                return ("or", [self.condition(g, seen | {text}) for g in given])
        for word in ("||", "&&"):
            parts = split_top(text, word)
            if len(parts) > 1:
                return ("or" if word == "||" else "and", [self.condition(p, seen) for p in parts])
        if text.startswith("!") and not text.startswith("!="):
            return ("not", self.condition(text[1:], seen))
        return ("atom", self.atom(text))

    def atom(self, text: str) -> Optional[Atom]:
        value = assumed(self.sizes_inlined(text), self.empties)
        if value is not None:
            return Atom(None, frozenset(), frozenset(), value)
        dims = re.fullmatch(r"(.+?)\.(?:dim|ndimension)\(\)\s*(==|!=|>)\s*0", text, re.S)
        if dims:
            source = self.source(dims.group(1))
            none = frozenset()
            return Atom(source, none, none, None, dims.group(2) != "==", True) if source else None
        for pattern, kind in PREDICATES:
            m = re.fullmatch(pattern, text, re.S)
            if m:
                source = self.source(m.group(1))
                sure, maybe = kind(m.groups()[1:]) if source else (None, None)
                return Atom(source, sure, maybe) if source else None
        m = re.fullmatch(r"(.+?)\s*(==|!=)\s*(.+)", text, re.S)
        if m:
            for left, right in ((m.group(1), m.group(3)), (m.group(3), m.group(1))):
                dtype, source = self.dtype(right), self.source(left)
                if dtype and source:
                    atom = Atom(source, frozenset({dtype}), frozenset({dtype}))
                    return atom._replace(negate=m.group(2) == "!=")
        return None


Value = Tuple[str, bool]  # (dtype, 0-dim)


def evaluate(tree: Tree, source: Optional[str], value: Optional[Value]) -> Optional[bool]:
    """The condition for `source` holding `value` (None: a test of no argument)."""
    kind, body = tree
    if kind == "not":
        result = evaluate(body, source, value)
        return None if result is None else not result
    if kind == "atom":
        if body is None:
            return None
        if body.source is None:
            return body.value
        if body.source != source or value is None:
            return None
        if body.zero_dim:
            return value[1] != body.negate
        dtype = value[0]
        result = True if dtype in body.sure else False if dtype not in body.maybe else None
        return None if result is None else result != body.negate
    values = [evaluate(t, source, value) for t in body]
    wanted = kind == "or"
    if wanted in values:
        return wanted
    return None if None in values else not wanted


def tests_dtype(tree: Tree) -> bool:
    kind, body = tree
    if kind == "atom":
        return body is not None and body.source is not None and not body.zero_dim
    return tests_dtype(body) if kind == "not" else any(tests_dtype(t) for t in body)


def sources_of(tree: Tree) -> List[str]:
    kind, body = tree
    if kind == "atom":
        return [body.source] if body is not None and body.source else []
    if kind == "not":
        return sources_of(body)
    return [s for t in body for s in sources_of(t)]


def assumed(text: str, empties: bool = False) -> Optional[bool]:
    """A test of what the sim assumes (see the module's docstring): its value, else None."""
    size = r"(?:\.numel\(\)|\.sizes?\(\)\s*\[[^\]]*\]|\.size\([^()]*\)|\w*sizes?\w*\s*\[[^\]]*\])"
    chain = r"[\w.\->()\[\]]*"
    for pattern, value in (
        (chain + size + r"\s*==\s*0|0\s*==\s*" + chain + r"\.numel\(\)", False),
        (chain + size + r"\s*(?:!=|>)\s*0|" + chain + r"\.numel\(\)", True),
        (chain + r"\.is_cuda\(\)|true", True),
        (
            chain + r"\.(?:is_cpu|is_sparse|is_sparse_csr|_is_zerotensor|is_mkldnn|is_meta|is_mps"
            r"|is_nested|is_xpu)\(\)|false",
            False,
        ),
        (chain + r"\s*==\s*(?:at::|c10::)?(?:kCPU|DeviceType::CPU|kMPS|kHIP)", False),
        (chain + r"\s*!=\s*(?:at::|c10::)?(?:kCPU|DeviceType::CPU|kMPS|kHIP)", True),
        (chain + r"\s*==\s*(?:at::|c10::)?(?:kCUDA|DeviceType::CUDA)", True),
    ):
        if re.fullmatch(pattern, text, re.S):
            return None if empties and size in pattern else value
    return None


COMPLEX = frozenset({"ComplexHalf", "ComplexFloat", "ComplexDouble"})
FLOATING = frozenset({"Half", "Float", "Double", "BFloat16"})
REDUCED = frozenset({"Half", "BFloat16"})
FLOAT8 = frozenset({"Float8_e5m2", "Float8_e4m3fn", "Float8_e5m2fnuz", "Float8_e4m3fnuz"})
INTEGRAL = frozenset({"Byte", "Char", "Short", "Int", "Long"})
UNSIGNED = frozenset(
    {"UInt16", "UInt32", "UInt64"}
    | {f"UInt{i}" for i in range(1, 8)}
    | {f"Int{i}" for i in range(1, 8)}
)


def integral(groups) -> Tuple[FrozenSet[str], FrozenSet[str]]:
    with_bool = frozenset({"Bool"}) if "true" in (groups[0] or "") else frozenset()
    return INTEGRAL | with_bool, INTEGRAL | UNSIGNED | with_bool


# (pattern with the tested expression as group 1, its (sure, maybe) dtype sets); the `maybe`
# sets hold the dtypes whose membership differs between versions (Float8, the unsigned ones).
PREDICATES = [
    (r"(.+)\.is_complex\(\)", lambda g: (COMPLEX, COMPLEX)),
    (r"(?:at::|c10::)?isComplexType\((.+)\)", lambda g: (COMPLEX, COMPLEX)),
    (r"(.+)\.is_floating_point\(\)", lambda g: (FLOATING, FLOATING | FLOAT8)),
    (r"(?:at::|c10::)?isFloatingType\((.+)\)", lambda g: (FLOATING, FLOATING | FLOAT8)),
    (r"(?:at::|c10::)?isIntegralType\((.+?),([^()]*)\)", integral),
    (r"(?:at::|c10::)?isReducedFloatingType\((.+)\)", lambda g: (REDUCED, REDUCED | FLOAT8)),
]
