# ci/torchplace explain [--json] [FILE | -]: finds each LibTorch error in a message or a log (a CI
# log, a Python traceback, a C++ program's output, this suite's output) and prints its class, its
# message family and the LibTorch versions that word it so, what it names, and the scenario and
# fix of this suite that cover it (python3 -m torchplace.explain; reports/torchplace/explain).
# The classifier is the C++ one (torchplace_classify): installed beside this script's package, or
# in the source tree built on demand (no LibTorch needed to compile it).
# Exit codes: 0 every error classified, 1 an error no family knows, 3 none found or unreadable
# input, 64 bad arguments.
# shellcheck shell=bash

explain_classifier() {
  local installed="$TP_ROOT/bin/torchplace_classify"
  [[ -x "$installed" ]] && { echo "$installed"; return 0; }
  [[ -f "$TP_ROOT/CMakeLists.txt" ]] || return 1
  local build_dir
  build_dir=$(tp_build_dir)
  [[ -f "$build_dir/CMakeCache.txt" ]] || cmake -S "$TP_ROOT" --preset ci -B "$build_dir" >&2 || return 1
  cmake --build "$build_dir" --target torchplace_classify >&2 || return 1
  echo "$build_dir/harness/torchplace_classify"
}

cmd_explain() {
  local python classifier
  python=$(command -v "${TORCHPLACE_PYTHON:-/usr/bin/python3}" || command -v python3) ||
    tp_die "$TP_EXIT_ENV" "explain: no python3 found (set TORCHPLACE_PYTHON)"
  if [[ -z "${TORCHPLACE_CLASSIFY:-}" ]]; then
    classifier=$(explain_classifier) ||
      tp_die "$TP_EXIT_ENV" "explain: no torchplace_classify, and it could not be built here"
    export TORCHPLACE_CLASSIFY=$classifier
  fi
  exec "$python" -m torchplace.explain "$@"
}
