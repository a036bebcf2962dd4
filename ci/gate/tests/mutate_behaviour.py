#!/usr/bin/env python3
"""Mutation check of the behaviour gate's and the matrix gate's rules (issues 25 and 26): plants
each bug below in a scratch copy of reports/ and the tests, runs the tests that guard the rule
with the copy's reports/ as PYTHONPATH, and requires them to fail. Among them, one planted bug per
invariant of the property tests (test_properties.py) and the holes a reviewer's mutants slipped
through (harness_fail deleted, the not_on_sim contradiction dropped, a new race_not_shown cell
let through, each version compared with the oldest).

  mutate_behaviour.py [NAME ...]   exit 0 when every mutation turns its checks red, 1 otherwise
A mutation whose text is no longer in the source is an error too (the rule moved: update it).
Checks: "rules:Class.test" (test_rules.py), "props:Class.test" (test_properties.py),
"matrix:Class.test" (ci/matrix/tests/test_matrix_rules.py), "report:Class.test"
(reports/tests/test_report_limits.py; needs matplotlib), "case:NAME" (cases.json).
"""
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
BEHAVIOUR, SKIPS, CLI = "gate/behaviour.py", "gate/skips.py", "gate/cli.py"
SCHEMA, MATRIX = "schema.py", "matrix/gate.py"
PROP_RUN = "props:Invariants.test_exit_0_exactly_when_nothing_went_wrong_and_something_was_compared"
PROP_ANY = "props:Invariants.test_any_field_replaced_never_a_traceback_and_a_fresh_verdict"

# name -> ([(file under reports/torchplace, original text, planted text)], checks that must fail)
MUTATIONS = {
    # issue 26's holes
    "harness_fail_deleted": (
        [
            (
                BEHAVIOUR,
                '    if cell["status"] == "fail":\n        return '
                '"harness_fail", cell["reason"]\n',
                "",
            )
        ],
        ["rules:Holes.test_a_fix_failing_its_numeric_check_is_harness_fail", PROP_RUN],
    ),
    "not_on_sim_contradiction_dropped": (
        [(SKIPS, '"not_on_sim": not device.startswith("sim") and', '"not_on_sim": False and')],
        ["rules:Holes.test_not_on_sim_off_sim_even_where_an_entry_lists_it"],
    ),
    "new_race_not_shown_let_through": (
        [
            (
                BEHAVIOUR,
                "        return _category_problem(_expected(cell), cell)\n",
                "        return None\n",
            )
        ],
        ["rules:Holes.test_a_new_cell_whose_race_was_not_shown", PROP_RUN],
    ),
    "matrix_compares_with_the_oldest": (
        [(MATRIX, "zip(ordered, ordered[1:])", "zip([ordered[0]] * len(ordered), ordered[1:])")],
        ["matrix:Neighbours.test_each_version_against_its_neighbour"],
    ),
    # invariant 1: a skip its device and entry do not justify
    "need_code_without_entry_accepted": (
        [(SKIPS, "if code in NEED_CODES and code not in allowed_codes(committed):", "if False:")],
        ["rules:SkipCodeByDevice.test_needs_cuda_on_a_cpu_cell_its_entry_does_not_allow", PROP_RUN],
    ),
    "device_absence_on_a_cpu_cell": (
        [
            (
                SKIPS,
                '"no_cuda_build": (needed == 0 and f"{device} is no CUDA device")\n        or ',
                '"no_cuda_build": ',
            )
        ],
        ["rules:SkipCodeByDevice.test_no_cuda_build_on_a_cpu_cell"],
    ),
    "needs_no_cuda_on_a_cuda_cell": (
        [
            (
                SKIPS,
                '(needed > 0 and f"{device} is a CUDA cell: it always has CUDA")\n        or ',
                "",
            )
        ],
        ["rules:SkipCodeByDevice.test_needs_no_cuda_on_a_cuda_cell_on_a_gpu_host"],
    ),
    "vanished_not_reported": (
        [
            (
                BEHAVIOUR,
                "    for cell_id in sorted(set(committed) - set(cells)):",
                "    for cell_id in []:",
            )
        ],
        ["case:behaviour_vanished", PROP_RUN],
    ),
    # invariant 2: nothing compared
    "nothing_compared_passes": (
        [(BEHAVIOUR, 'if not section["compared"] and not section["regressions"]:', "if False:")],
        ["rules:NothingCompared.test_every_cell_skipped_for_an_accepted_code", PROP_RUN],
    ),
    "refresh_from_no_cells": (
        [(BEHAVIOUR, '    if not doc["cells"]:\n        raise', "    if False:\n        raise")],
        ["rules:NothingCompared.test_refresh_from_a_run_without_cells_is_refused"],
    ),
    # invariant 3: a traceback (the old gate caught only InputError; here status goes unchecked
    # too, and a list there is unhashable)
    "traceback_escapes": (
        [
            (
                CLI,
                "except Exception as error:  # noqa: BLE001  a tool error: exit 3 with a verdict",
                "except KeyError as error:  # noqa: BLE001  a tool error: exit 3 with a verdict",
            ),
            (
                SCHEMA,
                'for key in ("scenario", "device", "status", "reason"):',
                'for key in ("scenario", "device", "reason"):',
            ),
        ],
        [PROP_ANY],
    ),
    # invariant 4: a stale or missing verdict
    "verdict_not_fresh": (
        [
            (CLI, "            schema.remove_outputs(args.out, OUTPUTS)\n", "            pass\n"),
            (
                CLI,
                "    if out_dir:\n        schema.write_set(\n            out_dir,\n"
                '            {"summary.md"',
                '    if out_dir and not verdict["problems"]:\n        schema.write_set(\n'
                '            out_dir,\n            {"summary.md"',
            ),
        ],
        [PROP_ANY, "rules:FieldTypes.test_bad_fields_in_results"],
    ),
    # closed sets and the schema boundary
    "observed_outcome_open": (
        [
            (
                SCHEMA,
                'seen = one_of(observed, "outcome", OBSERVED_OUTCOMES, f"{where}.observed")',
                'seen = typed(observed, "outcome", (str,), f"{where}.observed")',
            )
        ],
        ["rules:ClosedSets.test_observed_outcome_timeout_on_a_failed_cell"],
    ),
    "category_status_disagree": (
        [
            (
                SCHEMA,
                "    if category not in allowed:\n        raise InputError(\n"
                '            f"{where}: category {category!r} contradicts status {cell',
                "    if False:\n        raise InputError(\n"
                '            f"{where}: category {category!r} contradicts status {cell',
            )
        ],
        ["rules:ClosedSets.test_category_failed_with_status_pass"],
    ),
    "device_count_unchecked": (
        [
            (
                SCHEMA,
                'count = typed(cuda, "device_count", (int,), f"{where}.cuda")',
                'count = int(cuda["device_count"] or 0)',
            )
        ],
        ["rules:FieldTypes.test_bad_fields_in_results"],
    ),
    # the report's outputs as a set: an earlier page removed before new figures land
    "report_old_page_kept": (
        [("report/cli.py", 'last="index.html", stale=PAGES)', 'last="index.html")')],
        ["report:AsASet.test_earlier_page_removed_before_new_figures"],
    ),
    # the matrix gate's input rules
    "matrix_repeated_version": (
        [(MATRIX, "    if repeated:\n", "    if False:\n")],
        ["matrix:VersionRules.test_the_same_version_twice"],
    ),
    "matrix_any_order": (
        [(MATRIX, "    if keys != sorted(keys):\n", "    if False:\n")],
        ["matrix:VersionRules.test_newest_first"],
    ),
    "matrix_label_unchecked": (
        [
            (
                MATRIX,
                "        if found is not None and (\n",
                "        if False and (\n",
            )
        ],
        ["matrix:VersionRules.test_a_label_its_fingerprint_contradicts"],
    ),
    "matrix_nothing_compared": (
        [(MATRIX, "    if not compared and not failed:\n", "    if False:\n")],
        ["matrix:VersionRules.test_no_cells"],
    ),
}

