#!/usr/bin/env python3
"""torchplace.run_record's readers, in process: `--status` (each step's status, "absent", exit 3
on a missing record), `--outcome` (CI's verdict from the recorded outcome: the run's own code,
0 for failed cells only, 3 when the outcome is missing or of another exit) and the problem a
bench step that ran without writing bench.json is. Run records here are synthetic (made by the
test); outcomes are recorded by run_record.decide, as `torchplace run` records them."""
import contextlib
import io
import json
import os
import tempfile
import unittest

from torchplace import run_record, schema

GOOD = {"build": "ok", "scenarios": "cells_failed", "bench": "ran", "report": "ok"}


class RunFolder(unittest.TestCase):
    def setUp(self):
        scratch = tempfile.TemporaryDirectory()
        self.addCleanup(scratch.cleanup)
        self.folder = scratch.name
        self.path = os.path.join(self.folder, "run.json")

    def write(self, steps, files=("bench.json", "index.html")):
        """A synthetic run folder: run.json with `steps` ({step: status or fields}), `files`."""
        fields = {k: v if isinstance(v, dict) else {"status": v} for k, v in steps.items()}
        with open(self.path, "w", encoding="utf-8") as handle:
            json.dump({"schema": schema.RUN_SCHEMA, "steps": fields}, handle)
        for name in files:
            with open(os.path.join(self.folder, name), "w", encoding="utf-8") as handle:
                handle.write("synthetic\n")

    def main(self, *args):
        """(exit, stdout, stderr) of `python3 -m torchplace.run_record ARGS`."""
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = run_record.main(["run_record.py", *args])
        return code, out.getvalue(), err.getvalue()


class Status(RunFolder):
    def test_each_step_in_order_and_absent(self):
        self.write({"build": "compiled", "bench": "failed"})
        code, out, err = self.main("--status", self.path, "bench", "probe", "build")
        self.assertEqual((code, out), (schema.EXIT_OK, "failed absent compiled\n"), err)

    def test_a_missing_record_exits_3_naming_it(self):
        code, out, err = self.main("--status", self.path, "build")
        self.assertEqual((code, out), (schema.EXIT_INPUT, ""))
        self.assertIn(f"torchplace: run_record: run record: {self.path} does not exist", err)

    def test_a_record_of_another_schema_exits_3(self):
        with open(self.path, "w", encoding="utf-8") as handle:
            json.dump({"schema": "torchplace.results/1", "steps": {}}, handle)
        code, _, err = self.main("--status", self.path, "build")
        self.assertEqual(code, schema.EXIT_INPUT)
        self.assertIn("expected 'torchplace.run/1'", err)


class BenchJson(RunFolder):
    def test_a_bench_step_that_ran_without_bench_json_is_a_problem(self):
        self.write(GOOD, files=("index.html",))
        found = run_record.problems_of(schema.load_run(self.path), self.folder)
        self.assertEqual(found, ["the bench step ran, but there is no bench.json"])

    def test_with_bench_json_there_is_none(self):
        self.write(GOOD)
        self.assertEqual(run_record.problems_of(schema.load_run(self.path), self.folder), [])


