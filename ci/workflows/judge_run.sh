#!/usr/bin/env bash
# ci/workflows/judge_run.sh STATUS [RUN_DIR]: judges the exit code of `ci/torchplace run --out
# RUN_DIR` in CI, after the behaviour gate has judged the cells (RUN_DIR default: out/run).
#   0     pass.
#   1     `run` says 1 for a failed cell, a failed benchmark or a failed report. Failed cells are
#         the gate's to judge; this passes only when nothing else failed: RUN_DIR/bench.json exists
#         and holds no benchmark error (planned "skip: ..." ones are fine), and the report
#         (RUN_DIR/index.html) was written. Otherwise it exits 1 and says what failed.
#   other that code: 3 environment or input, 4 build, 64 bad arguments; an empty STATUS (the run
#         never finished) is 3.
set -u
status=${1-}
run_dir=${2:-out/run}
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/common.sh
source "$here/../lib/common.sh" # PYTHONPATH for python3 -m torchplace.*
python=${TORCHPLACE_PYTHON:-python3}

say() { echo "judge_run: $*" >&2; }

case "$status" in
  0) say "ci/torchplace run exited 0"; exit 0 ;;
  1) ;;
  "") say "no exit code: ci/torchplace run did not finish"; exit 3 ;;
  *[!0-9]*) say "not an exit code: '$status'"; exit 3 ;;
  *) say "ci/torchplace run exited $status (3 environment or input, 4 build, 64 bad arguments)"
     exit "$status" ;;
esac

failed=0
if [[ ! -f "$run_dir/bench.json" ]]; then
  say "no $run_dir/bench.json: the benchmarks crashed or wrote no JSON (see bench.json.partial)"
  failed=1
else
  # Real benchmark errors, read as the report and the gate read them (planned skips left out).
  errors=$("$python" -m torchplace.bench_json errors "$run_dir/bench.json") ||
    { say "cannot read $run_dir/bench.json with $python"; exit 3; }
  if [[ -n "$errors" ]]; then
    say "benchmarks failed (or bench.json is unreadable):"
    printf '  %s\n' "${errors//$'\n'/$'\n'  }" >&2
    failed=1
  fi
fi
if [[ ! -f "$run_dir/index.html" ]]; then
  say "no $run_dir/index.html: the report failed (rerun: ci/torchplace report $run_dir)"
  failed=1
fi
if ((failed)); then
  exit 1
fi
say "ci/torchplace run exited 1 for failed cells only; the behaviour gate judged them"
exit 0
