"""Measures the speed gate on this machine: the false-alarm rate over A/A comparisons (the same
binary on both sides) and the detection rate of a genuine slowdown (the candidate side runs
with --torchplace_extra_work=FRACTION, which makes each benchmark run FRACTION more of its own
steps), per repetition count.

  python3 -m torchplace.gate.calibrate run --bench BUILD/scenarios/torchplace_bench --out DIR
      [--comparisons 20] [--rounds 8] [--batch 2] [--filter REGEX] [--min-time 0.05]
      [--extra-work 0.2] [--reps 4,8,16]
  python3 -m torchplace.gate.calibrate evaluate --runs DIR [--policy FILE] [--reps 4,8,16]
      re-scores saved runs

Each repetition count N is scored on the first N repetitions of each side of the same runs.
The figures include, per benchmark, the share of extra steps the candidate ran and the measured
A/B and A/A ratios of medians (the slowdown actually injected, and the noise floor).

Each comparison is one interleaved A/B job (interleave.py, ABBA rounds), as `gate --ab` runs it;
A/A and A/B comparisons alternate so drift on the machine hits both. Saved runs go to
DIR/runs/, the figures to DIR/calibration.json and DIR/calibration.md.
Exit codes: 0 written, 64 bad arguments.
"""
from __future__ import annotations

import glob
import json
import os
import statistics
import sys
import tempfile
from argparse import Namespace
from typing import Dict, List, Optional, Sequence

from torchplace.gate import interleave, speed
from torchplace.gate.policy import DEFAULT_POLICY, Policy, load_policy
from torchplace.schema import EXIT_OK, ArgumentParser, JsonObject, write_atomically


def run_comparisons(args: Namespace) -> None:
    """Writes DIR/runs/{aa,ab}-NN-{baseline,candidate}.json."""
    runs = os.path.join(args.out, "runs")
    os.makedirs(runs, exist_ok=True)
    common = [f"--benchmark_min_time={args.min_time}"]
    common += [f"--benchmark_filter={args.filter}"] if args.filter else []
    extra = [f"--torchplace_extra_work={args.extra_work}"]
    for index in range(args.comparisons):
        kinds = ("aa", "ab") if index % 2 == 0 else ("ab", "aa")
        for kind in kinds:
            sides = [
                ("baseline", args.bench, common),
                ("candidate", args.bench, common + (extra if kind == "ab" else [])),
            ]
            merged = interleave.interleave(sides, args.rounds, args.batch)
            how = f"rounds={args.rounds} batch={args.batch} order=ABBA calibration={kind}"
            for side, doc in zip(("baseline", "candidate"), merged):
                write_atomically(
                    os.path.join(runs, f"{kind}-{index:02d}-{side}.json"), doc.document(how)
                )
            print(f"calibrate: {kind} comparison {index + 1}/{args.comparisons} done", flush=True)


def truncated(path: str, reps: int, scratch: str) -> str:
    """A copy of a saved run with each benchmark's first `reps` repetitions (the first rounds,
    so ABBA order holds when reps is a multiple of 2 x batch); its path in scratch."""
    with open(path, encoding="utf-8") as handle:
        doc = json.load(handle)
    doc["benchmarks"] = [
        dict(e, repetitions=reps) for e in doc["benchmarks"] if e.get("repetition_index", 0) < reps
    ]
    out = os.path.join(scratch, os.path.basename(path))
    write_atomically(out, json.dumps(doc))
    return out


def score(runs_dir: str, kind: str, policy: Policy, reps: int) -> List[JsonObject]:
    """Per comparison of `kind` at `reps` a side: refused (exit 3, why), failed (exit 1), and the
    gated rows (name, outcome, ratio)."""
    scored = []
    with tempfile.TemporaryDirectory(prefix="calibrate-") as scratch:
        for base in sorted(glob.glob(os.path.join(runs_dir, f"{kind}-*-baseline.json"))):
            cand = base.replace("-baseline.json", "-candidate.json")
            section = speed.compare(
                truncated(base, reps, scratch), truncated(cand, reps, scratch), policy
            )
            problems = speed.input_problems(section)
            rows = [
                (r["name"], r["outcome"], r["ratio"])
                for r in section["benchmarks"]
                if not r["informational"]
            ]
            scored.append(
                {
                    "refused": problems[:1],
                    "failed": not problems and speed.regressed(section),
                    "rows": rows,
                }
            )
    return scored


