#!/usr/bin/env python3
"""torchplace.schema's field checks, in process on synthetic values: require, require_objects,
typed (bool is no int, null, optional, a long value clipped), one_of, check_category,
synthetic_reason and check_fingerprint (each field named, device_count against built_with_cuda).
Every refusal is an InputError whose message names where and the field (check_cell:
test_schema_cell.py).

  test_schema_fields.py [CLASS]      (CTest: report.schema_fields)
"""
import unittest

from schema_cases import SYNTHETIC, SchemaCase, fingerprint
from torchplace import schema


class Fields(SchemaCase):
    def test_require_names_each_missing_field_and_a_non_object(self) -> None:
        schema.require({"a": 1, "b": 2}, ("a", "b"), "W")
        self.assertEqual(
            self.refuses("", schema.require, {"b": 2}, ("a", "b", "c"), "W"),
            "W: missing field(s) a, c",
        )
        self.refuses("W: expected an object, found list", schema.require, [], ("a",), "W")

    def test_require_objects(self) -> None:
        doc = {"cells": [{"id": "a"}, {}]}
        self.assertIs(schema.require_objects(doc, "cells", "W"), doc["cells"])
        self.refuses(
            "W: cells must be a list of objects, found dict",
            schema.require_objects,
            {"cells": {}},
            "cells",
            "W",
        )
        self.refuses(
            "W: cells[1] must be an object, found int",
            schema.require_objects,
            {"cells": [{}, 5]},
            "cells",
            "W",
        )

    def test_typed(self) -> None:
        self.assertEqual(schema.typed({"k": "v"}, "k", (str,), "W"), "v")
        self.assertIs(schema.typed({"k": True}, "k", (bool,), "W"), True)
        self.assertIsNone(schema.typed({}, "k", (str,), "W", optional=True))
        self.refuses("W: missing field(s) k", schema.typed, {}, "k", (str,), "W")
        # Optional is about absence only: a present value is still checked.
        self.refuses("W: k must be str, found int 5", schema.typed, {"k": 5}, "k", (str,), "W")
        self.refuses("k must be int, found bool True", schema.typed, {"k": True}, "k", (int,), "W")
        self.refuses(
            "k must be str or null, found list []",
            schema.typed,
            {"k": []},
            "k",
            (str, schema.NONE),
            "W",
        )

    def test_a_long_value_is_clipped_at_60_characters(self) -> None:
        fits = "x" * 58  # its repr, quotes included, is 60 characters
        message = self.refuses("", schema.typed, {"k": fits}, "k", (int,), "W")
        self.assertTrue(message.endswith(repr(fits)), message)
        long = "y" * 59
        message = self.refuses("", schema.typed, {"k": long}, "k", (int,), "W")
        self.assertTrue(message.endswith(repr(long)[:60] + "..."), message)

    def test_one_of(self) -> None:
        self.assertEqual(schema.one_of({"k": "b"}, "k", ("a", "b"), "W"), "b")
        self.refuses("W: k 'c' is not one of a, b", schema.one_of, {"k": "c"}, "k", ("a", "b"), "W")
        self.refuses("W: k must be str", schema.one_of, {"k": 1}, "k", ("a",), "W")

    def test_check_category(self) -> None:
        self.assertEqual(schema.check_category("race_shown", "W"), "race_shown")
        message = self.refuses(
            "W: unknown outcome category 'bogus'", schema.check_category, "bogus", "W"
        )
        self.assertIn(", ".join(schema.CATEGORIES), message)
        self.refuses("unknown outcome category None", schema.check_category, None, "W")
        self.refuses("unknown outcome category 5", schema.check_category, 5, "W")
        self.assertEqual(schema.check_category("x", "W", {"x": "X"}), "x")
        self.refuses("(known: x)", schema.check_category, "passed", "W", {"x": "X"})

    def test_synthetic_reason(self) -> None:
        self.assertEqual(schema.synthetic_reason(fingerprint()), SYNTHETIC)
        for value in ({"synthetic": 1}, {}, ["synthetic"], None, "synthetic"):
            self.assertIsNone(schema.synthetic_reason(value), value)


class Fingerprint(SchemaCase):
    def test_valid_fingerprints_come_back(self) -> None:
        for valid in (fingerprint(), fingerprint(2, True), fingerprint(0, True)):
            self.assertIs(schema.check_fingerprint(valid, "W"), valid)
        without = fingerprint()
        del without["synthetic"]  # a real run's: no mark
        self.assertIs(schema.check_fingerprint(without, "W"), without)

    def test_each_bad_field_is_named(self) -> None:
        self.refuses(
            "W: fingerprint must be an object, found list", schema.check_fingerprint, [], "W"
        )
        cases = [
            ("libtorch_version", None, "W: fingerprint: missing field(s) libtorch_version"),
            ("libtorch_version", 2, "W: fingerprint: libtorch_version must be str"),
            ("synthetic", True, "W: fingerprint: synthetic must be str"),
            ("cuda", None, "W: fingerprint: missing field(s) cuda"),
            ("cuda", [], "W: fingerprint: cuda must be dict"),
        ]
        for key, value, fragment in cases:
            bad = fingerprint()
            del bad[key]
            if value is not None:
                bad[key] = value
            self.refuses(fragment, schema.check_fingerprint, bad, "W")

    def test_cuda_fields(self) -> None:
        where = "W: fingerprint.cuda: "
        cases = [
            ({"device_count": 0}, "missing field(s) built_with_cuda"),
            ({"built_with_cuda": 1, "device_count": 0}, "built_with_cuda must be bool"),
            ({"built_with_cuda": False}, "missing field(s) device_count"),
            ({"built_with_cuda": True, "device_count": True}, "device_count must be int"),
            ({"built_with_cuda": True, "device_count": -1}, "device_count -1 is negative"),
            (
                {"built_with_cuda": False, "device_count": 2},
                "2 CUDA device(s) on a LibTorch built without CUDA",
            ),
            (
                {"built_with_cuda": False, "device_count": 1},
                "1 CUDA device(s) on a LibTorch built without CUDA",
            ),
        ]
        for cuda, fragment in cases:
            bad = dict(fingerprint(), cuda=cuda)
            self.refuses(where + fragment, schema.check_fingerprint, bad, "W")


if __name__ == "__main__":
    unittest.main()
