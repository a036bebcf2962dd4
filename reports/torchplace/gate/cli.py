"""torchplace gate: the CI regression gate (behaviour and speed), one verdict, one exit code.

  python3 -m torchplace.gate --results RUN_DIR      behaviour: RUN_DIR/results.json vs expectations
          [--require-devices cuda=N]                  ... and a run on fewer than N GPUs is exit 3
  python3 -m torchplace.gate --baseline BASE.json --candidate CAND.json
                                                    speed: two Google Benchmark JSON runs
  python3 -m torchplace.gate --refresh-expectations RUN_DIR
                                                    rewrite the committed expectations from a run

Exit codes: 0 pass, 1 speed regression, 2 behaviour regression, 3 bad input, usage or tool error.
With --out DIR it first removes the earlier DIR/gate.json and DIR/summary.md, then writes
summary.md and gate.json (the verdict) last, each atomically and SIGTERM held back meanwhile, so
that the two are always of one run; it always prints the Markdown. SIGTERM before that is a clean
exit 3 with a verdict saying nothing was judged. A verdict reached is never replaced by a tool
error: a summary that fails to render, or a message no stream can encode, leaves its exit code.
It fails closed: input it cannot read or compare is exit 3, never a pass (a run in which nothing
was compared included); so is a speed comparison without power (too many gated benchmarks for
the repetitions: see speed.power).
"""
from __future__ import annotations

import argparse
import os
import sys
import traceback
from typing import Callable, List, NoReturn, Optional, TextIO

from torchplace import schema
from torchplace.gate import behaviour, report, skips, speed
from torchplace.gate.policy import DEFAULT_POLICY, load_policy
from torchplace.schema import InputError, JsonObject


class UsageError(Exception):
    pass


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # argparse's exit 2 would read as a regression
        raise UsageError(message)


