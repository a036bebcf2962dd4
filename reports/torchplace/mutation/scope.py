"""What the generated mutants cover (issues 26, 45): every C++ and Python source file the tree
tracks (git ls-files), less the ones reports/torchplace/mutation/scope_excluded names, each with
a one-line reason; and, per file, the tests that can kill its mutants, by rule.

C++: a kill set is (test binary, gtest filter). By folder: harness/sim/ -> the Sim* suites of
torchplace_harness_tests, then, on a mutant they leave alive, the scenario cells on the sim
(SIM_CELLS), the sim as CUDA (AS_CUDA) and its "where" tests (WHERE): later_kill_sets;
scenarios/<name>.cpp -> that scenario's cells in torchplace_scenarios (every device this host
runs); scenarios/transfers/ and harness/bench/ -> torchplace_transfer_tests; the sim's user-frame
files -> torchplace_sim_where_tests (WHERE), then the Sim* suites; the rest of harness/ -> every
test of torchplace_harness_tests, then, on a mutant they leave alive, the scenario cells (CELLS).
FILTERS narrows a file whose unit tests were mapped and measured (rebuilding and running all of
them costs minutes).
Python: the CTest tests that reach the file: a test's script (a .py or .sh file of the tree in
its command, or the module of `-m`) names `torchplace.X` or `ci/torchplace`, and the modules
they name, transitively (reach.py). KILL_EXCLUDE keeps out the tests that cannot judge a mutant.
"""
import fnmatch
import subprocess
from functools import lru_cache
from pathlib import Path
from typing import Dict, List, Tuple

from torchplace.schema import ROOT

EXCLUDED = Path(__file__).with_name("scope_excluded")
SUFFIXES = (".cpp", ".h", ".inc", ".py")
HARNESS_TESTS = "torchplace_harness_tests"
# Each kill-set binary and its folder in the build.
BINARIES = {
    HARNESS_TESTS: "harness",
    "torchplace_scenarios": "scenarios",
    "torchplace_transfer_tests": "scenarios",
    "torchplace_sim_where_tests": "harness",
    "torchplace_sim_as_cuda_linked": "harness",
}
_T = "harness/tests/"
_ERROR_CLASS = (
    "MessageFamilies.*:MessageCorpus.*:StickyCudaErrors.*:CoreMessage.*:"
    "GuideTable/ClassifyTest.*:ErrorClassNames.*:Category*:SourceFamilies.*"
)
# Files whose kill set is narrower than their folder's rule: (filter, its test sources). Every
# gtest suite those sources define must be in the filter (CTest mutation.kill_sets).
FILTERS: Dict[str, Tuple[str, Tuple[str, ...]]] = {
    "harness/fixes/batch_mover.h": ("BatchMover.*:MapTensors.*", (_T + "batch_mover_test.cpp",)),
    "harness/fixes/map_tensors.h": ("BatchMover.*:MapTensors.*", (_T + "batch_mover_test.cpp",)),
    "harness/fixes/follow_parameters.h": (
        "ParameterDevice.*",
        (_T + "follow_parameters_test.cpp",),
    ),
    "harness/fixes/grad_scaler.h": ("GradScaler.*", (_T + "grad_scaler_test.cpp",)),
    "harness/fixes/prefetcher.h": ("Prefetcher.*:MapTensors.*", (_T + "prefetcher_test.cpp",)),
    "harness/internal/expected_error.cpp": (
        "ExpectedError.*:RunnerEndToEnd.*",
        (_T + "expected_error_test.cpp", _T + "runner_end_to_end_test.cpp"),
    ),
    "harness/error_class.cpp": (
        _ERROR_CLASS,
        (_T + "error_class_test.cpp", _T + "message_corpus_test.cpp", _T + "category_test.cpp"),
    ),
    "harness/numeric.h": ("ExpectClose.*", (_T + "numeric_test.cpp",)),
    "harness/ranks.cpp": ("Ranks.*", (_T + "ranks_test.cpp",)),
}
FILTERS["harness/ranks.h"] = FILTERS["harness/ranks.cpp"]
FILTERS["harness/message_families.cpp"] = FILTERS["harness/error_class.cpp"]
FILTERS["harness/other_families.cpp"] = FILTERS["harness/error_class.cpp"]
FILTERS["harness/source_families.cpp"] = FILTERS["harness/error_class.cpp"]
FILTERS["harness/error_class.h"] = FILTERS["harness/error_class.cpp"]
# The sim's "where it happened" (README): judged by its own binary, built with -g for the lines.
WHERE = (
    "torchplace_sim_where_tests",
    "SimWhere.*",
    (_T + "sim_where_test.cpp", _T + "sim_where_frames_test.cpp"),
)
WHERE_FILES = tuple(f"harness/sim/{name}.cpp" for name in ("user_frame", "symbolize", "call_sites"))
# The harness's sim tests (sim_models_test.cpp is a binary of its own, a conformance test).
SIM_TEST_FILES = tuple(
    _T + f"sim{part}_test.cpp"
    for part in (
        "",
        "_cuda_rules",
        "_devices",
        "_dtypes",
        "_exemptions",
        "_host_reads",
        "_host_read_signals",
        "_host_read_report",
        "_host_read_faults",
        "_host_read_lines",
        "_device_memory",
    )
) + (
    _T + "sim_kernels_test.cpp",
    _T + "sim_kernel_paths_test.cpp",
    _T + "sim_rnn_cells_test.cpp",
    _T + "sim_enable_test.cpp",
    _T + "sim_transfer_log_test.cpp",
    _T + "sim_storage_test.cpp",
    _T + "sim_symbol_function_test.cpp",
    _T + "sim_conv_backend_test.cpp",
    _T + "sim_as_cuda_child_test.cpp",
)

