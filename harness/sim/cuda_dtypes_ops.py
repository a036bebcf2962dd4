"""cuda_dtypes.py's operators: native_functions.yaml's schemas and dispatch blocks, which kernel a
call reaches on CUDA (its `CUDA:` kernel, a structured op's out= kernel, else its composite), and
how the caller's arguments bind to that kernel's parameters.
"""
import re
from typing import Dict, List, NamedTuple, Optional, Tuple

from cuda_dtypes_flow import is_list
from cuda_dtypes_source import Function, split_top

FUNC = re.compile(r"^- func: ([A-Za-z0-9_]+)(?:\.([A-Za-z0-9_]+))?\((.*)\) -> (.*)$")
ENTRY = re.compile(r"^    ([A-Za-z0-9_, ]+):\s*([\w:]+)")
COMPOSITE = (
    "CompositeExplicitAutograd",
    "CompositeExplicitAutogradNonFunctional",
    "CompositeImplicitAutograd",
    "Math",
    "DefaultBackend",
)


class Arg(NamedTuple):
    name: str
    default: bool
    out: bool
    tensor: bool  # Tensor or Tensor?: what a kernel's `const Tensor&` parameter holds


class Op(NamedTuple):
    name: str
    overload: str
    args: List[Arg]
    returns: int
    dispatch: Dict[str, str]  # dispatch key -> kernel function
    delegate: str  # structured_delegate, or ""

    @property
    def qualified(self) -> str:
        return self.name + ("." + self.overload if self.overload else "")

    @property
    def is_out(self) -> bool:
        return any(a.out for a in self.args)


def parse_args(text: str) -> List[Arg]:
    args, keyword = [], False
    for part in split_top(text):
        if part == "*":
            keyword = True
        elif part:
            declared, _, default = part.partition("=")
            kind, name = declared.rsplit(" ", 1)
            tensor = bool(re.fullmatch(r"Tensor(\(\w!?\))?\??", kind))
            args.append(Arg(name, bool(default), keyword and "!" in kind, tensor))
    return args


def read_yaml(text: str) -> Dict[str, Op]:
    ops: Dict[str, Op] = {}
    current: Optional[Op] = None
    in_dispatch = False
    for line in text.splitlines():
        m = FUNC.match(line)
        if m:
            returns = m.group(4).strip()
            count = 0 if returns == "()" else len(split_top(returns.strip("()")))
            current = Op(m.group(1), m.group(2) or "", parse_args(m.group(3)), count, {}, "")
            ops[current.qualified], in_dispatch = current, False
        elif current is None:
            continue
        elif line.startswith("  dispatch:"):
            in_dispatch = True
        elif in_dispatch and ENTRY.match(line):
            keys, kernel = ENTRY.match(line).groups()
            current.dispatch.update({k.strip(): kernel.split("::")[-1] for k in keys.split(",")})
        elif line.startswith("  structured_delegate:"):
            current = current._replace(delegate=line.split(":", 1)[1].strip())
            ops[current.qualified] = current
        elif not line.startswith("    "):
            in_dispatch = False
    return ops


def matched(function: Function, target: Op) -> List[Optional[str]]:
    """The schema argument each parameter of `function` (a kernel of `target`) holds: by
    position, or (a structured kernel's precomputed parameters) its tensors in order."""
    if len(function.params) == len(target.args):
        return [a.name for a in target.args]
    tensors = [a.name for a in target.args if a.tensor]
    params = [p for p in function.params if "Tensor" in p[0] and not is_list(function, p[1])]
    if len(params) != len(tensors):
        return [p[1] for p in function.params]
    by_order = dict(zip((p[1] for p in params), tensors))
    return [by_order.get(p[1]) for p in function.params]


class Ops:
    """The operators of one version, as `Flow` calls them (cuda_dtypes_flow.py)."""

    def __init__(self, ops: Dict[str, Op], tree):
        self.ops, self.tree = ops, tree
        self.by_call: Dict[Tuple[str, bool], List[Op]] = {}
        for op in ops.values():
            if op.is_out:
                self.by_call.setdefault((op.name + "_out", True), []).append(op)  # outs first
                self.by_call.setdefault((op.name + "_outf", False), []).append(op)
            else:
                self.by_call.setdefault((op.name, False), []).append(op)

    def cuda_kernel(self, op: Op) -> Optional[Tuple[str, Op]]:
        """The kernel CUDA runs for `op` and the operator whose schema it implements."""
        if "CUDA" in op.dispatch:
            return op.dispatch["CUDA"], op
        target = self.ops.get(op.delegate)
        if target is not None and "CUDA" in target.dispatch:
            return target.dispatch["CUDA"], target
        return None

    def kernel(self, op: Op) -> Optional[Tuple[str, Op]]:
        found = self.cuda_kernel(op)
        if found or op.delegate:
            return found
        for key in COMPOSITE:
            if key in op.dispatch:
                return op.dispatch[key], op
        if not op.dispatch:  # CompositeImplicitAutograd by default: at::native::<cpp name>
            return op.name + ("_out" if op.is_out else ""), op
        return None

    def functions(self, name: str, target: Op) -> List[Function]:
        found = self.tree.functions.get(name, [])
        exact = [f for f in found if len(f.params) == len(target.args)]
        found = exact or found
        return [f for f in found if "/cuda/" in f.source.path] or found

    def sources_for(
        self, op: Op, target: Op, sources: Dict[str, Optional[str]]
    ) -> Dict[str, Optional[str]]:
        """`target`'s arguments' sources from `op`'s: by name; an out= argument is the
        in-place self, or the functional op's result (`return:N`)."""
        mapped, outs = {}, 0
        for arg in target.args:
            if arg.out and target is not op:
                key = "self" if op.name.endswith("_") else f"return:{outs}"
                mapped[arg.name], outs = sources.get(key), outs + 1
            else:
                mapped[arg.name] = sources.get(arg.name)
        return mapped

    def paths(self, flow, op: Op, sources: Dict[str, Optional[str]], depth: int):
        """Every path through the kernel CUDA runs for `op`, or None without one."""
        found = self.kernel(op)
        if found is None:
            return None
        name, target = found
        mapped = self.sources_for(op, target, sources)
        candidates = self.functions(name, target)
        if not candidates:
            return None
        results = []
        for function in candidates:
            names = matched(function, target)
            binding = {p[1]: mapped.get(name) for p, name in zip(function.params, names)}
            binding = {k: v for k, v in binding.items() if v and not is_list(function, k)}
            results.append(flow.function(function, binding, depth))
        return flow.alternatives(results)

    def call(self, flow, frame, name: str, arguments: List[str], method: bool):
        """A call of operator `name` in a kernel (`at::name(...)`, `x.name(...)`)."""
        outs_first = name.endswith("_out") and not method
        candidates = [
            op
            for op in self.by_call.get((name, outs_first), [])
            if sum(not a.default for a in op.args) <= len(arguments) <= len(op.args)
            and (not method or op.args[0].name == "self")
        ]
        results = []
        for op in candidates:
            ordered = list(arguments)
            if outs_first:
                count = sum(a.out for a in op.args)
                ordered = ordered[count:] + ordered[:count]
            sources = {a.name: frame.resolver.source(e) for a, e in zip(op.args, ordered)}
            found = self.paths(flow, op, sources, frame.depth + 1)
            if found is not None:
                results.append(found)
        return flow.alternatives(results) if results else None