def upper_bound(successes: int, trials: int, confidence: float = 0.95) -> float:
    """One-sided Clopper-Pearson upper bound of a rate (scipy.stats.beta)."""
    from scipy.stats import beta

    return (
        1.0
        if successes >= trials
        else float(beta.ppf(confidence, successes + 1, trials - successes))
    )


def rates(scored: List[JsonObject]) -> JsonObject:
    """Comparisons refused and failed, and the gated results by outcome."""
    rows = [row for comparison in scored for row in comparison["rows"]]
    failed = sum(bool(comparison["failed"]) for comparison in scored)
    counts = {
        name: sum(1 for row in rows if row[1] == name)
        for name in (speed.SAME, speed.FASTER, speed.SLOWER, speed.AMBIGUOUS)
    }
    return {
        "comparisons": len(scored),
        "failed": failed,
        "refused": sum(bool(comparison["refused"]) for comparison in scored),
        "why_refused": next((c["refused"][0] for c in scored if c["refused"]), None),
        "failed_upper95": upper_bound(failed, len(scored)),
        "results": len(rows),
        "outcomes": counts,
    }


def injected(runs_dir: str) -> Dict[str, Dict[str, Optional[float]]]:
    """Per benchmark: the share of extra steps the A/B candidate ran (counter
    torchplace_extra_ratio) and the median over comparisons of the A/B and A/A time ratios."""
    figures: Dict[str, Dict[str, List[float]]] = {}
    for kind in ("ab", "aa"):
        for base in sorted(glob.glob(os.path.join(runs_dir, f"{kind}-*-baseline.json"))):
            _, base_groups = speed.repetitions(base)
            cand_path = base.replace("-baseline.json", "-candidate.json")
            _, cand_groups = speed.repetitions(cand_path)
            for name, group in base_groups.items():
                if group["times"] and cand_groups.get(name, {}).get("times"):
                    ratio = statistics.median(cand_groups[name]["times"]) / statistics.median(
                        group["times"]
                    )
                    figures.setdefault(name, {"ab": [], "aa": [], "steps": []})[kind].append(ratio)
            if kind == "ab":
                with open(cand_path, encoding="utf-8") as handle:
                    for entry in json.load(handle)["benchmarks"]:
                        if "torchplace_extra_ratio" in entry and entry.get("run_name") in figures:
                            figures[entry["run_name"]]["steps"].append(
                                entry["torchplace_extra_ratio"]
                            )
    return {
        name: {key: statistics.median(values) if values else None for key, values in row.items()}
        for name, row in figures.items()
    }


def _cell(figure: JsonObject) -> str:
    text = f"{figure['failed']}/{figure['comparisons']}"
    return text + (f", {figure['refused']} refused" if figure["refused"] else "")


def markdown(figures: JsonObject) -> str:
    lines = [
        "## Speed-gate calibration",
        "",
        f"Policy `{figures['policy']}` (alpha {figures['alpha']}); A/B candidate: "
        f"--torchplace_extra_work={figures['extra_work']}.",
        "",
        "| repetitions a side | false alarms (A/A, exit 1) | detection (A/B, exit 1) | "
        "A/B results SLOWER / AMBIGUOUS / SAME |",
        "|---|---|---|---|",
    ]
    for reps, row in figures["by_reps"].items():
        aa, ab = row["aa"], row["ab"]
        outcomes = ab["outcomes"]
        lines.append(
            f"| {reps} | {_cell(aa)} (95 % upper bound {aa['failed_upper95']:.0%}) | "
            f"{_cell(ab)} | {outcomes['SLOWER']} / {outcomes['AMBIGUOUS']} / "
            f"{outcomes['SAME']} of {ab['results']} |"
        )
    refusals = {row["aa"]["why_refused"] for row in figures["by_reps"].values()} - {None}
    lines += [""] + [f"Refused: {why}" for why in sorted(refusals)] + [""]
    lines += [
        "| benchmark | injected steps | A/B time ratio | A/A time ratio |",
        "|---|---:|---:|---:|",
    ]
    for name, row in sorted(figures["injected"].items()):
        cells = [("-" if row[k] is None else f"{row[k]:.3f}") for k in ("steps", "ab", "aa")]
        lines.append(f"| `{name}` | {' | '.join(cells)} |")
    return "\n".join(lines + [""])


