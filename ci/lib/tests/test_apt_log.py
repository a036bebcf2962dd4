#!/usr/bin/env python3
"""Tests of torchplace.apt_log on apt and debootstrap logs captured on a Debian 12 machine (the
mirror's address replaced by mirror.invalid): each failure is named by the cause its log shows,
every cause a log shows is named, and a log that shows none is never given one."""
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = ["-m", "torchplace.apt_log"]
LOGS = os.path.join(HERE, "apt_logs")


def log(name):
    with open(os.path.join(LOGS, name), encoding="utf-8") as handle:
        return handle.read()


def run(*args):
    return subprocess.run([sys.executable, *SCRIPT, *args], capture_output=True, text=True)


class Causes(unittest.TestCase):
    def assert_causes(self, text, *starts):
        found = [cause for cause, _ in run_causes(text)]
        self.assertEqual(len(found), len(starts), found)
        for cause, start in zip(found, starts):
            self.assertTrue(cause.startswith(start), (cause, start))

    def test_expired_release(self):  # sid's Release past its Valid-Until (apt-get update, rc 100)
        self.assert_causes(log("expired_release.log"), "expired Release file")

    def test_connection_refused(self):
        self.assert_causes(log("connection_refused.log"), "mirror unreachable")

    def test_unresolvable_host(self):
        self.assert_causes(log("unresolvable.log"), "mirror unreachable")

    def test_missing_package(self):
        self.assert_causes(log("missing_package.log"), "missing package")

    def test_debootstrap_without_release(self):
        self.assert_causes(log("debootstrap_no_release.log"), "debootstrap could not fetch")

    def test_update_warned_then_install_failed(self):
        # apt-get update exits 0 when the mirror is down; the install then finds nothing: both show.
        text = log("unresolvable.log") + log("missing_package.log")
        self.assert_causes(text, "mirror unreachable", "missing package")

    def test_an_empty_package_name(self):
        # `apt-get markauto ""` (apt 2.6.1, Debian 12): "E: Couldn't find package " with no name
        self.assert_causes(log("markauto_empty_name.log"), "missing package")

    def test_no_installation_candidate_in_either_wording(self):
        # Synthetic lines: apt's format string with a made-up name. apt 0.8.0 and later quote it
        # (apt-private/private-cacheset.cc: "Package '%s' has no installation candidate"), older
        # apt did not (cmdline/apt-get.cc before apt commit b8ad55129: "Package %s has no ...").
        for name in ("'torchplace-no-such'", "torchplace-no-such"):
            with self.subTest(name=name):
                line = f"E: Package {name} has no installation candidate\n"
                self.assert_causes(line, "missing package")

    def test_a_successful_log_has_no_cause(self):
        self.assert_causes(log("update_ok.log"))


class CommandLine(unittest.TestCase):
    def test_names_the_cause_and_quotes_the_line(self):
        result = run(os.path.join(LOGS, "expired_release.log"))
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("expired Release file", result.stdout)
        self.assertIn("is expired", result.stdout)

    def test_unknown_log_is_not_guessed(self):
        result = run(os.path.join(LOGS, "update_ok.log"))
        self.assertEqual(result.returncode, 1)
        self.assertEqual(result.stdout.strip(), "no known cause in the log")

    def test_bad_arguments_print_the_usage(self):
        for args in ((), ("--names",), ("one.log", "two.log")):
            with self.subTest(args=args):
                result = run(*args)
                self.assertEqual((result.returncode, result.stdout), (64, ""))
                self.assertIn("usage: python3 -m torchplace.apt_log [--names] LOG", result.stderr)

    def test_unreadable_log(self):
        result = run(os.path.join(LOGS, "no-such.log"))
        self.assertEqual(result.returncode, 3)
        self.assertIn("cannot read", result.stdout)


def run_causes(text):
    """The causes torchplace.apt_log --names prints for `text`, as (cause, None) pairs."""
    with tempfile.NamedTemporaryFile("w", suffix=".log") as handle:
        handle.write(text)
        handle.flush()
        result = run("--names", handle.name)
    if result.returncode not in (0, 1):
        raise AssertionError(
            f"torchplace.apt_log exit {result.returncode}: " f"{result.stdout}{result.stderr}"
        )
    return [(line, None) for line in result.stdout.splitlines() if line]


if __name__ == "__main__":
    unittest.main(verbosity=2)
