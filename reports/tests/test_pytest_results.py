#!/usr/bin/env python3
"""torchplace.pytest_results in process: the cell a pytest test becomes (its id, what was expected
of a broken variant on each device, a child's traceback, a skip's code) and write()'s refusal of a
bad cell. The pytest items, reports and devices are synthetic stand-ins, no pytest or torch run.

  test_pytest_results.py [CLASS]      (CTest: unit.pytest_results)
"""
import json
import os
import shutil
import sys
import tempfile
import unittest
from types import SimpleNamespace
from typing import Any, Callable, Dict, List, Optional
from unittest import mock

from torchplace import pytest_results, schema


class Device:
    """A synthetic torch.device: its str() and its .type."""

    def __init__(self, text: str) -> None:
        self.text, self.type = text, text.split(":")[0]

    def __str__(self) -> str:
        return self.text


def item(case: str, marker: Optional[Any] = None, **funcargs: Any) -> Any:
    """A synthetic pytest item of tests/test_scenario.py."""
    return SimpleNamespace(
        funcargs=funcargs,
        module=SimpleNamespace(__name__="tests.test_scenario"),
        originalname="test_" + case,
        get_closest_marker=lambda name: marker if name == pytest_results.MARKER else None,
    )


def broken(error_class: str, **kwargs: Callable) -> Any:
    return SimpleNamespace(args=(error_class,), kwargs=kwargs)


def report(skipped: bool = False, reason: str = "", duration: float = 0.25) -> Any:
    longrepr = ("tests/test_scenario.py", 3, reason) if skipped else None
    return SimpleNamespace(skipped=skipped, longrepr=longrepr, duration=duration)


def classify(message: str) -> str:
    """A stand-in for tp::classify: the class named before the first colon."""
    return "Classified:" + message.split(":", 1)[0]


def cell(one: Any, error: Optional[BaseException] = None, **kwargs: Any) -> Dict[str, Any]:
    made = pytest_results.cell(one, report(**kwargs), error, classify)
    schema.check_cell(made, "synthetic")  # every cell made must pass the schema
    return made


class Names(unittest.TestCase):
    def test_a_pair_and_the_sim(self) -> None:
        pair = [Device("cuda:0"), Device("privateuseone:1")]
        made = cell(item("copy", device_pair=pair))
        self.assertEqual(made["id"], "scenario/case=copy/devices=cuda:0+sim:1")
        self.assertEqual((made["scenario"], made["axes"]), ("scenario", {"case": "copy"}))
        self.assertEqual(made["device"], "cuda:0+sim:1")
        self.assertEqual(made["duration_ms"], 250.0)
        # milliseconds to the microsecond
        self.assertEqual(
            cell(item("copy", device_pair=pair), duration=0.00123456)["duration_ms"],
            1.235,
        )

    def test_one_device_and_none(self) -> None:
        self.assertEqual(pytest_results.devices_of(item("a", device=Device("cpu"))), "device=cpu")
        self.assertIsNone(pytest_results.devices_of(item("a", other=1)))


class Expectations(unittest.TestCase):
    def test_an_unmarked_test_must_pass(self) -> None:
        made = cell(item("add", device=Device("cuda:0")))
        self.assertEqual((made["status"], made["category"]), ("pass", "passed"))
        failed = cell(item("add", device=Device("cuda:0")), AssertionError("synthetic"))
        self.assertEqual((failed["status"], failed["category"]), ("fail", "failed"))
        self.assertEqual(failed["observed"]["error_class"], "AssertionError")
        self.assertEqual(failed["reason"], "expected success None")

    def test_a_broken_variant_raises_on_a_device(self) -> None:
        one = item("mix", broken("DeviceMismatch"), device=Device("cuda:0"))
        made = cell(one, RuntimeError("DeviceMismatch: synthetic"))
        self.assertEqual(made["expected"]["error_class"], "DeviceMismatch")
        self.assertEqual(made["status"], "fail")  # the stand-in classifier names another class
        right = pytest_results.cell(one, report(), RuntimeError("x"), lambda _: "DeviceMismatch")
        self.assertEqual((right["status"], right["category"]), ("pass", "expected_error"))
        silent = cell(one)
        self.assertEqual(
            (silent["status"], silent["reason"]),
            ("fail", "expected error DeviceMismatch"),
        )

    def test_latent_on_the_cpu_and_where_told(self) -> None:
        made = cell(item("mix", broken("DeviceMismatch"), device=Device("cpu")))
        self.assertEqual((made["status"], made["category"]), ("pass", "latent_unexercised"))
        # latent on the pair's first device, here a chosen one
        pair = [Device("cuda:0"), Device("cpu")]
        cuda_latent = broken("DeviceMismatch", latent=lambda d: d.type == "cuda")
        self.assertEqual(cell(item("mix", cuda_latent, device_pair=pair))["status"], "pass")
        cpu_first = item("mix", broken("DeviceMismatch"), device_pair=pair[::-1])
        self.assertEqual(cell(cpu_first)["category"], "latent_unexercised")


