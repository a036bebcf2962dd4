#!/usr/bin/env python3
"""Tests that kill generated mutants of the interleaved benchmark runner which survived every other
test (torchplace.mutation.generated; ci/mutation/README.md "Generated mutants"). Each names the
mutant it was seen to kill. Input files are made here and say that they are synthetic."""
import contextlib
import io
import json
import os
import subprocess
import sys
import tempfile
import unittest

from torchplace.gate import interleave, report
from torchplace.schema import EXIT_USAGE


FAKE_BENCH = """#!/usr/bin/env python3
import json, os, sys
args = dict(a[2:].split("=", 1) for a in sys.argv[1:] if "=" in a)
if os.path.exists(args["benchmark_out"]):
    sys.exit("a stale output file: " + args["benchmark_out"])
entry = {"name": "BM_fake", "run_name": "BM_fake", "run_type": "iteration", "iterations": 1,
         "real_time": 1.0, "cpu_time": 1.0, "time_unit": "ns"}
n = int(args["benchmark_repetitions"])
if "tp_log" in args:  # which side ran, in order (a test's own flag, not Google Benchmark's)
    with open(args["tp_log"], "a") as log:
        log.write(args["tp_side"])
with open(args["benchmark_out"], "w") as out:
    json.dump({"context": {"torchplace_synthetic": "a stand-in binary", "argv": sys.argv[1:]},
               "benchmarks": [dict(entry, repetition_index=i) for i in range(n)]}, out)
if "tp_exit" in args:  # a binary that wrote its JSON, then failed
    sys.exit("synthetic failure after the output was written")
"""


def fake_bench(folder: str) -> str:
    """FAKE_BENCH as an executable in folder, run by this Python."""
    binary = os.path.join(folder, "fake_bench")
    with open(binary, "w", encoding="utf-8") as handle:
        handle.write(FAKE_BENCH.replace("/usr/bin/env python3", sys.executable))
    os.chmod(binary, 0o755)
    return binary