CHECKS = {
    "rules": ("ci/gate/tests", "test_rules.py"),
    "props": ("ci/gate/tests", "test_properties.py"),
    "matrix": ("ci/matrix/tests", "test_matrix_rules.py"),
    "report": ("reports/tests", "test_report_limits.py"),
}


def scratch_copy():
    scratch = tempfile.mkdtemp(prefix="behaviour-mutant-")
    for part in ("ci/gate", "ci/matrix/tests", "reports"):
        shutil.copytree(
            os.path.join(ROOT, part),
            os.path.join(scratch, part),
            ignore=shutil.ignore_patterns("__pycache__"),
        )
    return scratch


def check_fails(scratch, check):
    """True when the check is red in the mutated copy."""
    kind, _, name = check.partition(":")
    if kind == "case":
        folder, command = "ci/gate/tests", ["run_case.py", name]
    else:
        folder, script = CHECKS[kind]
        command = [script, name]
    env = dict(
        os.environ, PYTHONPATH=os.path.join(scratch, "reports"), TORCHPLACE_PROPERTY_EXAMPLES="200"
    )
    done = subprocess.run(
        [sys.executable, *command],
        cwd=os.path.join(scratch, folder),
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    return done.returncode != 0


def plant(scratch, edits):
    """Applies the edits; the texts not found, as problems."""
    missing = []
    for path, original, planted in edits:
        source = os.path.join(scratch, "reports", "torchplace", path)
        with open(source, encoding="utf-8") as handle:
            text = handle.read()
        if original not in text:
            missing.append(f"{path}: text {original!r} not found (update MUTATIONS)")
            continue
        with open(source, "w", encoding="utf-8") as handle:
            handle.write(text.replace(original, planted, 1))
    return missing


def main(names):
    missed = []
    for name in names or MUTATIONS:
        edits, checks = MUTATIONS[name]
        scratch = scratch_copy()
        try:
            problems = plant(scratch, edits)
            missed += problems
            for check in [] if problems else checks:
                red = check_fails(scratch, check)
                print(f"{'red  ' if red else 'GREEN'} {check}  <- {name}", flush=True)
                if not red:
                    missed.append(f"{check} stays green with the bug {name} planted")
        finally:
            shutil.rmtree(scratch)
    for line in missed:
        print(f"FAIL mutation not caught: {line}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
