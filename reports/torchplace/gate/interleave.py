"""Runs a baseline and a candidate benchmark binary interleaved on one machine and writes two
Google Benchmark JSON documents holding every repetition, for the gate's --baseline/--candidate.

Round r runs BATCH repetitions of each binary, in the order A,B on even rounds and B,A on odd ones
(ABBA), so that drift on a shared runner (heat, neighbours, frequency) hits both sides alike.

  python3 -m torchplace.gate.interleave --baseline-bin A --candidate-bin B --rounds 10 --batch 1 \
      --out-baseline base.json --out-candidate cand.json [--filter REGEX] [--min-time S] \
      [--baseline-arg=--flag ...] [--candidate-arg=--flag ...]
Exit codes: 0 written, 3 a binary failed or wrote no JSON, 64 bad arguments.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from argparse import Namespace
from typing import Dict, List, Optional, Sequence, Tuple

from torchplace.schema import (
    EXIT_INPUT,
    EXIT_OK,
    ArgumentParser,
    InputError,
    JsonObject,
    load_benchmarks,
    write_atomically,
)


def run_once(binary: str, args: Sequence[str], batch: int, scratch: str) -> JsonObject:
    """One process, `batch` repetitions; returns its parsed JSON document."""
    out_path = os.path.join(scratch, "run.json")
    if os.path.exists(out_path):
        os.unlink(out_path)
    command = [
        binary,
        "--benchmark_format=json",
        f"--benchmark_out={out_path}",
        "--benchmark_out_format=json",
        f"--benchmark_repetitions={batch}",
        *args,
    ]
    done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        raise InputError(
            f"{' '.join(command)} exited {done.returncode}: {done.stderr.strip()[-500:]}"
        )
    return load_benchmarks(out_path)


class Merged:
    """Repetitions of one side, accumulated over rounds, renumbered per benchmark."""

    label: str
    context: Optional[JsonObject]
    entries: List[JsonObject]
    count: Dict[str, int]

    def __init__(self, label: str) -> None:
        self.label, self.context, self.entries, self.count = label, None, [], {}

    def add(self, doc: JsonObject) -> None:
        self.context = self.context or doc["context"]
        for entry in doc["benchmarks"]:
            if entry["run_type"] != "iteration":
                continue  # aggregates of one batch would mislead; the gate recomputes medians
            name = entry.get("run_name", entry["name"])
            entry["repetition_index"] = self.count.get(name, 0)
            self.count[name] = entry["repetition_index"] + 1
            self.entries.append(entry)

    def document(self, how: str) -> str:
        for entry in self.entries:
            entry["repetitions"] = self.count[entry.get("run_name", entry["name"])]
        if self.context is None:
            raise InputError(f"{self.label}: no repetition ran, so there is no context to write")
        context = dict(self.context, torchplace_interleaved=how, torchplace_side=self.label)
        return json.dumps({"context": context, "benchmarks": self.entries}, indent=1) + "\n"


def interleave(
    sides: Sequence[Tuple[str, str, List[str]]], rounds: int, batch: int
) -> List[Merged]:
    """sides: [(label, binary, args)] x 2 -> [Merged] x 2, in ABBA order."""
    merged = [Merged(label) for label, _, _ in sides]
    with tempfile.TemporaryDirectory(prefix="torchplace-ab-") as scratch:
        for round_index in range(rounds):
            order = (0, 1) if round_index % 2 == 0 else (1, 0)
            for side in order:
                _, binary, args = sides[side]
                merged[side].add(run_once(binary, args, batch, scratch))
    return merged


def parse(argv: List[str]) -> Namespace:
    parser = ArgumentParser(
        prog="python3 -m torchplace.gate.interleave", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--baseline-bin", required=True)
    parser.add_argument("--candidate-bin", required=True)
    parser.add_argument("--out-baseline", required=True)
    parser.add_argument("--out-candidate", required=True)
    parser.add_argument("--rounds", type=int, default=10, help="rounds (default %(default)s)")
    parser.add_argument("--batch", type=int, default=1, help="repetitions per process per round")
    parser.add_argument("--filter", help="--benchmark_filter regex")
    parser.add_argument("--min-time", help="--benchmark_min_time value")
    parser.add_argument("--baseline-arg", action="append", default=[], help="extra baseline flag")
    parser.add_argument("--candidate-arg", action="append", default=[], help="extra candidate flag")
    args = parser.parse_args(argv)
    if args.rounds < 1 or args.batch < 1:
        parser.error(f"--rounds {args.rounds} --batch {args.batch}: both must be at least 1")
    return args


def common_args(args: Namespace) -> List[str]:
    flags = [f"--benchmark_filter={args.filter}"] if args.filter else []
    return flags + ([f"--benchmark_min_time={args.min_time}"] if args.min_time else [])


def main(argv: List[str]) -> int:
    args = parse(argv)
    sides = [
        ("baseline", args.baseline_bin, common_args(args) + args.baseline_arg),
        ("candidate", args.candidate_bin, common_args(args) + args.candidate_arg),
    ]
    try:
        merged = interleave(sides, args.rounds, args.batch)
    except (InputError, OSError) as error:
        print(f"interleave: {error}", file=sys.stderr)
        return EXIT_INPUT
    how = f"rounds={args.rounds} batch={args.batch} order=ABBA"
    write_atomically(args.out_baseline, merged[0].document(how))
    write_atomically(args.out_candidate, merged[1].document(how))
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
