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
