#!/usr/bin/python3
"""source_python.messages() on snippets copied from torch's own Python source (each names its
file and version; indentation kept, lines between left out where said) and a few SYNTHETIC ones
where the source has no example: which raises give a template, which give none, and that the
odd spellings of a message (a name, %, .format on a name) neither crash nor invent one."""
import textwrap
import unittest

import source_python


def found(snippet: str) -> list:
    return list(source_python.messages(textwrap.dedent(snippet)))


class RealSnippets(unittest.TestCase):
    def test_a_plain_string_with_braces_keeps_them_literal(self):
        # torch/_custom_op/functional.py:106-107 (2.6.0): not an f-string, so the braces are text.
        snippet = """
        if not pytree.tree_all_only(torch.Tensor, torch._is_functional_tensor, args):
            raise RuntimeError("{mutable_op}: expected all args to be FunctionalTensorWrapper")
        """
        self.assertEqual(
            found(snippet),
            [
                (
                    3,
                    "RuntimeError",
                    "{{mutable_op}}: expected all args to be FunctionalTensorWrapper",
                    "not pytree.tree_all_only(torch.Tensor, torch._is_functional_tensor, args)",
                )
            ],
        )

    def test_named_format_fields_become_placeholders(self):
        # torch/_dynamo/symbolic_convert.py:3118-3129 (2.6.0), the func= line shortened.
        snippet = """
        try:
            sub_locals = func.bind_args(parent, args, kwargs)
        except TypeError as e:
            raise ArgsMismatchError(  # noqa: B904
                "{reason}.\\n  func = {func}, args = {args}, kwargs = {kwargs}".format(
                    reason=str(e),
                    func=f"'{func.get_name()}'",
                    args=[arg.python_type() for arg in args],
                    kwargs=kwargs,
                ),
            )
        """
        template = "{}.\n  func = {}, args = {}, kwargs = {}"
        self.assertEqual(found(snippet), [(5, "ArgsMismatchError", template, "")])

    def test_the_first_argument_is_the_message(self):
        # torch/fx/experimental/recording.py:482-485 (2.6.0)
        snippet = """
        errors = compare_vars(map_value)

        if len(errors) > 0:
            raise NotEqualError("field values don't match:", errors)
        """
        self.assertEqual(
            found(snippet),
            [(5, "NotEqualError", "field values don't match:", "len(errors) > 0")],
        )

    def test_a_name_assigned_beside_other_targets(self):
        # torch/_prims/__init__.py:1270-1275 (1.13.1): a tuple target before the message's name.
        snippet = """
        def _collapse_view_meta(a: TensorLikeType, start: int, end: int) -> TensorLikeType:
            new_shape, new_strides = _collapse_view_helper(a, start, end)

            if new_shape is None:
                msg = "Attempting to view a collapsed tensor, but no such view exists!"
                raise ValueError(msg)
        """
        message = "Attempting to view a collapsed tensor, but no such view exists!"
        self.assertEqual(found(snippet), [(7, "ValueError", message, "new_shape is None")])

    def test_format_or_percent_on_a_name_gives_no_template(self):
        # torch/_utils.py:112-117 and torch/_numpy/_funcs_impl.py:1439-1441 (2.6.0): the format
        # is a variable, not a literal at the raise, so there is no template to read.
        utils = """
        if len(kwargs) != 1 or "async" not in kwargs:
            message = "{}() got an unexpected keyword argument '{}'"
            argument = list(kwargs.keys()).pop()
            raise TypeError(message.format(function_name, argument))
        """
        funcs = """
        msg = "'%s' arg requires %d <= %s < %d, but %d was passed in"
        if not (0 <= start < n + 1):
            raise _util.AxisError(msg % ("start", -n, "start", n + 1, start))
        """
        self.assertEqual(found(utils), [])
        self.assertEqual(found(funcs), [])


class SyntheticSnippets(unittest.TestCase):
    """Made up here (no such raise in torch 1.13.1 or 2.6.0 was found)."""

    def test_doubled_braces_in_a_format_stay_doubled(self):
        snippet = 'raise ValueError("expected {{a, b}}, got {0}".format(x))\n'
        self.assertEqual(found(snippet), [(1, "ValueError", "expected {{a, b}}, got {}", "")])

    def test_percent_with_an_empty_precision(self):
        # "%.f" is precision 0 in Python's % formatting, a field like "%5.2f".
        snippet = 'raise ValueError("%.f%% of %5.2f" % (part, whole))\n'
        self.assertEqual(found(snippet), [(1, "ValueError", "{}% of {}", "")])

    def test_a_join_is_not_a_template(self):
        snippet = 'raise ValueError("synthetic: ".join(errors))\n'
        self.assertEqual(found(snippet), [])


if __name__ == "__main__":
    unittest.main()
