"""Helpers of test_schema_*.py: a scratch folder, `refuses` (InputError, its message checked),
and synthetic documents: hand-made test data, not measurements, each valid as the readers of
torchplace.schema define it, for a test to break one field at a time."""
import copy
import json
import os
import tempfile
import unittest
from typing import Any, Callable

from torchplace import schema

SYNTHETIC = "hand-made test data, not a measurement: torchplace.schema's unit tests"


def cell(**fields: Any) -> dict:
    """A passing results.json cell that expected and observed success; `fields` replace its own."""
    base = {
        "id": "synthetic/one",
        "scenario": "synthetic",
        "axes": {"placement": "cpu"},
        "device": "cpu",
        "expected": {"outcome": "success", "error_class": None, "category": "passed"},
        "observed": {"outcome": "success", "error_class": None},
        "status": "pass",
        "reason": "",
        "category": "passed",
    }
    base.update(copy.deepcopy(fields))
    return base


def fingerprint(count: int = 0, built: bool = False) -> dict:
    return {
        "libtorch_version": "2.3.0",
        "synthetic": SYNTHETIC,
        "cuda": {"built_with_cuda": built, "device_count": count},
    }


def entry(status: str = "pass", outcome: str = "success", category: str = "passed") -> dict:
    """One cell's matrix entry for one version."""
    return {"status": status, "observed_outcome": outcome, "category": category}


def matrix() -> dict:
    """Four columns (a fingerprint, none, a null one, one without the synthetic mark), one cell:
    ran on 2.3.0, never reached on 2.4.0 (its build failed)."""
    not_run = entry("build_failed", "not_run", "not_run")
    not_run["reason"] = "the column's build failed"
    return {
        "schema": schema.MATRIX_SCHEMA,
        "versions": [
            {"version": "2.3.0", "status": "ok", "fingerprint": fingerprint()},
            {"version": "2.4.0", "status": "build_failed"},
            {"version": "2.5.0", "status": "ok", "fingerprint": None},
            {"version": "2.6.0", "status": "ok", "fingerprint": {"libtorch_version": "2.6.0"}},
        ],
        "cells": [
            {
                "id": "synthetic/one",
                "scenario": "synthetic",
                "axes": {},
                "device": "cpu",
                "by_version": {"2.3.0": entry(), "2.4.0": not_run},
            }
        ],
    }


class SchemaCase(unittest.TestCase):
    def setUp(self) -> None:
        scratch = tempfile.TemporaryDirectory(prefix="torchplace-schema-")
        self.addCleanup(scratch.cleanup)
        self.dir = scratch.name

    def path(self, name: str) -> str:
        return os.path.join(self.dir, name)

    def write(self, name: str, content: Any) -> str:
        """Writes `content` (bytes as they are, text, or an object as JSON) to a scratch file."""
        path = self.path(name)
        if not isinstance(content, (bytes, str)):
            content = json.dumps(content)
        with open(path, "wb") as handle:
            handle.write(content if isinstance(content, bytes) else content.encode())
        return path

    def refuses(self, fragment: str, function: Callable[..., Any], *args: Any) -> str:
        """function(*args) raises InputError whose message holds `fragment`; the message."""
        with self.assertRaises(schema.InputError) as caught:
            function(*args)
        message = str(caught.exception)
        self.assertIn(fragment, message)
        return message
