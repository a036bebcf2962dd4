#!/usr/bin/env bash
# ci/workflows/judge_run.sh STATUS [RUN_DIR]: CI's verdict on `ci/torchplace run --out RUN_DIR`
# that exited STATUS, after the behaviour gate judged the cells (RUN_DIR default: out/run). The
# run decided its outcome once and recorded it in RUN_DIR/run.json (step "outcome",
# torchplace.run_record.decide); this reads it (python3 -m torchplace.run_record --outcome):
#   0  the run passed, or exited 1 for failed cells only (the gate's to judge)
#   1  anything else failed (the record says what: a crashed binary, a benchmark or report step)
#   3  no exit code (the run never finished), or no readable outcome of a run that exited STATUS
#   other: the run's own 3 environment or input, 4 build, 5 budget, 64 bad arguments
set -u
here=$(cd "$(dirname "$0")" && pwd)
export PYTHONPATH="$here/../../reports${PYTHONPATH:+:$PYTHONPATH}"
exec "${TORCHPLACE_PYTHON:-python3}" -m torchplace.run_record --outcome "${2:-out/run}/run.json" "${1-}"
