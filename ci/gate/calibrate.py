#!/usr/bin/env python3
"""Measures the speed gate on this machine: the false-alarm rate over A/A comparisons (the same
binary on both sides) and the detection rate of a genuine slowdown (the candidate side runs
with --torchplace_extra_work=FRACTION, which makes each benchmark do FRACTION more work).

  calibrate.py run --bench BUILD/scenarios/torchplace_bench --out DIR [--comparisons 20]
      [--rounds 5] [--batch 2] [--filter REGEX] [--min-time 0.05] [--extra-work 0.2]
  calibrate.py evaluate --runs DIR [--policy FILE]     re-scores saved runs under another policy

Each comparison is one interleaved A/B job (interleave.py, ABBA rounds), as `gate --ab` runs it;
A/A and A/B comparisons alternate so drift on the machine hits both. Saved runs go to
DIR/runs/, the figures to DIR/calibration.json and DIR/calibration.md.
"""
import argparse
import glob
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import interleave  # noqa: E402
import speed  # noqa: E402
from policy import DEFAULT_POLICY, load_policy  # noqa: E402
from torchplace_data import write_atomically  # noqa: E402


def run_comparisons(args):
    """Writes DIR/runs/{aa,ab}-NN-{baseline,candidate}.json."""
    runs = os.path.join(args.out, "runs")
    os.makedirs(runs, exist_ok=True)
    common = [f"--benchmark_min_time={args.min_time}"]
    common += [f"--benchmark_filter={args.filter}"] if args.filter else []
    extra = [f"--torchplace_extra_work={args.extra_work}"]
    for index in range(args.comparisons):
        kinds = ("aa", "ab") if index % 2 == 0 else ("ab", "aa")
        for kind in kinds:
            sides = [("baseline", args.bench, common),
                     ("candidate", args.bench, common + (extra if kind == "ab" else []))]
            merged = interleave.interleave(sides, args.rounds, args.batch)
            how = f"rounds={args.rounds} batch={args.batch} order=ABBA calibration={kind}"
            for side, doc in zip(("baseline", "candidate"), merged):
                write_atomically(os.path.join(runs, f"{kind}-{index:02d}-{side}.json"),
                                 doc.document(how))
            print(f"calibrate: {kind} comparison {index + 1}/{args.comparisons} done", flush=True)


def score(runs_dir, kind, policy):
    """Per comparison of `kind`: the gated rows (name, outcome, ratio) and whether it failed."""
    scored = []
    for base in sorted(glob.glob(os.path.join(runs_dir, f"{kind}-*-baseline.json"))):
        section = speed.compare(base, base.replace("-baseline.json", "-candidate.json"), policy)
        problems = speed.input_problems(section)
        if problems:
            raise SystemExit(f"calibrate: {base}: {problems}")
        rows = [(r["name"], r["outcome"], r["ratio"]) for r in section["benchmarks"]
                if not r["informational"]]
        scored.append({"failed": speed.regressed(section), "rows": rows})
    return scored


def upper_bound(successes, trials, confidence=0.95):
    """One-sided Clopper-Pearson upper bound of a rate (scipy.stats.beta)."""
    from scipy.stats import beta

    return 1.0 if successes >= trials else float(beta.ppf(confidence, successes + 1, trials - successes))


