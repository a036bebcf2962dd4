#!/usr/bin/env python3
"""The docs lint's checks of a document's prose (docs.py): blocks without a language and ~~~
fences (scan), relative links and their #anchors (links, anchor, headings_of), and sections or
paragraphs cut mid-sentence (sections), each fault named at its line and clean text left alone.
Documents are synthetic, written here (test_docs.py covers the rest of scan).

  test_docs_prose.py      (CTest: lint.docs_prose)
"""
import os
import shutil
import tempfile
import unittest
from typing import List

import docs

# A synthetic document in a subdirectory: good links on lines 5-6, a link inside code on 10
# (not checked), bad ones on 7 and 12.
GUIDE = """# Guide

## Part two

See [other](other.md), [its part](other.md#section-two), [here](#part-two).
Also [the source](../src/lib.cpp#L3), [a site](https://example.com/x#y), [z](z:thing).
Broken: [gone](gone.md), [no part](other.md#nope).

```bash
cat [not a link](gone.md)
```
And [no part here](#nowhere) ends it.
"""


class Scan(unittest.TestCase):
    def test_a_block_opened_without_a_language_is_named(self) -> None:
        _, blocks, _, faults = docs.scan("Text.\n\n```\nplain\n```\n")
        self.assertEqual(blocks, [(3, "", ["plain"])])
        self.assertEqual(faults, ["3: a code block opened without a language (a stray fence?)"])

    def test_a_tilde_fence_is_closed_by_tildes_only(self) -> None:
        _, blocks, _, faults = docs.scan("~~~text\n```\nx\n~~~\n")
        self.assertEqual((blocks, faults), ([(1, "text", ["```", "x"])], []))

    def test_a_hash_without_a_space_is_no_heading_one_with_is_even_if_empty(self) -> None:
        text = "#include <x>\n#tag\n## Real\n# \n"
        self.assertEqual(docs.scan(text)[2], [(3, "Real"), (4, "")])


class Links(unittest.TestCase):
    def setUp(self) -> None:
        self.root = tempfile.mkdtemp(prefix="docs-links-")
        self.addCleanup(shutil.rmtree, self.root)
        for path, text in {
            "docs/guide.md": GUIDE,
            "docs/other.md": "# Other\n\n## Section two\n\nText.\n",
            "src/lib.cpp": "int x;\n",
        }.items():
            os.makedirs(os.path.join(self.root, os.path.dirname(path)), exist_ok=True)
            with open(os.path.join(self.root, path), "w", encoding="utf-8") as handle:
                handle.write(text)

    def test_each_broken_link_is_named_at_its_line(self) -> None:
        prose = docs.scan(GUIDE)[0]
        self.assertEqual(
            list(docs.links(self.root, "docs/guide.md", prose)),
            [
                "7: the link gone.md points at nothing",
                "7: the link other.md#nope names no heading of other.md",
                "12: the link #nowhere names no heading of docs/guide.md",
            ],
        )

    def test_an_anchor_is_the_heading_lowercased_hyphenated_unpunctuated(self) -> None:
        self.assertEqual(docs.anchor("Hello, World: A-b C"), "hello-world-a-b-c")
        path = os.path.join(self.root, "docs/other.md")
        self.assertEqual(docs.headings_of(path), ["other", "section-two"])


def sections(text: str) -> List[str]:
    prose, _, headings, _ = docs.scan(text)
    return list(docs.sections(text, prose, headings))


class Sections(unittest.TestCase):
    def test_each_bad_first_line_is_named(self) -> None:
        for line in ("  indented leftover", "lower case", ") closing", ", comma", "; semi", ": x"):
            with self.subTest(line=line):
                self.assertEqual(
                    sections(f"# T\n\n{line}\nMore.\n"),
                    [f"3: the section starts mid-sentence: {line.strip()!r}"],
                )

    def test_each_bad_last_line_is_named(self) -> None:
        for end in (",", " (", ";", " and", " or", " the", " a", " of", " to", " with"):
            with self.subTest(end=end):
                self.assertEqual(
                    sections(f"# T\n\nStart.\nIt ends{end}\n"),
                    [f"4: the section ends mid-sentence: 'It ends{end}'"],
                )

    def test_only_a_sections_first_and_last_lines_are_judged(self) -> None:
        text = "# A\n\nfirst line.\nMiddle,\nmiddle and\nLast and\n## B\n\nIt holds data\n"
        self.assertEqual(
            sections(text),
            [
                "3: the section starts mid-sentence: 'first line.'",
                "6: the section ends mid-sentence: 'Last and'",
            ],
        )

    def test_empty_sections_and_code_at_a_sections_edges_are_clean(self) -> None:
        self.assertEqual(sections("# A\n## B\n\nFine.\n"), [])
        self.assertEqual(sections("# A\n\n  ```bash\n  echo x,\n  ```\n"), [])

    def test_only_a_paragraph_that_starts_with_a_lists_tail_is_named(self) -> None:
        text = (
            "# T\n\nLabels: `a`,\n`b`, `c`, and `d` follow on.\n\n"
            "`e`, `f` begin a paragraph cut from its sentence.\nThe end.\n"
        )
        cut = "`e`, `f` begin a paragraph cut from its sentence."
        self.assertEqual(sections(text), [f"6: a paragraph starts mid-sentence: {cut!r}"])


if __name__ == "__main__":
    unittest.main()