# Python tests that cannot judge a mutant, kept out of every kill set (CTest -E):
#   gate.speed_mutations, gate.behaviour_mutations, mutation.texts, gpu_runner.mutations: checks
#     that plant fixed texts and fail when a text is not found (a kill by text, not behaviour);
#   lint.* but lint.docs and lint.docs_*: they judge formatting, and a mutant's replacement
#     text is not formatted (the docs lint judges Markdown, and kills ci/lint/docs.py's mutants);
#   gate.extra_work_share: times benchmarks; conformance.* but .rules, sim.vs_cuda_verdicts,
#   (a CMake regex: no lookahead)
#   downstream.package: minutes each (op_db, torchvision, a downstream build) or CUDA only;
#   gate.own_cells: it judges the files the scenario cells of the last CTest run left (a CTest
#   fixture the engine does not run), not a run of its own; mutation.*: the engine's own tests
#   (the engine is out of scope), minutes under tracing.
KILL_EXCLUDE = (
    r"^(gate\.(speed_mutations|behaviour_mutations|extra_work_share)|mutation\.texts|"
    r"gpu_runner\.mutations|lint\.(clang_format|shellcheck|black|flake8|mypy)|"
    r"conformance\.(environment|ops|modules|models.*)|"
    r"sim\.vs_cuda_verdicts|"
    r"downstream\.package|gate\.own_cells|mutation\..*)$"
)


@lru_cache(maxsize=None)
def exclusions() -> Tuple[Tuple[str, str], ...]:
    """(glob, reason) from scope_excluded: `GLOB  reason` a line (# comments, blank lines)."""
    found = []
    for number, line in enumerate(EXCLUDED.read_text().splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        glob, _, reason = line.strip().partition(" ")
        if not reason.strip():
            raise ValueError(f"{EXCLUDED.name}:{number}: {glob} has no reason")
        found.append((glob, reason.strip()))
    return tuple(found)


def excluded_by(path: str) -> str:
    """The reason `path` is out of scope, or ""."""
    return next((why for glob, why in exclusions() if fnmatch.fnmatchcase(path, glob)), "")


@lru_cache(maxsize=None)
def tree_sources() -> Tuple[str, ...]:
    """Every tracked C++ and Python source of the tree."""
    listed = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, check=True, capture_output=True
    ).stdout.decode()
    return tuple(sorted(p for p in listed.split("\0") if p.endswith(SUFFIXES)))


def cpp_kill_set(path: str) -> Tuple[str, str]:
    """(binary, gtest filter) by folder, FILTERS first."""
    if path in FILTERS:
        return HARNESS_TESTS, FILTERS[path][0]
    if path in WHERE_FILES:
        return WHERE[0], WHERE[1]
    if path.startswith("harness/sim/"):
        return HARNESS_TESTS, "Sim*"
    if path.startswith(("scenarios/transfers/", "harness/bench/")):
        return "torchplace_transfer_tests", "*"
    if path.startswith("scenarios/"):
        return "torchplace_scenarios", f"{Path(path).stem}.*"
    return HARNESS_TESTS, "*"


def cpp_test_files(path: str) -> Tuple[str, ...]:
    """The test sources whose every suite the file's filter must select ("*" selects all)."""
    if path in FILTERS:
        return FILTERS[path][1]
    if path in WHERE_FILES:
        return WHERE[2]
    return SIM_TEST_FILES if cpp_kill_set(path)[1] == "Sim*" else ()


def _split() -> Tuple[Dict[str, Tuple[str, str]], List[str]]:
    cpp, py = {}, []
    for path in tree_sources():
        if excluded_by(path):
            continue
        if path.endswith(".py"):
            py.append(path)
        else:
            cpp[path] = cpp_kill_set(path)
    return cpp, py


CPP, _PY = _split()
PYTHON = {path: ("reach", path) for path in _PY}  # kill set resolved at run time (reach.py)
# The scenario cells on the sim: a later kill set of the sim's files that the Sim* suites judge,
# run only on a mutant those suites leave alive (the cells call operators the suites do not).
# Less ddp's: 6 of the 7 s of a run, in Gloo's copies to the host, which the Sim* suites judge.
SIM_CELLS = ("torchplace_scenarios", "*sim0*-ddp.*")
# The sim registered as CUDA (sim_as_cuda_test.cpp, linked): the paths of that mode, about 1 s.
AS_CUDA = ("torchplace_sim_as_cuda_linked", "SimAsCuda.*")


# The scenario cells on every device: a later kill set of the harness's other files (the
# scenario-author API, the runner, the fixes), which the scenarios use through paths the unit
# tests do not (2 s); less ddp's, as SIM_CELLS.
CELLS = ("torchplace_scenarios", "*-ddp.*")


def later_kill_sets(path: str) -> Tuple[Tuple[str, str], ...]:
    """(binary, gtest filter)s a C++ file's mutant runs, in order, while its first kill set and
    each one before passed. For the sim's files: the cells, the sim as CUDA, then the "where"
    tests (the place a refusal names is the sim's; about 12 s, so last); for the "where" files,
    the Sim* suites; for the harness's other files judged by its unit tests, the cells."""
    if path in WHERE_FILES:  # the Sim* suites, built without -g: a frame's symbol name (dladdr)
        return ((HARNESS_TESTS, "Sim*"),)
    binary, tests = CPP.get(path, ("", ""))
    if tests == "Sim*":
        return (SIM_CELLS, AS_CUDA, WHERE[:2])
    return (CELLS,) if binary == HARNESS_TESTS else ()
