#!/usr/bin/env python3
"""Tests written to kill generated mutants of the gate that survived every other test
(torchplace.mutation.generated; ci/mutation/README.md "Generated mutants"). Each names the
mutant it was seen to kill. Input files are made here and say that they are synthetic."""
import contextlib
import io
import json
import os
import signal
import subprocess
import sys
import tempfile
import unittest
from unittest import mock

from gate_inputs import CPU_HOST, FIX_CPU, FIX_CUDA, expectations, passing, results
from torchplace.gate import behaviour, cli, interleave, policy, report, speed, speed_input
from torchplace.schema import EXIT_USAGE, InputError


def write_json(folder, name, doc):
    path = os.path.join(folder, name)
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(doc, handle)
    return path


class ExpectationsFile(unittest.TestCase):
    CELL = {"outcome": "success", "error_class": None, "category": "passed"}

    def test_a_wrong_schema_is_refused(self):
        # kills reports/torchplace/gate/behaviour.py:load_expectations:784781:delete_branch:0
        # (and its delete_stmt:0)
        with tempfile.TemporaryDirectory() as folder:
            path = write_json(
                folder,
                "expectations.json",
                {
                    "schema": "torchplace.expectations/0",
                    "synthetic": True,
                    "cells": {"demo/device=cpu": self.CELL},
                },
            )
            with self.assertRaises(InputError) as raised:
                behaviour.load_expectations(path)
            self.assertIn("schema", str(raised.exception))

    def test_a_file_without_schema_or_cells_is_bad_input_naming_them(self):
        # kills reports/torchplace/gate/behaviour.py:load_expectations:3cd906:delete_stmt:0 (a
        # KeyError, a tool error, instead)
        with tempfile.TemporaryDirectory() as folder:
            for doc, missing in (({"cells": {}}, "schema"), ({"schema": "x"}, "cells")):
                path = write_json(folder, "expectations.json", dict(doc, synthetic=True))
                with self.subTest(missing=missing), self.assertRaises(InputError) as raised:
                    behaviour.load_expectations(path)
                self.assertIn(f"missing field(s) {missing}", str(raised.exception))

    def test_a_category_that_contradicts_the_outcome_is_refused(self):
        # kills reports/torchplace/gate/behaviour.py:_check_entry:cdfa50:delete_branch:0
        cell = dict(self.CELL, category="expected_error")  # success cannot be an expected error
        with tempfile.TemporaryDirectory() as folder:
            doc = {
                "schema": behaviour.EXPECTATIONS_SCHEMA,
                "synthetic": True,
                "cells": {"demo/device=cpu": cell},
            }
            with self.assertRaises(InputError) as raised:
                behaviour.load_expectations(write_json(folder, "expectations.json", doc))
        self.assertIn(
            "category 'expected_error' contradicts outcome 'success'", str(raised.exception)
        )

    def test_the_right_schema_loads(self):
        with tempfile.TemporaryDirectory() as folder:
            path = write_json(
                folder,
                "expectations.json",
                {
                    "schema": behaviour.EXPECTATIONS_SCHEMA,
                    "synthetic": True,
                    "cells": {"demo/device=cpu": self.CELL},
                },
            )
            self.assertEqual(behaviour.load_expectations(path), {"demo/device=cpu": self.CELL})


class ToolErrorOutsideMain(unittest.TestCase):
    def test_it_exits_3_and_says_what_failed(self):
        # kills reports/torchplace/gate/cli.py:run:3d703b:delete_stmt:0 (the message dropped)
        stderr = io.StringIO()
        failing = mock.patch.object(cli, "main", side_effect=RuntimeError("synthetic failure"))
        with failing, contextlib.redirect_stderr(stderr), self.assertRaises(SystemExit) as exited:
            cli.run([])
        self.assertEqual(exited.exception.code, report.EXIT_INPUT)
        self.assertIn("tool error RuntimeError: synthetic failure (exit 3", stderr.getvalue())
        self.assertNotIn("Traceback", stderr.getvalue())


