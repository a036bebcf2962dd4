"""cuda_dtypes.py's path analysis: from a CUDA kernel down its helpers, stubs and the operators it
calls, the paths through the code, each with the dtype refusals it meets in order (an
AT_DISPATCH's missing types, a TORCH_CHECK on a dtype) and the dtypes it can be taken for
(`if (self.is_complex())`). A loop's body is taken once; a switch's cases are alternatives.
"""
import re
from typing import Dict, FrozenSet, List, NamedTuple, Optional, Tuple

from cuda_dtypes_source import Function, split_top
from cuda_dtypes_statements import (
    Buffer,
    Stmt,
    body_buffer,
    initialisers,
    lambda_spans,
    parse_block,
    question_mark,
    receiver_of,
)
import cuda_dtypes_values as values

MAX_PATHS, MAX_DEPTH = 512, 9
CALL = re.compile(r"(\.|->)?\s*((?:[A-Za-z_]\w*\s*::\s*)*)([A-Za-z_]\w*)\s*(<[^;(){}]*?>)?\s*\(")
CHECKS = {
    "TORCH_CHECK",
    "TORCH_CHECK_NOT_IMPLEMENTED",
    "TORCH_CHECK_TYPE",
    "TORCH_CHECK_VALUE",
    "TORCH_CHECK_INDEX",
}
RAISES = {"AT_ERROR", "TORCH_INTERNAL_ASSERT"}
LITERAL = re.compile(r'\s*"((?:\\.|[^"\\])*)"\s*')


class Fact(NamedTuple):
    source: str  # the entry operator's argument whose dtype it reads
    allowed: FrozenSet[Tuple[str, bool]]  # the (dtype, 0-dim) values that pass it
    kind: str  # "dispatch" or the check macro (TORCH_CHECK, ...)
    message: str  # the dispatch's name, or the check's text
    where: str  # file:line


class Path(NamedTuple):
    guards: Tuple[Tuple[str, FrozenSet], ...]  # (source, the values it is taken for)
    facts: Tuple[Fact, ...]


EMPTY = Path((), ())


class TooComplex(Exception):
    pass


def join(first: List[Path], then: List[Path]) -> List[Path]:
    joined = []
    for a in first:
        for b in then:
            path = guarded(a, dict(b.guards))
            if path is not None:
                joined.append(Path(path.guards, a.facts + b.facts))
    return unique(joined)


def unique(paths: List[Path]) -> List[Path]:
    if len(paths) > MAX_PATHS:
        raise TooComplex(f"more than {MAX_PATHS} paths")
    return list(dict.fromkeys(paths))


def guarded(path: Path, guards: Dict[str, FrozenSet[str]]) -> Optional[Path]:
    merged = dict(path.guards)
    for source, dtypes in guards.items():
        merged[source] = merged.get(source, dtypes) & dtypes
        if not merged[source]:
            return None
    return Path(tuple(sorted(merged.items())), path.facts)


class Frame(NamedTuple):
    buffer: Buffer
    resolver: values.Resolver
    depth: int


