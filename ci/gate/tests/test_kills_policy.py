#!/usr/bin/env python3
"""Tests that kill generated mutants of the speed gate's policy which survived every other test
(torchplace.mutation.generated; ci/mutation/README.md "Generated mutants"). Each names the
mutant it was seen to kill. Policies are the committed one, changed here: synthetic."""
import json
import unittest

from torchplace.gate import policy
from torchplace.schema import InputError


def committed():
    """ci/gate/policy.json as a fresh document, to be changed by a test."""
    with open(policy.DEFAULT_POLICY, encoding="utf-8") as handle:
        return json.load(handle)


class Containers(unittest.TestCase):
    def test_patterns_are_a_list_and_benchmarks_an_object(self):
        # kills reports/torchplace/gate/policy.py:Policy.__init__:fefa00:logic_swap:0 (either
        # wrong alone passed)
        doc = committed()
        for field, wrong in (("patterns", {}), ("benchmarks", [])):
            with self.subTest(field=field), self.assertRaises(InputError) as raised:
                policy.Policy(dict(doc, **{field: wrong}), "synthetic.json")
            self.assertIn("patterns must be a list and benchmarks an object", str(raised.exception))

    def test_a_rule_that_is_no_object_is_bad_input_naming_it(self):
        # kills reports/torchplace/gate/policy.py:_check_rule:dbe7ba:delete_branch:0 and its
        # delete_stmt:0 (a tool error, AttributeError, instead of naming the entry)
        for wrong in (1.2, [], None, "max_ratio=1.2"):
            doc = committed()
            doc["benchmarks"] = {"BM_synthetic": wrong}
            with self.subTest(rule=wrong), self.assertRaises(InputError) as raised:
                policy.Policy(doc, "synthetic.json")
            self.assertIn("benchmarks['BM_synthetic']: expected an object", str(raised.exception))


class TopLevel(unittest.TestCase):
    def test_a_policy_missing_a_required_field_is_bad_input_naming_it(self):
        # kills reports/torchplace/gate/policy.py:Policy.__init__:fe4e19:delete_stmt:0 (a
        # KeyError, a tool error, instead of naming the field)
        for field in ("schema", "alpha", "default"):
            doc = {k: v for k, v in committed().items() if k != field}
            with self.subTest(field=field), self.assertRaises(InputError) as raised:
                policy.Policy(doc, "synthetic.json")
            self.assertIn(f"synthetic.json: missing field(s) {field}", str(raised.exception))


class RuleBounds(unittest.TestCase):
    REFUSED = (  # (a pattern's fields, the words that name why): each just past a bound
        ({"max_ratio": 1.0}, "max_ratio must be above 1.0"),
        ({"min_abs_ns": -0.5}, "min_abs_ns must be >= 0 (ns)"),
        ({"min_reps": 1}, "min_reps must be a whole number >= 2, found 1"),
        ({"min_reps": 2.5}, "min_reps must be a whole number >= 2, found 2.5"),
        ({"max_ratio": float("inf")}, "max_ratio is inf: thresholds must be finite numbers"),
        ({"min_abs_ns": float("nan")}, "min_abs_ns is nan: thresholds must be finite numbers"),
        ({"max_ratio": "1.2"}, "max_ratio must be a number, found '1.2'"),
        ({"min_reps": True}, "min_reps must be a number, found True"),
        ({"informational": 1}, "informational must be true or false"),
        ({"max_ratoi": 1.2}, "unknown field 'max_ratoi'"),
    )

    def test_each_value_just_past_a_bound_is_refused_and_named(self):
        # kills reports/torchplace/gate/policy.py:_check_rule:355717:rel_flip:0 (max_ratio 1.0:
        # a gate that fails on noise), _check_rule:d69498:const_minus:1 (a negative floor),
        # _check_rule:2b9a84:const_minus:0 (min_reps 1), _number:95f1fc:delete_stmt:0 (an
        # infinite ratio: never SLOWER), _number:3596d1:delete_stmt:0 (text: a TypeError)
        for fields, words in self.REFUSED:
            doc = committed()
            doc["patterns"] = [dict(fields, match="BM_synthetic*")]
            with self.subTest(fields=fields), self.assertRaises(InputError) as raised:
                policy.Policy(doc, "synthetic.json")
            self.assertIn(f"patterns[0]: {words}", str(raised.exception))

    def test_each_bound_itself_is_accepted(self):
        # kills reports/torchplace/gate/policy.py:_check_rule:2b9a84:rel_flip:0 (min_reps 2
        # refused) and _check_rule:d69498:const_plus:1 (a floor below 1 ns refused)
        doc = committed()
        accepted = {"max_ratio": 1.001, "min_abs_ns": 0.5, "min_reps": 2, "informational": False}
        doc["patterns"] = [dict(accepted, match="BM_synthetic*", why="synthetic bounds")]
        rule = policy.Policy(doc, "synthetic.json").rule("BM_synthetic_a")
        self.assertEqual({k: rule[k] for k in accepted}, accepted)
        self.assertEqual(rule["sources"], ["default", "BM_synthetic*"])

    def test_an_unknown_top_level_field_or_a_pattern_without_match_is_named(self):
        # kills reports/torchplace/gate/policy.py:Policy.__init__:086ab8:delete_stmt:0 (a typo
        # such as "pattern" left the patterns unread) and Policy.__init__:301cde:delete_stmt:0
        doc = committed()
        doc["pattern"] = doc.pop("patterns")
        with self.assertRaises(InputError) as raised:
            policy.Policy(doc, "synthetic.json")
        self.assertIn("unknown top-level field(s) pattern", str(raised.exception))
        doc = dict(committed(), patterns=[{"max_ratio": 1.2}])
        with self.assertRaises(InputError) as raised:
            policy.Policy(doc, "synthetic.json")
        self.assertIn("patterns[0]: missing field(s) match", str(raised.exception))


