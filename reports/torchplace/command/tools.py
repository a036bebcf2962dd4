"""`report`, `gate` and `explain`: each checks its arguments and environment, then execs the
subpackage's own entry point (torchplace.report, torchplace.gate, torchplace.explain), so that a
SIGTERM to the command reaches the tool itself, which stops cleanly (exit 3)."""

import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import List, NoReturn, Optional

from torchplace import schema
from torchplace.command import common
from torchplace.command.common import die, log

REPORT_USAGE = "usage: ci/torchplace report IN_DIR [--out DIR] [--gate GATE_JSON]"
# The gate's own input/usage error (its documented exit 3, not 64).
GATE_INPUT = schema.EXIT_INPUT
GATE_HELP = """\
ci/torchplace gate: the CI regression gate (python3 -m torchplace.gate; its data in ci/gate/).
Behaviour, speed, or both, one verdict.
  gate --results RUN_DIR                         behaviour: RUN_DIR/results.json vs the committed
                                                 expectations (ci/gate/expectations.json)
  gate --baseline BASE.json --candidate CAND.json   speed: two saved Google Benchmark runs
  gate --ab BASE_REF [--rounds N] [--batch K] [--filter REGEX] [--min-time S]
                                                 speed, A/B on this machine: builds BASE_REF (a git
                                                 worktree) and this tree, runs both torchplace_bench
                                                 binaries interleaved, then compares
  gate --refresh-expectations RUN_DIR            rewrite the committed expectations from a run
Options: --out DIR (summary.md, gate.json, and the A/B runs), --policy FILE, --expectations FILE.
Exit codes (the gate's own, not TP_EXIT_*): 0 pass, 1 speed regression, 2 behaviour regression,
3 bad input, usage or tool error."""


def exec_module(python: str, module: str, args: List[str]) -> NoReturn:
    os.execv(python, [python, "-m", module, *args])


def report(args: List[str]) -> int:
    in_dir: Optional[str] = None
    out: Optional[str] = None
    gate_json: List[str] = []
    while args:
        arg = args.pop(0)
        if arg == "--out":
            out = common.take_value(args, "report: --out needs a folder")
        elif arg == "--gate":
            gate_json = ["--gate", common.take_value(args, "report: --gate needs a gate.json")]
        elif arg.startswith("-"):
            die(schema.EXIT_USAGE, f"report: unknown option '{arg}' ({REPORT_USAGE})")
        elif in_dir is not None:
            die(schema.EXIT_USAGE, f"report: one IN_DIR only (got '{in_dir}' and '{arg}')")
        else:
            in_dir = arg
    if in_dir is None:
        die(schema.EXIT_USAGE, f"report: {REPORT_USAGE}")
    if not os.path.isdir(in_dir):
        die(schema.EXIT_ENV, f"report: {in_dir} is not a folder")
    python = common.report_python()
    if python is None:
        die(
            schema.EXIT_ENV,
            "no Python with matplotlib and scipy found; install them: apt-get install "
            "python3-matplotlib python3-scipy (or set TORCHPLACE_PYTHON)",
        )
    exec_module(python, "torchplace.report", [in_dir, "--out", out or in_dir, *gate_json])


AB_OPTIONS = ("--rounds", "--batch", "--filter", "--min-time")


def gate(args: List[str]) -> int:
    ab_ref = ""
    out = ""
    ab_opts: List[str] = []
    gate_opts: List[str] = []
    while args:
        arg = args.pop(0)
        if arg in ("-h", "--help"):
            print(GATE_HELP)
            return schema.EXIT_OK
        if arg in ("--ab", "--out", *AB_OPTIONS):
            value = common.take_value(
                args, f"gate: {arg} needs a value (see ci/torchplace gate --help)"
            )
            if arg == "--ab":
                ab_ref = value
            elif arg == "--out":
                out = value
            else:
                ab_opts += [arg, value]
        elif arg == "--no-install":
            os.environ["TORCHPLACE_NO_INSTALL"] = "1"
        else:
            gate_opts.append(arg)
    if not common.is_source_tree():  # the installed command: no source tree
        if ab_ref:
            die(
                GATE_INPUT,
                "gate --ab builds two commits of the torchplace source tree; the installed "
                "command cannot",
            )
        judged = "--results" in gate_opts or "--refresh-expectations" in gate_opts
        if judged and "--expectations" not in gate_opts:
            die(
                GATE_INPUT,
                "gate: give --expectations FILE (your project's own; the installed "
                "command has none)",
            )
    speed = bool(ab_ref) or "--baseline" in gate_opts
    python = common.python_with(("scipy",) if speed else ())
    if python is None:
        die(
            GATE_INPUT,
            "gate: no Python 3 with scipy found (the speed gate needs it); apt-get install "
            "python3-scipy (or set TORCHPLACE_PYTHON)",
        )
    if ab_ref:
        out = out or str(common.root() / "out" / "gate")
        gate_ab(ab_ref, Path(out), python, ab_opts)
        gate_opts += ["--baseline", f"{out}/ab-baseline.json"]
        gate_opts += ["--candidate", f"{out}/ab-candidate.json"]
    elif ab_opts:
        die(GATE_INPUT, f"gate: {ab_opts[0]} applies to --ab only")
    if out:
        gate_opts += ["--out", out]
    exec_module(python, "torchplace.gate", gate_opts)


