"""What the generated mutants cover (issue 26), and, per file, the tests that can kill them.

C++: (gtest filter of torchplace_harness_tests), the unit tests of that file's code; the binary is
rebuilt in the scratch copy (with it the runner probe, a dependency). The scenario cells are left
out of the kill sets: rebuilding torchplace_scenarios costs minutes a mutant on a 2-core runner,
and the unit tests alone must show each fix's claims (the catalogue's hand-written mutations keep
the scenario cells' kill sets).
Python: a CTest regex over the scratch build's tests (CTest runs them with PYTHONPATH set to the
scratch copy's reports/). The gate's calibration tool (gate/calibrate.py) is out of scope: it
measures a machine's false-positive rate by hand (reports/README.md) and judges nothing in CI.
"""
CPP = {
    "harness/fixes/batch_mover.h": "BatchMover.*:MapTensors.*",
    "harness/fixes/map_tensors.h": "BatchMover.*:MapTensors.*",
    "harness/fixes/follow_parameters.h": "ParameterDevice.*",
    "harness/fixes/grad_scaler.h": "GradScaler.*",
    "harness/fixes/prefetcher.h": "Prefetcher.*:MapTensors.*",
    "harness/internal/expected_error.cpp": "ExpectedError.*:RunnerEndToEnd.*",
    "harness/internal/cell_runner.cpp": "RunnerEndToEnd.*:ExpectedError.*",
    "harness/sim/fallback.cpp": "Sim*",  # Sim, SimDevices, SimExemptions, SimTransferLog
    "harness/error_class.cpp": (
        "MessageFamilies.*:MessageCorpus.*:StickyCudaErrors.*:CoreMessage.*:"
        "GuideTable/ClassifyTest.*:ErrorClassNames.*:SourceFamilies.*"
    ),
    "harness/numeric.h": "ExpectClose.*",
}
CPP_BINARY = "torchplace_harness_tests"
# The test sources of each C++ file in scope: every suite they define must be in its kill set
# (CTest mutation.kill_sets); a suite added and left out judged none of its file's mutants.
_T = "harness/tests/"
_SIM_PARTS = ("", "_devices", "_exemptions", "_cuda_rules", "_kernels")
_SIM_TESTS = tuple(_T + f"sim{part}_test.cpp" for part in _SIM_PARTS)
_RUNNER_TESTS = (_T + "expected_error_test.cpp", _T + "runner_end_to_end_test.cpp")
CPP_TEST_FILES = {
    "harness/fixes/batch_mover.h": (_T + "batch_mover_test.cpp",),
    "harness/fixes/map_tensors.h": (_T + "batch_mover_test.cpp",),
    "harness/fixes/follow_parameters.h": (_T + "follow_parameters_test.cpp",),
    "harness/fixes/grad_scaler.h": (_T + "grad_scaler_test.cpp",),
    "harness/fixes/prefetcher.h": (_T + "prefetcher_test.cpp",),
    "harness/internal/expected_error.cpp": _RUNNER_TESTS,
    "harness/internal/cell_runner.cpp": _RUNNER_TESTS,
    "harness/sim/fallback.cpp": _SIM_TESTS + (_T + "sim_transfer_log_test.cpp",),
    "harness/error_class.cpp": (_T + "error_class_test.cpp", _T + "message_corpus_test.cpp"),
    "harness/numeric.h": (_T + "numeric_test.cpp",),
}

# (CTest -R, CTest -E). Out: gate.speed_mutations and gate.behaviour_mutations, mutation checks
# of their own that plant fixed texts in a copy of the gate and fail when a text is not found, so
# a mutant on such a line would be "killed" by the text's absence, not by a test of behaviour;
# gate.extra_work_share times benchmarks, not the gate.
GATE_TESTS = (r"^gate\.", r"^gate\.(speed_mutations|behaviour_mutations|extra_work_share)$")
MATRIX_TESTS = (
    r"^matrix\.(merge_and_gate|command_line|gate_rules|fan_out|kills|kills_cli|unit|unit_inputs)$",
    "",
)
PYTHON = {
    "reports/torchplace/gate/behaviour.py": GATE_TESTS,
    "reports/torchplace/gate/cli.py": GATE_TESTS,
    "reports/torchplace/gate/interleave.py": GATE_TESTS,
    "reports/torchplace/gate/policy.py": GATE_TESTS,
    "reports/torchplace/gate/report.py": GATE_TESTS,
    "reports/torchplace/gate/skips.py": GATE_TESTS,
    "reports/torchplace/gate/speed.py": GATE_TESTS,
    "reports/torchplace/gate/speed_input.py": GATE_TESTS,
    "reports/torchplace/matrix/gate.py": MATRIX_TESTS,
    "reports/torchplace/matrix/unit.py": MATRIX_TESTS,
}
