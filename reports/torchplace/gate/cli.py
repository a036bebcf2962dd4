"""torchplace gate: the CI regression gate (behaviour and speed), one verdict, one exit code.

  python3 -m torchplace.gate --results RUN_DIR      behaviour: RUN_DIR/results.json vs expectations
          [--require-devices cuda=N]                  ... and a run on fewer than N GPUs is exit 3
  python3 -m torchplace.gate --baseline BASE.json --candidate CAND.json
                                                    speed: two Google Benchmark JSON runs
  python3 -m torchplace.gate --refresh-expectations RUN_DIR
                                                    rewrite the committed expectations from a run

Exit codes: 0 pass, 1 speed regression, 2 behaviour regression, 3 bad input, usage or tool error.
With --out DIR it writes DIR/summary.md and DIR/gate.json (atomically), and always prints the
Markdown. It fails closed: input it cannot read or compare is exit 3, never a pass; so is a speed
comparison without power (too many gated benchmarks for the repetitions: see speed.power).
"""
import argparse
import os
import sys
import traceback

from torchplace.gate import behaviour, report, skips, speed
from torchplace.gate.policy import DEFAULT_POLICY, load_policy
from torchplace.schema import InputError, write_atomically


class UsageError(Exception):
    pass


class Parser(argparse.ArgumentParser):
    def error(self, message):  # argparse would exit 2, which means a behaviour regression here
        raise UsageError(message)


def parse(argv):
    parser = Parser(prog="ci/torchplace gate", description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", metavar="RUN_DIR", help="run folder (or results.json) to gate")
    parser.add_argument("--baseline", metavar="BASE.json", help="baseline Google Benchmark JSON")
    parser.add_argument("--candidate", metavar="CAND.json", help="candidate Google Benchmark JSON")
    parser.add_argument("--require-devices", metavar="cuda=N",
                        help="the run must show N CUDA devices in its fingerprint, else exit 3")
    parser.add_argument("--expectations", default=behaviour.DEFAULT_EXPECTATIONS,
                        help="committed expectations (default: %(default)s)")
    parser.add_argument("--policy", default=DEFAULT_POLICY, help="speed policy (default: %(default)s)")
    parser.add_argument("--out", metavar="DIR", help="write DIR/summary.md and DIR/gate.json")
    parser.add_argument("--refresh-expectations", metavar="RUN_DIR",
                        help="rewrite --expectations from RUN_DIR/results.json, then exit")
    args = parser.parse_args(argv)
    if bool(args.baseline) != bool(args.candidate):
        raise UsageError("--baseline and --candidate go together")
    if args.require_devices and not args.results:
        raise UsageError("--require-devices applies to --results only")
    if not (args.results or args.baseline or args.refresh_expectations):
        raise UsageError("nothing to gate: give --results RUN_DIR and/or --baseline/--candidate")
    return args


def run_sections(args, verdict):
    """Fills the verdict's behaviour and speed sections; bad input becomes a problem."""
    if args.results:
        try:
            required = args.require_devices and skips.parse_required(args.require_devices)
            verdict["behaviour"] = behaviour.compare(args.results, args.expectations, required)
        except InputError as error:
            verdict["problems"].append(f"behaviour gate: {error}")
    if args.baseline:
        try:
            verdict["speed"] = speed.compare(args.baseline, args.candidate, load_policy(args.policy))
            verdict["problems"] += [f"speed gate: {p}" for p in speed.input_problems(verdict["speed"])]
        except InputError as error:
            verdict["problems"].append(f"speed gate: {error}")
        except Exception as error:  # noqa: BLE001  a tool error: exit 3 with a verdict, never a pass
            verdict["speed"] = None
            verdict["problems"].append(f"speed gate: tool error {type(error).__name__}: {error} "
                                       "(the inputs could not be judged; please report it)")


def exit_code(verdict):
    """Bad input outranks a behaviour regression, which outranks a speed regression."""
    if verdict["problems"]:
        return report.EXIT_INPUT
    if verdict.get("behaviour") and behaviour.regressed(verdict["behaviour"]):
        return report.EXIT_BEHAVIOUR
    if verdict.get("speed") and speed.regressed(verdict["speed"]):
        return report.EXIT_SPEED
    return report.EXIT_PASS


def write_outputs(verdict, out_dir):
    text = report.markdown(verdict)
    if out_dir:
        os.makedirs(out_dir, exist_ok=True)
        write_atomically(os.path.join(out_dir, "summary.md"), text + "\n")
        write_atomically(os.path.join(out_dir, "gate.json"), report.as_json(verdict))
    try:
        print(text, flush=True)
    except BrokenPipeError:  # `gate ... | head`: the files are written, the verdict stands
        sys.stdout = None


def main(argv):
    try:
        args = parse(argv)
    except UsageError as error:
        print(f"torchplace gate: {error} (see ci/torchplace gate --help)", file=sys.stderr)
        return report.EXIT_INPUT
    if args.refresh_expectations:
        try:
            count = behaviour.refresh(args.refresh_expectations, args.expectations)
        except InputError as error:
            print(f"torchplace gate: {error}", file=sys.stderr)
            return report.EXIT_INPUT
        print(f"torchplace gate: wrote {count} cell expectations to {args.expectations}")
        return report.EXIT_PASS
    verdict = {"problems": [], "behaviour": None, "speed": None}
    run_sections(args, verdict)
    verdict["exit_code"] = exit_code(verdict)
    verdict["verdict"] = report.VERDICTS[verdict["exit_code"]]
    try:
        write_outputs(verdict, args.out)
    except Exception as error:  # noqa: BLE001  the report itself failed: still leave a verdict
        return write_tool_error(error, args.out)
    return verdict["exit_code"]


def write_tool_error(error, out_dir):
    """Exit 3 with a minimal gate.json and summary.md naming the error."""
    text = f"tool error {type(error).__name__}: {error}"
    verdict = {"problems": [text], "behaviour": None, "speed": None,
               "exit_code": report.EXIT_INPUT, "verdict": report.VERDICTS[report.EXIT_INPUT]}
    if out_dir:
        os.makedirs(out_dir, exist_ok=True)
        write_atomically(os.path.join(out_dir, "gate.json"), report.as_json(verdict))
        write_atomically(os.path.join(out_dir, "summary.md"),
                         f"## torchplace gate: {verdict['verdict']}\n\n- {text}\n")
    print(f"torchplace gate: {text} (exit 3)", file=sys.stderr)
    return report.EXIT_INPUT


def run(argv=None):
    """`python3 -m torchplace.gate`: main's exit code; a tool error reads as exit 3, never 0 or 1."""
    try:
        sys.exit(main(sys.argv[1:] if argv is None else argv))
    except SystemExit:
        raise
    except BaseException as error:
        if os.environ.get("TORCHPLACE_GATE_TRACEBACK"):
            traceback.print_exc()
        print(f"torchplace gate: tool error {type(error).__name__}: {error} (exit 3; set "
              "TORCHPLACE_GATE_TRACEBACK=1 for the traceback)", file=sys.stderr)
        sys.exit(report.EXIT_INPUT)
