#!/usr/bin/env python3
"""`run`'s own steps (torchplace.command.run) in process, their processes mocked: the argv each
starts, what it records in run.json, its exit, and the line naming the problem (benchmarks that
wrote nothing or no JSON, a suite's crash, results that cannot be merged, a report that fails).
Every file written here is synthetic.

  test_command_run_steps.py [CLASS]      (CTest: command.run_steps)
"""
import contextlib
import io
import json
import sys
import unittest
from pathlib import Path
from typing import List, Optional
from unittest import mock

from command_scratch import Scratch
from torchplace import schema
from torchplace.command import common, run

BENCH_JSON = '{"context": {"note": "synthetic"}, "benchmarks": [{"name": "one"}]}'


class Base(Scratch):
    def setUp(self) -> None:
        super().setUp()
        self.out = Path(self.tmp)
        self.argvs: List[List[str]] = []
        self.stderr = io.StringIO()

    def recorded(self) -> dict:
        with open(self.out / "run.json", encoding="utf-8") as handle:
            return dict(json.load(handle)["steps"])

    def patched_process(self, *codes: int, writes: Optional[str] = None) -> mock._patch:
        """run.run_process mocked: each call exits the next of `codes`, writing `writes` to its
        --benchmark_out= file when given."""
        exits = list(codes)

        def process(argv: List[str], log: object = None, **options: object) -> int:
            self.argvs.append(list(argv))
            for arg in argv:
                if writes is not None and arg.startswith("--benchmark_out="):
                    Path(arg.split("=", 1)[1]).write_text(writes, encoding="utf-8")
            return exits.pop(0)

        return mock.patch.object(run, "run_process", side_effect=process)


class Benchmarks(Base):
    def bench(self, code: int, writes: Optional[str], filter_: Optional[str] = None) -> int:
        options = run.Options(self.out, repetitions="3", min_time="0.5s")
        with self.patched_process(code, writes=writes), contextlib.redirect_stderr(self.stderr):
            return run.bench_step(Path("/synthetic/bench"), options, "bench-rest", filter_, None)

    def test_the_argv_and_a_run_that_worked(self) -> None:
        self.assertEqual(self.bench(0, BENCH_JSON, "Transfer.*"), schema.EXIT_OK)
        partial = f"{self.out}/bench-rest.json.partial"
        self.assertEqual(
            self.argvs[0],
            [
                "/synthetic/bench",
                "--benchmark_repetitions=3",
                "--benchmark_min_time=0.5s",
            ]
            + [f"--benchmark_out={partial}", "--benchmark_out_format=json"]
            + ["--benchmark_filter=Transfer.*"],
        )
        self.assertEqual((self.out / "bench-rest.json").read_text(encoding="utf-8"), BENCH_JSON)
        self.assertFalse(Path(partial).exists())
        self.assertEqual(self.recorded()["bench_rest"], {"status": "ran", "exit": 0, "seconds": 0})
        self.assertIn(f"{self.out}/bench-rest.json (3 repetitions)", self.stderr.getvalue())
        self.assertNotIn("some benchmarks failed", self.stderr.getvalue())

    def test_no_filter_no_filter_argument(self) -> None:
        self.bench(0, BENCH_JSON)
        self.assertFalse(any("--benchmark_filter" in arg for arg in self.argvs[0]))

    def test_failed_benchmarks_are_kept_with_their_errors(self) -> None:
        self.assertEqual(self.bench(1, BENCH_JSON), schema.EXIT_FAIL)
        self.assertTrue((self.out / "bench-rest.json").is_file())
        self.assertEqual(self.recorded()["bench_rest"]["status"], "failed")
        self.assertIn(
            "some benchmarks failed (exit 1); bench-rest.json lists their errors",
            self.stderr.getvalue(),
        )

    def test_nothing_written(self) -> None:
        self.assertEqual(self.bench(2, None), schema.EXIT_FAIL)
        self.assertIn(
            "benchmarks failed (exit 2) before writing any output: no bench-rest.json",
            self.stderr.getvalue(),
        )
        self.assertEqual(self.recorded()["bench_rest"]["exit"], schema.EXIT_FAIL)
        self.assertNotIn("partial output", self.stderr.getvalue())  # there is none

    def test_a_crash_or_no_json_keeps_the_partial_output(self) -> None:
        for code, writes in ((139, BENCH_JSON), (0, '{"benchmarks": [')):
            with self.subTest(code=code):
                self.assertEqual(self.bench(code, writes), schema.EXIT_FAIL)
                partial = self.out / "bench-rest.json.partial"
                self.assertTrue(partial.is_file())
                self.assertFalse((self.out / "bench-rest.json").exists())
                self.assertIn(
                    f"benchmarks failed (exit {code}); partial output: {partial}",
                    self.stderr.getvalue(),
                )


