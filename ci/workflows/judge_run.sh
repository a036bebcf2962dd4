#!/usr/bin/env bash
# ci/workflows/judge_run.sh STATUS [RUN_DIR]: judges the exit code of `ci/torchplace run --out
# RUN_DIR` in CI, after the behaviour gate has judged the cells (RUN_DIR default: out/run).
#   0     pass.
#   1     `run` says 1 for a failed cell, a failed benchmark or a failed report. Failed cells are
#         the gate's to judge; this passes only when RUN_DIR/run.json records nothing else: the
#         scenarios step ok or cells_failed (not crashed, not no_results), the bench step "ran"
#         (exit 0: no benchmark error) with bench.json there, and the report step ok with
#         index.html there. Otherwise it exits 1 and says what failed; an unreadable or missing
#         run.json is 3.
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

# What the run did is what RUN_DIR/run.json records (torchplace.run/1, written step by step by
# `ci/torchplace run`): read there, not re-derived from the files. The files it names must exist.
record=$run_dir/run.json
if ! statuses=$("$python" -m torchplace.run_record --status "$record" scenarios bench report); then
  say "cannot read $record with $python: what the run did is unknown"
  exit 3
fi
read -r scenarios bench report <<<"$statuses"
failed=0
case "$scenarios" in
  ok | cells_failed) ;;
  *) say "the scenarios step is '$scenarios' in $record (the binary crashed or wrote no results)"
     failed=1 ;;
esac
if [[ "$bench" != ran ]]; then
  say "the bench step is '$bench' in $record: the benchmarks failed, crashed or did not run"
  failed=1
elif [[ ! -f "$run_dir/bench.json" ]]; then
  say "$record says the benchmarks ran, but there is no $run_dir/bench.json"
  failed=1
fi
if [[ "$report" != ok ]]; then
  say "the report step is '$report' in $record (rerun: ci/torchplace report $run_dir)"
  failed=1
elif [[ ! -f "$run_dir/index.html" ]]; then
  say "no $run_dir/index.html although $record says the report step is ok (no Python with" \
    "matplotlib here?); rerun: ci/torchplace report $run_dir"
  failed=1
fi
if ((failed)); then
  exit 1
fi
say "ci/torchplace run exited 1 for failed cells only; the behaviour gate judged them"
exit 0
