#!/usr/bin/env python3
"""The operators of issue 45 (operators_regex, operators_cpp_slips, operators_py_slips): each
makes exactly the edit it names, on synthetic sources written for this test. Standard library
only, nothing built."""
import ast
import unittest

from torchplace.mutation import operators_cpp, operators_py, operators_regex

FAMILIES = """// synthetic: a table shaped like harness/message_families.cpp
const std::vector<MessageFamily>& families() {
  static const std::vector<MessageFamily> all = {
      {E::kDeviceMismatch, "seen", R"(^(found|got) \\S+ and \\w+!)"},
      // a comment between two families
      {E::kDtypeMismatch, "seen", R"(^expected dtype (\\w+)? but got \\w*)"},
      {E::kDtypeMismatch, "seen", R"(^dtype)"},
  };
  return all;
}
"""
CPP = """void f(int a, int b) {
  const char* text = "g(a, b)";
  g(a, b);
  a += 1;
  for (int i = 0; i < b; ++i) h(i);
  h(b);
  h(b);
}
"""
PY = """import re


def f(a, b):
    a += 1
    g(a, b)
    for i in range(a, b):
        h(i)
    return re.match(r"^(x|y)\\d+", "text(a, b)")
"""


def edits(mutants, operator):
    return sorted(m.new.strip() for m in mutants if m.operator == operator)


class Regex(unittest.TestCase):
    def test_each_alternative_dropped_and_each_quantifier_changed(self):
        self.assertEqual(
            operators_regex.variants(r"^(a|b)[+|]x+y*z?(?:p|q)"),
            [
                ("regex_drop_alt", r"^(b)[+|]x+y*z?(?:p|q)"),
                ("regex_drop_alt", r"^(a)[+|]x+y*z?(?:p|q)"),
                ("regex_drop_alt", r"^(a|b)[+|]x+y*z?(?:q)"),
                ("regex_drop_alt", r"^(a|b)[+|]x+y*z?(?:p)"),
                ("regex_quantifier", r"^(a|b)[+|]x*y*z?(?:p|q)"),
                ("regex_quantifier", r"^(a|b)[+|]x+y+z?(?:p|q)"),
                ("regex_quantifier", r"^(a|b)[+|]x+y*z(?:p|q)"),
            ],
        )

    def test_escapes_and_classes_are_left_alone(self):
        self.assertEqual(operators_regex.variants(r"\(a\|b\)[x+*?]\+"), [])


class Cpp(unittest.TestCase):
    def test_families_swap_classes_and_their_regexes_are_edited(self):
        mutants = operators_cpp.mutants_of("x.cpp", FAMILIES)
        swaps = [(m.line, m.new.strip()[:20]) for m in mutants if m.operator == "family_swap"]
        # line 7's neighbour has its own class: no swap there
        self.assertEqual(swaps, [(4, "{E::kDtypeMismatch, "), (6, "{E::kDeviceMismatch,")])
        drops = edits(mutants, "regex_drop_alt")
        self.assertEqual([d.split('R"(')[1][:8] for d in drops], ["^(found)", "^(got) \\"])
        quantifiers = edits(mutants, "regex_quantifier")
        self.assertEqual(len(quantifiers), 5, quantifiers)  # + + ? * on lines 4 and 6
        self.assertTrue(all(m.line in (4, 6) for m in mutants if m.operator.startswith("regex")))

    def test_a_raw_string_outside_a_regex_file_is_not_edited(self):
        plain = FAMILIES.replace("MessageFamily", "Row")
        mutants = operators_cpp.mutants_of("x.cpp", plain)
        self.assertFalse([m for m in mutants if m.operator.startswith("regex")])

    def test_gtests_symmetric_checks_are_not_swapped(self):
        text = (
            "void f() {\n  EXPECT_EQ(a.device(), b);\n  ASSERT_NE(a, b);\n  EXPECT_LT(a, b);\n}\n"
        )
        mutants = operators_cpp.mutants_of("x.cpp", text)
        self.assertEqual(edits(mutants, "arg_swap"), ["EXPECT_LT(b, a);"])

    def test_calls_loops_and_compound_assignments(self):
        mutants = operators_cpp.mutants_of("x.cpp", CPP)
        self.assertEqual(edits(mutants, "arg_swap"), ["g(b, a);"])  # not the string's text
        self.assertEqual(edits(mutants, "aug_assign"), ["a = 1;"])
        for compound in ("-=", "*=", "|="):
            mutated = operators_cpp.mutants_of("y.cpp", f"void f() {{\n  a {compound} 2;\n}}\n")
            self.assertEqual(edits(mutated, "aug_assign"), ["a = 2;"], compound)
        self.assertEqual(edits(mutants, "loop_start"), ["for (int i = 0 + 1; i < b; ++i) h(i);"])
        self.assertEqual(edits(mutants, "loop_bound"), ["for (int i = 0; i < b - 1; ++i) h(i);"])
        self.assertEqual(
            sorted((m.line, m.new.strip()) for m in mutants if m.operator == "dup_stmt"),
            [(4, "g(a, b);"), (5, "a += 1;"), (6, "for (int i = 0; i < b; ++i) h(i);")],
        )


class Python(unittest.TestCase):
    def test_each_operator_and_the_file_still_parses(self):
        mutants = operators_py.mutants_of("x.py", PY)
        for mutant in mutants:
            ast.parse(operators_py.apply(PY, mutant))
        self.assertEqual(edits(mutants, "aug_assign"), ["a = 1"])
        self.assertEqual(
            edits(mutants, "arg_swap"),
            ["(g(b, a))", "(range(b, a))", "(re.match('text(a, b)', '^(x|y)\\\\d+'))"],
        )
        self.assertEqual(edits(mutants, "loop_start"), ["(range(a + 1, b))"])
        self.assertEqual(edits(mutants, "loop_bound"), ["(range(a, b - 1))"])
        self.assertEqual(edits(mutants, "dup_stmt"), ["a += 1"])
        self.assertEqual(edits(mutants, "regex_drop_alt"), ["('^(x)\\\\d+')", "('^(y)\\\\d+')"])
        self.assertEqual(edits(mutants, "regex_quantifier"), ["('^(x|y)\\\\d*')"])

    def test_range_with_one_argument(self):
        mutants = operators_py.mutants_of("x.py", "def f(n):\n    return list(range(n))\n")
        self.assertEqual(edits(mutants, "loop_start"), ["(range(1, n))"])
        self.assertEqual(edits(mutants, "loop_bound"), ["(range(0, n - 1))"])


if __name__ == "__main__":
    unittest.main()
