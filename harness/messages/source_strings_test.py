#!/usr/bin/python3
"""The source-string tool on synthetic snippets (made here, in LibTorch's style; not LibTorch's
text): what it extracts from C++ and Python, and the one class rule."""
import unittest

import source_class
import source_cxx
import source_families
import source_python

CXX = r"""
// TORCH_CHECK(false, "in a comment: not a message");
void f(const Tensor& self, const Tensor& index) {
  TORCH_CHECK(index.device() == self.device(), "Expected index on ", self.device(),
              " but got " "it on ", index.device());
  TORCH_CHECK_VALUE(n > 0, "n must be positive, got ", n);
  TORCH_CHECK(ok);
  TORCH_CHECK_EQ(a, b);
  AT_ERROR("no kernel for {} here\n");
  throw TypeError("expected %s (got %d)", a, b);
}
"""

# Synthetic, like CXX: the other macros' leading arguments, literal spellings, and calls skipped.
CXX_MORE = r"""
void h() {
  TORCH_CHECK_WITH(ValueError, a.device() == b.device(), "on two devices: ", a);
  TORCH_CHECK_ARG(a.dim() == 2, 1, "must be a matrix");
  TORCH_INTERNAL_ASSERT(x.is_cuda(), u8"not CUDA", R"raw(: "q" \n)raw");
  C10_THROW_ERROR(NotImplementedError, "no ", name, " {here}");
  AT_ASSERTM(ok, "tab\there");
  throw torch::ValueError("bad %zu of %5.2f", n, f);
  TORCH_CHECK(y, x);
  TORCH_CHECK(y, "", x);
  TORCH_CHECK(late, "never closed", f(
"""

PY = """
def g(x, y):
    if x.device != y.device:
        raise RuntimeError(f"x on {x.device}, y on {y.device}: expected the same device")
    if x.dtype != y.dtype:
        msg = "dtype " + str(x.dtype) + " does not match"
        raise TypeError(msg)
    raise ValueError("%s is not a %s" % (x, y))
    raise ValueError("{} and {}".format(x, y))
"""


# Synthetic, like PY: raises that give no template, names, the message assigned last, else.
PY_MORE = """
def k(x, y):
    raise
    raise ValueError
    raise ValueError()
    raise TypeError(x)
    raise TypeError(f"{x}")
    raise TypeError(x + y + "!")
    raise torch.errors.OnTwoDevices("on " + x + " and " + "y")
    raise errors[0]("from a subscript")
    raise ValueError("100%% done, %(a)s" % x)
    msg = "first {}".format(x)
    msg = "second: " + x
    raise RuntimeError(msg)
    msg = "after the raise"


def m(msg):
    if x.is_cuda:
        if x.device == y.device:
            pass
        else:
            raise RuntimeError("in the else branch")
    raise RuntimeError(msg)
"""


class Extract(unittest.TestCase):
    def test_cxx(self):
        got = [(line, by, template, expr) for line, by, template, expr in source_cxx.messages(CXX)]
        self.assertEqual(
            got,
            [
                (
                    4,
                    "TORCH_CHECK",
                    "Expected index on {} but got it on {}",
                    "index.device() == self.device()",
                ),
                (6, "TORCH_CHECK_VALUE", "n must be positive, got {}", "n > 0"),
                (9, "AT_ERROR", "no kernel for {{}} here\n", ""),
                (10, "TypeError", "expected {} (got {})", ""),
            ],
        )

    def test_python(self):
        got = [
            (line, by, template, expr) for line, by, template, expr in source_python.messages(PY)
        ]
        self.assertEqual(
            got,
            [
                (
                    4,
                    "RuntimeError",
                    "x on {}, y on {}: expected the same device",
                    "x.device != y.device",
                ),
                (7, "TypeError", "dtype {} does not match", "x.dtype != y.dtype"),
                (8, "ValueError", "{} is not a {}", ""),
                (9, "ValueError", "{} and {}", ""),
            ],
        )

    def test_cxx_leading_arguments_literals_and_skipped_calls(self):
        self.assertEqual(
            list(source_cxx.messages(CXX_MORE)),
            [
                (3, "TORCH_CHECK_WITH", "on two devices: {}", "a.device() == b.device()"),
                (4, "TORCH_CHECK_ARG", "must be a matrix", "a.dim() == 2"),
                (5, "TORCH_INTERNAL_ASSERT", 'not CUDA: "q" \\n', "x.is_cuda()"),
                (6, "C10_THROW_ERROR", "no {} {{here}}", ""),
                (7, "AT_ASSERTM", "tab\there", "ok"),
                (8, "torch::ValueError", "bad {} of {}", ""),
            ],
        )  # TORCH_CHECK(y, x) and (y, "", x): no literal text; the unclosed call: skipped

    def test_python_names_assignments_and_branches(self):
        self.assertEqual(
            list(source_python.messages(PY_MORE)),
            [
                (8, "TypeError", "{}!", ""),
                (9, "OnTwoDevices", "on {} and y", ""),
                (10, "", "from a subscript", ""),
                (11, "ValueError", "100% done, {}", ""),
                (14, "RuntimeError", "second: {}", ""),
                (23, "RuntimeError", "in the else branch", "x.is_cuda"),
            ],
        )

    def test_python_unparsable_file_gives_nothing(self):
        self.assertEqual(list(source_python.messages("def f(:\n    raise ValueError('x')")), [])
        self.assertEqual(list(source_python.messages("raise ValueError('x')\0")), [])