class PValueColumn(unittest.TestCase):
    def test_a_missing_p_reads_n_a_and_a_value_two_digits(self):
        # kills reports/torchplace/gate/report.py:_p:3f95dd:delete_stmt:0 (the summary said "None")
        self.assertEqual(report._p(None), "n/a")
        self.assertEqual(report._p(0.01234), "0.012")

    def test_a_duration_reads_in_the_unit_that_keeps_it_short(self):
        # kills reports/torchplace/gate/report.py:_duration:f4b9af:delete_stmt:0 (every time
        # in ns: "3.41e+06 ns")
        self.assertEqual(report._duration(2.5), "2.5 s")
        self.assertEqual(report._duration(3.41e-3), "3.41 ms")
        self.assertEqual(report._duration(812e-9), "812 ns")


class BehaviourSummary(unittest.TestCase):
    # A synthetic behaviour section: one regression, nothing new or skipped.
    SECTION = {
        "results": "out/run/results.json",
        "expectations": "ci/gate/expectations.json",
        "compared": 1,
        "skipped": [],
        "new": [],
        "categories": {"failed": 1},
        "regressions": [
            {
                "id": "demo/case=x/device=cpu",
                "kind": "started_failing",
                "expected": {"outcome": "success", "error_class": None},
                "observed": {"outcome": "success", "error_class": None, "category": "failed"},
                "detail": "synthetic | detail",
            }
        ],
    }

    def test_each_regression_has_its_row(self):
        # kills reports/torchplace/gate/report.py:_behaviour_lines:0cd336:delete_stmt:0 (no rows)
        rows = [
            line
            for line in report._behaviour_lines(self.SECTION)
            if line.startswith("| `demo/case=x/device=cpu` |")
        ]
        self.assertEqual(len(rows), 1)
        self.assertIn("started_failing", rows[0])
        self.assertIn("synthetic \\| detail", rows[0])
        # kills reports/torchplace/gate/report.py:_behaviour_lines:c44147:logic_swap:0 (the
        # observed column showed the record's dict)
        self.assertIn("| success  (failed) |", rows[0])

    def test_skipped_cells_are_listed_only_when_there_are_some(self):
        # kills reports/torchplace/gate/report.py:_behaviour_lines:4699f3:negate_if:0 (the list
        # shown when empty, hidden when not)
        skipped = [{"id": "demo/case=y/device=cuda:0", "reason": "synthetic: no GPU"}]
        lines = report._behaviour_lines(dict(self.SECTION, skipped=skipped))
        self.assertIn("<details><summary>Skipped cells: 1</summary>", lines)
        self.assertIn("- `demo/case=y/device=cuda:0`: synthetic: no GPU", lines)
        plain = report._behaviour_lines(self.SECTION)
        self.assertFalse([line for line in plain if line.startswith("<details>")], plain)

    def test_synthetic_results_say_so_under_the_heading(self):
        # kills reports/torchplace/gate/report.py:_behaviour_lines:c98006:delete_branch:0 (the
        # summary of hand-made results did not say they were hand-made)
        section = dict(self.SECTION, synthetic="made by test_mutant_kills.py")
        lines = report._behaviour_lines(section)
        self.assertEqual(lines[0], "### Behaviour")
        notes = [line for line in lines if line.startswith("**SYNTHETIC input**")]
        self.assertEqual(len(notes), 1, lines)
        self.assertIn("made by test_mutant_kills.py", notes[0])
        self.assertFalse(
            [line for line in report._behaviour_lines(self.SECTION) if "SYNTHETIC" in line]
        )


