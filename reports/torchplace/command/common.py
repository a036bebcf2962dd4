"""What every subcommand shares: its errors (an exit code and a message), logging, the source
tree, the build, the run record and the Python that runs a tool."""

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import IO, Dict, List, NoReturn, Optional, Sequence, Union

from torchplace import run_record, schema

Value = Union[str, int, float, bool]


class Exit(Exception):
    """Ends the command with `code`; `message`, when given, is printed as "torchplace: ..."."""

    def __init__(self, code: int, message: Optional[str] = None) -> None:
        super().__init__(message or f"exit {code}")
        self.code = code
        self.message = message


def die(code: int, message: str) -> NoReturn:
    raise Exit(code, message)


def log(*parts: object) -> None:
    print("torchplace: " + " ".join(str(part) for part in parts), file=sys.stderr, flush=True)


def root() -> Path:
    """The folder above reports/: the source tree, or share/torchplace of the installed package
    (which keeps the same relative layout)."""
    return schema.ROOT


def is_source_tree() -> bool:
    return (root() / "CMakeLists.txt").is_file()


def build_dir() -> Path:
    """The build folder, overridable for builds against other LibTorch installs."""
    return Path(os.environ.get("TORCHPLACE_BUILD_DIR") or root() / "build" / "ci")


def no_install() -> bool:
    return os.environ.get("TORCHPLACE_NO_INSTALL", "0") == "1"


def export_pythonpath() -> None:
    """reports/ on PYTHONPATH for every `python3 -m torchplace.*` this command starts."""
    reports = str(root() / "reports")
    parts = [part for part in os.environ.get("PYTHONPATH", "").split(os.pathsep) if part]
    if reports not in parts:
        os.environ["PYTHONPATH"] = os.pathsep.join([reports, *parts])


class BudgetCut(Exception):
    """The time budget ran out while a step's process ran; it was stopped."""


# The deadline (time.monotonic()) of the step under way (torchplace.command.steps sets it): every
# process started through call() stops there.
DEADLINE: List[Optional[float]] = [None]
KILL_AFTER_S = 10  # a stopped child gets this long after SIGTERM before SIGKILL


def call(argv: Sequence[str], **options: object) -> int:
    """Runs argv and returns its exit code. At the step's deadline the child is stopped (TERM,
    KILL after KILL_AFTER_S) and BudgetCut raised; a SIGTERM to this command
    (schema.Terminated) or any other exception stops the child first too: no orphan outlives
    us."""
    child = subprocess.Popen(list(argv), **options)  # type: ignore[call-overload]
    deadline = DEADLINE[0]
    try:
        timeout = None if deadline is None else max(0.0, deadline - time.monotonic())
        return int(child.wait(timeout=timeout))
    except subprocess.TimeoutExpired:
        stop(child)
        raise BudgetCut() from None
    except BaseException:
        stop(child)
        raise


def stop(child: "subprocess.Popen[bytes]") -> None:
    child.send_signal(signal.SIGTERM)
    try:
        child.wait(timeout=KILL_AFTER_S)
    except subprocess.TimeoutExpired:
        child.kill()
        child.wait()


def bash_lib(function: str, *args: str, log: Optional[IO[str]] = None) -> int:
    """Runs a function of ci/lib/common.sh (apt plumbing) in bash, with ci/torchplace's old
    `set -euo pipefail` (apt-get | tee fails when apt-get does); its exit code."""
    script = 'set -euo pipefail; source "$1"; shift; "$@"'
    common_sh = str(root() / "ci" / "lib" / "common.sh")
    return call(["bash", "-c", script, "_", common_sh, function, *args], stdout=log, stderr=log)


def ensure_deps(extra: Sequence[str] = (), log: Optional[IO[str]] = None) -> None:
    """tp_ensure_deps: installs the missing Debian packages, or says which (it prints why)."""
    if no_install():
        return
    code = bash_lib("tp_ensure_deps", *extra, log=log)
    if code != 0:
        raise Exit(code)


def cmake_configure_args(source: Path, build: Path) -> List[str]:
    """The CMake preset "ci" (CMakePresets.json) is the one build: -B only moves its folder;
    Torch_DIR and TORCHPLACE_CMAKE_ARGS from the environment."""
    args = ["cmake", "-S", str(source), "--preset", "ci", "-B", str(build)]
    if os.environ.get("Torch_DIR"):
        args.append(f"-DTorch_DIR={os.environ['Torch_DIR']}")
    args += os.environ.get("TORCHPLACE_CMAKE_ARGS", "").split()
    return args


def build(
    source: Optional[Path] = None, directory: Optional[Path] = None, log: Optional[IO[str]] = None
) -> None:
    """Configures (exit 3 when that fails) and builds (exit 4) with all cores; the output goes
    to `log`, else to stderr."""
    stream = log if log is not None else sys.stderr
    source = source or root()
    directory = directory or build_dir()
    # A bare GPU image may ship ninja without make.
    if not os.environ.get("CMAKE_GENERATOR") and not shutil.which("make") and shutil.which("ninja"):
        os.environ["CMAKE_GENERATOR"] = "Ninja"
    if call(cmake_configure_args(source, directory), stdout=stream, stderr=stream) != 0:
        die(schema.EXIT_ENV, "configure failed (see the CMake message above)")
    jobs = str(os.cpu_count() or 1)
    if call(["cmake", "--build", str(directory), "-j", jobs], stdout=stream, stderr=stream) != 0:
        die(schema.EXIT_BUILD, "build failed (the first error is above)")


def record(path: Path, step: str, **fields: Value) -> None:
    """Merges one step into the run record (torchplace.run/1). A step it cannot record is logged:
    readers of the record then find the step missing, which they count as not done."""
    try:
        run_record.record(str(path), step, dict(fields))
    except (schema.InputError, OSError) as error:
        log(f"could not record step {step} in {path}: {error}")


def python_with(modules: Sequence[str]) -> Optional[str]:
    """A Python 3 that runs torchplace and imports every module: TORCHPLACE_PYTHON,
    /usr/bin/python3 or python3, in that order; None when there is none."""
    for candidate in (os.environ.get("TORCHPLACE_PYTHON", ""), "/usr/bin/python3", "python3"):
        found = shutil.which(candidate) if candidate else None
        if not found:
            continue
        probe = [found, "-m", "torchplace.requires", *modules]
        if subprocess.run(probe, stderr=subprocess.DEVNULL).returncode == 0:
            return found
    return None


def report_python() -> Optional[str]:
    """A Python with matplotlib and scipy (the report), or None."""
    return python_with(("matplotlib", "scipy"))


def take_value(args: List[str], what: str) -> str:
    """Pops an option's value from the front of args; exit 64 naming `what` when none is left."""
    if not args:
        die(schema.EXIT_USAGE, what)
    return args.pop(0)


def environment(**extra: str) -> Dict[str, str]:
    return dict(os.environ, **extra)
