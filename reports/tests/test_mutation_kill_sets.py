#!/usr/bin/env python3
"""The kill sets of the generated mutants (scope.py, issue 45). Every gtest suite defined in the
test sources of a C++ file in scope (scope.cpp_test_files) is selected by that file's gtest
filter: a suite left out judges none of the file's mutants, and its kills go unseen (seen twice:
the sim's `Sim.*` missed 24 tests; error_class.cpp's ErrorClassNames). A scenario file's filter
names the scenario it registers. The scope is the tree: every tracked source of a suffix a
compiler or Python reads is in scope or excluded with a reason, and every exclusion matches a
file. Reads sources only."""
import fnmatch
import re
import subprocess
import unittest

from torchplace.mutation import scope
from torchplace.schema import ROOT

SUITE = re.compile(r"^TEST(?:_F|_P)?\((\w+),", re.MULTILINE)
OTHER_SUFFIXES = (".cc", ".cxx", ".hpp", ".hh", ".cu", ".cuh", ".pyi", ".pyx")
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
    def test_a_narrowed_filter_names_its_test_sources(self):
        for path, (binary, gtest_filter) in scope.CPP.items():
            if binary == scope.HARNESS_TESTS and gtest_filter != "*":
                with self.subTest(path=path):
                    self.assertTrue(scope.cpp_test_files(path), f"{path}: {gtest_filter}")

    def test_every_suite_of_a_files_tests_is_in_its_kill_set(self):
        for path in scope.CPP:
            gtest_filter = scope.CPP[path][1]
            for source in scope.cpp_test_files(path):
                text = (ROOT / source).read_text()
                found = suites(text)
                self.assertTrue(found, f"{source}: no gtest suite found")
                for suite in sorted(found):
                    with self.subTest(path=path, suite=suite):
                        self.assertTrue(
                            selects(gtest_filter, suite),
                            f"{path}: its kill set {gtest_filter!r} leaves out {suite} "
                            f"({source})",
                        )

    def test_every_kill_set_binary_has_a_first_guess_and_a_folder(self):
        # the sample's budget reads a first guess for each kind (a KeyError once, mid-CI)
        from torchplace.mutation.scratch import FIRST_GUESS_S

        binaries = {binary for binary, _ in scope.CPP.values()}
        self.assertLessEqual(binaries, set(FIRST_GUESS_S))
        self.assertLessEqual(binaries, set(scope.BINARIES))

    def test_a_scenario_files_filter_names_the_scenario_it_registers(self):
        scenarios = [p for p, (binary, _) in scope.CPP.items() if binary == "torchplace_scenarios"]
        self.assertTrue(scenarios)
        for path in scenarios:
            registered = re.findall(r"^TP_SCENARIO\((\w+)\)", (ROOT / path).read_text(), re.M)
            self.assertEqual([f"{name}.*" for name in registered], [scope.CPP[path][1]], path)


class TheTree(unittest.TestCase):
    def test_every_source_is_in_scope_or_excluded_with_a_reason(self):
        for path in scope.tree_sources():
            with self.subTest(path=path):
                inside = path in scope.CPP or path in scope.PYTHON
                self.assertNotEqual(inside, bool(scope.excluded_by(path)), path)

    def test_no_source_has_a_suffix_the_scope_does_not_list(self):
        listed = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True)
        other = [p for p in listed.stdout.split() if p.endswith(OTHER_SUFFIXES)]
        self.assertEqual(other, [], "a source the scope would leave out unseen")

    def test_every_exclusion_matches_a_file(self):
        for glob, reason in scope.exclusions():
            with self.subTest(glob=glob):
                self.assertTrue(reason)
                self.assertTrue(
                    [p for p in scope.tree_sources() if fnmatch.fnmatchcase(p, glob)], glob
                )

    def test_the_parser_sees_a_suite_left_out(self):  # synthetic source, this test's own
        text = "TEST(Kept, A) {}\nTEST_P(Param, B) {}\nINSTANTIATE_TEST_SUITE_P(Rows, Param, x);\n"
        self.assertEqual(suites(text), {"Kept", "Rows/Param"})
        self.assertTrue(selects("Kept.*:Rows/Param.*", "Rows/Param"))
        self.assertFalse(selects("Kept.*", "Rows/Param"))


if __name__ == "__main__":
    unittest.main()
