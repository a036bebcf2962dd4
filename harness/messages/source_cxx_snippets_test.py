#!/usr/bin/python3
"""source_cxx.messages() on lines copied from LibTorch's own C++ source (each names its file and
version) and a few SYNTHETIC ones where the source has no example: the throws and macros read,
the comparison and MSG helpers skipped, comments blanked (a URL in a string is not one), escaped
quotes, printf lengths and the literal prefixes."""
import textwrap
import unittest

import source_cxx


def found(snippet: str) -> list:
    return list(source_cxx.messages(textwrap.dedent(snippet)))


class RealSnippets(unittest.TestCase):
    def test_throw_index_and_attribute_errors(self):
        # torch/csrc/autograd/python_variable_indexing.cpp:86-91 (1.13.1) and
        # torch/csrc/jit/python/python_custom_class.cpp:69 (2.6.0)
        snippet = """
        [[noreturn]] static inline void invalid_index(PyObject* obj) {
          throw IndexError(
              "only integers, slices (`:`), ellipsis (`...`), None and long or byte "
              "Variables are valid indices (got %s)",
              Py_TYPE(obj)->tp_name);
        }
                    throw AttributeError("%s does not exist", name.c_str());
        """
        index = (
            "only integers, slices (`:`), ellipsis (`...`), None and long or byte "
            "Variables are valid indices (got {})"
        )
        self.assertEqual(
            found(snippet),
            [(3, "IndexError", index, ""), (8, "AttributeError", "{} does not exist", "")],
        )

    def test_helpers_whose_arguments_are_not_the_message_are_skipped(self):
        # c10/util/Exception.h:612-614 (2.6.0), test/edge/operator_registry.cpp:39 (2.6.0),
        # caffe2/mobile/contrib/ios/mpscnn/mpscnn_test.mm:3121 (1.13.1)
        snippets = [
            """
            #define TORCH_CHECK_LINALG(cond, ...) \\
              TORCH_CHECK_WITH_MSG(LinAlgError, cond, "LINALG", __VA_ARGS__)
            """,
            'TORCH_CHECK_MSG(kernel != this->kernels_map_.end(), "Kernel not found!");\n',
            'TORCH_CHECK_EQ(ty(0), "CopyToMPSCNN");\n',
        ]
        for snippet in snippets:
            with self.subTest(snippet=snippet):
                self.assertEqual(found(snippet), [])

    def test_a_url_in_a_message_is_not_a_comment(self):
        # aten/src/ATen/native/quantized/TensorFactories.cpp:101 (2.6.0)
        snippet = (
            'TORCH_CHECK(false, "empty_strided not supported on quantized tensors yet see '
            'https://github.com/pytorch/pytorch/issues/74540")\n'
        )
        self.assertEqual(
            found(snippet),
            [
                (
                    1,
                    "TORCH_CHECK",
                    "empty_strided not supported on quantized tensors yet see "
                    "https://github.com/pytorch/pytorch/issues/74540",
                    "false",
                )
            ],
        )

    def test_a_block_comment_in_the_condition_ends_at_its_close(self):
        # aten/src/ATen/native/LossCTC.cpp:436-437 (2.6.0)
        snippet = """
        TORCH_CHECK(isIntegralType(input_lengths.scalar_type(), /*includeBool=*/false), "input_lengths must be integral");
        TORCH_CHECK(isIntegralType(target_lengths.scalar_type(), /*includeBool=*/false), "target_lengths must be integral");
        """  # noqa: E501
        # The comment is blanked, so the condition reads as the compiler sees it.
        self.assertEqual(
            [(line, template, expr) for line, _, template, expr in found(snippet)],
            [
                (2, "input_lengths must be integral", self.cond("input")),
                (3, "target_lengths must be integral", self.cond("target")),
            ],
        )

    @staticmethod
    def cond(name: str) -> str:
        return f"isIntegralType({name}_lengths.scalar_type(), false)"

    def test_an_argument_right_after_a_comma(self):
        # aten/src/ATen/native/nested/NestedTensorUtils.cpp:77 (2.6.0): no space after the comma.
        snippet = (
            'TORCH_CHECK(chunks > 0,"chunk expects `chunks` to be greater than 0, got: ", chunks);'
        )
        template = "chunk expects `chunks` to be greater than 0, got: {}"
        self.assertEqual(found(snippet), [(1, "TORCH_CHECK", template, "chunks > 0")])

    def test_escaped_quotes_stay_inside_their_literal(self):
        # aten/src/ATen/native/SpectralOps.cpp:130 (2.6.0)
        snippet = 'TORCH_CHECK(false, "Invalid normalization mode: \\"", *norm, "\\"")\n'
        self.assertEqual(
            found(snippet),
            [(1, "TORCH_CHECK", 'Invalid normalization mode: "{}"', "false")],
        )


class SyntheticSnippets(unittest.TestCase):
    """Made up here: no such call was found in LibTorch 1.13.1, 2.6.0 or 2.14.1's headers."""

    def test_throw_not_implemented_and_printf_lengths(self):
        snippet = 'throw NotImplementedError("%ld of %lld, %hd at %.f", a, b, c, d);\n'
        self.assertEqual(found(snippet), [(1, "NotImplementedError", "{} of {}, {} at {}", "")])

    def test_wide_and_unicode_prefixes_and_raw_strings(self):
        snippet = 'TORCH_CHECK(ok, L"wide ", u"utf16 ", U"utf32 ", R"(raw)", "" "end");\n'
        self.assertEqual(found(snippet), [(1, "TORCH_CHECK", "wide utf16 utf32 rawend", "ok")])

    def test_an_unlisted_escape_is_its_character(self):
        self.assertEqual(found('AT_ERROR("why\\?");'), [(1, "AT_ERROR", "why?", "")])

    def test_comparison_checks_have_no_message_arguments(self):
        for macro in ("NE", "LE", "LT", "GE", "GT"):
            with self.subTest(macro=macro):
                self.assertEqual(found(f'TORCH_CHECK_{macro}(x, "synthetic");\n'), [])

    def test_an_unclosed_comment_or_string_at_the_end_gives_nothing(self):
        self.assertEqual(found('int x; /* TORCH_CHECK(false, "synthetic: commented")'), [])
        self.assertEqual(found('TORCH_CHECK(false, "synthetic: never closed'), [])


if __name__ == "__main__":
    unittest.main()