class Outcome(RunFolder):
    def decided(self, exit_code, steps=GOOD, files=("bench.json", "index.html")):
        self.write(steps, files)
        run_record.decide(self.path, self.folder, exit_code)

    def test_passed(self):
        self.decided(schema.EXIT_OK)
        self.assertEqual(self.main("--outcome", self.path, "0")[0], schema.EXIT_OK)
        self.assertEqual(run_record.verdict(self.path, "0"), (schema.EXIT_OK, "the run passed"))

    def test_failed_cells_only_pass_ci(self):
        self.decided(schema.EXIT_FAIL)
        code, said = run_record.verdict(self.path, "1")
        self.assertEqual(code, schema.EXIT_OK)
        self.assertIn("failed cells only", said)

    def test_a_failed_step_exits_1_naming_it(self):
        self.decided(schema.EXIT_FAIL, dict(GOOD, report="failed"))
        code, _, err = self.main("--outcome", self.path, "1")
        self.assertEqual(code, schema.EXIT_FAIL)
        self.assertIn("torchplace: run outcome: the report step is 'failed'", err)

    def test_the_runs_own_code_for_3_4_5_64(self):
        for exit_code in (schema.EXIT_ENV, schema.EXIT_BUILD, schema.EXIT_BUDGET, 64):
            with self.subTest(exit=exit_code):
                self.decided(exit_code)
                code, said = run_record.verdict(self.path, str(exit_code))
                self.assertEqual(code, exit_code, said)

    def test_a_failed_outcome_of_exit_0_is_not_a_pass(self):
        # synthetic: a record whose outcome says failed although the run exited 0
        self.write(dict(GOOD, outcome={"status": "failed", "exit": 0, "problems": "hand-made"}))
        self.assertEqual(run_record.verdict(self.path, "0"), (schema.EXIT_FAIL, "hand-made"))

    def test_an_outcome_of_another_exit_is_3(self):
        self.decided(schema.EXIT_OK)
        code, said = run_record.verdict(self.path, "1")
        self.assertEqual(code, schema.EXIT_ENV)
        self.assertIn("records no outcome of a run that exited 1", said)

    def test_no_outcome_is_3(self):
        self.write(GOOD)
        self.assertEqual(run_record.verdict(self.path, "0")[0], schema.EXIT_ENV)

    def test_no_exit_code_is_3(self):
        self.decided(schema.EXIT_OK)
        for status in ("", "1x", "-1"):
            with self.subTest(status=status):
                code, said = run_record.verdict(self.path, status)
                self.assertEqual(code, schema.EXIT_ENV)
                self.assertIn("the run did not finish", said)

    def test_a_missing_record_is_3(self):
        code, _, err = self.main("--outcome", self.path, "0")
        self.assertEqual(code, schema.EXIT_ENV)
        self.assertIn(f"{self.path}", err)
        self.assertIn("what the run did is unknown", err)


class Problems(RunFolder):
    def decided(self, exit_code, steps, files=("bench.json", "index.html")):
        """decide's fields, checked to be what it recorded as the outcome step."""
        self.write(steps, files)
        fields = run_record.decide(self.path, self.folder, exit_code)
        self.assertEqual(schema.load_run(self.path)["steps"]["outcome"], fields)
        return fields

    def test_a_crashed_scenarios_step_and_a_bench_that_did_not_run(self):
        fields = self.decided(schema.EXIT_FAIL, dict(GOOD, scenarios="crashed", bench="failed"))
        self.assertEqual(fields["status"], "failed")
        self.assertEqual(
            fields["problems"].split("; "),
            [
                "the scenarios step is 'crashed' (the binary crashed or wrote no results)",
                "the bench step is 'failed': the benchmarks failed, crashed or did not run",
            ],
        )

    def test_a_report_step_that_wrote_no_page(self):
        fields = self.decided(schema.EXIT_FAIL, GOOD, files=("bench.json",))
        self.assertEqual(fields["status"], "failed")
        self.assertIn("no index.html although the report step is ok", fields["problems"])
        self.assertIn(f"rerun: ci/torchplace report {self.folder}", fields["problems"])

    def test_other_steps_count_unless_ok_ran_absent_or_compiled(self):
        steps = dict(GOOD, prepare="ok", probe="failed", build="compiled", gpu="ran", smoke="cut")
        fields = self.decided(schema.EXIT_FAIL, steps)
        self.assertEqual(fields["problems"], "the probe step is 'failed'; the smoke step is 'cut'")

    def test_the_budget_names_the_steps_cut_or_not_run(self):
        steps = dict(GOOD, scenarios="cut", bench="not_run", probe="failed")
        fields = self.decided(schema.EXIT_BUDGET, steps)
        problem = "the budget ran out: scenarios, bench cut or not run"
        self.assertEqual(fields, {"status": "cut", "exit": 5, "problems": problem})
        fields = self.decided(schema.EXIT_BUDGET, GOOD)
        self.assertEqual(fields["problems"], "the budget ran out: no step cut or not run")

    def test_another_exit_is_a_failure_saying_what_the_codes_mean(self):
        for exit_code in (schema.EXIT_ENV, schema.EXIT_BUILD, 64):
            with self.subTest(exit=exit_code):
                fields = self.decided(exit_code, GOOD)
                meaning = "3 environment or input, 4 build, 64 bad arguments"
                problem = f"exit {exit_code} ({meaning})"
                self.assertEqual(
                    fields, {"status": "failed", "exit": exit_code, "problems": problem}
                )


if __name__ == "__main__":
    unittest.main()
