"""The error messages of torch's Python source (source_strings.py): every `raise X(...)` whose
first argument is a string, an f-string, "...".format(...), "..." % (...) or a concatenation of
those, as (line, exception, template, checked expression: the test of the `if` around it).

Placeholders are {} (a literal { or } is doubled), as in source_cxx.py.
"""
import ast
import re
from typing import Dict, Iterator, Optional, Tuple

PRINTF = re.compile(r"%%|%(?:\([^)]*\))?[-+ #0]*\d*(?:\.\d*)?[sdifuxrcge]")
FIELD = re.compile(r"\{\{|\}\}|\{[^{}]*\}")


def brace(text: str) -> str:
    return text.replace("{", "{{").replace("}", "}}")


def template_of(node: ast.AST) -> Optional[str]:
    """The template a string expression builds, or None when it is not one."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return brace(node.value)
    if isinstance(node, ast.JoinedStr):
        return "".join(
            brace(part.value) if isinstance(part, ast.Constant) else "{}" for part in node.values
        )
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = template_of(node.left), template_of(node.right)
        if left is None and right is None:
            return None
        return (left if left is not None else "{}") + (right if right is not None else "{}")
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
        left = node.left
        if isinstance(left, ast.Constant) and isinstance(left.value, str):
            # %% in one pass with the fields: "100%% done" is "100% done", not "100{}one"
            return PRINTF.sub(lambda m: "%" if m.group(0) == "%%" else "{}", brace(left.value))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        owner = node.func.value
        if node.func.attr == "format" and isinstance(owner, ast.Constant):
            if isinstance(owner.value, str):
                return FIELD.sub(
                    lambda m: m.group(0) if m.group(0) in ("{{", "}}") else "{}", owner.value
                )
    return None


def exception_name(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return ""


def parents(tree: ast.AST) -> Dict[ast.AST, ast.AST]:
    return {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}


def checked(node: ast.AST, parent: Dict[ast.AST, ast.AST]) -> str:
    """The test of the nearest `if` whose body holds the node, else ""."""
    while node in parent:
        above = parent[node]
        if isinstance(above, ast.If) and node in above.body:
            return ast.unparse(above.test)
        node = above
    return ""


def assigned(name: ast.Name, raise_: ast.Raise, parent: Dict[ast.AST, ast.AST]) -> ast.AST:
    """The value last assigned to `name` before the raise in its function (msg = ...; raise
    X(msg)), else the name itself."""
    scope: ast.AST = raise_
    while scope in parent and not isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
        scope = parent[scope]
    values = [
        (node.lineno, node.value)
        for node in ast.walk(scope)
        if isinstance(node, ast.Assign)
        and node.lineno < raise_.lineno
        and any(isinstance(t, ast.Name) and t.id == name.id for t in node.targets)
    ]
    return max(values, key=lambda v: v[0])[1] if values else name


def messages(text: str) -> Iterator[Tuple[int, str, str, str]]:
    """(line, exception, template, checked expression) of every raise in a Python file."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return
    parent = parents(tree)
    raises = [node for node in ast.walk(tree) if isinstance(node, ast.Raise)]
    for node in sorted(raises, key=lambda r: (r.lineno, r.col_offset)):
        if not isinstance(node.exc, ast.Call):
            continue
        if not node.exc.args:
            continue
        first = node.exc.args[0]
        if isinstance(first, ast.Name):
            first = assigned(first, node, parent)
        template = template_of(first)
        if template is None or not template.strip("{} \n"):
            continue
        yield node.lineno, exception_name(node.exc.func), template, checked(node, parent)