def rates(scored, outcome):
    """Share of comparisons that failed, and of benchmark results with `outcome`."""
    rows = [row for comparison in scored for row in comparison["rows"]]
    failed = sum(comparison["failed"] for comparison in scored)
    hits = sum(1 for row in rows if row[1] == outcome)
    counts = {name: sum(1 for row in rows if row[1] == name)
              for name in (speed.SAME, speed.FASTER, speed.SLOWER, speed.AMBIGUOUS)}
    ratios = sorted(row[2] for row in rows)
    return {"comparisons": len(scored), "failed_comparisons": failed,
            "comparison_rate": failed / len(scored), "benchmark_results": len(rows),
            f"{outcome.lower()}_results": hits, "benchmark_rate": hits / len(rows),
            "outcomes": counts, "median_ratio": ratios[len(ratios) // 2],
            "comparison_rate_upper95": upper_bound(failed, len(scored))}


def markdown(figures):
    aa, ab = figures["aa"], figures["ab"]
    return "\n".join([
        "## Speed-gate calibration", "",
        f"Policy `{figures['policy']}`; {aa['comparisons']} A/A and {ab['comparisons']} A/B "
        f"comparisons, {aa['benchmark_results'] // max(aa['comparisons'], 1)} gated benchmarks each; "
        f"A/B candidate: --torchplace_extra_work={figures['extra_work']}.", "",
        "| figure | comparisons (a failing gate) | benchmark results |", "|---|---|---|",
        f"| false alarms (A/A) | {aa['failed_comparisons']}/{aa['comparisons']} = "
        f"{aa['comparison_rate']:.1%} (95 % upper bound {aa['comparison_rate_upper95']:.1%}) | "
        f"{aa['slower_results']}/{aa['benchmark_results']} SLOWER = {aa['benchmark_rate']:.2%} |",
        f"| detection (A/B) | {ab['failed_comparisons']}/{ab['comparisons']} = "
        f"{ab['comparison_rate']:.1%} | {ab['slower_results']}/{ab['benchmark_results']} SLOWER = "
        f"{ab['benchmark_rate']:.1%} |", "",
        f"A/A outcomes {aa['outcomes']}, median ratio {aa['median_ratio']:.3f}; "
        f"A/B outcomes {ab['outcomes']}, median ratio {ab['median_ratio']:.3f}.", ""])


def evaluate(runs_dir, policy_path, out_dir):
    policy = load_policy(policy_path)
    aa, ab = score(runs_dir, "aa", policy), score(runs_dir, "ab", policy)
    if not aa or not ab:
        raise SystemExit(f"calibrate: no saved aa-*/ab-* runs under {runs_dir}")
    with open(glob.glob(os.path.join(runs_dir, "ab-*-candidate.json"))[0], encoding="utf-8") as f:
        extra_work = json.load(f)["context"].get("torchplace_extra_work", "?")
    figures = {"policy": policy_path, "alpha": policy.alpha, "extra_work": extra_work,
               "aa": rates(aa, speed.SLOWER), "ab": rates(ab, speed.SLOWER)}
    text = markdown(figures)
    write_atomically(os.path.join(out_dir, "calibration.json"), json.dumps(figures, indent=1) + "\n")
    write_atomically(os.path.join(out_dir, "calibration.md"), text + "\n")
    print(text)


def parse(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="run the comparisons, then evaluate them")
    run.add_argument("--bench", required=True, help="torchplace_bench binary")
    run.add_argument("--out", required=True, help="folder for runs/ and the figures")
    run.add_argument("--comparisons", type=int, default=20, help="of each kind (default 20)")
    run.add_argument("--rounds", type=int, default=5, help="ABBA rounds per comparison")
    run.add_argument("--batch", type=int, default=2, help="repetitions per process per round")
    run.add_argument("--filter", help="--benchmark_filter regex (e.g. the CPU benchmarks)")
    run.add_argument("--min-time", default="0.05", help="--benchmark_min_time (default 0.05 s)")
    run.add_argument("--extra-work", default="0.2", help="injected slowdown (default 0.2 = 20 %%)")
    for sub in (run, commands.add_parser("evaluate", help="re-score saved runs")):
        sub.add_argument("--policy", default=DEFAULT_POLICY)
    commands.choices["evaluate"].add_argument("--runs", required=True, help="a run's --out folder")
    return parser.parse_args(argv)


def main(argv):
    args = parse(argv)
    if args.command == "run":
        run_comparisons(args)
        evaluate(os.path.join(args.out, "runs"), args.policy, args.out)
    else:
        evaluate(os.path.join(args.runs, "runs"), args.policy, args.runs)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