class Scenarios(Base):
    def scenarios(self, *codes: int, cells: bool = True) -> int:
        def process(argv: List[str], log: object = None, **options: object) -> int:
            self.argvs.append(list(argv))
            if cells:  # one synthetic cell per process, named after its results file
                results = argv[1].split("=", 1)[1]
                Path(results).write_text(json.dumps({"cells": [{"id": results}]}), "utf-8")
            return exits.pop(0)

        exits = list(codes)
        with mock.patch.object(run, "run_process", side_effect=process):
            with contextlib.redirect_stderr(self.stderr):
                return run.scenarios_step(Path("/synthetic/suite"), self.out, None)

    def test_the_two_processes_and_their_merged_cells(self) -> None:
        self.assertEqual(self.scenarios(0, 0), schema.EXIT_OK)
        cpu, cuda = self.argvs
        self.assertEqual(cpu[0], "/synthetic/suite")
        self.assertEqual(
            cpu[1:3],
            [
                f"--torchplace_results={self.out}/results.json",
                f"--gtest_output=xml:{self.out}/scenarios-junit.xml",
            ],
        )
        self.assertEqual(cpu[3], "--gtest_filter=-*device=cuda*:*devices=cuda*")
        self.assertEqual(cuda[1], f"--torchplace_results={self.out}/results-cuda.json")
        self.assertEqual(cuda[3], "--gtest_filter=*device=cuda*:*devices=cuda*")
        with open(self.out / "results.json", encoding="utf-8") as handle:
            ids = [cell["id"] for cell in json.load(handle)["cells"]]
        self.assertEqual(ids, [f"{self.out}/results.json", f"{self.out}/results-cuda.json"])
        self.assertEqual(self.recorded()["scenarios"], {"status": "ok", "exit": 0, "seconds": 0})
        self.assertFalse((self.out / "results-cuda.json").exists())  # merged, then removed
        self.assertEqual(
            self.stderr.getvalue(), f"torchplace: scenario results: {self.out}/results.json\n"
        )

    def test_a_crash_outranks_a_failed_cell(self) -> None:
        for codes, code, status in (
            ((1, 0), 1, "cells_failed"),
            ((1, 134), 134, "crashed"),
            ((139, 1), 139, "crashed"),
            ((0, 1), 1, "cells_failed"),
        ):
            with self.subTest(codes=codes):
                self.assertEqual(self.scenarios(*codes), code)
                self.assertEqual(self.recorded()["scenarios"]["status"], status)
                self.assertEqual(self.recorded()["scenarios"]["exit"], code)
                self.argvs.clear()
        self.assertIn(
            "some scenario cells failed (exit 1); results.json lists them",
            self.stderr.getvalue(),
        )

    def test_no_results(self) -> None:
        self.assertEqual(self.scenarios(0, 0, cells=False), schema.EXIT_FAIL)
        self.assertEqual(self.recorded()["scenarios"]["status"], "no_results")
        self.assertIn(f"(exit 0) did not write {self.out}/results.json", self.stderr.getvalue())


