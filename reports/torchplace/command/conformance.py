"""`conformance`: the sim judged by PyTorch's own test databases (torchplace.conformance;
harness/sim/CONFORMANCE.md), in a Python environment it makes once:

  conformance [SWEEP OPTIONS]                 this build's sim (build/ci, the host's LibTorch) in a
                                              venv over Debian's python3-torch with expecttest
  conformance --torch VERSION [SWEEP OPTIONS] pip's torch==VERSION in a venv of its own, with this
                                              checkout installed into it (the sim built against it)
  --packages P,...                            more pip packages for the venv (torchvision==0.29.1
                                              for the models sweep)

The venvs live under TORCHPLACE_VENVS (default /var/cache/torchplace/venvs). The sweep's options
and exit codes are python3 -m torchplace.conformance's (--help)."""

import os
import subprocess
from pathlib import Path
from typing import List

from torchplace import schema
from torchplace.command import common
from torchplace.command.common import die

LIBRARY = Path("harness") / "sim" / "libtorchplace_sim_python.so"


def venvs() -> Path:
    return Path(os.environ.get("TORCHPLACE_VENVS") or "/var/cache/torchplace/venvs")


def environment(torch_version: str, packages: str) -> str:
    """The venv's python (torchplace.conformance.environment makes it); exit 3 when it cannot."""
    folder = venvs() / (f"torch-{torch_version}" if torch_version else "debian")
    argv = ["/usr/bin/python3", "-m", "torchplace.conformance.environment", str(folder)]
    made = subprocess.run(
        argv + (["--torch", torch_version] if torch_version else []) + ["--packages", packages],
        stdout=subprocess.PIPE,
        text=True,
    )
    if made.returncode != 0:
        die(schema.EXIT_ENV, f"conformance: no Python environment in {folder} (above: why)")
    return made.stdout.strip().splitlines()[-1]


def option(args: List[str], name: str) -> str:
    """Takes `name VALUE` out of args: VALUE, or "" when absent."""
    if name not in args:
        return ""
    at = args.index(name)
    value = common.take_value(args[at + 1 :], f"conformance: {name} needs a value")
    del args[at : at + 2]
    return value


def command(args: List[str]) -> int:
    torch_version, packages = option(args, "--torch"), option(args, "--packages")
    if not torch_version:  # the build's own sim, for the host's LibTorch
        library = common.build_dir() / LIBRARY
        if not library.is_file():
            die(
                schema.EXIT_ENV,
                f"conformance: {library} is missing: build first "
                "(ci/torchplace test, or cmake --build build/ci)",
            )
        os.environ["TORCHPLACE_SIM_LIBRARY"] = str(library)
    python = environment(torch_version, packages)
    if torch_version:  # the venv's installed torchplace and its sim, not this checkout's folder
        os.environ.pop("PYTHONPATH", None)
    os.execv(python, [python, "-m", "torchplace.conformance", *args])