class Flow:
    """Paths through one version's kernels. `ops` answers which kernel an operator call reaches
    (cuda_dtypes.py: the yaml's), `macros` reads AT_DISPATCH, `tree` holds the C++."""

    def __init__(self, tree, macros, ops, universe: FrozenSet[Tuple[str, bool]], empties: bool):
        self.tree, self.macros, self.ops, self.universe = tree, macros, ops, universe
        self.empties = empties  # some tensor may be empty (cuda_dtypes_values.py)
        self.memo: Dict[tuple, List[Path]] = {}

    def function(
        self, function: Function, binding: Dict[str, Optional[str]], depth: int
    ) -> List[Path]:
        """Every path through `function` (returns included) with its parameters bound."""
        key = (function.source.path, function.body, tuple(sorted(binding.items())))
        if key in self.memo:
            return self.memo[key]
        if depth > MAX_DEPTH:
            return [EMPTY]
        self.memo[key] = [EMPTY]  # a recursive call meets no refusal
        buffer = body_buffer(function)
        names = {p[1] for p in function.params}
        resolver = values.Resolver(
            {n: binding.get(n) for n in names},
            lambda name: initialisers(buffer.text, name),
            self.macros.dtype,
            self.empties,
        )
        frame = Frame(buffer, resolver, depth)
        try:
            falls, returns = self.sequence(parse_block(buffer, 0, len(buffer.text)), frame, [EMPTY])
        except TooComplex:
            del self.memo[key]  # not a function without refusals: the caller gives up too
            raise
        self.memo[key] = falls + returns
        return self.memo[key]

    def sequence(self, statements: List[Stmt], frame: Frame, paths: List[Path]):
        returns: List[Path] = []
        for statement in statements:
            if not paths:
                break
            paths, returned = self.statement(statement, frame, paths)
            returns = unique(returns + returned)
        return paths, returns

    def statement(self, st: Stmt, frame: Frame, paths: List[Path]):
        if st.kind in ("expr", "return", "jump"):
            after = join(paths, self.expression(frame, *st.span))
            return ([], after) if st.kind == "return" else (after, [])
        if st.kind == "throw":
            return [], []
        if st.kind == "block":
            return self.sequence(st.children, frame, paths)
        if st.kind == "if":
            return self.branch(st, frame, paths)
        if st.kind == "loop":
            return self.statement(st.children[0], frame, paths)
        if st.kind == "switch":
            return self.switch(st, frame, paths)
        return paths, []

    def branch(self, st: Stmt, frame: Frame, paths: List[Path]):
        tree = frame.resolver.condition(frame.buffer.text[st.span[0] : st.span[1]])
        falls, returns = [], []
        for child, taken in zip(st.children, (True, False)):
            guards = {
                s: frozenset(
                    d for d in self.universe if values.evaluate(tree, s, d) is not (not taken)
                )
                for s in set(values.sources_of(tree))
            }
            if not guards and values.evaluate(tree, None, None) is (not taken):
                continue  # never taken on a non-empty tensor
            entering = [p for p in (guarded(path, guards) for path in paths) if p is not None]
            f, r = self.statement(child, frame, entering)
            falls, returns = falls + f, returns + r
        return unique(falls), unique(returns)

    def switch(self, st: Stmt, frame: Frame, paths: List[Path]):
        body = st.children[0].children if st.children[0].kind == "block" else [st.children[0]]
        groups: List[List[Stmt]] = []
        for statement in body:
            if statement.kind == "case":
                groups.append([])
            elif groups:
                groups[-1].append(statement)
        has_default = any(
            frame.buffer.text[s.span[0] : s.span[0] + 7] == "default"
            for s in body
            if s.kind == "case"
        )
        falls, returns = ([] if has_default else list(paths)), []
        for group in groups:
            f, r = self.sequence(group, frame, paths)
            falls, returns = falls + f, returns + r
        return unique(falls), unique(returns)

    def expression(self, frame: Frame, start: int, end: int) -> List[Path]:
        """The paths through one expression: its calls in order; lambdas (other than a
        dispatch's) and what follows a `?` are not followed."""
        text, paths = frame.buffer.text, [EMPTY]
        skipped = lambda_spans(frame.buffer, start, end)
        stop = question_mark(text, start, end, skipped)
        position = start
        for m in CALL.finditer(text, start, stop):
            if m.start() < position or any(a <= m.start() < b for a, b in skipped):
                continue
            opened = m.end() - 1
            closed = frame.buffer.match.get(opened, opened)
            position = closed + 1
            arguments = split_top(text[opened + 1 : closed]) if closed > opened + 1 else []
            found = self.call(frame, m, arguments, opened)
            if found is None:
                position = m.end()  # not followed: its arguments may hold calls
                continue
            paths = join(paths, found)
        return paths

    def call(self, frame: Frame, m, arguments: List[str], opened: int) -> Optional[List[Path]]:
        dot, qualifier, name = m.group(1), re.sub(r"\s", "", m.group(2)), m.group(3)
        local = frame.buffer.source.defines
        if name in ("AT_DISPATCH_V2", "AT_DISPATCH_SWITCH") or self.macros.is_dispatch(name, local):
            return self.dispatch(frame, name, arguments, opened)
        if name in CHECKS:
            return self.check(frame, name, arguments, opened)
        if name in RAISES:
            always = name == "AT_ERROR" or arguments and arguments[0] in ("false", "")
            return [] if always else [EMPTY]
        if dot:
            receiver = receiver_of(frame.buffer, m.start())
            return self.ops.call(self, frame, name, [receiver] + arguments, method=True)
        if name in self.tree.stubs and arguments:
            count = len(arguments) - 1
            return self.alternatives(
                [
                    self.bound(f, arguments[1:], frame)
                    for kernel, source in self.tree.stubs[name]
                    for f in self.tree.candidates(kernel, source, count)
                ]
            )
        if qualifier in ("at::", "::at::", "at::_ops::"):
            return self.ops.call(self, frame, name, arguments, method=False)
        if qualifier in ("", "native::", "at::native::", "::at::native::"):
            found = self.tree.candidates(name, frame.buffer.source, len(arguments))
            if not found:
                return None
            return self.alternatives([self.bound(f, arguments, frame) for f in found])
        return None

    def bound(self, function: Function, arguments: List[str], frame: Frame) -> List[Path]:
        binding = {
            param[1]: (frame.resolver.source(arguments[i]) if i < len(arguments) else None)
            for i, param in enumerate(function.params)
        }
        binding = {k: v for k, v in binding.items() if v is not None and not is_list(function, k)}
        return self.function(function, binding, frame.depth + 1)

    def alternatives(self, found: List[List[Path]]) -> List[Path]:
        paths = [p for each in found for p in each]
        return list(dict.fromkeys(paths)) or [EMPTY]

    def dispatch(self, frame: Frame, name: str, arguments: List[str], opened: int) -> List[Path]:
        found = self.macros.call(name, arguments, frame.buffer.source.defines)
        literal = found and LITERAL.fullmatch(found.name)
        source = found and frame.resolver.source(found.type_expression)
        allowed = found and frozenset(v for v in self.universe if v[0] in found.types)
        fact = (
            [Fact(source, allowed, "dispatch", literal.group(1), frame.buffer.where(opened))]
            if literal and source
            else []
        )
        paths = [Path((), tuple(fact))]
        body = next((a for a in reversed(arguments) if "{" in a), None)
        if body is not None:
            start = frame.buffer.text.index(body, opened) + body.index("{")
            end = frame.buffer.match.get(start, start)
            statements = parse_block(frame.buffer, start + 1, end)
            falls, returns = self.sequence(statements, frame, [EMPTY])
            paths = join(paths, (falls + returns) or [EMPTY])
        return paths

    def check(self, frame: Frame, name: str, arguments: List[str], opened: int) -> List[Path]:
        if not arguments or arguments[0] == "false":
            return []
        tree = frame.resolver.condition(arguments[0])
        sources = set(values.sources_of(tree))
        parts = [LITERAL.fullmatch(a) for a in arguments[1:]]
        if len(sources) != 1 or not parts or not all(parts) or not values.tests_dtype(tree):
            return [EMPTY]  # a check of no one argument's dtype, or with a computed message
        source = sources.pop()
        allowed = frozenset(
            v for v in self.universe if values.evaluate(tree, source, v) is not False
        )
        message = "".join(p.group(1) for p in parts)
        return [Path((), (Fact(source, allowed, name, message, frame.buffer.where(opened)),))]


def is_list(function: Function, name: str) -> bool:
    """Not a tensor's (or a ScalarType's) parameter: no source of a dtype."""
    kinds = [p[0] for p in function.params if p[1] == name]
    return (
        not kinds
        or not any(w in kinds[0] for w in ("Tensor", "ScalarType"))
        or any(w in kinds[0] for w in ("List", "ArrayRef", "vector"))
    )
