#!/usr/bin/env python3
"""The repository's habits, checked (CTest label "lint"): python3 ci/lint/lint.py CHECK.

Checks: clang_format, shellcheck, black, flake8, mypy, docs (the Markdown documents: docs.py).
Each lists its files from git (the tracked files of the checkout holding this script), so a
file nobody committed is never judged and a committed one is never skipped. Exit 0: the check
ran on at least one file and found nothing; 1: it found something (printed); 3: it could not
run (not a git checkout, no files); 77: its tool is missing (the skip names the Debian package);
64: bad arguments.
"""
import os
import shutil
import subprocess
import sys
from typing import Callable, Dict, List, NoReturn

import docs

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXIT_OK, EXIT_FOUND, EXIT_ENV, EXIT_USAGE, EXIT_SKIP = 0, 1, 3, 64, 77
# The Python the package targets: reports/ (the package and its tests) and ci/ (tool tests).
PYTHON_TREES = ("reports", "ci", "harness", "scenarios")


def tracked(*patterns: str) -> List[str]:
    """The tracked files matching git pathspecs, relative to ROOT; exits 3 outside a checkout."""
    done = subprocess.run(
        ["git", "-C", ROOT, "ls-files", "--", *patterns], capture_output=True, text=True
    )
    if done.returncode != 0:
        _die(f"cannot list the tracked files (not a git checkout?): {done.stderr.strip()}")
    files = [f for f in done.stdout.splitlines() if os.path.isfile(os.path.join(ROOT, f))]
    if not files:
        _die(f"no tracked files match {' '.join(patterns)}: nothing to check")
    return files


def _die(message: str) -> NoReturn:
    print(f"lint: {message}", file=sys.stderr)
    sys.exit(EXIT_ENV)


def shell_scripts() -> List[str]:
    """Every tracked shell script: *.sh, and the extensionless ones with a bash shebang."""
    scripts = tracked("*.sh")
    for path in tracked("ci/torchplace", ".ci/run"):
        scripts.append(path)
    return sorted(set(scripts))


def python_files() -> List[str]:
    return tracked(*[f"{tree}/*.py" for tree in PYTHON_TREES])


def run_tool(argv: List[str], package: str) -> int:
    """Runs a lint tool in ROOT; 77 naming the Debian package when the tool is absent."""
    if shutil.which(argv[0]) is None:
        print(f"SKIP: {argv[0]} is not installed (apt-get install {package})")
        return EXIT_SKIP
    done = subprocess.run(argv, cwd=ROOT)
    return EXIT_OK if done.returncode == 0 else EXIT_FOUND


def check_clang_format() -> int:
    files = tracked("*.cpp", "*.h", "*.hpp", "*.cu")
    return run_tool(["clang-format", "--dry-run", "-Werror", *files], "clang-format")


def check_shellcheck() -> int:
    # Errors and warnings; the info and style notes are advice, not faults.
    return run_tool(
        ["shellcheck", "-x", "-S", "warning", "--source-path=SCRIPTDIR", *shell_scripts()],
        "shellcheck",
    )


def check_black() -> int:
    return run_tool(
        ["black", "--check", "--quiet", "--line-length", "100", *python_files()], "black"
    )


def check_flake8() -> int:
    # black's line length; E203 and W503 are black's own spacing and line breaks.
    return run_tool(
        ["flake8", "--max-line-length", "100", "--extend-ignore", "E203,W503", *python_files()],
        "flake8",
    )


def check_mypy() -> int:
    """mypy over the package: every function of torchplace's modules carries type hints."""
    tracked("reports/torchplace/*.py")
    return run_tool(["mypy", "--config-file", "reports/mypy.ini", "reports/torchplace"], "mypy")


def check_docs() -> int:
    """Every tracked Markdown document's fences, links, sections and C++ snippets (docs.py)."""
    repo = docs.Repo(ROOT, tracked("CMakeLists.txt", "*/CMakeLists.txt"))
    faults, notes = docs.check(repo, tracked("*.md"), tracked("*.h"))
    for line in notes + faults:
        print(line)
    return EXIT_FOUND if faults else EXIT_OK


CHECKS: Dict[str, Callable[[], int]] = {
    "clang_format": check_clang_format,
    "shellcheck": check_shellcheck,
    "black": check_black,
    "flake8": check_flake8,
    "mypy": check_mypy,
    "docs": check_docs,
}


def main(argv: List[str]) -> int:
    if len(argv) != 1 or argv[0] not in CHECKS:
        print(f"usage: lint.py {{{','.join(CHECKS)}}}", file=sys.stderr)
        return EXIT_USAGE
    return CHECKS[argv[0]]()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