def evaluate(
    runs_dir: str, policy_path: str, out_dir: str, reps_list: Optional[Sequence[int]] = None
) -> None:
    policy = load_policy(policy_path)
    bases = sorted(glob.glob(os.path.join(runs_dir, "ab-*-candidate.json")))
    if not bases or not glob.glob(os.path.join(runs_dir, "aa-*-baseline.json")):
        raise SystemExit(f"calibrate: no saved aa-*/ab-* runs under {runs_dir}")
    with open(bases[0], encoding="utf-8") as handle:
        doc = json.load(handle)
    most = max(e.get("repetitions", 1) for e in doc["benchmarks"])
    reps_list = reps_list or sorted({n for n in (4, 8, 12, 16, most) if n <= most})
    figures = {
        "policy": policy_path,
        "alpha": policy.alpha,
        "extra_work": doc["context"].get("torchplace_extra_work", "?"),
        "by_reps": {
            reps: {kind: rates(score(runs_dir, kind, policy, reps)) for kind in ("aa", "ab")}
            for reps in reps_list
        },
        "injected": injected(runs_dir),
    }
    text = markdown(figures)
    write_atomically(
        os.path.join(out_dir, "calibration.json"), json.dumps(figures, indent=1) + "\n"
    )
    write_atomically(os.path.join(out_dir, "calibration.md"), text + "\n")
    print(text)


def parse(argv: List[str]) -> Namespace:
    parser = ArgumentParser(
        prog="python3 -m torchplace.gate.calibrate", description=__doc__.split("\n\n")[0]
    )
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="run the comparisons, then evaluate them")
    run.add_argument("--bench", required=True, help="torchplace_bench binary")
    run.add_argument("--out", required=True, help="folder for runs/ and the figures")
    run.add_argument("--comparisons", type=int, default=20, help="of each kind (default 20)")
    run.add_argument("--rounds", type=int, default=8, help="ABBA rounds per comparison")
    run.add_argument("--batch", type=int, default=2, help="repetitions per process per round")
    run.add_argument("--filter", help="--benchmark_filter regex (e.g. the CPU benchmarks)")
    run.add_argument("--min-time", default="0.05", help="--benchmark_min_time (default 0.05 s)")
    run.add_argument("--extra-work", default="0.2", help="injected slowdown (default 0.2 = 20 %%)")
    for sub in (run, commands.add_parser("evaluate", help="re-score saved runs")):
        sub.add_argument("--policy", default=DEFAULT_POLICY)
        sub.add_argument(
            "--reps",
            type=reps_list,
            help="repetition counts to score, e.g. 4,8,12,16 (default: "
            "those up to the saved runs' count); each uses the first N of each side",
        )
    commands.choices["evaluate"].add_argument("--runs", required=True, help="a run's --out folder")
    return parser.parse_args(argv)


def reps_list(text: str) -> List[int]:
    """--reps 4,8,16 (argparse's type: a bad count is a usage error, exit 64)."""
    return [int(part) for part in text.split(",")]


def main(argv: List[str]) -> int:
    args = parse(argv)
    if args.command == "run":
        run_comparisons(args)
        evaluate(os.path.join(args.out, "runs"), args.policy, args.out, args.reps)
    else:
        evaluate(os.path.join(args.runs, "runs"), args.policy, args.runs, args.reps)
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
