#!/usr/bin/env python3
"""Mutation check of the speed gate's tests: breaks each guard of the speed path in a scratch copy
of reports/ (torchplace.gate) and ci/gate (fixtures, policy), runs the cases (or unit test) that
guard it with the copy's reports/ as PYTHONPATH, and requires them to fail.

  mutate_speed.py            exit 0 when every mutation turns its checks red, 1 otherwise
A mutation whose text is no longer in the source is an error too (the guard moved: update it).
"""
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))

# (file under reports/torchplace/gate, original text, mutated text, cases or "units:Class.test"
# that must fail)
MUTATIONS = [
    (
        "speed_input.py",
        "if not math.isfinite(value) or value <= 0:",
        "if False:",
        ["speed_nan_plus_slower", "speed_time_inf", "speed_time_zero", "speed_time_negative"],
    ),
    ("speed_input.py", "or not isinstance(value, (int, float)):", ":", ["speed_time_text"]),
    (
        "speed_input.py",
        "return float(value) * UNIT_SECONDS[unit]",
        "return float(value) * 1e-9",
        ["speed_units_normalised_same", "speed_units_normalised_slower"],
    ),
    (
        "speed_input.py",
        'if not isinstance(doc["context"], dict):',
        "if False:",
        ["speed_context_string"],
    ),
    (
        "speed_input.py",
        "if not isinstance(entries, list) or not entries:",
        "if not isinstance(entries, list):",
        ["speed_empty_benchmarks_list"],
    ),
    (
        "speed_input.py",
        'if not any("run_type" in entry for entry in entries):',
        "if False:",
        ["speed_old_format"],
    ),
    (
        "speed_input.py",
        'if identity != group["identity"]:',
        "if False:",
        ["speed_same_run_name_two_families"],
    ),
    (
        "speed_input.py",
        'if index is not None and index in group["indices"]:',
        "if False:",
        ["speed_repetitions_twice_indexed"],
    ),
    (
        "speed_input.py",
        'and len(group["times"]) + 1 > max(declared, 1)\n',
        "and False\n",
        ["speed_repetitions_twice_unindexed"],
    ),
    (
        "speed.py",
        "method=test_method(cand, base)",
        'method="auto"',
        ["speed_exact_test_power", "units:PowerTest.test_min_p_exact_above_eight"],
    ),
    (
        "speed.py",
        'return "exact" if len(set(values)) == len(values) else "asymptotic"',
        'return "exact" if len(set(values)) == len(values) else "refuse"',
        ["speed_ties_judged"],
    ),
    (
        "speed.py",
        'if reps < row["rule"]["min_reps"] or gated * smallest >= alpha:',
        "if gated * smallest >= alpha:",
        ["speed_slower_at_7_reps_no_power"],
    ),
    (
        "speed.py",
        "worst_p = max(worst_p, smallest)",
        "worst_p = max(worst_p, smallest)\n" "        smallest = min(smallest, min_p(16, 16))",
        ["speed_hundred_at_8_no_power"],
    ),
    (
        "speed.py",
        'family = [row for row in rows if not row["informational"]]',
        "family = list(rows)",
        ["speed_power_with_fewer_gated"],
    ),
    (
        "speed.py",
        'elif base["skip"] is None and cand["skip"]:',
        "elif False:",
        ["speed_measured_then_skipped"],
    ),
    (
        "speed.py",
        'elif base["skip"] is None and cand["skip"]:',
        'elif (base["skip"] is None) != (cand["skip"] is None):',
        ["speed_skipped_then_measured"],
    ),
    (
        "speed.py",
        'MUST_MATCH = ("num_cpus", "gpu", "library_build_type")',
        "MUST_MATCH = ()",
        ["speed_other_machine", "speed_debug_build"],
    ),
    (
        "speed.py",
        'MUST_MATCH = ("num_cpus",',
        'MUST_MATCH = ("host_name", "num_cpus",',
        ["speed_other_host_noted"],
    ),
    (
        "speed.py",
        'elif all(row["informational"] for row in section["benchmarks"]):',
        "elif False:",
        ["speed_all_informational"],
    ),
    (
        "speed.py",
        "if not (isinstance(p, (int, float)) and 0.0 <= p <= 1.0):",
        "if False:",
        ["units:PowerTest.test_holm_refuses_nan"],
    ),
    (
        "policy.py",
        "if not math.isfinite(value):",
        "if False:",
        ["speed_policy_nan_ratio", "speed_policy_inf_floor", "speed_policy_nan_alpha"],
    ),
    (
        "policy.py",
        "if reps != int(reps) or reps < 2:",
        "if reps < 2:",
        ["speed_policy_fractional_reps"],
    ),
    (
        "cli.py",
        "except Exception as error:  # noqa: BLE001  a tool error",
        "except KeyError as error:  # noqa: BLE001  a tool error",
        ["units:ToolErrorTest.test_an_unexpected_exception_is_exit_3_with_a_verdict"],
    ),
]


def scratch_copy():
    scratch = tempfile.mkdtemp(prefix="gate-mutant-")
    for part in ("ci/gate", "reports"):
        shutil.copytree(
            os.path.join(ROOT, part),
            os.path.join(scratch, part),
            ignore=shutil.ignore_patterns("__pycache__"),
        )
    return scratch


def check_fails(scratch, check):
    """True when the check is red in the mutated copy."""
    tests = os.path.join(scratch, "ci", "gate", "tests")
    if check.startswith("units:"):
        command = [sys.executable, os.path.join(tests, "test_units.py"), check[len("units:") :]]
    else:
        command = [sys.executable, os.path.join(tests, "run_case.py"), check]
    env = dict(os.environ, PYTHONPATH=os.path.join(scratch, "reports"))
    return subprocess.run(command, capture_output=True, text=True, env=env).returncode != 0


def main():
    missed = []
    for path, original, mutated, checks in MUTATIONS:
        scratch = scratch_copy()
        try:
            source = os.path.join(scratch, "reports", "torchplace", "gate", path)
            with open(source, encoding="utf-8") as handle:
                text = handle.read()
            if original not in text:
                missed.append(f"{path}: guard text {original!r} not found (update MUTATIONS)")
                continue
            with open(source, "w", encoding="utf-8") as handle:
                handle.write(text.replace(original, mutated, 1))
            for check in checks:
                red = check_fails(scratch, check)
                print(f"{'red  ' if red else 'GREEN'} {check}  <- {path}: {original[:60]!r}")
                if not red:
                    missed.append(f"{check} stays green with {path}: {original!r} -> {mutated!r}")
        finally:
            shutil.rmtree(scratch)
    for line in missed:
        print(f"FAIL mutation not caught: {line}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
