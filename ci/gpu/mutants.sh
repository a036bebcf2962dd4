#!/usr/bin/env bash
# A lent GPU's call for what only a CUDA build can judge (issue 45; ci/gpu/README.md):
#
#   ci/gpu/mutants.sh OUT [SECONDS]     (default 480)
#
# Side by side, within SECONDS:
#   mutants  the generated mutants of harness/fixes/prefetcher.h that the ledger does not record
#            killed (untriaged first, then not_built, then unrun), in a CUDA scratch build of
#            python3's torch, each judged by Prefetcher.* on cuda:0 (OUT/mutants.json after each;
#            `--from-records OUT/mutants.json --write-ledger` records them, kills as killed_cuda);
#   plugin   the sim built for python3's torch, then scenarios/python's tests on cuda:0 with
#            --torchplace-results (pytest-cuda/), and the same with torchplace.sim imported
#            first (pytest-cuda-sim-loaded/: the red control, CUDA backwards must fail there).
# Wheels in .whl/ (expecttest) go to /tmp/site; .deps/ as for ci/gpu/run.sh.
set -uo pipefail
out=${1:?usage: ci/gpu/mutants.sh OUT [SECONDS]}
seconds=${2:-480}
top=$(cd "$(dirname "$0")/../.." && pwd)
work=${TORCHPLACE_SESSION_DIR:-/tmp/torchplace-mutants}  # packed into OUT/mutants-call.tar.gz
mkdir -p "$out" "$work" && out=$(cd "$out" && pwd) && work=$(cd "$work" && pwd)
((seconds >= 120)) || { echo "mutants.sh: SECONDS must be >= 120, not $seconds" >&2; exit 64; }
end=$((SECONDS + seconds))
export PYTHONUNBUFFERED=1
cd "$top" || exit 3
# the mutation engine copies what git lists: a copy of the tree without .git gets an index
[[ -e .git ]] || { git init -q && git add -A; } || { echo "no git: the mutants cannot run"; exit 3; }

ids() {  # TORCHPLACE_MUTANT_IDS, else the prefetcher's the ledger does not record killed
  [[ -n ${TORCHPLACE_MUTANT_IDS:-} ]] && { echo "$TORCHPLACE_MUTANT_IDS"; return; }
  local state
  for state in untriaged not_built unrun; do
    awk -v s="$state" '$1 ~ /^harness\/fixes\/prefetcher\.h:/ && $2 == s {print $1}' \
      reports/torchplace/mutation/ledger
  done | paste -sd, -
}

mutants() {
  local chosen && chosen=$(ids)
  [[ -n $chosen ]] || { echo "no mutant to judge (ledger or TORCHPLACE_MUTANT_IDS)"; return 3; }
  PYTHONPATH=$top/reports timeout --kill-after=10 "$((end - SECONDS - 20))" python3 - "$work" "$chosen" "$out/mutants.json" <<'EOF'
import os, sys
from pathlib import Path
from torchplace.command import gpu
gpu.preflight(Path(sys.argv[1]))  # LibTorch, .deps, nvcc: as run --gpu finds them
os.execvp(sys.executable, [sys.executable, "-m", "torchplace.mutation.generated", "--jobs",
          "14", "--only", sys.argv[2], "--out", sys.argv[3]])
EOF
}

plugin() {
  local site=/tmp/tpsite status
  rm -rf "$site" /tmp/site
  python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl
  MAX_JOBS=2 timeout $((end - SECONDS - 90)) python3 -m pip install -q --no-build-isolation --no-deps --no-index \
    --target "$site" . >"$work/sim-build.log" 2>&1 || { echo "sim build failed"; return; }
  for run in pytest-cuda pytest-cuda-sim-loaded; do
    local extra=() && [[ $run == *sim-loaded ]] && extra=(-p torchplace.sim)
    mkdir -p "$work/$run"
    (cd scenarios/python && PYTHONPATH=$site:/tmp/site timeout 60 python3 -m pytest \
      -p torchplace.pytest_plugin "${extra[@]}" -p no:cacheprovider -q -rs \
      --torchplace-results "$work/$run/results.json" --junitxml "$work/$run/junit.xml" . \
      >"$work/$run/pytest.log" 2>&1)
    status=$?
    echo "$run: pytest exit $status"
    tail -n 3 "$work/$run/pytest.log"
  done
}

nvidia-smi --query-gpu=name,driver_version --format=csv >"$work/fingerprint.txt" 2>&1
python3 -c 'import torch; print("torch", torch.__version__, torch.cuda.get_device_name(0))' \
  >>"$work/fingerprint.txt" 2>&1
cat "$work/fingerprint.txt"
plugin >"$work/plugin.log" 2>&1 &
mutants >"$work/mutants.log" 2>&1
status=$?
((status == 124)) && status=5  # cut at SECONDS: what ran is in OUT/mutants.json (EXIT_BUDGET)
echo "mutants: exit $status"
wait
cat "$work/plugin.log"
tail -n 25 "$work/mutants.log"
tar -czf "$out/mutants-call.tar.gz" -C "$work" .
ls -la "$out"
exit "$status"  # the engine's: 0 as the ledger expects, 1 a survivor, 3 cannot judge; 5 cut
