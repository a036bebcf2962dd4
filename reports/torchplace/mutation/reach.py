"""The Python kill-set rule (scope.py): a CTest test can kill a mutant of reports/torchplace/F
when its scripts reach F. A script reaches the modules it names (`import torchplace.x`, `from
torchplace.x import y`, `-m torchplace.x`, `python3 -m torchplace.x` in a string, a relative
import), `ci/torchplace` reaches the command (torchplace.__main__), a sibling script it imports is
read as well, and each module reached reaches what it names in turn. A text scan, not an
import: it may take in a test that never runs the line (the run then only costs time), and it
takes in every test that does."""
import re
from functools import lru_cache
from pathlib import Path
from typing import FrozenSet, Iterable, Set, Tuple

from torchplace.schema import ROOT

PACKAGE = ROOT / "reports"
NAMED = re.compile(r"\btorchplace(?:\.\w+)+")
FROM = re.compile(
    r"^\s*from\s+(\.+\w*(?:\.\w+)*|torchplace(?:\.\w+)*)\s+import\s+\(?([\w, ]+)", re.M
)
IMPORT = re.compile(r"^\s*import\s+(torchplace(?:\.\w+)*)", re.M)
RUN = re.compile(r"-m\W+(torchplace(?:\.\w+)*)")
SIBLING = re.compile(r"^\s*(?:from|import)\s+(\w+)", re.M)
COMMAND = "ci/torchplace"


def module_file(name: str) -> Path:
    """torchplace.a.b -> reports/torchplace/a/b.py or .../a/b/__init__.py (may not exist)."""
    base = PACKAGE.joinpath(*name.split("."))
    return base.with_suffix(".py") if base.with_suffix(".py").is_file() else base / "__init__.py"


def _resolve(relative: str, holder: Path) -> str:
    """`..x` in reports/torchplace/a/b.py -> torchplace.x."""
    dots = len(relative) - len(relative.lstrip("."))
    parts = list(holder.relative_to(PACKAGE).with_suffix("").parts)[: -dots or None]
    rest = relative.lstrip(".")
    return ".".join(parts + ([rest] if rest else []))


def named_modules(text: str, holder: Path, script: bool = False) -> Set[str]:
    """The torchplace modules one file names, with its `from X import y` submodules: in a test's
    script any mention (a subprocess's `-m X` too), in a module of the package its imports and
    `-m X` (its docstrings name modules it does not run)."""
    found = set(NAMED.findall(text) if script else IMPORT.findall(text) + RUN.findall(text))
    for source, names in FROM.findall(text):
        module = _resolve(source, holder) if source.startswith(".") else source
        found.add(module)
        found.update(f"{module}.{n.strip()}" for n in names.split(",") if n.strip())
    found |= {f"{name}.__main__" for name in RUN.findall(text)}  # `-m package`
    if script and COMMAND in text:
        found.add("torchplace.__main__")
    reached: Set[str] = set()
    for name in found:  # a name may end in an attribute: keep its longest module prefix
        parts = name.split(".")
        for end in range(len(parts), 0, -1):
            if module_file(".".join(parts[:end])).is_file():
                reached.update(".".join(parts[:k]) for k in range(1, end + 1))
                break
    return reached


@lru_cache(maxsize=None)
def _closure(start: FrozenSet[str]) -> FrozenSet[str]:
    seen: Set[str] = set()
    waiting = list(start)
    while waiting:
        name = waiting.pop()
        if name in seen:
            continue
        seen.add(name)
        path = module_file(name)
        waiting += named_modules(path.read_text(), path) - seen
    return frozenset(seen)


def scripts_of(command: Iterable[str], tree: Path = ROOT) -> Set[Path]:
    """The tree's text files in a test command (as files of this checkout where the test runs
    in a scratch copy, `tree`), and the sibling scripts they import."""
    inside = [Path(a).relative_to(tree) for a in command if a.startswith(f"{tree}/")]
    found, waiting = set(), [ROOT / path for path in inside]
    while waiting:
        path = waiting.pop()
        if path in found or not path.is_file() or path.suffix not in (".py", ".sh", ""):
            continue
        found.add(path)
        try:
            text = path.read_text()
        except UnicodeDecodeError:  # a binary (a test program of the build)
            found.discard(path)
            continue
        waiting += [path.with_name(f"{n}.py") for n in SIBLING.findall(text)]
    return found


@lru_cache(maxsize=None)
def reached_files(command: Tuple[str, ...], tree: Path = ROOT) -> FrozenSet[str]:
    """The tree paths a test with this command reaches: its scripts, and the modules of
    reports/torchplace they reach."""
    start: Set[str] = set()
    for at, arg in enumerate(command[:-1]):
        if arg == "-m" and command[at + 1].startswith("torchplace"):
            start |= {command[at + 1], command[at + 1] + ".__main__"}  # `-m package`
    scripts = scripts_of(command, tree)
    for script in scripts:
        start |= named_modules(script.read_text(), script, script=True)
    start = {name for name in start if module_file(name).is_file()}
    paths = scripts | {module_file(name) for name in _closure(frozenset(start))}
    return frozenset(p.relative_to(ROOT).as_posix() for p in paths)
