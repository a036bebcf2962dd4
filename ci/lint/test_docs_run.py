#!/usr/bin/env python3
"""The docs lint as a whole, on a synthetic repository (docs_synthetic.py) in a temporary
directory: docs.check() gathers every document's and every header's faults, each named with its
file, and the notes apart; `lint.py docs` over a git checkout of it exits 1 on a fault and 0 when
clean, printing the notes and faults.

  test_docs_run.py      (CTest: lint.docs_run)
"""
import contextlib
import io
import shutil
import subprocess
import unittest
from typing import List, Tuple
from unittest import mock

import docs
import lint
from docs_synthetic import EXAMPLES, GUIDE_SAYS, Synthetic

# A synthetic document with a fault of each of the other kinds: a link to nothing (line 3), a
# block opened without a language (5), a section ending mid-sentence (11).
BROKEN = (
    "# Broken\n\nSee [nothing](missing.md) and\n\n```\nno language\n```\n\n"
    "## End\n\nIt stops with a\n"
)
BROKEN_SAYS = [
    "docs/broken.md:5: a code block opened without a language (a stray fence?)",
    "docs/broken.md:3: the link missing.md points at nothing",
    "docs/broken.md:11: the section ends mid-sentence: 'It stops with a'",
]
# A synthetic clean document: an excerpt of a compiled file, a block marked not compiled, a link.
CLEAN = (
    "# Clean\n\n<!-- snippet: excerpt src/lib.cpp -->\n```cpp\nint twice(int x) {\n```\n\n"
    "<!-- snippet: not compiled: a sketch -->\n```cpp\nsketch();\n```\n\n"
    "See [the source](../src/lib.cpp).\n"
)
CLEAN_NOTE = "docs/clean.md:9: not compiled: a sketch"
GUIDE_FAULTS = [f"docs/guide.md:{message}" for fault, message in GUIDE_SAYS if fault]
GUIDE_NOTES = [message for fault, message in GUIDE_SAYS if not fault]
DEMO_FAULTS = [f"include/demo.h:{line}: its example is not in {EXAMPLES}" for line in (11, 16)]


class Check(Synthetic):
    def setUp(self) -> None:
        super().setUp()
        self.write({"docs/broken.md": BROKEN, "docs/clean.md": CLEAN})

    def test_every_documents_and_headers_faults_with_its_file(self) -> None:
        documents = ["docs/guide.md", "docs/broken.md", "docs/clean.md"]
        faults, notes = docs.check(self.repo(), documents, ["include/demo.h", "include/clean.h"])
        self.assertEqual(faults, GUIDE_FAULTS + BROKEN_SAYS + DEMO_FAULTS)
        self.assertEqual(notes, GUIDE_NOTES + [CLEAN_NOTE])

    def test_clean_documents_and_headers_give_notes_only(self) -> None:
        faults, notes = docs.check(self.repo(), ["docs/clean.md"], ["include/clean.h"])
        self.assertEqual(faults, [])
        self.assertEqual(notes, [CLEAN_NOTE])


@unittest.skipUnless(shutil.which("git"), "lint.py lists the files with git, not installed")
class LintDocs(Synthetic):
    """`lint.py docs` with its ROOT the synthetic repository, made a git checkout."""

    def lint(self, tracked: List[str]) -> Tuple[int, str]:
        subprocess.run(["git", "init", "-q", self.root], check=True)
        subprocess.run(["git", "-C", self.root, "add", "--", *tracked], check=True)
        out = io.StringIO()
        with mock.patch.object(lint, "ROOT", self.root), contextlib.redirect_stdout(out):
            code = lint.main(["docs"])
        return code, out.getvalue()

    def test_a_fault_exits_1_and_is_printed(self) -> None:
        self.write({"docs/broken.md": BROKEN})
        code, out = self.lint(["CMakeLists.txt", "harness", "src", "docs/broken.md", "include"])
        self.assertEqual(code, lint.EXIT_FOUND)
        self.assertEqual(out.splitlines(), BROKEN_SAYS + DEMO_FAULTS)

    def test_a_clean_checkout_exits_0_printing_its_notes(self) -> None:
        self.write({"docs/clean.md": CLEAN})
        code, out = self.lint(
            ["CMakeLists.txt", "harness", "src", "docs/clean.md", "include/clean.h"]
        )
        self.assertEqual((code, out), (lint.EXIT_OK, CLEAN_NOTE + "\n"))

    def test_an_untracked_document_is_not_judged(self) -> None:
        self.write({"docs/broken.md": BROKEN, "docs/clean.md": CLEAN})
        code, _ = self.lint(
            ["CMakeLists.txt", "harness", "src", "docs/clean.md", "include/clean.h"]
        )
        self.assertEqual(code, lint.EXIT_OK)


if __name__ == "__main__":
    unittest.main()
