#!/usr/bin/env bash
# Each check of test_run.sh must be able to fail: breaks the GPU run (`ci/torchplace run --gpu`:
# reports/torchplace/command/{gpu,steps,run}.py) in a scratch copy of ci/ and reports/, one way at
# a time, and expects test_run.sh to go red (common.py: the deadline). Prints one line a mutation; exits 1 when a mutation
# goes unseen or no longer applies.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
unseen=0
# <what> <file under reports/torchplace/command/> <text> <its replacement>: the text must occur once.
mutate() {
  local scratch
  scratch=$(mktemp -d)
  cp -r "$top/ci" "$top/reports" "$scratch/"
  if ! /usr/bin/python3 - "$scratch/reports/torchplace/command/$2" "$3" "$4" <<'PY'; then
import sys
path, old, new = sys.argv[1:]
text = open(path, encoding="utf-8").read()
if text.count(old) != 1:
    sys.exit(1)
open(path, "w", encoding="utf-8").write(text.replace(old, new))
PY
    echo "MUTATION NOT APPLIED: $1"; unseen=1
  elif bash "$scratch/ci/gpu/tests/test_run.sh" >/dev/null 2>&1; then
    echo "UNSEEN: $1"; unseen=1
  else
    echo "seen:   $1"
  fi
  rm -rf "$scratch"
}
mutate "any nvcc accepted (no release comparison)" gpu.py \
  'if cuda and release != major_minor(cuda):' 'if not cuda and release != major_minor(cuda):'
mutate "steps not under the budget's timeout" common.py \
  'timeout = None if deadline is None else' 'timeout = None if True else'
mutate "a step started with the budget spent" steps.py 'if left < MIN_STEP_S:' 'if left < 0:'
mutate "a cut step not named" steps.py '{step.name}: cut by the budget after' '{step.name}: ended after'
mutate "CTest's 8 passed on" gpu.py 'return schema.EXIT_OK if code == 0 else schema.EXIT_FAIL' \
  'return code'
mutate "the CUDA tests after the benchmarks" gpu.py \
  '"build", "scenarios", "cuda_tests", "probe", "bench",' '"build", "scenarios", "probe", "bench", "cuda_tests",'
mutate "a failed step ends the run" steps.py 'if step.ends_run_on_failure and code != 0:' \
  'if code != 0:'
mutate "a failed build does not end the run" steps.py \
  'if step.ends_run_on_failure and code != 0:' 'if False:'
mutate "the outcome not recorded in run.json" run.py '    decide(options.out, status)' '    pass'
mutate "a step's not-run reason not in run.json" steps.py \
  'common.record(self.record, name, status="not_run", note=why)' 'pass'
exit $unseen
