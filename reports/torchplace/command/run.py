"""`run`: the main job. Without --suite: builds this repository (CMake preset "ci"), runs the
scenario matrix on every device here, then the transfer benchmarks, then renders the report,
all into DIR. With --suite: runs a suite built elsewhere (a user's own torchplace_add_suite
executable; the only form the installed command offers), and --bench a benchmark suite; builds
nothing. With --gpu: the GPU machine's steps (torchplace.command.gpu), then the behaviour gate.
With --budget-s N: each step under what is left of N seconds (torchplace.command.steps).

  DIR/results.json         one record per cell, with the fingerprint
  DIR/scenarios-junit.xml  the same cells as JUnit (scenarios-junit-cuda.xml: the CUDA cells,
                           run in a process of their own: CELL_GROUPS)
  DIR/bench.json           the benchmarks (Google Benchmark JSON, every repetition kept)
  DIR/run.json             what each step did: status, exit, seconds, and the run's outcome
                           (torchplace.run/1; the one place CI reads it from)
  DIR/index.html, DIR/summary.md, DIR/*.png   the report (python3 -m torchplace.report)

These files from an earlier run into DIR are deleted first (other files in DIR are kept).
Benchmarks: TORCHPLACE_BENCH_REPETITIONS (default 5) repetitions of TORCHPLACE_BENCH_MIN_TIME
seconds (default 0.1; 0.1s works too, whatever the Google Benchmark) each: about 1.5 minutes on a
2-core CPU-only host; TORCHPLACE_BENCH_FILTER (a --benchmark_filter regex) runs only some.
"""

import json
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, List, Optional

from torchplace import bench_json, run_record, schema
from torchplace.command import common, steps
from torchplace.command.common import die, log
from torchplace.command.steps import Budget, Step, run_process

USAGE = (
    "usage: torchplace run [--out DIR] [--suite BIN [--bench BIN]] [--no-install] "
    "[--budget-s N] [--gpu]"
)
EARLIER = (
    "results.json results-cuda.json scenarios-junit.xml scenarios-junit-cuda.xml bench.json "
    "bench.json.partial index.html summary.md run.json"
).split()


@dataclass
class Options:
    out: Path
    suite: Optional[Path] = None
    bench: Optional[Path] = None
    budget_s: Optional[int] = None
    gpu: bool = False
    repetitions: str = "5"
    min_time: str = "0.1"


def parse(args: List[str]) -> Options:
    out = str(common.root() / "out") if common.is_source_tree() else f"{os.getcwd()}/out"
    suite = bench = ""
    budget: Optional[int] = None
    gpu = False
    while args:
        arg = args.pop(0)
        if arg in ("--out", "--suite", "--bench", "--budget-s"):
            value = common.take_value(args, f"run: {arg} needs a value ({USAGE})")
            if arg == "--out":
                out = value
            elif arg == "--suite":
                suite = value
            elif arg == "--bench":
                bench = value
            elif not re.fullmatch(r"[1-9][0-9]*", value):
                die(schema.EXIT_USAGE, f"run: --budget-s needs whole seconds >= 1, got '{value}'")
            else:
                budget = int(value)
        elif arg == "--no-install":
            os.environ["TORCHPLACE_NO_INSTALL"] = "1"
        elif arg == "--gpu":
            gpu = True
        else:
            die(schema.EXIT_USAGE, f"run: unknown argument '{arg}' ({USAGE})")
    if bench and not suite:
        die(schema.EXIT_USAGE, f"run: --bench goes with --suite ({USAGE})")
    if not suite and not common.is_source_tree():
        die(
            schema.EXIT_USAGE,
            f"run: the installed command runs your own suite: give --suite BIN ({USAGE})",
        )
    if gpu and suite:
        die(schema.EXIT_USAGE, f"run: --gpu builds and tests this tree: no --suite ({USAGE})")
    for binary in (suite, bench):
        if binary and not (os.path.isfile(binary) and os.access(binary, os.X_OK)):
            die(schema.EXIT_USAGE, f"run: '{binary}' is not an executable file")
    options = Options(Path(out), Path(suite) if suite else None, Path(bench) if bench else None)
    options.budget_s, options.gpu = budget, gpu
    options.repetitions = os.environ.get("TORCHPLACE_BENCH_REPETITIONS", "5")
    options.min_time = os.environ.get("TORCHPLACE_BENCH_MIN_TIME", "0.1")
    if not re.fullmatch(r"[1-9][0-9]*", options.repetitions):
        die(
            schema.EXIT_USAGE,
            "TORCHPLACE_BENCH_REPETITIONS must be a whole number >= 1, got "
            f"'{options.repetitions}'",
        )
    if not re.fullmatch(r"[0-9]*\.?[0-9]+s?", options.min_time):
        die(
            schema.EXIT_USAGE,
            "TORCHPLACE_BENCH_MIN_TIME must be a number of seconds (0.1 or 0.1s), got "
            f"'{options.min_time}'",
        )
    return options


