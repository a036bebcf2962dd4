#!/usr/bin/env bash
# Each check of test_run.sh must be able to fail: breaks ci/gpu/run.sh or step.sh in a scratch
# copy of ci/, one way at a time, and expects test_run.sh to go red. Prints one line a mutation;
# exits 1 when a mutation goes unseen.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
ci=$(cd "$here/../.." && pwd)
unseen=0
# <what> <file under ci/> <sed expression>
mutate() {
  local scratch
  scratch=$(mktemp -d)
  cp -r "$ci" "$scratch/ci"
  sed -i "$3" "$scratch/ci/$2"
  if cmp -s "$ci/$2" "$scratch/ci/$2"; then
    echo "MUTATION NOT APPLIED: $1"; unseen=1
  elif bash "$scratch/ci/gpu/tests/test_run.sh" >/dev/null 2>&1; then
    echo "UNSEEN: $1"; unseen=1
  else
    echo "seen:   $1"
  fi
  rm -rf "$scratch"
}
mutate "any nvcc accepted (no release comparison)" gpu/run.sh 's/^    if \[\[ -n "\$cuda" && "\$release" != /    if [[ -z "$cuda" \&\& "$release" != /'
mutate "steps not under the budget's timeout" gpu/run.sh 's/timeout --kill-after=10 "\$left" //'
mutate "a cut step not named" gpu/run.sh 's/echo "\$step: cut by the budget/echo "$step: ended/'
mutate "CTest's 8 passed on" gpu/step.sh 's/|| return \$TP_EXIT_FAIL/|| return $status/'
mutate "the CUDA tests after the benchmarks" gpu/run.sh 's/^readonly STEPS="build cells cuda_tests message_probe bench_reduced/readonly STEPS="build cells message_probe bench_reduced cuda_tests/'
mutate "a failed step ends the run" gpu/run.sh 's/if \[\[ "\$step" == build \]\] \&\& ((code != 0)); then/if ((code != 0)); then/'
mutate "a failed build does not end the run" gpu/run.sh 's/if \[\[ "\$step" == build \]\] \&\& ((code != 0)); then/if false; then/'
exit $unseen