class InterleaveRounds(unittest.TestCase):
    def test_each_round_runs_each_side_afresh(self):
        # kills reports/torchplace/gate/interleave.py:run_once:2803bf:negate_if:0 (the first
        # round unlinked a file not there yet; without the unlink, a stale file stays)
        with tempfile.TemporaryDirectory() as folder:
            binary = fake_bench(folder)
            sides = [("baseline", binary, []), ("candidate", binary, [])]
            merged = interleave.interleave(sides, rounds=3, batch=2)
        self.assertEqual([side.count for side in merged], [{"BM_fake": 6}] * 2)
        indices = [entry["repetition_index"] for entry in merged[0].entries]
        self.assertEqual(indices, list(range(6)))

    def test_rounds_alternate_abba(self):
        # kills reports/torchplace/gate/interleave.py:interleave:056ed9:eq_flip:0 (BAAB) and
        # :const_minus:2 (always AB: drift then favours one side), :const_plus:2 (% 3)
        with tempfile.TemporaryDirectory() as folder:
            binary, log = fake_bench(folder), os.path.join(folder, "order.log")
            sides = [
                (label, binary, [f"--tp_log={log}", f"--tp_side={letter}"])
                for label, letter in (("baseline", "A"), ("candidate", "B"))
            ]
            interleave.interleave(sides, rounds=4, batch=1)
            with open(log, encoding="utf-8") as handle:
                self.assertEqual(handle.read(), "ABBAABBA")

    def test_main_writes_each_side_to_its_file(self):
        # kills reports/torchplace/gate/interleave.py:main:a955ac:const_plus:0 (merged[2]: an
        # IndexError after every round had run)
        with tempfile.TemporaryDirectory() as folder:
            binary = fake_bench(folder)
            outs = [os.path.join(folder, name) for name in ("base.json", "cand.json")]
            code = interleave.main(
                ["--baseline-bin", binary, "--candidate-bin", binary, "--rounds", "2"]
                + ["--out-baseline", outs[0], "--out-candidate", outs[1]]
            )
            sides = []
            for path in outs:
                with open(path, encoding="utf-8") as handle:
                    doc = json.load(handle)
                sides.append((doc["context"]["torchplace_side"], len(doc["benchmarks"])))
        self.assertEqual(code, 0)
        self.assertEqual(sides, [("baseline", 2), ("candidate", 2)])

    def test_main_runs_rounds_of_batch_repetitions(self):
        # kills reports/torchplace/gate/interleave.py:main:8f8582:arg_swap:1 (--rounds and --batch
        # swapped: 3 rounds of 2 repetitions, "ABBAAB", for --rounds 2 --batch 3)
        with tempfile.TemporaryDirectory() as folder:
            binary, log = fake_bench(folder), os.path.join(folder, "order.log")
            outs = [os.path.join(folder, name) for name in ("base.json", "cand.json")]
            code = interleave.main(
                ["--baseline-bin", binary, "--candidate-bin", binary]
                + ["--rounds", "2", "--batch", "3", f"--baseline-arg=--tp_log={log}"]
                + [f"--candidate-arg=--tp_log={log}"]
                + ["--baseline-arg=--tp_side=A", "--candidate-arg=--tp_side=B"]
                + ["--out-baseline", outs[0], "--out-candidate", outs[1]]
            )
            with open(log, encoding="utf-8") as handle:
                order = handle.read()
            with open(outs[0], encoding="utf-8") as handle:
                argv = json.load(handle)["context"]["argv"]
        self.assertEqual(code, 0)
        self.assertEqual(order, "ABBA")
        self.assertIn("--benchmark_repetitions=3", argv)

    def test_each_side_gets_the_common_flags_and_only_its_own(self):
        # kills reports/torchplace/gate/interleave.py:parse:17d4c2:delete_stmt:0 (--filter),
        # and parse:abba78:delete_stmt:0 (--min-time): an error on the flag every CI run passes
        with tempfile.TemporaryDirectory() as folder:
            binary = fake_bench(folder)
            outs = [os.path.join(folder, name) for name in ("base.json", "cand.json")]
            code = interleave.main(
                ["--baseline-bin", binary, "--candidate-bin", binary, "--rounds", "2"]
                + ["--filter", "BM_fake", "--min-time", "0.01"]
                + ["--baseline-arg=--tp_side=A", "--candidate-arg=--tp_side=B"]
                + ["--out-baseline", outs[0], "--out-candidate", outs[1]]
            )
            argvs = []
            for path in outs:
                with open(path, encoding="utf-8") as handle:
                    argvs.append(json.load(handle)["context"]["argv"])
        self.assertEqual(code, 0)
        for argv, own, other in zip(argvs, ("--tp_side=A", "--tp_side=B"), ("B", "A")):
            self.assertIn("--benchmark_filter=BM_fake", argv)
            self.assertIn("--benchmark_min_time=0.01", argv)
            self.assertIn(own, argv)
            self.assertNotIn(f"--tp_side={other}", argv)