class Merge(Base):
    def test_cells_that_cannot_be_merged_are_both_kept(self) -> None:
        whole, part = self.out / "results.json", self.out / "results-cuda.json"
        whole.write_text('{"cells": [1]}', encoding="utf-8")
        part.write_text('{"no cells": []}', encoding="utf-8")
        with contextlib.redirect_stderr(self.stderr):
            run.merge_results(whole, part)
        self.assertEqual(whole.read_text(encoding="utf-8"), '{"cells": [1]}')
        self.assertTrue(part.is_file())
        self.assertIn(f"cannot merge {part} into {whole} (both kept)", self.stderr.getvalue())

    def test_the_merged_file_has_both_parts_cells_one_space_indented(self) -> None:
        whole, part = self.out / "results.json", self.out / "results-cuda.json"
        whole.write_text('{"fingerprint": {}, "cells": [1]}', encoding="utf-8")  # synthetic
        part.write_text('{"cells": [2, 3]}', encoding="utf-8")
        run.merge_results(whole, part)
        merged = {"fingerprint": {}, "cells": [1, 2, 3]}
        self.assertEqual(whole.read_text(encoding="utf-8"), json.dumps(merged, indent=1) + "\n")
        self.assertFalse(part.exists())

    def test_a_missing_whole_stays_missing(self) -> None:
        whole, part = self.out / "results.json", self.out / "results-cuda.json"
        part.write_text('{"cells": [2]}', encoding="utf-8")
        with contextlib.redirect_stderr(self.stderr):
            run.merge_results(whole, part)
            run.merge_results(part, self.out / "missing.json")  # no CUDA part: nothing to do
        self.assertFalse(whole.exists())
        self.assertEqual(part.read_text(encoding="utf-8"), '{"cells": [2]}')
        self.assertEqual(self.stderr.getvalue(), "")  # nothing to merge is no error


class Report(Base):
    def test_the_report_runs_on_out_and_its_failure_is_logged(self) -> None:
        with mock.patch.object(common, "report_python", return_value="/synthetic/python"):
            with self.patched_process(0, 6), contextlib.redirect_stderr(self.stderr):
                self.assertEqual(run.report_step(self.out, None), schema.EXIT_OK)
                self.assertEqual(self.recorded()["report"], {"status": "ok"})
                self.assertEqual(self.stderr.getvalue(), "")
                self.assertEqual(run.report_step(self.out, None), 6)
        self.assertEqual(self.argvs[0], ["/synthetic/python", "-m", "torchplace.report", self.tmp])
        self.assertEqual(self.recorded()["report"], {"status": "failed"})
        self.assertIn(
            f"report failed (exit 6); the results in {self.out} are kept; rerun: "
            f"ci/torchplace report {self.out}",
            self.stderr.getvalue(),
        )

    def test_the_benchmark_filter_reaches_the_bench_step(self) -> None:
        options = run.Options(self.out, suite=Path("/synthetic/suite"), bench=Path("/s/bench"))
        with mock.patch.dict("os.environ", TORCHPLACE_BENCH_FILTER="Copy.*"), mock.patch.object(
            run, "bench_step", return_value=0
        ) as bench_step:
            plan = run.steps_of(options)
            self.assertEqual([step.name for step in plan], ["scenarios", "bench", "report"])
            self.assertEqual(plan[1].action(None), 0)
        # only a failed build ends the run; each of these records its own step in run.json
        self.assertEqual([step.ends_run_on_failure for step in plan], [False, False, False])
        self.assertEqual([step.records for step in plan], [True, True, True])
        bench_step.assert_called_once_with(Path("/s/bench"), options, "bench", "Copy.*", None)

    def test_a_build_failure_names_itself(self) -> None:
        failed = common.Exit(schema.EXIT_ENV, "configure failed (synthetic)")
        with mock.patch.object(common, "ensure_deps", side_effect=failed):
            with contextlib.redirect_stderr(self.stderr):
                self.assertEqual(run.build_step(self.out, None), schema.EXIT_ENV)
        self.assertEqual(self.stderr.getvalue(), "torchplace: configure failed (synthetic)\n")
        self.assertEqual(self.recorded()["build"], {"status": "failed", "exit": schema.EXIT_ENV})
        quiet = common.Exit(schema.EXIT_ENV)  # tp_ensure_deps printed why itself
        with mock.patch.object(common, "ensure_deps", side_effect=quiet):
            with contextlib.redirect_stderr(io.StringIO()) as stderr:
                self.assertEqual(run.build_step(self.out, None), schema.EXIT_ENV)
        self.assertEqual(stderr.getvalue(), "")


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0], *sys.argv[1:], "-v"])