class EarlierOutputsFirst(unittest.TestCase):
    def test_the_earlier_verdict_is_gone_while_this_run_judges(self):
        # kills reports/torchplace/gate/cli.py:judge:38bd4e:delete_stmt:0 (an earlier run's
        # verdict stood beside this run while it judged, and stayed if it was killed then)
        seen = []
        with tempfile.TemporaryDirectory() as out:
            write_json(out, "gate.json", {"verdict": "PASS", "about": "an earlier run (synthetic)"})

            def sections(args, verdict):
                seen.append(os.path.exists(os.path.join(out, "gate.json")))
                verdict["problems"].append("synthetic: nothing judged")

            with mock.patch.object(cli, "run_sections", side_effect=sections):
                code = cli.main(["--results", "synthetic-run", "--out", out])
        self.assertEqual(seen, [False])
        self.assertEqual(code, report.EXIT_INPUT)

    def test_earlier_outputs_that_cannot_go_are_exit_3_and_said(self):
        # kills reports/torchplace/gate/cli.py:main:3d703b:delete_stmt:0 (exit 3 in silence)
        stderr = io.StringIO()
        busy = OSError("synthetic: busy")
        with mock.patch.object(cli.schema, "remove_outputs", side_effect=busy):
            with contextlib.redirect_stderr(stderr):
                code = cli.main(["--results", "synthetic-run", "--out", "synthetic-out"])
        self.assertEqual(code, report.EXIT_INPUT)
        self.assertIn(
            "cannot remove the earlier outputs in synthetic-out: synthetic: busy", stderr.getvalue()
        )


class OutputsThatCannotBeWritten(unittest.TestCase):
    def judged(self, reached_code):
        verdict = {
            "problems": [],
            "behaviour": None,
            "speed": None,
            "exit_code": reached_code,
            "verdict": report.VERDICTS[reached_code],
        }
        failing = OSError("synthetic: no space left")
        with tempfile.TemporaryDirectory() as out, contextlib.redirect_stderr(io.StringIO()):
            with mock.patch.object(cli, "judge", return_value=verdict), mock.patch.object(
                cli, "write_outputs", side_effect=failing
            ):
                code = cli.main(["--results", "synthetic-run", "--out", out])
            with open(os.path.join(out, "gate.json"), encoding="utf-8") as handle:
                return code, json.load(handle)

    def test_a_regression_stays_one_and_the_error_is_written(self):
        # kills reports/torchplace/gate/cli.py:write_tool_error:51daaa:negate_if:0 (no gate.json
        # when the outputs failed once)
        code, written = self.judged(report.EXIT_BEHAVIOUR)
        self.assertEqual((code, written["exit_code"]), (report.EXIT_BEHAVIOUR,) * 2)
        self.assertIn("tool error OSError: synthetic: no space left", written["problems"])

    def test_a_pass_that_cannot_be_written_is_exit_3(self):
        code, written = self.judged(report.EXIT_PASS)
        self.assertEqual((code, written["exit_code"]), (report.EXIT_INPUT,) * 2)

    def test_a_second_failure_is_said_and_the_exit_code_kept(self):
        # kills reports/torchplace/gate/cli.py:write_tool_error:8f3f01:delete_stmt:0 (silence)
        stderr = io.StringIO()
        with mock.patch.object(cli.schema, "write_set", side_effect=OSError("synthetic: again")):
            with contextlib.redirect_stderr(stderr):
                code = cli.write_tool_error(OSError("synthetic: first"), "synthetic-out")
        self.assertEqual(code, report.EXIT_INPUT)
        self.assertIn("cannot write to synthetic-out: synthetic: again", stderr.getvalue())
        self.assertIn("tool error OSError: synthetic: first (exit 3)", stderr.getvalue())