class Raised(unittest.TestCase):
    def test_a_childs_last_raised_line_is_classified(self) -> None:
        # a synthetic ProcessRaisedException text
        message = (
            "process 0 terminated with the following error:\nTraceback (most recent call last):\n"
            '  File "x.py", line 1\nKeyError: first\nRuntimeError: Expected all tensors\n'
        )
        self.assertEqual(
            pytest_results.observed_class(RuntimeError(message), classify),
            "Classified:RuntimeError",
        )
        plain = RuntimeError("Expected all tensors: synthetic")
        self.assertEqual(
            pytest_results.observed_class(plain, classify),
            "Classified:Expected all tensors",
        )

    def test_the_last_raised_line_even_with_its_text_below_it(self) -> None:
        # synthetic: a child raised ValueError("\nsecond line") after a chained KeyError;
        # Python prints "ValueError: " and the text on the next line
        message = 'Traceback (most recent call last):\n  File "x.py", line 1\nKeyError: first\n'
        message += "Traceback (most recent call last):\nValueError: \nsecond line\n"
        found = pytest_results.observed_class(RuntimeError(message), lambda line: line)
        self.assertEqual(found, "ValueError: ")

    def test_a_childs_own_exception_class(self) -> None:
        # synthetic: the child's test module defines and raises PlacementException
        message = 'Traceback (most recent call last):\n  File "x.py", line 1\nKeyError: first\n'
        message += "Traceback (most recent call last):\nPlacementException: synthetic\n"
        found = pytest_results.observed_class(RuntimeError(message), classify)
        self.assertEqual(found, "Classified:PlacementException")

    def test_a_long_message_is_cut_to_2000_characters(self) -> None:
        made = cell(item("add", device=Device("cuda:0")), RuntimeError("x" * 2500))
        self.assertEqual(made["observed"]["message"], "x" * 2000)

    def test_an_assertion_is_the_tests_own(self) -> None:
        self.assertEqual(
            pytest_results.observed_class(AssertionError("x: y"), classify),
            "AssertionError",
        )


class Skips(unittest.TestCase):
    def test_a_skips_code(self) -> None:
        one = item("copy", device=Device("cuda:0"))
        made = cell(one, skipped=True, reason="Skipped: not_on_sim: the sim has no streams")
        self.assertEqual((made["skip_code"], made["status"]), ("not_on_sim", "skip"))
        self.assertEqual(made["observed"]["outcome"], "not_run")
        self.assertEqual(made["expected"]["outcome"], "success")
        self.assertEqual(
            cell(one, skipped=True, reason="Skipped: no code")["skip_code"], "unlisted"
        )

    def test_covered_by_another_cell_is_expected_to_skip(self) -> None:
        one = item("copy", device=Device("cuda:0"))
        made = cell(one, skipped=True, reason="Skipped: covered_by_other_cell: the pair's")
        self.assertEqual(made["expected"]["outcome"], "skip")


class Write(unittest.TestCase):
    def setUp(self) -> None:
        self.tmp = tempfile.mkdtemp(prefix="torchplace-pytest-results-")
        self.addCleanup(shutil.rmtree, self.tmp, True)
        patcher = mock.patch.object(
            pytest_results, "fingerprint", return_value={"note": "synthetic"}
        )
        patcher.start()
        self.addCleanup(patcher.stop)

    def test_cells_are_written_and_a_bad_one_refused(self) -> None:
        good = cell(item("add", device=Device("cpu")))
        path = os.path.join(self.tmp, "run", "results.json")
        pytest_results.write(path, [good])
        with open(path, encoding="utf-8") as handle:
            written = json.load(handle)
        self.assertEqual(written["schema"], schema.RESULTS_SCHEMA)
        self.assertEqual(written["cells"], [good])
        bad = dict(good, status="pass", category="failed")
        other = os.path.join(self.tmp, "bad", "results.json")
        with self.assertRaises(schema.InputError):
            pytest_results.write(other, [good, bad])
        self.assertFalse(os.path.exists(other))


def main(argv: List[str]) -> None:
    unittest.main(argv=[sys.argv[0], *argv, "-v"])


if __name__ == "__main__":
    main(sys.argv[1:])