def parse(argv: List[str]) -> argparse.Namespace:
    parser = Parser(prog="ci/torchplace gate", description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", metavar="RUN_DIR", help="run folder (or results.json) to gate")
    parser.add_argument("--baseline", metavar="BASE.json", help="baseline Google Benchmark JSON")
    parser.add_argument("--candidate", metavar="CAND.json", help="candidate Google Benchmark JSON")
    parser.add_argument(
        "--require-devices",
        metavar="cuda=N",
        help="the run must show N CUDA devices in its fingerprint, else exit 3",
    )
    parser.add_argument(
        "--expectations",
        default=behaviour.DEFAULT_EXPECTATIONS,
        help="committed expectations (default: %(default)s)",
    )
    parser.add_argument(
        "--policy", default=DEFAULT_POLICY, help="speed policy (default: %(default)s)"
    )
    parser.add_argument("--out", metavar="DIR", help="write DIR/summary.md and DIR/gate.json")
    parser.add_argument(
        "--refresh-expectations",
        metavar="RUN_DIR",
        help="rewrite --expectations from RUN_DIR/results.json, then exit",
    )
    args = parser.parse_args(argv)
    if bool(args.baseline) != bool(args.candidate):
        raise UsageError("--baseline and --candidate go together")
    if args.require_devices and not args.results:
        raise UsageError("--require-devices applies to --results only")
    if not (args.results or args.baseline or args.refresh_expectations):
        raise UsageError("nothing to gate: give --results RUN_DIR and/or --baseline/--candidate")
    return args


OUTPUTS = ("gate.json", "summary.md")  # the verdict first: removed first, written last


def _section(verdict: JsonObject, name: str, judge: Callable[[], JsonObject]) -> None:
    """Runs judge() into verdict[name]; bad input, and any other exception, becomes a problem
    (exit 3) with the section left empty: a section that could not judge never reads as a pass."""
    try:
        verdict[name] = judge()
    except InputError as error:
        verdict[name] = None
        verdict["problems"].append(f"{name} gate: {error}")
    except Exception as error:  # noqa: BLE001  a tool error: exit 3 with a verdict, never a pass
        verdict[name] = None
        verdict["problems"].append(
            f"{name} gate: tool error {type(error).__name__}: {error} "
            "(the inputs could not be judged; please report it)"
        )


def run_sections(args: argparse.Namespace, verdict: JsonObject) -> None:
    """Fills the verdict's behaviour and speed sections; what cannot be judged is a problem."""
    if args.results:

        def judge_behaviour() -> JsonObject:
            required = args.require_devices and skips.parse_required(args.require_devices)
            return behaviour.compare(args.results, args.expectations, required)

        _section(verdict, "behaviour", judge_behaviour)
    if args.baseline:

        def judge_speed() -> JsonObject:
            section = speed.compare(args.baseline, args.candidate, load_policy(args.policy))
            verdict["problems"].extend(f"speed gate: {p}" for p in speed.input_problems(section))
            return section

        _section(verdict, "speed", judge_speed)


def exit_code(verdict: JsonObject) -> int:
    """Bad input outranks a behaviour regression, which outranks a speed regression."""
    if verdict["problems"]:
        return report.EXIT_INPUT
    if verdict.get("behaviour") and behaviour.regressed(verdict["behaviour"]):
        return report.EXIT_BEHAVIOUR
    if verdict.get("speed") and speed.regressed(verdict["speed"]):
        return report.EXIT_SPEED
    return report.EXIT_PASS


def say(text: str, stream: Optional[TextIO] = None) -> None:
    """Prints text; a closed pipe or an encoding the stream lacks never changes a verdict."""
    stream = stream or sys.stdout
    try:
        print(text, file=stream, flush=True)
    except OSError:  # `gate | head`: what the stream still holds would fail again at exit
        schema.to_devnull(stream)
    except ValueError:  # a closed stream, or a character an ASCII-only one lacks (UnicodeError)
        pass


def _summary(verdict: JsonObject) -> str:
    """summary.md's text; a report that fails to render still leaves the verdict and says why."""
    try:
        return report.markdown(verdict)
    except Exception as error:  # noqa: BLE001  the verdict stands; the summary says it failed
        verdict.setdefault("tool_errors", []).append(
            f"summary: tool error {type(error).__name__}: {error} (the summary could not be "
            "rendered; gate.json holds the verdict)"
        )
        return (
            f"## torchplace gate: {verdict['verdict']}\n\n- the summary could not be "
            f"rendered: {type(error).__name__}: {error}\n"
        )


def write_outputs(verdict: JsonObject, out_dir: Optional[str]) -> None:
    """summary.md, then gate.json (the verdict) last, SIGTERM held back meanwhile; prints the
    summary."""
    text = _summary(verdict)
    if out_dir:
        schema.write_set(
            out_dir,
            {"summary.md": text + "\n", "gate.json": report.as_json(verdict)},
            last="gate.json",
        )
    say(text)


def judge(args: argparse.Namespace) -> JsonObject:
    """The verdict: earlier outputs removed, the sections run; a SIGTERM meanwhile gives a fresh
    verdict that says nothing was judged (exit 3). Returns with SIGTERM held back (here, or by
    the handler that raised Terminated), so that no moment lies between judging and writing;
    main's stops_cleanly releases it. OSError when the old files cannot go."""
    try:
        if args.out:  # an earlier run's verdict never stands beside this run's files
            schema.remove_outputs(args.out, OUTPUTS)
        verdict: JsonObject = {"problems": [], "behaviour": None, "speed": None}
        run_sections(args, verdict)
        schema.hold_sigterm()  # judged: from here a SIGTERM waits until the verdict is written
    except schema.Terminated as stop:  # the handler holds a second SIGTERM back
        verdict = {
            "problems": [f"interrupted: {stop}; nothing was judged"],
            "behaviour": None,
            "speed": None,
        }
    verdict["exit_code"] = exit_code(verdict)
    verdict["verdict"] = report.VERDICTS[verdict["exit_code"]]
    return verdict


def main(argv: List[str]) -> int:
    _safe_streams()
    try:
        args = parse(argv)
    except UsageError as error:
        say(f"torchplace gate: {error} (see ci/torchplace gate --help)", sys.stderr)
        return report.EXIT_INPUT
    with schema.stops_cleanly():  # a held SIGTERM is dropped once the verdict is out
        if args.refresh_expectations:
            return refresh(args)
        return judge_and_write(args)


def refresh(args: argparse.Namespace) -> int:
    try:
        count = behaviour.refresh(args.refresh_expectations, args.expectations)
    except InputError as error:
        say(f"torchplace gate: {error}", sys.stderr)
        return report.EXIT_INPUT
    say(f"torchplace gate: wrote {count} cell expectations to {args.expectations}")
    return report.EXIT_PASS


def judge_and_write(args: argparse.Namespace) -> int:
    """The verdict, written: its exit code, or 3 when it could not be written."""
    try:
        verdict = judge(args)
    except OSError as error:
        say(
            f"torchplace gate: cannot remove the earlier outputs in {args.out}: {error} "
            "(exit 3)",
            sys.stderr,
        )
        return report.EXIT_INPUT
    try:  # SIGTERM is held (judge): the verdict is written, whatever comes
        write_outputs(verdict, args.out)
        return verdict["exit_code"]
    except Exception as error:  # noqa: BLE001  the files could not be written
        return write_tool_error(error, args.out, verdict)


def _safe_streams() -> None:
    """Messages hold any character (a lone surrogate from JSON, a non-ASCII path): a stream that
    cannot encode one escapes it instead of failing."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.reconfigure(errors="backslashreplace")  # type: ignore[attr-defined]
        except (AttributeError, ValueError, OSError):  # not a TextIOWrapper (a test's StringIO)
            pass


def write_tool_error(
    error: BaseException, out_dir: Optional[str], reached: Optional[JsonObject] = None
) -> int:
    """The outputs could not be written: a verdict already reached keeps its exit code (a
    regression is never turned into a tool error), and a pass becomes exit 3. Tries once more
    to leave a minimal gate.json and summary.md naming the error."""
    text = f"tool error {type(error).__name__}: {error}"
    code = (
        reached["exit_code"]
        if reached and reached["exit_code"] != report.EXIT_PASS
        else report.EXIT_INPUT
    )
    verdict = {
        "problems": [text] + (reached or {}).get("problems", []),
        "behaviour": None,
        "speed": None,
        "exit_code": code,
        "verdict": report.VERDICTS[code],
    }
    if out_dir:
        try:
            schema.write_set(
                out_dir,
                {
                    "gate.json": report.as_json(verdict),
                    "summary.md": f"## torchplace gate: {verdict['verdict']}\n\n- {text}\n",
                },
                last="gate.json",
            )
        except Exception as second:  # noqa: BLE001  nothing more to do than say so
            say(f"torchplace gate: cannot write to {out_dir}: {second}", sys.stderr)
    say(f"torchplace gate: {text} (exit {code})", sys.stderr)
    return code


def run(argv: Optional[List[str]] = None) -> NoReturn:
    """`python3 -m torchplace.gate`: main's exit code; a tool error reads as exit 3, never 0 or
    1."""
    try:
        sys.exit(main(sys.argv[1:] if argv is None else argv))
    except SystemExit:
        raise
    except BaseException as error:
        if os.environ.get("TORCHPLACE_GATE_TRACEBACK"):
            traceback.print_exc()
        say(
            f"torchplace gate: tool error {type(error).__name__}: {error} (exit 3; set "
            "TORCHPLACE_GATE_TRACEBACK=1 for the traceback)",
            sys.stderr,
        )
        sys.exit(report.EXIT_INPUT)
