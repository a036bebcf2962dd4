"""The Python operators of issue 45, the slips a tired person commits (operators_py.py has the
standard ones); each yields (operator, node to replace, its replacement):
  arg_swap          two adjacent positional arguments of a call swapped: `f(a, b)` -> `f(b, a)`
  loop_start        `range(n)` -> `range(1, n)`, `range(a, b)` -> `range(a + 1, b)`
  loop_bound        `range(n)` -> `range(n - 1)`, `range(a, b)` -> `range(a, b - 1)`
  aug_assign        `x += y` (any augmented assignment) -> `x = y`
  dup_stmt          a one-line statement replaced by a copy of the one above it (same block)
  regex_drop_alt, regex_quantifier   the pattern of a re.compile/match/search/... call
                    (operators_regex.py)
"""
import ast
import copy
from collections.abc import Iterator
from typing import Any, Set, Tuple

from torchplace.mutation import operators_regex

RE_CALLS = {"compile", "match", "fullmatch", "search", "sub", "subn", "split", "findall"}
RE_CALLS |= {"finditer"}
Site = Tuple[str, ast.AST, ast.AST]  # (operator, node replaced, replacement)


def regex_constants(tree: ast.AST) -> Set[int]:
    """The ids of the str constants that are a re call's pattern."""
    found = set()
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "re"
            and node.func.attr in RE_CALLS
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            found.add(id(node.args[0]))
    return found


def regex_sites(node: ast.Constant) -> Iterator[Site]:
    for operator, body in operators_regex.variants(node.value):
        yield operator, node, ast.Constant(body)


def call_sites(node: ast.Call) -> Iterator[Site]:
    args = node.args
    if any(isinstance(a, ast.Starred) for a in args):
        return
    for at in range(len(args) - 1):
        if ast.dump(args[at]) != ast.dump(args[at + 1]):
            mutated: Any = copy.deepcopy(node)
            mutated.args[at], mutated.args[at + 1] = mutated.args[at + 1], mutated.args[at]
            yield "arg_swap", node, mutated
    if isinstance(node.func, ast.Name) and node.func.id == "range" and 1 <= len(args) <= 2:
        one = ast.Constant(1)
        start = args[0] if len(args) == 2 else ast.Constant(0)
        stop = args[-1]
        moved = ast.BinOp(copy.deepcopy(start), ast.Add(), one) if len(args) == 2 else one
        yield "loop_start", node, _range(node, moved, stop)
        yield "loop_bound", node, _range(
            node, start, ast.BinOp(copy.deepcopy(stop), ast.Sub(), one)
        )


def _range(node: ast.Call, start: ast.expr, stop: ast.expr) -> ast.Call:
    mutated: Any = copy.deepcopy(node)
    mutated.args = [copy.deepcopy(start), copy.deepcopy(stop)]
    return mutated


def statement_sites(node: ast.stmt, parent: Any) -> Iterator[Site]:
    if isinstance(node, ast.AugAssign):
        yield "aug_assign", node, ast.Assign(
            [copy.deepcopy(node.target)], copy.deepcopy(node.value)
        )
    if isinstance(parent, ast.Module):  # a module's top level: an import-time NameError
        return
    for field in ("body", "orelse", "finalbody"):
        block = getattr(parent, field, None)
        if isinstance(block, list) and node in block:
            at = block.index(node)
            above = block[at - 1] if at > 0 else None
            docstring = isinstance(above, ast.Expr) and isinstance(above.value, ast.Constant)
            if above is not None and not docstring and _one_line(above) and _one_line(node):
                if ast.dump(above) != ast.dump(node):
                    yield "dup_stmt", node, copy.deepcopy(above)


def _one_line(node: ast.stmt) -> bool:
    simple = (ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Return, ast.Raise)
    return isinstance(node, simple) and node.lineno == node.end_lineno