class DeclaredRepetitions(unittest.TestCase):
    @staticmethod
    def entry(index, declared):  # synthetic: hand-made, not a benchmark's output
        return {
            "name": "BM_synthetic",
            "run_name": "BM_synthetic",
            "run_type": "iteration",
            "repetitions": declared,
            "repetition_index": index,
            "iterations": 10,
            "real_time": 100.0,
            "cpu_time": 100.0,
            "time_unit": "ns",
        }

    def test_an_entry_that_is_no_object_is_bad_input(self):
        # kills reports/torchplace/gate/speed_input.py:load_run:8f768a:delete_stmt:0 (a TypeError
        # then, a tool error)
        with tempfile.TemporaryDirectory() as folder:
            doc = {"context": {}, "benchmarks": [self.entry(0, 1), 5], "synthetic": True}
            with self.assertRaises(InputError) as raised:
                speed_input.load_run(write_json(folder, "bench.json", doc))
        self.assertIn("benchmarks[1] must be an object", str(raised.exception))

    def test_one_more_repetition_than_declared_is_refused(self):
        # kills reports/torchplace/gate/speed_input.py:_add:c73d6f:const_plus:1 (max(declared, 2):
        # a run declaring 1 repetition passed with 2) and :const_minus:1 (a declared 0, read as
        # one repetition, refused its one)
        with tempfile.TemporaryDirectory() as folder:
            for declared, count, refused in (
                (1, 2, True),
                (1, 1, False),
                (2, 2, False),
                (0, 1, False),
            ):
                doc = {
                    "context": {"synthetic": "hand-made test data, not a measurement"},
                    "benchmarks": [self.entry(i, declared) for i in range(count)],
                }
                path = write_json(folder, "bench.json", doc)
                with self.subTest(declared=declared, count=count):
                    if not refused:
                        speed_input.repetitions(path)
                        continue
                    with self.assertRaises(InputError) as raised:
                        speed_input.repetitions(path)
                    self.assertIn("more repetitions than the 1 it declares", str(raised.exception))

    def test_patterns_are_a_list_and_benchmarks_an_object(self):
        # kills reports/torchplace/gate/policy.py:Policy.__init__:fefa00:logic_swap:0 (either
        # wrong alone passed)
        with open(policy.DEFAULT_POLICY, encoding="utf-8") as handle:
            doc = json.load(handle)
        for field, wrong in (("patterns", {}), ("benchmarks", [])):
            with self.subTest(field=field), self.assertRaises(InputError) as raised:
                policy.Policy(dict(doc, **{field: wrong}), "synthetic.json")
            self.assertIn("patterns must be a list and benchmarks an object", str(raised.exception))


class RuleTypes(unittest.TestCase):
    def test_a_flag_must_be_a_boolean_and_a_match_text(self):
        # kills reports/torchplace/gate/policy.py:_check_rule:04271e:delete_branch:0 and
        # _check_rule:a2c40c:delete_branch:0 ("yes" read as a flag, 5 as a glob)
        for rule, words in (
            ({"informational": "yes"}, "informational must be true or false"),
            ({"match": 5, "max_ratio": 1.5}, "match must be a glob pattern (text)"),
        ):
            with self.subTest(rule=rule), self.assertRaises(InputError) as raised:
                policy._check_rule(rule, "synthetic rule")
            self.assertIn(words, str(raised.exception))
        policy._check_rule({"informational": True, "match": "BM_*"}, "synthetic rule")