class InterleaveMissingBinary(unittest.TestCase):
    def test_a_binary_that_cannot_run_is_exit_3_and_writes_nothing(self):
        # kills reports/torchplace/gate/interleave.py:main:e58138:delete_stmt:0 (it went on to
        # write the outputs of a run that never happened)
        with tempfile.TemporaryDirectory() as folder:
            missing = os.path.join(folder, "no-such-benchmark-binary")
            outs = [os.path.join(folder, name) for name in ("a.json", "b.json")]
            stderr = io.StringIO()
            with contextlib.redirect_stderr(stderr):
                code = interleave.main(
                    ["--baseline-bin", missing, "--candidate-bin", missing, "--rounds", "2"]
                    + ["--out-baseline", outs[0], "--out-candidate", outs[1]]
                )
            self.assertEqual(code, report.EXIT_INPUT)
            self.assertIn("interleave:", stderr.getvalue())
            self.assertFalse([path for path in outs if os.path.exists(path)])

    def test_a_binary_that_fails_after_writing_is_exit_3_naming_it(self):
        # kills reports/torchplace/gate/interleave.py:run_once:c122c5:delete_branch:0 (its JSON
        # was taken as a run) and :const_plus:0 (`!= 1`), run_once:e05e4b:bool_flip:0 (b'...'); also
        # common_args:6550f2:delete_stmt:0 (None + the side's flags: a TypeError)
        with tempfile.TemporaryDirectory() as folder:
            binary = fake_bench(folder)
            outs = [os.path.join(folder, name) for name in ("a.json", "b.json")]
            stderr = io.StringIO()
            with contextlib.redirect_stderr(stderr):
                code = interleave.main(
                    ["--baseline-bin", binary, "--candidate-bin", binary, "--rounds", "1"]
                    + ["--candidate-arg=--tp_exit=1"]
                    + ["--out-baseline", outs[0], "--out-candidate", outs[1]]
                )
            self.assertFalse([path for path in outs if os.path.exists(path)])
        self.assertEqual(code, report.EXIT_INPUT)
        self.assertIn("--tp_exit=1 exited 1: synthetic failure after the output", stderr.getvalue())

    def test_as_a_command_too(self):
        # kills reports/torchplace/gate/interleave.py:<module>:0d2999:const_minus:0 (argv[0:]:
        # the module's own path read as an argument, a usage error)
        with tempfile.TemporaryDirectory() as folder:
            missing = os.path.join(folder, "no-such-benchmark-binary")
            done = subprocess.run(
                [sys.executable, "-m", "torchplace.gate.interleave", "--rounds", "2"]
                + ["--baseline-bin", missing, "--candidate-bin", missing]
                + ["--out-baseline", os.path.join(folder, "a.json")]
                + ["--out-candidate", os.path.join(folder, "b.json")],
                capture_output=True,
                text=True,
            )
        self.assertEqual(done.returncode, report.EXIT_INPUT, done.stderr)
        self.assertIn("interleave:", done.stderr)


class InterleaveArguments(unittest.TestCase):
    def test_each_binary_and_output_is_required(self):
        # kills reports/torchplace/gate/interleave.py:parse:4c3b16:bool_flip:0 (and the other
        # three required=True flipped)
        full = {
            "--baseline-bin": "a",
            "--candidate-bin": "b",
            "--out-baseline": "a.json",
            "--out-candidate": "b.json",
        }
        for left_out in full:
            argv = [part for key, value in full.items() if key != left_out for part in (key, value)]
            with self.subTest(left_out=left_out), contextlib.redirect_stderr(io.StringIO()):
                with self.assertRaises(SystemExit) as exited:
                    interleave.parse(argv)
                self.assertEqual(exited.exception.code, EXIT_USAGE)  # 64: bad arguments

    def test_the_documented_defaults(self):
        # kills reports/torchplace/gate/interleave.py:parse:737f94:const_plus:0 (11 rounds)
        args = interleave.parse(
            ["--baseline-bin", "a", "--candidate-bin", "b"]
            + ["--out-baseline", "a.json", "--out-candidate", "b.json"]
        )
        self.assertEqual((args.rounds, args.batch), (10, 1))

    def test_help_says_what_it_does(self):
        # kills reports/torchplace/gate/interleave.py:parse:d39eeb:const_minus:0 and :const_plus:0
        # (another paragraph of the docstring as the description)
        stdout = io.StringIO()
        with contextlib.redirect_stdout(stdout), self.assertRaises(SystemExit) as exited:
            interleave.parse(["--help"])
        self.assertEqual(exited.exception.code, 0)
        text = " ".join(stdout.getvalue().split())
        self.assertIn("Runs a baseline and a candidate benchmark binary interleaved", text)

    def test_one_round_is_enough_and_none_is_refused(self):
        # kills reports/torchplace/gate/interleave.py:parse:0f9ba7:rel_flip:0 (--rounds 1 refused)
        files = ["--baseline-bin", "a", "--candidate-bin", "b"]
        files += ["--out-baseline", "a.json", "--out-candidate", "b.json"]
        args = interleave.parse(files + ["--rounds", "1", "--batch", "1"])
        self.assertEqual((args.rounds, args.batch), (1, 1))
        for rounds, batch in (("0", "1"), ("1", "0")):
            with self.subTest(rounds=rounds, batch=batch), contextlib.redirect_stderr(
                io.StringIO()
            ):
                with self.assertRaises(SystemExit) as exited:
                    interleave.parse(files + ["--rounds", rounds, "--batch", batch])
                self.assertEqual(exited.exception.code, EXIT_USAGE)


if __name__ == "__main__":
    unittest.main()
