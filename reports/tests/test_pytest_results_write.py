#!/usr/bin/env python3
"""torchplace.pytest_results' fingerprint and results.json, in process: what the fingerprint says
of torch's CUDA build and device count and of the OS (none where there is no os-release), and
the file write() leaves (one-space JSON ending in a newline, into a folder that may exist). torch
and the OS release are synthetic stand-ins; no torch is imported."""
import json
import os
import sys
import tempfile
import unittest
from types import SimpleNamespace
from unittest import mock

from torchplace import pytest_results, schema


def stand_in_torch(cuda, devices):
    """A synthetic torch module: its version, the CUDA it was built with, its device count."""
    return SimpleNamespace(
        __version__="2.3.0+synthetic",
        version=SimpleNamespace(cuda=cuda),
        cuda=SimpleNamespace(device_count=lambda: devices),
    )


def os_release(fields):
    """platform.freedesktop_os_release stand-in: `fields`, or OSError when None."""

    def read():
        if fields is None:
            raise OSError("synthetic: no os-release")
        return fields

    return mock.patch.object(pytest_results.platform, "freedesktop_os_release", read)


class Fingerprint(unittest.TestCase):
    def fingerprint(self, torch, release):
        with mock.patch.dict(sys.modules, {"torch": torch}), os_release(release):
            return pytest_results.fingerprint()

    def test_a_cuda_build_with_two_devices(self):
        made = self.fingerprint(stand_in_torch("12.1", 2), {"PRETTY_NAME": "Synthetic OS 1"})
        self.assertEqual(made["libtorch_version"], "2.3.0+synthetic")
        self.assertEqual(made["cuda"], {"built_with_cuda": True, "device_count": 2})
        self.assertEqual(made["runner"], "pytest (torchplace.pytest_plugin)")
        self.assertEqual(made["os"], "Synthetic OS 1")
        self.assertRegex(made["written_at"], r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d{4}$")

    def test_a_cpu_build_counts_no_device(self):
        # device_count is not asked of a build without CUDA: the stand-in's 3 is not reported
        made = self.fingerprint(stand_in_torch(None, 3), {"PRETTY_NAME": "Synthetic OS 1"})
        self.assertEqual(made["cuda"], {"built_with_cuda": False, "device_count": 0})

    def test_no_os_release_is_no_os(self):
        self.assertIsNone(self.fingerprint(stand_in_torch(None, 0), None)["os"])
        with os_release(None):
            self.assertFalse(pytest_results._has_os_release())
        with os_release({}):
            self.assertIs(pytest_results._has_os_release(), True)


class Write(unittest.TestCase):
    def setUp(self):
        scratch = tempfile.TemporaryDirectory()
        self.addCleanup(scratch.cleanup)
        self.folder = scratch.name
        patcher = mock.patch.object(
            pytest_results, "fingerprint", return_value={"note": "synthetic"}
        )
        patcher.start()
        self.addCleanup(patcher.stop)

    def test_one_space_json_ending_in_a_newline(self):
        path = os.path.join(self.folder, "results.json")
        pytest_results.write(path, [])
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
        expected = {"schema": schema.RESULTS_SCHEMA, "fingerprint": {"note": "synthetic"}}
        self.assertEqual(json.loads(text), dict(expected, cells=[]))
        lines = text.split("\n")
        self.assertEqual(lines[:2], ["{", f' "schema": "{schema.RESULTS_SCHEMA}",'])
        self.assertEqual(lines[2:4], [' "fingerprint": {', '  "note": "synthetic"'])
        self.assertEqual(lines[-2:], ["}", ""])

    def test_into_a_new_folder_or_one_that_exists(self):
        path = os.path.join(self.folder, "run", "results.json")
        pytest_results.write(path, [])
        os.remove(path)
        pytest_results.write(path, [])  # "run" exists now
        self.assertTrue(os.path.isfile(path))


if __name__ == "__main__":
    unittest.main()
