#!/usr/bin/env python3
"""The docs lint's checks of code against the build (docs.py), on a synthetic repository written
to a temporary directory (docs_synthetic.py): Repo.compiled and read, excerpt_fault, the
snippet markers (excerpt, downstream, not compiled) and header_examples.

  test_docs_checks.py      (CTest: lint.docs_checks)
"""
import unittest

import docs
from docs_synthetic import EXAMPLES, FILES, GUIDE_SAYS, Synthetic

NOT_IN = f"its example is not in {EXAMPLES}"


class Compiled(Synthetic):
    def test_a_file_is_compiled_when_some_cmakelists_names_it(self) -> None:
        repo = self.repo()
        self.assertTrue(repo.compiled("src/lib.cpp"))
        self.assertTrue(repo.compiled(EXAMPLES), "named by the second CMakeLists.txt")
        self.assertFalse(repo.compiled("src/orphan.cpp"))

    def test_read_gives_the_text_or_empty_for_no_file(self) -> None:
        repo = self.repo()
        self.assertEqual(repo.read("src/orphan.cpp"), FILES["src/orphan.cpp"])
        self.assertEqual(repo.read("src/missing.cpp"), "")
        self.assertEqual(repo.read("src"), "", "a directory is no file")


class Excerpt(Synthetic):
    def test_contiguous_lines_reindented_or_reflowed_are_an_excerpt(self) -> None:
        repo = self.repo()
        body = ["int twice(int x) {", "    return 2 * x;", "}"]
        self.assertIsNone(docs.excerpt_fault(repo, "src/lib.cpp", body))
        body = ["int thrice(int x) {", "return 3 * x; }"]
        self.assertIsNone(docs.excerpt_fault(repo, "src/lib.cpp", body))

    def test_lines_not_word_for_word_in_the_source_are_named(self) -> None:
        repo, fault = self.repo(), "the block is not, word for word, a part of src/lib.cpp"
        for body in (["int twice(int x) {", "}"], ["wice(int x) {"], [], ["", "  "]):
            with self.subTest(body=body):  # a line skipped, a word cut, nothing at all
                self.assertEqual(docs.excerpt_fault(repo, "src/lib.cpp", body), fault)
        # nor is an empty block part of a compiled source of blank lines
        fault = "the block is not, word for word, a part of src/blank.cpp"
        self.assertEqual(docs.excerpt_fault(repo, "src/blank.cpp", []), fault)

    def test_an_uncompiled_missing_or_empty_source_is_named(self) -> None:
        repo, body = self.repo(), ["int orphan() { return 0; }"]
        self.assertEqual(
            docs.excerpt_fault(repo, "src/orphan.cpp", body),
            "no CMakeLists.txt names orphan.cpp: src/orphan.cpp is not compiled",
        )
        for source in ("src/missing.cpp", "src/empty.cpp"):
            self.assertEqual(
                docs.excerpt_fault(repo, source, body),
                f"the excerpt's source {source} does not exist or is empty",
            )


class HeaderExamples(Synthetic):
    def test_examples_not_compiled_word_for_word_are_named_at_their_first_line(self) -> None:
        self.assertEqual(
            list(docs.header_examples(self.repo(), "include/demo.h")),
            [f"include/demo.h:11: {NOT_IN}", f"include/demo.h:16: {NOT_IN}"],
        )
        self.assertEqual(list(docs.header_examples(self.repo(), "include/clean.h")), [])

    def test_a_row_ending_in_an_empty_comment_is_code(self) -> None:
        self.write({"include/x.h": "// Example:\n//   gone(); //\nvoid gone();\n"})  # synthetic
        self.assertEqual(
            list(docs.header_examples(self.repo(), "include/x.h")), [f"include/x.h:2: {NOT_IN}"]
        )

    def test_an_uncompiled_examples_file_is_the_one_fault(self) -> None:
        repo = docs.Repo(self.root, ["CMakeLists.txt"])  # the examples' CMakeLists.txt unread
        self.assertEqual(
            list(docs.header_examples(repo, "include/demo.h")),
            ["include/demo.h: no CMakeLists.txt names docs_examples_test.cpp: it is not compiled"],
        )


class Snippets(Synthetic):
    def says(self, path: str, text: str) -> list:
        """What snippets() says of `text` written as the document `path`."""
        self.write({path: text})
        return list(docs.snippets(self.repo(), path, docs.scan(text)[1]))

    def test_each_marker_kind_is_checked_and_an_unmarked_cpp_block_named(self) -> None:
        guide = FILES["docs/guide.md"]
        self.assertEqual(self.says("docs/guide.md", guide), GUIDE_SAYS)

    def test_a_marker_on_the_first_line_marks_the_block_below(self) -> None:
        text = "<!-- snippet: not compiled: first -->\n```cpp\nx();\n```\n"
        self.assertEqual(self.says("a.md", text), [(False, "a.md:2: not compiled: first")])

    def test_a_block_on_the_first_line_has_no_marker_above(self) -> None:
        # synthetic: the document's last line a marker, which must not be read as line 0's
        text = "```cpp\nx();\n```\n<!-- snippet: not compiled: after -->\n"
        self.assertEqual(
            self.says("a.md", text),
            [(True, "1: a C++ block without a <!-- snippet: ... --> marker above it")],
        )

    def test_a_marker_is_read_with_loose_spacing(self) -> None:
        # synthetic: indented, no space after the kind nor before the end, trailing blanks
        text = "  <!-- snippet: not compiled:spaced out-->  \n```cpp\nx();\n```\n"
        self.assertEqual(self.says("a.md", text), [(False, "a.md:2: not compiled: spaced out")])

    def test_only_the_line_just_above_is_a_blocks_marker(self) -> None:
        text = "<!-- snippet: not compiled: too far -->\n\n```cpp\nx();\n```\n"
        self.assertEqual(
            self.says("a.md", text),
            [(True, "3: a C++ block without a <!-- snippet: ... --> marker above it")],
        )

    def test_a_marker_naming_nothing_is_a_fault(self) -> None:
        # synthetic: check.sh builds `snippet quickstart`, which "snippet " alone must not match
        for kind in ("excerpt", "downstream", "not compiled:"):
            with self.subTest(kind=kind):
                text = f"<!-- snippet: {kind} -->\n```cpp\nx();\n```\n"
                self.assertEqual(
                    self.says("a.md", text),
                    [(True, f"2: its marker <!-- snippet: {kind} --> names nothing")],
                )


if __name__ == "__main__":
    unittest.main()