# A stand-in for torchplace_bench (synthetic: it measures nothing): writes one iteration entry
# per --benchmark_repetitions to --benchmark_out, and fails when that file is already there.
FAKE_BENCH = """#!/usr/bin/env python3
import json, os, sys
args = dict(a[2:].split("=", 1) for a in sys.argv[1:] if "=" in a)
if os.path.exists(args["benchmark_out"]):
    sys.exit("a stale output file: " + args["benchmark_out"])
entry = {"name": "BM_fake", "run_name": "BM_fake", "run_type": "iteration", "iterations": 1,
         "real_time": 1.0, "cpu_time": 1.0, "time_unit": "ns"}
n = int(args["benchmark_repetitions"])
with open(args["benchmark_out"], "w") as out:
    json.dump({"context": {"torchplace_synthetic": "a stand-in binary"},
               "benchmarks": [dict(entry, repetition_index=i) for i in range(n)]}, out)
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


class NothingCompared(unittest.TestCase):
    def test_a_speed_section_without_benchmarks_is_a_problem(self):
        # kills reports/torchplace/gate/speed.py:input_problems:cb3d63:delete_stmt:0 (every
        # benchmark skipped on both sides: no problem, so a pass)
        section = {"missing": [], "errors": [], "benchmarks": []}
        self.assertEqual(
            speed.input_problems(section),
            ["no benchmark was compared (all skipped, missing or failed)"],
        )


class PowerFigures(unittest.TestCase):
    def test_min_p_is_the_worst_gated_benchmarks(self):
        # kills reports/torchplace/gate/speed.py:power:b6649c:delete_stmt:0 (min_p stayed 0.0:
        # the power line claimed any p could be reached)
        def row(name, reps, informational=False):  # synthetic rows, no measurement
            return {
                "name": name,
                "informational": informational,
                "reps_baseline": reps,
                "reps_candidate": reps,
                "rule": {"min_reps": 2},
            }

        found = speed.power([row("a", 8), row("b", 3), row("c", 2, True)], 0.05)
        self.assertEqual(found["gated"], 2)
        self.assertEqual(found["min_p"], speed.min_p(3, 3))
        self.assertGreater(found["min_p"], speed.min_p(8, 8))
        self.assertEqual(found["without"], ["b"])


class RunNames(unittest.TestCase):
    def test_a_run_name_if_present_is_non_empty_text(self):
        # kills reports/torchplace/gate/speed_input.py:_check_entry:380eb1:eq_flip:0 (a bad
        # run_name unchecked; an entry without one a KeyError)
        entry = {"name": "BM_synthetic", "run_type": "iteration"}
        speed_input._check_entry(entry, "synthetic")
        for bad in (5, ""):
            with self.subTest(run_name=bad), self.assertRaises(InputError) as raised:
                speed_input._check_entry(dict(entry, run_name=bad), "synthetic")
            self.assertIn("run_name must be non-empty text", str(raised.exception))


class Help(unittest.TestCase):
    def test_help_says_what_the_gate_is_and_exits_0(self):
        # kills reports/torchplace/gate/cli.py:parse:df03f4:const_minus:0 (the docstring's last
        # paragraph as the description)
        stdout = io.StringIO()
        with contextlib.redirect_stdout(stdout), self.assertRaises(SystemExit) as exited:
            cli.parse(["--help"])
        self.assertEqual(exited.exception.code, 0)
        text = " ".join(stdout.getvalue().split())
        self.assertIn("torchplace gate: the CI regression gate (behaviour and speed), one", text)


class PowerEdges(unittest.TestCase):
    def test_a_smallest_p_equal_to_alpha_has_no_power(self):
        # kills reports/torchplace/gate/speed.py:power:4cfb87:rel_flip:1 (SLOWER needs p < alpha,
        # so 1 gated x min_p(3, 3) = 0.1 cannot be SLOWER at alpha 0.1)
        row = {
            "name": "BM_synthetic",
            "informational": False,
            "reps_baseline": 3,
            "reps_candidate": 3,
            "rule": {"min_reps": 2},
        }
        self.assertEqual(speed.min_p(3, 3), 0.1)
        self.assertEqual(speed.power([row], 0.1)["without"], ["BM_synthetic"])
        self.assertEqual(speed.power([row], 0.11)["without"], [])

    def test_two_repetitions_a_side_suffice_where_their_p_can_be_reached(self):
        # kills reports/torchplace/gate/speed.py:reps_needed:c631ee:const_plus:0 (a default of 3)
        self.assertAlmostEqual(speed.min_p(2, 2), 1 / 3)
        self.assertEqual(speed.reps_needed(1, 0.5), 2)

    def test_none_when_not_even_the_limit_suffices(self):
        # kills reports/torchplace/gate/speed.py:reps_needed:58a678:const_plus:1 (limit + 1 tried)
        self.assertEqual(speed.reps_needed(1, 0.05, limit=4), 4)  # min_p(4, 4) = 0.029
        self.assertIsNone(speed.reps_needed(1, 0.05, limit=3))  # min_p(3, 3) = 0.1

    def test_the_message_names_three_benchmarks_and_counts_the_rest(self):
        # kills reports/torchplace/gate/speed.py:no_power_message:eacc21:const_plus:1
        check = {
            "reps_needed": 6,
            "without": [f"BM_{n}" for n in "abcde"],
            "gated": 5,
            "min_p": 0.1,
            "alpha": 0.05,
        }
        text = speed.no_power_message(check)
        self.assertIn("(BM_a, BM_b, BM_c and 2 more)", text)
        # and :const_plus:1 (`> 4`: the fourth of four went uncounted)
        four = dict(check, without=check["without"][:4])
        self.assertIn("(BM_a, BM_b, BM_c and 1 more)", speed.no_power_message(four))


class DefaultRule(unittest.TestCase):
    def test_a_default_rule_missing_a_field_is_refused(self):
        # kills reports/torchplace/gate/policy.py:Policy.__init__:481c4b:delete_stmt:0
        with open(policy.DEFAULT_POLICY, encoding="utf-8") as handle:
            doc = json.load(handle)
        doc["default"] = {k: v for k, v in doc["default"].items() if k != "min_reps"}
        with self.assertRaises(InputError) as raised:
            policy.Policy(doc, "synthetic.json")
        self.assertIn("default: missing field(s) min_reps", str(raised.exception))


class UsageMessage(unittest.TestCase):
    def test_a_bad_argument_is_exit_3_and_named(self):
        # kills reports/torchplace/gate/cli.py:main:f93ce4:delete_stmt:0 (exit 3 in silence)
        stderr = io.StringIO()
        with contextlib.redirect_stderr(stderr):
            code = cli.main(["--no-such-option"])
        self.assertEqual(code, report.EXIT_INPUT)
        self.assertIn("--no-such-option", stderr.getvalue())
        self.assertIn("(see ci/torchplace gate --help)", stderr.getvalue())


class RegressionRecords(unittest.TestCase):
    def test_a_new_cell_regression_shows_what_the_cell_expects(self):
        # kills reports/torchplace/gate/behaviour.py:_regression:9d0b84:logic_swap:0 (expected
        # None for a cell not committed)
        cell = dict(passing(FIX_CPU), status="fail", category="failed")
        found = behaviour._regression(cell, None, ("new_failing", "synthetic detail"))
        self.assertEqual(found["expected"], behaviour._expected(cell))
        self.assertIsNotNone(found["expected"])
        committed = {"outcome": "success", "error_class": None, "category": "passed"}
        self.assertIs(behaviour._regression(cell, committed, ("x", "y"))["expected"], committed)

    def test_a_refresh_over_a_file_without_cells_keeps_no_codes(self):
        # kills reports/torchplace/gate/behaviour.py:_committed_codes:e14843:delete_stmt:0 (an
        # AttributeError on a file whose cells are not an object)
        with tempfile.TemporaryDirectory() as folder:
            for cells in ([], "x", None):
                path = write_json(folder, "old.json", {"synthetic": True, "cells": cells})
                self.assertEqual(behaviour._committed_codes(path), {}, cells)

    def test_refresh_returns_the_number_of_cells_it_wrote(self):
        # kills reports/torchplace/gate/behaviour.py:refresh:9738ae:return_value:0 ("wrote None
        # cell expectations")
        with tempfile.TemporaryDirectory() as folder:
            os.makedirs(os.path.join(folder, "run"))
            write_json(folder, "run/results.json", results([passing(FIX_CPU), passing(FIX_CUDA)]))
            target = os.path.join(folder, "expectations.json")
            count = behaviour.refresh(os.path.join(folder, "run"), target)
            with open(target, encoding="utf-8") as handle:
                self.assertEqual(count, len(json.load(handle)["cells"]))
        self.assertEqual(count, 2)


class BaselineAndCandidate(unittest.TestCase):
    def test_one_without_the_other_is_a_usage_error(self):
        # kills reports/torchplace/gate/cli.py:parse:6d91c5:delete_stmt:0
        for args in (["--baseline", "base.json"], ["--candidate", "cand.json"]):
            with self.subTest(args=args), self.assertRaises(cli.UsageError) as raised:
                cli.parse(args)
            self.assertIn("--baseline and --candidate go together", str(raised.exception))


class CommittedSkip(unittest.TestCase):
    def test_a_cell_committed_as_skipped_that_ran_is_an_outcome_change(self):
        # kills reports/torchplace/gate/behaviour.py:_observation_problem:a804a5:delete_stmt:0
        committed = {"outcome": "skip", "error_class": None, "category": "skipped"}
        kind, text = behaviour._observation_problem(committed, passing(FIX_CPU))
        self.assertEqual(kind, "outcome_changed")
        self.assertIn("committed as skipped, the cell ran (success)", text)


class SyntheticRuns(unittest.TestCase):
    def test_the_section_notes_a_synthetic_run_and_only_such_a_run(self):
        # kills reports/torchplace/gate/behaviour.py:compare:7ccccc:negate_if:0
        cells = [passing(FIX_CPU)]
        measured = {k: v for k, v in CPU_HOST.items() if k != "synthetic"}
        with tempfile.TemporaryDirectory() as folder:
            committed = write_json(folder, "expectations.json", expectations(cells))
            notes = []
            for fingerprint in (CPU_HOST, measured):
                write_json(folder, "results.json", results(cells, fingerprint))
                section = behaviour.compare(os.path.join(folder, "results.json"), committed)
                notes.append(section.get("synthetic"))
        self.assertIn("hand-made test data", notes[0])
        self.assertIsNone(notes[1])


class LateSigterm(unittest.TestCase):
    def test_a_sigterm_while_the_verdict_is_written_changes_no_exit_code(self):
        # kills reports/torchplace/gate/cli.py:main:5ad787:delete_stmt:0 (without --out only
        # that line ignores the SIGTERM held back while the verdict prints: it then raised)
        self.addCleanup(signal.signal, signal.SIGTERM, signal.getsignal(signal.SIGTERM))
        verdict = {"exit_code": report.EXIT_BEHAVIOUR, "verdict": "synthetic"}

        def write_outputs(*_):  # a SIGTERM arrives while the verdict is written (held back)
            os.kill(os.getpid(), signal.SIGTERM)

        with mock.patch.object(cli, "judge", return_value=verdict), mock.patch.object(
            cli, "write_outputs", side_effect=write_outputs
        ):
            code = cli.main(["--results", "synthetic-run", "--expectations", "synthetic.json"])
        self.assertEqual(code, report.EXIT_BEHAVIOUR)


class PolicySchema(unittest.TestCase):
    def test_a_policy_of_another_schema_is_refused(self):
        # kills reports/torchplace/gate/policy.py:Policy.__init__:5667d3:delete_branch:0 (and
        # its delete_stmt:0): any schema was read as this one
        with open(policy.DEFAULT_POLICY, encoding="utf-8") as handle:
            doc = json.load(handle)
        policy.Policy(dict(doc), "synthetic.json")  # the committed policy, as it is, loads
        doc["schema"] = "torchplace.gate-policy/0"
        with self.assertRaises(InputError) as raised:
            policy.Policy(doc, "synthetic.json")
        self.assertIn("schema is 'torchplace.gate-policy/0'", str(raised.exception))

    def test_alpha_lies_strictly_between_0_and_1(self):
        # kills reports/torchplace/gate/policy.py:Policy.__init__:4ac92d:rel_flip:1 (and :0)
        with open(policy.DEFAULT_POLICY, encoding="utf-8") as handle:
            doc = json.load(handle)
        for alpha in (0, 1):
            with self.subTest(alpha=alpha), self.assertRaises(InputError) as raised:
                policy.Policy(dict(doc, alpha=alpha), "synthetic.json")
            self.assertIn("alpha must lie between 0 and 1", str(raised.exception))
        policy.Policy(dict(doc, alpha=0.5), "synthetic.json")


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


class SpeedSummary(unittest.TestCase):
    @staticmethod
    def row(name, informational):  # a synthetic benchmark row, not a measurement
        return {
            "name": name,
            "outcome": "SAME",
            "informational": informational,
            "ratio": 1.0,
            "median_baseline_s": 1e-3,
            "median_candidate_s": 1e-3,
            "p_adjusted": 0.5,
            "reps_baseline": 5,
            "reps_candidate": 5,
            "note": "",
        }

    def test_the_holm_correction_counts_the_gated_benchmarks_only(self):
        # kills reports/torchplace/gate/report.py:_speed_lines:4f6673:const_minus:0 (it said
        # "over 0 gated benchmark(s)")
        section = {
            "candidate": "synthetic-candidate.json",
            "baseline": "synthetic-baseline.json",
            "alpha": 0.05,
            "policy": "synthetic-policy.json",
            "benchmarks": [self.row("a", False), self.row("b", False), self.row("c", True)],
        }
        section.update({key: [] for key in ("skipped", "new", "notes")})
        text = "\n".join(report._speed_lines(section))
        self.assertIn("Holm-corrected over 2 gated benchmark(s)", text)
        # kills reports/torchplace/gate/report.py:_speed_lines:66350d:negate_if:0 (the AMBIGUOUS
        # note on every summary but those with an AMBIGUOUS benchmark)
        note = "AMBIGUOUS benchmarks do not fail the gate"
        self.assertNotIn(note, text)
        section["benchmarks"][1]["outcome"] = "AMBIGUOUS"
        self.assertIn(note, "\n".join(report._speed_lines(section)))


class PowerLine(unittest.TestCase):
    def test_the_power_line_when_checked_and_none_when_not(self):
        # kills reports/torchplace/gate/report.py:_power_lines:66861d:negate_if:0
        check = {"gated": 2, "min_p": 0.1, "alpha": 0.05, "enough": False, "without": ["BM_a"]}
        self.assertEqual(
            report._power_lines(check)[0],
            "Power: 2 gated x worst smallest attainable p 0.1 = 0.2 against alpha 0.05: "
            "1 gated benchmark(s) can NEVER be SLOWER.",
        )
        self.assertEqual(report._power_lines(None), [])


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


class MeasureErrors(unittest.TestCase):
    def test_a_test_that_cannot_give_p_is_bad_input_naming_the_benchmark(self):
        # kills reports/torchplace/gate/speed.py:measure:f5c8ce:delete_stmt:0 (p None went on)
        failing = InputError("synthetic: the test gave p = nan")
        rule = {"informational": False, "min_reps": 2}
        with mock.patch.object(speed, "mann_whitney_p", side_effect=failing):
            with self.assertRaises(InputError) as raised:
                speed.measure("BM_synthetic", [1.0, 2.0], [3.0, 4.0], rule)
        self.assertEqual(
            str(raised.exception), "benchmark BM_synthetic: synthetic: the test gave p = nan"
        )


class AsciiStreams(unittest.TestCase):
    def test_a_character_an_ascii_stream_lacks_is_escaped_not_dropped(self):
        # kills reports/torchplace/gate/cli.py:_safe_streams:ee5bcc:delete_stmt:0 (the summary
        # vanished from an ASCII stdout: say() swallowed the UnicodeEncodeError)
        raw = io.BytesIO()
        stream = io.TextIOWrapper(raw, encoding="ascii")
        with mock.patch.object(sys, "stdout", stream), mock.patch.object(sys, "stderr", stream):
            cli._safe_streams()
            cli.say("perte non diminu\u00e9e (synthetic message)")
        stream.flush()
        self.assertIn(b"perte non diminu\\xe9e (synthetic message)", raw.getvalue())


if __name__ == "__main__":
    unittest.main()
