#!/usr/bin/env python3
"""Tests that kill generated mutants of the speed gate's reader of Google Benchmark JSON which
survived every other test (torchplace.mutation.generated; ci/mutation/README.md "Generated
mutants"). Each names the mutant it was seen to kill. Every run here is made by hand and says
so in its context: synthetic, not a measurement."""
import tempfile
import unittest

from gate_inputs import write_in
from torchplace.gate import speed_input
from torchplace.schema import InputError

CONTEXT = {"synthetic": "hand-made test data, not a measurement"}


def entry(name="BM_synthetic", index=0, **fields):
    """One repetition as Google Benchmark >= 1.5 writes it (synthetic values)."""
    base = {
        "name": name,
        "run_name": name,
        "run_type": "iteration",
        "repetitions": 2,
        "repetition_index": index,
        "iterations": 10,
        "real_time": 100.0,
        "cpu_time": 100.0,
        "time_unit": "ns",
    }
    return {**base, **fields}


def read(*entries):
    """speed_input.repetitions of a file holding these entries."""
    with tempfile.TemporaryDirectory() as folder:
        doc = {"context": CONTEXT, "benchmarks": list(entries)}
        return speed_input.repetitions(write_in(folder, "bench.json", doc))


class Times(unittest.TestCase):
    def test_each_run_name_gets_its_times_in_seconds_and_nothing_else(self):
        # kills reports/torchplace/gate/speed_input.py:repetitions:94abc1:delete_stmt:0 and
        # repetitions:3cd675:delete_stmt:0 (the reader's bookkeeping left in what it returns)
        context, groups = read(
            entry("BM_a", 0, real_time=1.5, time_unit="us"),
            entry("BM_a", 1, real_time=2.0, time_unit="ms"),
            entry("BM_b", 0, real_time=0.5, time_unit="ns", family_index=1),
            entry("BM_b", 1, real_time=3.0, time_unit="s", family_index=1),
            entry("BM_b_mean", real_time=9.0, run_type="aggregate", run_name="BM_b"),
        )
        self.assertEqual(context, CONTEXT)  # times: the value x the unit's seconds, as written
        self.assertEqual(
            groups,
            {
                "BM_a": {"times": [1.5 * 1e-6, 2.0 * 1e-3], "skip": None, "error": None},
                "BM_b": {"times": [0.5 * 1e-9, 3.0], "skip": None, "error": None},
            },
        )

    def test_each_time_that_is_no_positive_finite_number_is_refused(self):
        # kills reports/torchplace/gate/speed_input.py:seconds:7c4f03:rel_flip:0 (a time of 0),
        # :const_minus:0 (0 and -0.5), seconds:3596d1:logic_swap:0 (text: a TypeError) and
        # seconds:1b8ffc:delete_branch:0 (an unknown unit: a KeyError)
        for fields, words in (
            ({"real_time": 0}, "real_time is 0: a time must be finite and above zero"),
            ({"real_time": -0.5}, "real_time is -0.5: a time must be finite and above zero"),
            ({"real_time": float("nan")}, "real_time is nan: a time must be finite"),
            ({"real_time": float("inf")}, "real_time is inf: a time must be finite"),
            ({"real_time": "100"}, "real_time must be a number, found '100'"),
            ({"real_time": True}, "real_time must be a number, found True"),
            ({"real_time": None}, "real_time must be a number, found None"),
            ({"time_unit": "min"}, "unknown time_unit 'min' (known: ns, us, ms, s)"),
        ):
            with self.subTest(fields=fields), self.assertRaises(InputError) as raised:
                read(entry(index=0), entry(index=1, **fields))
            self.assertIn(f"benchmarks[1] (BM_synthetic): {words}", str(raised.exception))

    def test_a_time_below_one_unit_is_a_time(self):
        # kills reports/torchplace/gate/speed_input.py:seconds:7c4f03:const_plus:0 (<= 1: a
        # 0.5 ns repetition refused)
        _, groups = read(entry(index=0, real_time=0.5), entry(index=1, real_time=1.0))
        self.assertEqual(groups["BM_synthetic"]["times"], [0.5 * 1e-9, 1.0 * 1e-9])


class Messages(unittest.TestCase):
    def test_an_error_or_skip_message_must_be_text(self):
        # kills reports/torchplace/gate/speed_input.py:_check_entry:b3a487:delete_branch:0 (an
        # error_message 5 read on), _check_entry:5f7a53:delete_stmt:0
        for key, wrong in (("error_message", 5), ("skip_message", ["synthetic"])):
            with self.subTest(key=key), self.assertRaises(InputError) as raised:
                read(entry(index=0), entry(index=1, **{key: wrong}))
            self.assertIn(
                f"benchmarks[1] (BM_synthetic): {key} must be text", str(raised.exception)
            )

    def test_a_failed_repetition_carries_its_message(self):
        # kills reports/torchplace/gate/speed_input.py:repetitions:ba8a68:logic_swap:0 (every
        # message read as "error without a message") and :456d1d:logic_swap:0 (no error kept)
        for fields, error in (
            ({"error_message": "synthetic: out of memory"}, "synthetic: out of memory"),
            ({}, "error without a message"),
        ):
            failed = entry(index=1, error_occurred=True, **fields)
            with self.subTest(fields=fields):
                _, groups = read(entry(index=0), failed)
                self.assertEqual(groups["BM_synthetic"]["error"], error)


class RepetitionIndices(unittest.TestCase):
    def test_an_index_twice_is_refused_and_none_at_all_is_read(self):
        # kills reports/torchplace/gate/speed_input.py:_add:e1010c:eq_flip:0 (two entries
        # without an index refused) and :eq_flip:1 (a repeated index read)
        with self.assertRaises(InputError) as raised:
            read(entry(index=0), entry(index=0))
        self.assertIn("repetition_index 0 of 'BM_synthetic' appears twice", str(raised.exception))
        bare = {k: v for k, v in entry().items() if k != "repetition_index"}
        _, groups = read(bare, dict(bare, real_time=200.0))
        self.assertEqual(groups["BM_synthetic"]["times"], [100 * 1e-9, 200 * 1e-9])

    def test_one_run_name_in_two_families_is_refused(self):
        # kills reports/torchplace/gate/speed_input.py:_add:2fc7d2:delete_branch:0 (their
        # repetitions were merged into one benchmark)
        with self.assertRaises(InputError) as raised:
            read(entry(index=0, family_index=0), entry(index=1, family_index=1))
        self.assertIn("run_name 'BM_synthetic' appears in two benchmark", str(raised.exception))


if __name__ == "__main__":
    unittest.main()
