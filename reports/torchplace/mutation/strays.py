"""What a mutant's tests leave in the checkout outside the mutated file (seen: a mutant of
report/cli.py wrote a report into reports/tests/fixtures/synthetic_gpu/, and every later test
that reads that folder then failed unmutated, a kill for each later mutant). After each mutant the
checkout is put back: tracked files checked out, new untracked files removed. Where the tree is
not a git checkout (a scratch copy), nothing is compared."""
import subprocess
import time
from pathlib import Path
from typing import List, Set

from torchplace.mutation.run import CannotJudge
from torchplace.schema import EXIT_ENV

ATTEMPTS = 4


def state(tree: Path) -> Set[str]:
    """`git status --porcelain` of the tree, every untracked file named (ignored ones not)."""
    if not (tree / ".git").exists():
        return set()
    for attempt in range(ATTEMPTS):  # a test's own git command may hold the index a moment
        done = subprocess.run(
            ["git", "--no-optional-locks", "status", "--porcelain", "--untracked-files=all"],
            cwd=tree,
            capture_output=True,
            text=True,
        )
        if done.returncode == 0:
            return set(done.stdout.splitlines())
        time.sleep(1 + attempt)
    raise CannotJudge(EXIT_ENV, f"git status in {tree} fails: {done.stderr.strip()[-300:]}")


def undo(tree: Path, before: Set[str], mutated: str) -> List[str]:
    """Puts back every change since `before` but the mutated file's; the paths put back."""
    changed = sorted(line for line in state(tree) - before if line[3:] != mutated)
    for line in changed:
        path = line[3:]
        if line.startswith("??"):
            (tree / path).unlink(missing_ok=True)
        else:
            subprocess.run(["git", "checkout", "--", path], cwd=tree, check=True)
    return [line[3:] for line in changed]