def gate_ab(ref: str, out: Path, python: str, options: List[str]) -> None:
    """Builds both sides (the baseline in a scratch git worktree), runs them interleaved, writes
    OUT/ab-baseline.json and OUT/ab-candidate.json. Any failure is exit 3; the scratch worktree
    is removed before the gate runs."""
    tree = str(common.root())
    known = subprocess.run(
        ["git", "-C", tree, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"],
        stdout=subprocess.DEVNULL,
    )
    if known.returncode != 0:
        die(
            GATE_INPUT,
            f"gate --ab: '{ref}' is not a commit here (a shallow CI clone needs " "fetch-depth: 0)",
        )
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError:
        die(GATE_INPUT, f"gate: cannot create {out}")
    scratch = Path(tempfile.mkdtemp(prefix="torchplace-ab.", dir=os.environ.get("TMPDIR")))
    try:
        ab_build_and_run(ref, out, python, options, scratch)
    finally:
        subprocess.run(
            ["git", "-C", tree, "worktree", "remove", "--force", str(scratch / "base")],
            stderr=subprocess.DEVNULL,
        )
        shutil.rmtree(scratch, ignore_errors=True)


def ab_build_and_run(ref: str, out: Path, python: str, options: List[str], scratch: Path) -> None:
    tree = str(common.root())
    add = ["git", "-C", tree, "worktree", "add", "--detach", str(scratch / "base"), ref]
    if common.call(add, stdout=2) != 0:
        die(GATE_INPUT, f"gate --ab: git worktree add failed for {ref}")
    common.ensure_deps()
    log(f"building the baseline ({ref}) in {scratch}/build")
    try:
        common.build(scratch / "base", scratch / "build")
    except common.Exit:
        die(GATE_INPUT, f"gate --ab: the baseline ({ref}) does not build")
    log(f"building the candidate (this tree) in {common.build_dir()}")
    try:
        common.build()
    except common.Exit:
        die(GATE_INPUT, "gate --ab: the candidate does not build")
    base_bin = scratch / "build" / "scenarios" / "torchplace_bench"
    cand_bin = common.build_dir() / "scenarios" / "torchplace_bench"
    if not os.access(base_bin, os.X_OK):
        die(GATE_INPUT, f"gate --ab: {ref} has no torchplace_bench to compare")
    if not os.access(cand_bin, os.X_OK):
        die(GATE_INPUT, "gate --ab: this tree built no torchplace_bench")
    interleave = [python, "-m", "torchplace.gate.interleave", "--baseline-bin", str(base_bin)]
    interleave += ["--candidate-bin", str(cand_bin), "--out-baseline", f"{out}/ab-baseline.json"]
    interleave += ["--out-candidate", f"{out}/ab-candidate.json", *options]
    if common.call(interleave) != 0:
        die(GATE_INPUT, "gate --ab: running the benchmarks failed")


def explain_classifier() -> Optional[str]:
    """torchplace_classify: installed beside the package, or built on demand in the source tree
    (no LibTorch needed to compile it)."""
    installed = common.root() / "bin" / "torchplace_classify"
    if os.access(installed, os.X_OK):
        return str(installed)
    if not common.is_source_tree():
        return None
    build = common.build_dir()
    if not (build / "CMakeCache.txt").is_file():
        configure = ["cmake", "-S", str(common.root()), "--preset", "ci", "-B", str(build)]
        if common.call(configure, stdout=2) != 0:
            return None
    target = ["cmake", "--build", str(build), "--target", "torchplace_classify"]
    if common.call(target, stdout=2) != 0:
        return None
    return str(build / "harness" / "torchplace_classify")


def explain(args: List[str]) -> int:
    python = shutil.which(os.environ.get("TORCHPLACE_PYTHON") or "/usr/bin/python3")
    python = python or shutil.which("python3")
    if python is None:
        die(schema.EXIT_ENV, "explain: no python3 found (set TORCHPLACE_PYTHON)")
    if not os.environ.get("TORCHPLACE_CLASSIFY"):
        classifier = explain_classifier()
        if classifier is None:
            die(schema.EXIT_ENV, "explain: no torchplace_classify, and it could not be built here")
        os.environ["TORCHPLACE_CLASSIFY"] = classifier
    exec_module(python, "torchplace.explain", args)