def command(args: List[str]) -> int:
    budget = Budget(None)  # the budget counts from here
    options = parse(args)
    budget.seconds = options.budget_s
    if options.gpu:
        from torchplace.command import gpu  # the GPU machine's preflight and steps

        gpu.prepare_environment()
    try:
        options.out.mkdir(parents=True, exist_ok=True)
    except OSError:
        die(schema.EXIT_ENV, f"cannot create {options.out}")
    options.out = options.out.resolve()
    remove_earlier_output(options.out)
    if options.gpu:
        gpu.preflight(options.out)
        plan = gpu.plan(options)
    else:
        plan = steps_of(options)
    runner = steps.Runner(options.out, budget, trace=options.gpu or options.budget_s is not None)
    outcome = runner.run(plan)
    status = outcome.status
    if options.gpu:
        status = gpu.gate(options.out, status)
    decide(options.out, status)
    if options.gpu or options.budget_s is not None:
        runner.summary(budget, status)
    return status


def decide(out: Path, status: int) -> None:
    """The run's outcome, recorded in run.json once, for CI to read (run_record.decide)."""
    try:
        run_record.decide(str(out / "run.json"), str(out), status)
    except (schema.InputError, OSError) as error:
        log(f"could not record the outcome in {out}/run.json: {error}")


def steps_of(options: Options) -> List[Step]:
    plan: List[Step] = []
    bench = options.bench
    suite = options.suite or Path()
    if options.suite is None:
        build = common.build_dir()
        suite = build / "scenarios" / "torchplace_scenarios"
        bench = build / "scenarios" / "torchplace_bench"
        plan.append(Step("build", lambda log: build_step(options.out, log), True, True))
    plan.append(Step("scenarios", lambda log: scenarios_step(suite, options.out, log), False, True))
    if bench is not None:
        bench_binary = bench
        filter_ = os.environ.get("TORCHPLACE_BENCH_FILTER") or None
        plan.append(
            Step(
                "bench",
                lambda log: bench_step(bench_binary, options, "bench", filter_, log),
                False,
                True,
            )
        )
    else:
        common.record(options.out / "run.json", "bench", status="absent")
    plan.append(Step("report", lambda log: report_step(options.out, log), False, True))
    return plan


def remove_earlier_output(out: Path) -> None:
    """Deletes what an earlier run wrote there (only the names this job writes), so a crash or a
    failed step of this run never leaves an old file shown as current."""
    old = [out / name for name in EARLIER] + sorted(out.glob("*.png"))
    for path in old:
        try:
            if path.is_file() or path.is_symlink():
                path.unlink()
        except OSError:
            die(schema.EXIT_ENV, f"cannot remove the earlier {path}")


def build_step(out: Path, log_file: Optional[IO[str]]) -> int:
    """tp_ensure_deps, configure and build; 3 or 4 (with the message) when that fails."""
    start = time.monotonic()
    try:
        common.ensure_deps(log=log_file)
        common.build(log=log_file)
    except common.Exit as error:
        if error.message:
            log(error.message)
        common.record(out / "run.json", "build", status="failed", exit=error.code)
        return error.code
    common.record(out / "run.json", "build", status="ok", seconds=int(time.monotonic() - start))
    return schema.EXIT_OK


def scenario_verdict(out: Path, code: int) -> str:
    """The scenarios step's status in run.json. The suite's own verdicts are 0 (every cell
    passed) and 1 (a cell failed); any other exit is a crash."""
    if not (out / "results.json").is_file():
        return "no_results"
    return {0: "ok", 1: "cells_failed"}.get(code, "crashed")


# LibTorch 2.8+ takes a registered PrivateUse1 backend (the sim) for its accelerator, and every
# CUDA backward in that process then fails (pytorch/pytorch#161129; seen on an H200 with 2.11):
# the CUDA cells run in a process of their own, which never registers the sim (sim.h listed()).
CUDA_CELLS = "*device=cuda*:*devices=cuda*"
CELL_GROUPS = (("", f"-{CUDA_CELLS}"), ("-cuda", CUDA_CELLS))


