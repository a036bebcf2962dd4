#!/usr/bin/env python3
"""`conformance` (torchplace.command.conformance) in process, with its venv maker replaced by a
stand-in shell script run for real (the same subprocess.run arguments, so what the command reads
back is what a real child gives it) and os.execv mocked: the build's own sim is handed to the
sweep, the venv's python is the last line the maker prints, and a maker that fails is exit 3.
The script, its output and the paths are synthetic.

  test_command_conformance.py [CLASS]      (CTest: command.conformance)
"""
import os
import subprocess
import sys
import unittest
from pathlib import Path
from typing import List
from unittest import mock

from command_scratch import Scratch
from torchplace import schema
from torchplace.command import common, conformance

PYTHON = "/synthetic/venvs/debian/bin/python"
# Stand-in for `python3 -m torchplace.conformance.environment DIR ...` (synthetic): writes its
# arguments one a line to $MAKER_ARGS, prints a log line then the venv's python, exits $MAKER_EXIT.
MAKER = (
    'for arg; do printf "%s\\n" "$arg"; done >"$MAKER_ARGS"\n'
    f'echo "making the venv (synthetic log line)"\necho "{PYTHON}"\nexit "$MAKER_EXIT"\n'
)
REAL_RUN = subprocess.run


class Sweep(Scratch):
    def setUp(self) -> None:
        super().setUp()
        self.maker = self.script("maker", MAKER)
        self.build = Path(self.tmp) / "build"
        library = self.build / conformance.LIBRARY
        library.parent.mkdir(parents=True)
        library.write_text("synthetic, not a library\n", encoding="utf-8")
        self.library = str(library)
        os.environ.update(
            TORCHPLACE_VENVS=os.path.join(self.tmp, "venvs"),
            MAKER_ARGS=os.path.join(self.tmp, "maker-args"),
            MAKER_EXIT="0",
        )
        os.environ.pop("TORCHPLACE_SIM_LIBRARY", None)

    def maker_run(self, argv: List[str], **kwargs):  # type: ignore[no-untyped-def]
        """subprocess.run for the venv maker: the stand-in, given argv past `-m MODULE`."""
        self.assertEqual(argv[:3], ["/usr/bin/python3", "-m", "torchplace.conformance.environment"])
        return REAL_RUN([self.maker, *argv[3:]], **kwargs)

    def sweep(self, args: List[str]) -> "tuple[mock.Mock, dict]":
        """conformance.command(args): the mocked execv and the environment it was called in."""
        seen = {}
        execv = mock.Mock(side_effect=lambda *_: seen.update(os.environ))
        with mock.patch.object(common, "build_dir", return_value=self.build), mock.patch.object(
            subprocess, "run", side_effect=self.maker_run
        ), mock.patch.object(os, "execv", execv):
            conformance.command(args)
        return execv, seen

    def maker_args(self) -> List[str]:
        with open(os.environ["MAKER_ARGS"], encoding="utf-8") as handle:
            return handle.read().splitlines()

    def test_the_builds_sim_goes_to_the_sweep_in_the_debian_venv(self) -> None:
        execv, seen = self.sweep(["--ops"])
        execv.assert_called_once_with(PYTHON, [PYTHON, "-m", "torchplace.conformance", "--ops"])
        self.assertEqual(seen.get("TORCHPLACE_SIM_LIBRARY"), self.library)
        # no --torch, no --packages: the Debian venv, and an empty package list (not "None")
        folder = os.path.join(self.tmp, "venvs", "debian")
        self.assertEqual(self.maker_args(), [folder, "--packages", ""])

    def test_a_venv_that_cannot_be_made_is_exit_3(self) -> None:
        os.environ["MAKER_EXIT"] = "1"
        folder = os.path.join(self.tmp, "venvs", "torch-2.13.0")
        with self.assertRaises(common.Exit) as caught:
            self.sweep(["--torch", "2.13.0", "--ops"])
        self.assertEqual(caught.exception.code, schema.EXIT_ENV)
        self.assertEqual(
            caught.exception.message,
            f"conformance: no Python environment in {folder} (above: why)",
        )


def main(argv: List[str]) -> None:
    unittest.main(argv=[sys.argv[0], *argv, "-v"])


if __name__ == "__main__":
    main(sys.argv[1:])
