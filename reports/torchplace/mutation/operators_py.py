"""Mutation operators for Python, on the standard `ast` module (issue 26).

Each mutant replaces the source span of one node with the unparsed mutated node (an expression
in parentheses, a statement re-indented), so that the rest of the file keeps its bytes:
  rel_flip       `<` <-> `<=`, `>` <-> `>=`        eq_flip    `==` <-> `!=`, `is` <-> `is not`,
                                                              `in` <-> `not in`
  logic_swap     `and` <-> `or`                   not_drop   `not x` -> `x`
  bool_flip      `True` <-> `False`               negate_if  `if c:` -> `if not (c):` (also while)
  const_plus / const_minus   an int literal +1 / -1
  minmax_swap    `min(...)` <-> `max(...)`
  delete_stmt    a statement replaced by `pass`    delete_branch  an `if`'s body replaced by `pass`
  return_value   `return x` -> `return None`
Docstrings are never mutated.
"""
import ast
import copy
from collections.abc import Iterator
from typing import Any, Callable, Dict, List, Tuple
from dataclasses import dataclass

from torchplace.mutation import operators_py_slips as slips
from torchplace.mutation.operators_cpp import Mutant, stamp

COMPARE_FLIPS = {
    ast.Lt: ast.LtE,
    ast.LtE: ast.Lt,
    ast.Gt: ast.GtE,
    ast.GtE: ast.Gt,
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
}
RELATIONAL = (ast.Lt, ast.LtE, ast.Gt, ast.GtE)


@dataclass(frozen=True)
class PyMutant(Mutant):
    end_line: int = 0
    col: int = 0
    end_col: int = 0
    stmt_line: int = 0  # the innermost statement holding the node: the lines a test must run
    stmt_end: int = 0
    # For Python, `old` is the node's source span and `new` its replacement.


def _is_docstring(node: ast.AST, parents: dict[int, ast.AST]) -> bool:
    parent = parents.get(id(node))
    return (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
        and parent is not None
        and getattr(parent, "body", [None])[0] is node
    )


def _expression_variants(node: ast.AST) -> Iterator[tuple[str, ast.AST]]:
    """(operator, mutated copy) for an expression node."""
    mutated: Any  # a deep copy of the node, of its own kind
    if isinstance(node, ast.Compare):
        for at, op in enumerate(node.ops):
            if type(op) in COMPARE_FLIPS:
                mutated = copy.deepcopy(node)
                mutated.ops[at] = COMPARE_FLIPS[type(op)]()
                yield ("rel_flip" if isinstance(op, RELATIONAL) else "eq_flip"), mutated
    elif isinstance(node, ast.BoolOp):
        mutated = copy.deepcopy(node)
        mutated.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()
        yield "logic_swap", mutated
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        yield "not_drop", copy.deepcopy(node.operand)
    elif isinstance(node, ast.Constant) and isinstance(node.value, bool):
        yield "bool_flip", ast.Constant(not node.value)
    elif isinstance(node, ast.Constant) and type(node.value) is int:
        yield "const_plus", ast.Constant(node.value + 1)
        yield "const_minus", ast.Constant(node.value - 1)
    elif (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in ("min", "max")
    ):
        mutated = copy.deepcopy(node)
        mutated.func.id = "max" if node.func.id == "min" else "min"
        yield "minmax_swap", mutated


def _statement_variants(
    node: ast.AST, parents: dict[int, ast.AST]
) -> Iterator[tuple[str, ast.AST]]:
    if isinstance(node, (ast.If, ast.While)):
        mutated = copy.deepcopy(node)
        mutated.test = ast.UnaryOp(ast.Not(), copy.deepcopy(node.test))
        yield "negate_if", mutated
    if isinstance(node, ast.If):
        mutated = copy.deepcopy(node)
        mutated.body = [ast.Pass()]
        yield "delete_branch", mutated
    if (
        isinstance(node, ast.Return)
        and node.value is not None
        and not (isinstance(node.value, ast.Constant) and node.value.value is None)
    ):
        yield "return_value", ast.Return(ast.Constant(None))
    deletable = (
        ast.Expr,
        ast.Assign,
        ast.AugAssign,
        ast.AnnAssign,
        ast.Return,
        ast.Raise,
        ast.If,
        ast.For,
        ast.While,
        ast.With,
        ast.Try,
        ast.Assert,
        ast.Continue,
        ast.Break,
    )
    parent = parents.get(id(node))
    if isinstance(node, deletable) and not isinstance(parent, ast.Module):
        yield "delete_stmt", ast.Pass()


