"""Every CTest test is labelled from the closed set, each scenario cell by its device, and no
test name holds a printed parameter, so `ctest -L cuda` on a GPU host runs every CUDA test and a
test's name is the same in every run.

Usage: test_labels.py CTEST BUILD_DIR (exit 0: all held; 1: a problem, listed)."""
import json
import re
import subprocess
import sys

LABELS = {
    "cpu",
    "sim",
    "cuda",
    "multi_gpu",
    "unit",
    "bench",
    "report",
    "gate",
    "matrix",
    "gpu_runner",
    "mutation",
    "package",
    "command",
    "lint",
    "conformance",
}
# A name's last part (tp::naming's test form), or a harness test's suffix -> its label.
BY_NAME = [
    (r".*/device=cpu", "cpu"),
    (r".*/device=sim\d+|.*/devices=sim\d+(\+sim\d+)+", "sim"),
    (r".*/device=cuda\d+|.*_CUDA", "cuda"),
    (r".*/devices=cuda\d+(\+cuda\d+)+", "multi_gpu"),
]


def labels_of(test):
    return next((p["value"] for p in test.get("properties", []) if p["name"] == "LABELS"), [])


def problems_of(tests):
    problems = []
    for test in tests:
        name = test["name"]
        labels = labels_of(test)
        if not labels or not set(labels) <= LABELS:
            problems.append(f"{name}: labels {labels}, not from {sorted(LABELS)}")
        if "#" in name or "GetParam" in name:
            problems.append(f"{name}: a printed parameter in the name (changes between runs)")
        named_for = [label for pattern, label in BY_NAME if re.fullmatch(pattern, name)]
        if ("/device=" in name or "/devices=" in name) and not named_for:
            problems.append(
                f"{name}: a cell whose device part no label rule knows (labelled "
                f"{labels}); add its device kind to the rules"
            )
        for label in named_for:
            if label not in labels:
                problems.append(f"{name}: named for {label}, labelled {labels}")
        if named_for and len(set(labels) & {"cpu", "sim", "cuda", "multi_gpu"}) != 1:
            problems.append(f"{name}: labelled {labels}, not one device label")
    for label in ("cpu", "sim", "cuda", "multi_gpu", "unit"):
        if not any(label in labels_of(test) for test in tests):
            problems.append(
                f"no test labelled {label}: a suite's discovery or labelling is missing"
            )
    return problems


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 64
    try:
        listing = subprocess.run(
            [sys.argv[1], "--test-dir", sys.argv[2], "--show-only=json-v1"],
            check=True,
            capture_output=True,
            text=True,
        )
    except (OSError, subprocess.CalledProcessError) as error:
        print(f"FAIL: cannot list the tests of {sys.argv[2]} with {sys.argv[1]}: {error}")
        return 1
    tests = json.loads(listing.stdout)["tests"]
    problems = problems_of(tests)
    if listing.stderr.strip():  # e.g. a labelling script CTest could not parse cleanly
        problems.append("ctest warned while reading the tests:\n" + listing.stderr[:2000])
    for problem in problems:
        print("FAIL:", problem)
    print(f"{len(tests)} tests, {len(problems)} problem(s)")
    return 1 if problems or not tests else 0


if __name__ == "__main__":
    sys.exit(main())
