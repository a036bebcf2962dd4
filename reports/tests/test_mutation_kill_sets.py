#!/usr/bin/env python3
"""Every gtest suite defined in the test sources of a C++ file in mutation scope
(scope.CPP_TEST_FILES) is selected by that file's kill set (scope.CPP, a gtest filter): a suite
left out judges none of the file's mutants, and its kills go unseen (seen twice: the sim's
`Sim.*` missed 24 tests; error_class.cpp's ErrorClassNames). Reads sources only."""
import fnmatch
import re
import unittest

from torchplace.mutation import scope
from torchplace.schema import ROOT

SUITE = re.compile(r"^TEST(?:_F|_P)?\((\w+),", re.MULTILINE)
INSTANTIATED = re.compile(r"^INSTANTIATE_TEST_SUITE_P\((\w+),\s*(\w+),", re.MULTILINE)


def suites(source: str) -> set:
    """Each suite's name as gtest lists it: Suite, or Prefix/Suite for a parameterized one."""
    found = set(SUITE.findall(source))
    for prefix, suite in INSTANTIATED.findall(source):
        found.discard(suite)
        found.add(f"{prefix}/{suite}")
    return found


def selects(gtest_filter: str, suite: str) -> bool:
    """Whether the positive filter runs some test of `suite` (a `Suite.Test` name)."""
    return any(fnmatch.fnmatchcase(f"{suite}.AnyTest", part) for part in gtest_filter.split(":"))


class KillSets(unittest.TestCase):
    def test_every_file_in_scope_names_its_test_sources(self):
        self.assertEqual(set(scope.CPP_TEST_FILES), set(scope.CPP))

    def test_every_suite_of_a_files_tests_is_in_its_kill_set(self):
        for path, sources in scope.CPP_TEST_FILES.items():
            for source in sources:
                text = (ROOT / source).read_text()
                found = suites(text)
                self.assertTrue(found, f"{source}: no gtest suite found")
                for suite in sorted(found):
                    with self.subTest(path=path, suite=suite):
                        self.assertTrue(
                            selects(scope.CPP[path], suite),
                            f"{path}: its kill set {scope.CPP[path]!r} leaves out {suite} "
                            f"({source})",
                        )

    def test_the_parser_sees_a_suite_left_out(self):  # synthetic source, this test's own
        text = "TEST(Kept, A) {}\nTEST_P(Param, B) {}\nINSTANTIATE_TEST_SUITE_P(Rows, Param, x);\n"
        self.assertEqual(suites(text), {"Kept", "Rows/Param"})
        self.assertTrue(selects("Kept.*:Rows/Param.*", "Rows/Param"))
        self.assertFalse(selects("Kept.*", "Rows/Param"))


if __name__ == "__main__":
    unittest.main()