class Rule(unittest.TestCase):
    def test_one_class_per_vocabulary(self):
        cases = [
            ("CUDA out of memory. Tried to allocate {}", "", "OutOfMemory"),
            ("NCCL watchdog timed out after {} ms", "", "CollectiveTimeout"),
            ("ProcessGroupNCCL: health check failure on rank {}", "", "CollectiveFailure"),
            ("called a synchronizing CUDA operation", "", "HostSync"),
            ("Missing key(s) in state_dict: {}", "", "MissingKey"),
            ("PytorchStreamReader failed reading file {}", "", "CorruptArchive"),
            ("No such file or directory: {}", "", "FileNotFound"),
            ("Torch not compiled with CUDA enabled", "", "BackendUnavailable"),
            ("Expected all tensors to be on the same device", "", "DeviceMismatch"),
            ("{} is not a CUDA tensor", "self.is_cuda()", "DeviceMismatch"),
            ("{} is not a CUDA tensor", "", "Unclassified"),
            ("{} is not half", "x.scalar_type() == kHalf", "DtypeMismatch"),
            ("Gloo timed out: an error", "", "CollectiveTimeout"),
            ("expected scalar type {} but found {}", "", "DtypeMismatch"),
            ("{} and {} differ", "a.scalar_type() == b.scalar_type()", "Unclassified"),
            ("mat1 and mat2 shapes cannot be multiplied ({}x{} and {}x{})", "", "Unclassified"),
        ]
        for text, expr, expected in cases:
            with self.subTest(text=text):
                self.assertEqual(source_class.class_of(text, expr), expected)
        self.assertEqual(set(source_class.CLASSES), {c for _, _, c in cases})

    def test_each_expression_alternative_decides_the_class(self):
        # Synthetic conditions, one per alternative of DEVICE_EXPR and DTYPE_EXPR, each matching
        # no other alternative (get_device() is device()'s: it has none of its own); the literal
        # names a device (or dtype) with no relation word, so only the expression decides.
        device = [
            "x.device != y.device",
            "device() == kCUDA",
            "self.is_cuda",
            "self.is_cpu",
            "self.is_mps",
            "self.is_xla",
            "self.is_xpu",
            "x.device_type() == kCUDA",
            "x.get_device() == 0",
            "self.is_privateuseone",
            "device.type == 'cuda'",
        ]
        dtype = ["scalar_type() == kHalf", "x.dtype == y.dtype", "dtype() == kHalf", "scalarType()"]
        cases = [("{} is not a CUDA tensor", e, "DeviceMismatch") for e in device] + [
            ("{} is not half", e, "DtypeMismatch") for e in dtype
        ]
        for text, expr, expected in cases:
            with self.subTest(expr=expr):
                self.assertEqual(source_class.class_of(text, expr), expected)

    def test_families_keep_only_templates_whose_class_the_source_decides(self):
        rows = [
            {
                "v": "1",
                "at": "a.cpp:1",
                "template": "Expected all tensors on one device {}",
                "class": "DeviceMismatch",
            },
            {
                "v": "1",
                "at": "b.cpp:2",
                "template": "Expected {} to match {} and more text",
                "class": "DeviceMismatch",
            },
            {
                "v": "2",
                "at": "c.cpp:3",
                "template": "Expected {} to match {} and more text",
                "class": "DtypeMismatch",
            },
            {"v": "2", "at": "d.cpp:4", "template": "too short {}", "class": "DtypeMismatch"},
        ]
        inc = source_families.render(rows)
        self.assertIn('{E::kDeviceMismatch, "1", "a.cpp:1@1", "Expected all tensors on one', inc)
        self.assertNotIn("to match", inc)  # the two versions disagree
        self.assertNotIn("too short", inc)  # under MIN_LITERAL characters of literal text


if __name__ == "__main__":
    unittest.main()
