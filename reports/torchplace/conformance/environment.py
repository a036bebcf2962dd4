"""A Python environment the sweeps can run in: python3 -m torchplace.conformance.environment DIR
[--torch VERSION] [--packages P,...] [--install].

Without --torch: a venv over Debian's python3 and its python3-torch (the host's LibTorch, the one
CMake builds the sim against), with expecttest, which torch.testing._internal imports and Debian
does not package (with --install, this checkout installed into it, as a user of Debian's torch
installs it). With --torch: a venv of its own with pip's torch==VERSION and expecttest and
pytest, and this checkout installed into it (`pip install --no-build-isolation`: setup.py builds
the sim against that torch; installed again when the checkout's package or sim changed). Kept
when it already has them. Prints the venv's python.

Exit: 0 ready, 3 it cannot be made (no python3-venv or python3-torch, pip failed: the message
says what to install), 64 bad arguments.
"""
from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import List

from torchplace import schema

DEBIAN_PYTHON = "/usr/bin/python3"


def run(argv: List[str], what: str, path: str = "") -> None:
    """argv, its output on stderr; `path` first on PATH (the venv's ninja for the sim's build)."""
    env = dict(os.environ, PATH=f"{path}:{os.environ.get('PATH', '')}") if path else None
    done = subprocess.run(argv, stdout=sys.stderr, stderr=sys.stderr, env=env)
    if done.returncode != 0:
        raise schema.InputError(f"{what} failed (exit {done.returncode}): {' '.join(argv)}")


def imports(python: Path, modules: List[str]) -> bool:
    code = "; ".join(f"import {module}" for module in modules)
    return subprocess.run([str(python), "-c", code], capture_output=True).returncode == 0


def checkout_stamp() -> str:
    """A digest of what `pip install .` builds from: the package, the sim, setup.py's inputs. A
    venv whose installed copy has another stamp gets the checkout installed again."""
    digest = hashlib.sha256()
    folders = [schema.ROOT / "reports" / "torchplace", schema.ROOT / "harness" / "sim"]
    files = [schema.ROOT / "setup.py", schema.ROOT / "pyproject.toml"]
    for path in sorted(files + [f for d in folders for f in d.rglob("*") if f.is_file()]):
        if "__pycache__" not in path.parts:
            digest.update(str(path.relative_to(schema.ROOT)).encode() + path.read_bytes())
    return digest.hexdigest()


def module_of(package: str) -> str:
    """The module a pip requirement provides, by its name's usual spelling (torchvision==0.29.1:
    torchvision)."""
    return re.split(r"[=<>!~\[; ]", package, maxsplit=1)[0].replace("-", "_")


def make(folder: Path, torch: str, packages: List[str], install: bool = False) -> Path:
    """The venv; with `install` (implied by a pip torch), this checkout installed into it."""
    python, stamp = folder / "bin" / "python", folder / "torchplace.stamp"
    install = install or bool(torch)
    wanted = ["torch", "expecttest", "pytest", *map(module_of, packages)]
    wanted += ["numpy"] if torch else []  # torch.testing._internal's; Debian's torch has it
    current = not install or (stamp.is_file() and stamp.read_text() == checkout_stamp())
    if python.exists() and current and imports(python, wanted):
        return python
    if not torch and not imports(Path(DEBIAN_PYTHON), ["torch"]):
        raise schema.InputError("Debian's python3 has no torch: apt-get install python3-torch")
    venv = [DEBIAN_PYTHON, "-m", "venv", str(folder)] + (
        [] if torch else ["--system-site-packages"]
    )
    if not python.exists():
        run(venv, "making the venv (apt-get install python3-venv)")
    pip = [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    extra = [f"torch=={torch}", "numpy"] if torch else []
    extra += ["wheel", "ninja"] if install else []  # `pip install .`'s, ninja: a parallel build
    run(pip + ["expecttest", "pytest", *packages, *extra], "pip install")
    if install:
        # With ninja on PATH, torch's BuildExtension compiles the sim's files in parallel.
        bin_dir = str(folder / "bin")
        run(
            pip + ["--no-build-isolation", str(schema.ROOT)],
            "installing torchplace into it",
            bin_dir,
        )
        stamp.write_text(checkout_stamp())
    return python


def main(argv: List[str]) -> int:
    parser = schema.ArgumentParser(prog="torchplace.conformance.environment")
    parser.add_argument("folder")
    parser.add_argument("--torch", default="", help="pip's torch==VERSION (default: Debian's)")
    parser.add_argument("--packages", default="", help="more pip packages, comma-separated")
    parser.add_argument(
        "--install", action="store_true", help="install this checkout (implied by --torch)"
    )
    options = parser.parse_args(argv)
    packages = [p for p in options.packages.split(",") if p]
    try:
        print(make(Path(options.folder).resolve(), options.torch, packages, options.install))
    except schema.InputError as error:
        print(f"torchplace.conformance.environment: {error}", file=sys.stderr)
        return schema.EXIT_ENV
    return schema.EXIT_OK


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