def _unparse(node: ast.AST, indent: int) -> str:
    text = ast.unparse(ast.fix_missing_locations(node))
    if isinstance(node, ast.stmt):
        return text.replace("\n", "\n" + " " * indent)
    return f"({text})"


def mutants_of(path: str, text: str) -> list:
    tree = ast.parse(text)
    parents = {}
    for parent in ast.walk(tree):
        for child in ast.iter_child_nodes(parent):
            parents[id(child)] = parent
    lines = text.split("\n")
    sites = []
    patterns = slips.regex_constants(tree)
    for node in ast.walk(tree):
        if not hasattr(node, "lineno") or _is_docstring(node, parents):
            continue
        variants: List[Tuple[str, ast.AST]] = []
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if id(node) not in patterns:
                continue
            variants = [(op, new) for op, _, new in slips.regex_sites(node)]
        elif isinstance(node, ast.JoinedStr):
            continue
        elif isinstance(node, ast.expr):
            variants = list(_expression_variants(node))
            if isinstance(node, ast.Call):
                variants += [(op, new) for op, _, new in slips.call_sites(node)]
        if isinstance(node, ast.stmt):
            variants = list(_statement_variants(node, parents))
            more = slips.statement_sites(node, parents.get(id(node)))
            variants += [(op, new) for op, _, new in more]
        for operator, mutated in variants:
            sites.append((node.lineno, node.col_offset, operator, node, mutated))
    fstrings = [
        (n.lineno, n.col_offset, n.end_lineno, n.end_col_offset)
        for n in ast.walk(tree)
        if isinstance(n, ast.JoinedStr)
    ]
    mutants: List[PyMutant] = []
    seen: Dict[tuple, int] = {}
    for line, col, operator, node, mutated in sorted(sites, key=lambda s: (s[0], s[1], s[2])):
        start = (node.lineno, node.col_offset)
        if any((a, b) <= start < (c, d) for a, b, c, d in fstrings):
            continue
        key = (line, operator)
        index = seen.get(key, 0)
        seen[key] = index + 1
        old = _span(lines, node)
        new = _unparse(mutated, node.col_offset)
        statement = node
        while not isinstance(statement, ast.stmt):
            statement = parents[id(statement)]
        mutants.append(
            PyMutant(
                path,
                line,
                operator,
                index,
                old,
                new,
                end_line=node.end_lineno or line,
                col=node.col_offset,
                end_col=node.end_col_offset or 0,
                stmt_line=statement.lineno,
                stmt_end=statement.end_lineno or statement.lineno,
            )
        )
    return stamp(mutants, lines, _scopes(tree))


def _scopes(tree: ast.Module) -> Callable[[int], str]:
    """line -> the dotted name of the innermost function or class holding it ("" at top)."""
    spans: List[Tuple[int, int, str]] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}{child.name}"
                spans.append((child.lineno, child.end_lineno or child.lineno, name))
                visit(child, name + ".")
            else:
                visit(child, prefix)

    visit(tree, "")

    def scope_of(line: int) -> str:
        inside = [s for s in spans if s[0] <= line <= s[1]]
        return max(inside, key=lambda s: s[0])[2] if inside else "<module>"

    return scope_of


def _span(lines: list[str], node: Any) -> str:  # an ast node or a _Span
    """The node's source text; ast's columns count UTF-8 bytes."""
    first, last = node.lineno - 1, node.end_lineno - 1
    data = [line.encode() for line in lines[first : last + 1]]
    if first == last:
        return data[0][node.col_offset : node.end_col_offset].decode()
    return b"\n".join(
        [data[0][node.col_offset :]] + data[1:-1] + [data[-1][: node.end_col_offset]]
    ).decode()


def apply(text: str, mutant: PyMutant) -> str:
    lines = text.split("\n")
    if _span(lines, _Span(mutant)) != mutant.old:
        raise ValueError(f"{mutant.id}: its source changed since the mutant was made")
    head = lines[mutant.line - 1].encode()[: mutant.col].decode()
    tail = lines[mutant.end_line - 1].encode()[mutant.end_col :].decode()
    return "\n".join(
        lines[: mutant.line - 1] + [head + mutant.new + tail] + lines[mutant.end_line :]
    )


class _Span:
    def __init__(self, mutant: PyMutant) -> None:
        self.lineno, self.end_lineno = mutant.line, mutant.end_line
        self.col_offset, self.end_col_offset = mutant.col, mutant.end_col
