#!/usr/bin/env bash
# A lent GPU's one prepared call (issue 40; ci/gpu/README.md "A lent GPU"):
#
#   ci/gpu/session.sh OUT [SECONDS]     (default 480)
#
# Side by side, within SECONDS:
#   suite   ci/torchplace run --gpu: built against python3's torch; cells, CUDA tests, probe,
#           benchmarks, report, then the rest of CTest until its budget (SECONDS - 110);
#   sweeps  the sim built for python3's torch (pip --target), then op_db and module_db with
#           --trace on cuda:0 and on sim:0, in the same sampled order (niced);
# then, alone on the machine, the transfers: pageable, pinned_resident and raw_cudamemcpy at
# 4 KiB to 256 MiB, both directions. WORK (/tmp/torchplace-session) is packed into
# OUT/session.tar.gz every 20 s and at the end. Wheels in .whl/ (expecttest) go to /tmp/site.
set -uo pipefail
out=${1:?usage: ci/gpu/session.sh OUT [SECONDS]}
seconds=${2:-480}
top=$(cd "$(dirname "$0")/../.." && pwd)
work=${TORCHPLACE_SESSION_DIR:-/tmp/torchplace-session}
mkdir -p "$out" "$work"
out=$(cd "$out" && pwd)
end=$((SECONDS + seconds))
export TORCHPLACE_PYTHON=${TORCHPLACE_PYTHON:-$(command -v python3)} PYTHONUNBUFFERED=1
cd "$top" || exit 3

fingerprint() {
  date -u
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv
  python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda,
  torch.cuda.get_device_name(0), torch.backends.cudnn.version())'
  nvcc --version | tail -2
  nproc
  grep PRETTY /etc/os-release
}

sweeps() {
  local seed=gpu-session site=/tmp/tpsite common
  python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl
  export PYTHONPATH=$top/reports:/tmp/site
  common="--sweeps ops,modules --sample $seed --workers 5 --timeout-s 90 --trace"
  # CUDA's sweep needs no sim: it starts at once
  nice -n 5 python3 -m torchplace.conformance --device cuda $common --budget-s 150 \
    --out "$work/conformance-cuda" >"$work/conformance-cuda.log" 2>&1 &
  MAX_JOBS=8 nice -n 5 python3 -m pip install -q --no-build-isolation --no-deps --no-index \
    --target "$site" . >"$work/sim-build.log" 2>&1 || { echo "sim build failed"; wait; return; }
  TORCHPLACE_SIM_LIBRARY=$site/torchplace/sim/libtorchplace_sim_python.so nice -n 5 \
    python3 -m torchplace.conformance --device sim $common --budget-s 150 \
    --out "$work/conformance-sim" >"$work/conformance-sim.log" 2>&1
  wait
}

transfers() {
  local bench=${TORCHPLACE_BUILD_DIR:-/tmp/torchplace-build}/scenarios/torchplace_bench
  [[ -x "$bench" ]] || { echo "no $bench: the suite's build did not finish"; return; }
  local sizes="4096|16384|65536|262144|1048576|4194304|16777216|67108864|268435456"
  local left=$((end - SECONDS - 15))
  ((left > 10)) || { echo "no time left for the transfers"; return; }
  timeout "$left" "$bench" --benchmark_repetitions=5 \
    --benchmark_min_time=0.05 --benchmark_out="$work/transfers.json" \
    --benchmark_out_format=json \
    --benchmark_filter="^transfer/.*/strategy:(pageable|pinned_resident|raw_cudamemcpy)/bytes:($sizes)/"
}

stop() {  # TERM, then KILL after 10 s: never wait on what will not end
  kill -TERM "$@" 2>/dev/null
  pkill -TERM -f torchplace.conformance 2>/dev/null
  for _ in 1 2 3 4 5 6 7 8 9 10; do
    kill -0 "$@" 2>/dev/null || break
    sleep 1
  done
  kill -KILL "$@" 2>/dev/null
  pkill -KILL -f torchplace.conformance 2>/dev/null
}

pack() { tar -czf "$out/session.tar.gz.part" -C "$work" . && mv "$out/session.tar.gz.part" "$out/session.tar.gz"; }

fingerprint >"$work/fingerprint.txt" 2>&1
cat "$work/fingerprint.txt"
ci/torchplace run --gpu --out "$work/run" --budget-s $((seconds - 110)) >"$work/run.log" 2>&1 &
suite=$!
sweeps >"$work/sweeps.log" 2>&1 &
swept=$!
while kill -0 "$suite" 2>/dev/null || kill -0 "$swept" 2>/dev/null; do
  ((SECONDS < end - 75)) || break
  sleep 20
  pack
done
stop "$suite" "$swept"
transfers >"$work/transfers.log" 2>&1
pack
tail -n 5 "$work"/run.log "$work"/conformance-*.log "$work"/sweeps.log "$work"/transfers.log
cat "$work/run/steps.txt" 2>/dev/null
ls -la "$out"
