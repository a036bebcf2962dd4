#!/usr/bin/env python3
"""The docs lint's split of a Markdown document (docs.scan): code blocks with their language and
lines, prose with the code blanked, headings outside code only, a fence closed only by a bare
fence as long as its own, and an unclosed fence reported. Documents are synthetic, written here.
Beside docs.py, so that `import docs` finds it as lint.py does.

  test_docs.py      (CTest: lint.docs_split)
"""
import unittest

import docs

# A synthetic document: a heading, prose, a bash block holding a "# comment" (not a heading).
DOCUMENT = """# Title

Some prose.

```bash
# a comment, not a heading
echo hi
```

## Next
"""


class Split(unittest.TestCase):
    # kills ci/lint/docs.py:_split:f43aef:negate_if:0 (lines inside a block read as prose, the
    # block never closed, its comments taken for headings)
    def test_a_block_and_the_prose_around_it(self) -> None:
        prose, blocks, headings, faults = docs.scan(DOCUMENT)
        self.assertEqual(blocks, [(5, "bash", ["# a comment, not a heading", "echo hi"])])
        self.assertEqual(headings, [(1, "Title"), (10, "Next")])
        self.assertEqual(faults, [])
        self.assertEqual(prose[2], "Some prose.")
        self.assertEqual(prose[4:8], ["", "", "", ""], "the code is blanked from the prose")

    def test_only_a_bare_fence_as_long_closes_a_block(self) -> None:
        text = "````markdown\n```cpp\nint x;\n```\n````\n"  # synthetic: a fence inside a fence
        _, blocks, _, faults = docs.scan(text)
        self.assertEqual(blocks, [(1, "markdown", ["```cpp", "int x;", "```"])])
        self.assertEqual(faults, [])

    def test_an_unclosed_fence_is_reported_and_the_rest_still_read(self) -> None:
        text = "# Title\n\n```python\nx = 1\n\n## Later\n"  # synthetic: the closing fence lost
        _, blocks, headings, faults = docs.scan(text)
        self.assertEqual(blocks, [])
        self.assertEqual(
            faults,
            ["3: a code block that is never closed", "3: the section holds a stray fence"],
        )
        self.assertEqual(headings, [(1, "Title"), (6, "Later")])

    def test_sections_cut_mid_sentence_are_named_at_their_line(self) -> None:
        # synthetic: a list's tail, a section ending on "and", one starting in lower case
        text = (
            "`b`, `c`, and `d`.\n\n# Title\n\nIt begins well and\n\n"
            "## Next\nstarts in lower case.\n"
        )
        prose, _, headings, _ = docs.scan(text)
        self.assertEqual(
            list(docs.sections(text, prose, headings)),
            [
                "1: a paragraph starts mid-sentence: '`b`, `c`, and `d`.'",
                "5: the section ends mid-sentence: 'It begins well and'",
                "8: the section starts mid-sentence: 'starts in lower case.'",
            ],
        )


if __name__ == "__main__":
    unittest.main()