def scenarios_step(suite: Path, out: Path, log_file: Optional[IO[str]]) -> int:
    """Every cell on every device here, into results.json (the CUDA cells in a second process:
    CELL_GROUPS); run.json keeps the suite's own exit (a crash keeps its code, e.g. 139)."""
    start = time.monotonic()
    codes = []
    for suffix, pattern in CELL_GROUPS:
        argv = [str(suite), f"--torchplace_results={out}/results{suffix}.json"]
        argv.append(f"--gtest_output=xml:{out}/scenarios-junit{suffix}.xml")
        argv.append(f"--gtest_filter={pattern}")
        codes.append(run_process(argv, log_file, stdout=log_file))
    code = next((c for c in codes if c not in (0, 1)), max(codes))  # a crash outranks a fail
    merge_results(out / "results.json", out / "results-cuda.json")
    seconds = int(time.monotonic() - start)
    verdict = scenario_verdict(out, code)
    common.record(out / "run.json", "scenarios", status=verdict, exit=code, seconds=seconds)
    if verdict == "no_results":
        log(
            f"the scenario binary (exit {code}) did not write {out}/results.json: no scenario "
            "results"
        )
        return schema.EXIT_FAIL
    log(f"scenario results: {out}/results.json")
    if code != 0:
        log(f"some scenario cells failed (exit {code}); results.json lists them")
    return code


def merge_results(whole: Path, part: Path) -> None:
    """`part`'s cells appended to `whole`'s (the same host's fingerprint); `part` removed. A
    missing `whole` stays missing (the step then reports no results)."""
    if not whole.is_file() or not part.is_file():
        return
    try:
        document = json.loads(whole.read_text(encoding="utf-8"))
        document["cells"] += json.loads(part.read_text(encoding="utf-8"))["cells"]
    except (OSError, ValueError, KeyError, TypeError) as error:
        log(f"cannot merge {part} into {whole} (both kept): {error}")
        return
    schema.write_atomically(whole, json.dumps(document, indent=1) + "\n")
    part.unlink()


def bench_step(
    bench: Path, options: Options, name: str, filter_: Optional[str], log_file: Optional[IO[str]]
) -> int:
    """The benchmarks into OUT/<name>.json, recorded as step `name`."""
    start = time.monotonic()
    code = run_benchmarks(bench, options, name, filter_, log_file)
    seconds = int(time.monotonic() - start)
    status = "ran" if code == 0 else "failed"
    step = name.replace("-", "_")  # bench-rest.json's step is bench_rest
    common.record(options.out / "run.json", step, status=status, exit=code, seconds=seconds)
    return code


def run_benchmarks(
    bench: Path, options: Options, name: str, filter_: Optional[str], log_file: Optional[IO[str]]
) -> int:
    """Writes OUT/<name>.json. Failed benchmarks (exit 1) are in it with their errors, for the
    report; a crash or output that is not JSON stays as OUT/<name>.json.partial."""
    out = options.out
    partial = out / f"{name}.json.partial"
    argv = [str(bench), f"--benchmark_repetitions={options.repetitions}"]
    argv += [f"--benchmark_min_time={options.min_time}", f"--benchmark_out={partial}"]
    argv.append("--benchmark_out_format=json")
    if filter_:
        argv.append(f"--benchmark_filter={filter_}")
    code = run_process(argv, log_file)
    if not partial.is_file():
        log(f"benchmarks failed (exit {code}) before writing any output: no {name}.json")
        return schema.EXIT_FAIL
    if code not in (0, schema.EXIT_FAIL) or not bench_json.is_json(str(partial)):
        log(f"benchmarks failed (exit {code}); partial output: {partial}")
        return schema.EXIT_FAIL
    os.replace(partial, out / f"{name}.json")
    log(f"benchmark results: {out}/{name}.json ({options.repetitions} repetitions)")
    if code != 0:
        log(f"some benchmarks failed (exit {code}); {name}.json lists their errors")
    return code


def render_report(out: Path, log_file: Optional[IO[str]]) -> int:
    """index.html, summary.md and the PNGs from the JSON in OUT. A failure is logged and
    returned, never fatal: the results stay and the scenario status still counts. A host
    without matplotlib (a bare GPU runner) only logs: render there later from the JSON."""
    python = common.report_python()
    if python is None:
        log(
            "no report here: no Python with matplotlib and scipy (apt-get install "
            "python3-matplotlib python3-scipy); render it elsewhere from the JSON: "
            f"ci/torchplace report {out}"
        )
        return schema.EXIT_OK
    code = run_process([python, "-m", "torchplace.report", str(out)], log_file)
    if code != 0:
        log(
            f"report failed (exit {code}); the results in {out} are kept; rerun: "
            f"ci/torchplace report {out}"
        )
    return code


def report_step(out: Path, log_file: Optional[IO[str]]) -> int:
    code = render_report(out, log_file)
    common.record(out / "run.json", "report", status="ok" if code == 0 else "failed")
    return code
