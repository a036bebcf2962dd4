#!/usr/bin/env python3
"""Tests that kill generated mutants of the behaviour gate (torchplace.gate.behaviour) which
survived the gate's other fast tests (torchplace.mutation.generated; ci/mutation/README.md
"Generated mutants"): an expectations entry's field checks, the compare section's counts and
--require-devices, and the need codes a refresh records or carries over. Each names the mutants
it was seen to kill. Every input is synthetic, made by gate_inputs.py."""
import json
import os
import tempfile
import unittest

from gate_inputs import (
    BROKEN_CPU,
    CPU_HOST,
    FIX_CPU,
    expectations,
    judged,
    passing,
    results,
    skipping,
    write_in,
)
from torchplace.gate import behaviour
from torchplace.schema import InputError

ENTRY = {"outcome": "success", "error_class": None, "category": "passed"}  # synthetic


def load_entry(**fields):
    """load_expectations of a synthetic file with one entry: ENTRY with `fields` changed."""
    doc = {"schema": "torchplace.expectations/1", "cells": {FIX_CPU: dict(ENTRY, **fields)}}
    with tempfile.TemporaryDirectory() as folder:
        return behaviour.load_expectations(write_in(folder, "expectations.json", doc))


class EntryFields(unittest.TestCase):
    def test_an_error_outcome_needs_an_error_class(self):
        # kills behaviour.py:_check_entry:335d1b:dup_stmt:0 (error_class's type unchecked)
        with self.assertRaisesRegex(InputError, "error_class"):
            load_entry(outcome="error", category="expected_error")

    def test_a_missing_field_is_an_input_error_naming_it(self):
        # kills behaviour.py:_check_entry:1cf48c:delete_stmt:0 (a KeyError, not a named field)
        for field in ("category", "error_class", "outcome"):
            entry = {key: value for key, value in ENTRY.items() if key != field}
            doc = {"schema": "torchplace.expectations/1", "cells": {FIX_CPU: entry}}
            with self.subTest(field=field), tempfile.TemporaryDirectory() as folder:
                with self.assertRaisesRegex(InputError, field):
                    behaviour.load_expectations(write_in(folder, "expectations.json", doc))

    def test_an_unknown_category_is_named_as_such(self):
        # kills behaviour.py:_check_entry:450fc0:dup_stmt:0 (only "contradicts outcome" said)
        with self.assertRaisesRegex(InputError, "unknown outcome category 'bogus'"):
            load_entry(category="bogus")

    def test_skip_codes_are_read_and_checked(self):
        # kills behaviour.py:_check_entry:77229c:arg_swap:1 and arg_swap:2 (skip_codes unread,
        # or read with a string for its types)
        loaded = load_entry(skip_codes=["needs_cuda"])
        self.assertEqual(loaded[FIX_CPU]["skip_codes"], ["needs_cuda"])
        with self.assertRaisesRegex(InputError, r"skip_codes \['bogus'\] are not need codes"):
            load_entry(skip_codes=["bogus"])

    def test_the_version_a_skip_waits_for_is_text(self):
        loaded = load_entry(skip_codes=["needs_newer_libtorch"], needs_libtorch="2.0")
        self.assertEqual(loaded[FIX_CPU]["needs_libtorch"], "2.0")
        with self.assertRaisesRegex(InputError, "needs_libtorch"):
            load_entry(skip_codes=["needs_newer_libtorch"], needs_libtorch=2.0)


class CompareSection(unittest.TestCase):
    def test_compared_counts_and_categories_in_order(self):
        # kills behaviour.py:compare:d9ad65:aug_assign:0 (compared a bool) and
        # _category_counts:896eba:dup_stmt:0 (no categories)
        cells = [passing(BROKEN_CPU, "c10::Error"), passing(FIX_CPU)]  # run order: not the order
        section = judged(cells, cells)
        self.assertEqual(section["compared"], 2)
        categories = list(section["categories"].items())
        self.assertEqual(categories, [("passed", 1), ("expected_error", 1)])

    def test_too_few_devices_is_refused(self):
        # kills behaviour.py:compare:b2ad34:arg_swap:1 (the path read as the fingerprint)
        with tempfile.TemporaryDirectory() as folder:
            committed = write_in(folder, "expectations.json", expectations([passing(FIX_CPU)]))
            run = write_in(folder, "results.json", results([passing(FIX_CPU)], CPU_HOST))
            with self.assertRaisesRegex(InputError, "needs 1 CUDA device.*shows 0"):
                behaviour.compare(run, committed, {"cuda": 1})


def refreshed(run_cells, committed=None):
    """The cells a refresh from run_cells (a CPU host) writes over `committed` (None: none)."""
    with tempfile.TemporaryDirectory() as folder:
        write_in(folder, "run/results.json", results(run_cells, CPU_HOST))
        target = os.path.join(folder, "expectations.json")
        if committed is not None:
            write_in(folder, "expectations.json", committed)
        behaviour.refresh(os.path.join(folder, "run"), target)
        with open(target, encoding="utf-8") as handle:
            return json.load(handle)["cells"]


class RefreshCodes(unittest.TestCase):
    def test_a_true_need_code_is_recorded(self):
        # kills behaviour.py:_kind_entries:5b180f:dup_stmt:0, :a3903d:arg_swap:0 and arg_swap:1
        # (_untrue's arguments), refresh:7c1cbb:arg_swap:1 (the path read as the fingerprint)
        cells = refreshed([skipping(FIX_CPU, "needs_cuda")])
        self.assertEqual(cells[FIX_CPU]["skip_codes"], ["needs_cuda"])

    def test_committed_need_codes_are_carried(self):
        # kills behaviour.py:refresh:7c1cbb:arg_swap:2 (the fingerprint read as the carried codes)
        committed = expectations([passing(FIX_CPU)], {FIX_CPU: ["needs_no_cuda"]})
        cells = refreshed([passing(FIX_CPU)], committed)
        self.assertEqual(cells[FIX_CPU]["skip_codes"], ["needs_no_cuda"])


if __name__ == "__main__":
    unittest.main()
