#!/usr/bin/env bash
# The Python examples as CI runs them: pytest on the sim, its results gated like the C++ cells.
# Usage: check.sh PYTHON OUT_DIR   (PYTHON: one with torch, pytest and torchplace importable;
# the sim's library installed with the package, or named by TORCHPLACE_SIM_LIBRARY).
# Each broken variant must fail with its class and each fix pass (pytest's exit is 1 then: the
# broken tests fail, as they should); the gate compares the cells with expectations.json here.
# Exit: the gate's (0 held, 2 a regression, 3 cannot judge); 3 too when pytest could not run.
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
given_path="${PYTHONPATH-}"
source "$here/../../ci/lib/common.sh"  # the exit codes; its PYTHONPATH (this checkout) is not
export PYTHONPATH="$given_path"         # wanted: PYTHON's installed torchplace runs, or the caller's
[[ $# -eq 2 ]] || { echo "usage: check.sh PYTHON OUT_DIR" >&2; exit "$TP_EXIT_USAGE"; }
python="$1" out="$2"
mkdir -p "$out" || exit "$TP_EXIT_ENV"
out="$(cd "$out" && pwd)" || exit "$TP_EXIT_ENV" # a relative OUT_DIR is the caller's, not here's
cd "$here" || exit "$TP_EXIT_ENV"
"$python" -m pytest -p torchplace.pytest_plugin -p no:cacheprovider --torchplace-sim \
  --torchplace-results "$out/results.json" --junitxml "$out/junit.xml" -q -rs .
status=$?
if [[ $status -gt 1 ]]; then  # 0: every test passed (no broken variant failed?); 1: some failed
  echo "check.sh: pytest could not run the examples (exit $status)" >&2
  exit "$TP_EXIT_ENV"
fi
"$python" -m torchplace.gate --results "$out/results.json" --expectations "$here/expectations.json" \
  --out "$out"