class DefaultRule(unittest.TestCase):
    def test_a_default_rule_missing_a_field_is_refused(self):
        # kills reports/torchplace/gate/policy.py:Policy.__init__:481c4b:delete_stmt:0
        doc = committed()
        doc["default"] = {k: v for k, v in doc["default"].items() if k != "min_reps"}
        with self.assertRaises(InputError) as raised:
            policy.Policy(doc, "synthetic.json")
        self.assertIn("default: missing field(s) min_reps", str(raised.exception))


class PolicySchema(unittest.TestCase):
    def test_a_policy_of_another_schema_is_refused(self):
        # kills reports/torchplace/gate/policy.py:Policy.__init__:5667d3:delete_branch:0 (and
        # its delete_stmt:0): any schema was read as this one
        doc = committed()
        policy.Policy(dict(doc), "synthetic.json")  # the committed policy, as it is, loads
        doc["schema"] = "torchplace.gate-policy/0"
        with self.assertRaises(InputError) as raised:
            policy.Policy(doc, "synthetic.json")
        self.assertIn("schema is 'torchplace.gate-policy/0'", str(raised.exception))

    def test_alpha_lies_strictly_between_0_and_1(self):
        # kills reports/torchplace/gate/policy.py:Policy.__init__:4ac92d:rel_flip:1 (and :0)
        doc = committed()
        for alpha in (0, 1):
            with self.subTest(alpha=alpha), self.assertRaises(InputError) as raised:
                policy.Policy(dict(doc, alpha=alpha), "synthetic.json")
            self.assertIn("alpha must lie between 0 and 1", str(raised.exception))
        policy.Policy(dict(doc, alpha=0.5), "synthetic.json")


class RuleTypes(unittest.TestCase):
    def test_a_flag_must_be_a_boolean_and_a_match_text(self):
        # kills reports/torchplace/gate/policy.py:_check_rule:04271e:delete_branch:0 and
        # _check_rule:a2c40c:delete_branch:0 ("yes" read as a flag, 5 as a glob)
        for rule, words in (
            ({"informational": "yes"}, "informational must be true or false"),
            ({"match": 5, "max_ratio": 1.5}, "match must be a glob pattern (text)"),
        ):
            with self.subTest(rule=rule), self.assertRaises(InputError) as raised:
                policy._check_rule(rule, "synthetic rule")
            self.assertIn(words, str(raised.exception))
        policy._check_rule({"informational": True, "match": "BM_*"}, "synthetic rule")


if __name__ == "__main__":
    unittest.main()
