#!/usr/bin/env bash
# One step of the GPU run (ci/gpu/run.sh runs them in order, each under what is left of its time
# budget). Environment as ci/gpu/run.sh leaves it: CMAKE_PREFIX_PATH / Torch_DIR,
# TORCHPLACE_BUILD_DIR, TORCHPLACE_CMAKE_ARGS, TORCHPLACE_BENCH_REPETITIONS / _MIN_TIME.
#
#   ci/gpu/step.sh STEP OUT_DIR
#
# Steps (in run.sh's order, most valuable first):
#   build          configure and build everything
#   cells          every scenario cell on every device here: OUT/run/results.json
#   cuda_tests     CTest's "cuda" label (CUDA cells and the harness's *_CUDA tests):
#                  OUT/junit-cuda.xml, OUT/ctest-cuda.log
#   message_probe  the raw messages of the CPU-observable mistakes: OUT/run/messages.json
#   bench_reduced  the headline benchmarks (transfers at 64 and 256 MiB, the prefetch overlap):
#                  OUT/run/bench.json
#   report         the report from what is in OUT/run (index.html, summary.md, *.png)
#   bench_rest     every other benchmark, then merged into OUT/run/bench.json
#   tests          the rest of CTest (no benchmark smoke run, no "cuda", no "mutation"):
#                  OUT/junit.xml, OUT/ctest.log
# Exit: 0 passed; 1 failed (a CTest failure, which is CTest's 8, included); 3 environment
# (configure failed, no python3 to merge the benchmarks); 4 the build failed; 64 an unknown step.
set -uo pipefail
step=${1:?usage: ci/gpu/step.sh STEP OUT_DIR}
out=${2:?usage: ci/gpu/step.sh STEP OUT_DIR}
top=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=../lib/common.sh
source "$top/ci/lib/common.sh"
# shellcheck source=../commands/run.sh
source "$top/ci/commands/run.sh" # run_scenarios, render_report, is_json
build=$(tp_build_dir)
run=$out/run
# The headline rows the README's GPU figures come from (a --benchmark_filter regex).
readonly REDUCED='^(transfer/.*/bytes:(67108864|268435456)/|prefetch_overlap/)'

# CTest with `args`; any failure (CTest exits 8) is this step's 1.
ctest_step() { # <log> <junit> <ctest args...>
  local log=$1 junit=$2
  shift 2
  ctest --test-dir "$build" -j "$(nproc)" --no-tests=error --output-junit "$junit" "$@" \
    >"$log" 2>&1
  local status=$?
  grep -E "tests passed|\(Failed\)|Not Run" "$log" | tail -n 15
  ((status == 0)) || return $TP_EXIT_FAIL
}

# The benchmarks matching `filter` into <run>/<name>.json; a crash leaves <name>.json.partial.
bench_step() { # <name> <filter>
  local name=$1 filter=$2 status=0 partial=$run/$1.json.partial
  "$build/scenarios/torchplace_bench" --benchmark_filter="$filter" \
    --benchmark_repetitions="${TORCHPLACE_BENCH_REPETITIONS:-5}" \
    --benchmark_min_time="${TORCHPLACE_BENCH_MIN_TIME:-0.1}" \
    --benchmark_out="$partial" --benchmark_out_format=json >"$run/$name.log" 2>&1 || status=$?
  if [[ ! -f "$partial" ]] || ((status != 0 && status != TP_EXIT_FAIL)) || ! is_json "$partial"; then
    tp_log "$name: the benchmarks stopped (exit $status) without a whole JSON; see $run/$name.log"
    return $TP_EXIT_FAIL
  fi
  mv -f "$partial" "$run/$name.json"
  ((status == 0)) || tp_log "$name: some benchmarks failed; $run/$name.json lists their errors"
  return $status
}

# Appends <run>/bench-rest.json's benchmarks to <run>/bench.json (or makes it from them alone).
merge_rest() {
  local python
  python=$(tp_python || command -v python3) || { tp_log "no python3 to merge the benchmarks"; return $TP_EXIT_ENV; }
  "$python" -m torchplace.bench_json merge "$run/bench.json" "$run/bench-rest.json" ||
    return $TP_EXIT_FAIL # the benchmarks wrote what cannot be merged: the step failed
}

mkdir -p "$run"
case "$step" in
  build) tp_build ;;
  cells) run_scenarios "$build" "$run" ;;
  cuda_tests) ctest_step "$out/ctest-cuda.log" "$out/junit-cuda.xml" -L cuda ;;
  message_probe) # not in a plain build: built here
    { cmake --build "$build" --target torchplace_message_probe &&
        "$build/ci/torchplace_message_probe" "$run/messages.json"; } >"$out/message_probe.log" 2>&1 ;;
  bench_reduced) bench_step bench "$REDUCED" ;;
  report) render_report "$run" ;; # without matplotlib: logged, render elsewhere later
  bench_rest)
    status=0
    bench_step bench-rest "-$REDUCED" || status=$?
    [[ -f "$run/bench-rest.json" ]] && { merge_rest || status=$?; }
    exit $status ;;
  tests) ctest_step "$out/ctest.log" "$out/junit.xml" -LE 'bench|cuda|mutation' ;;
  *) tp_die $TP_EXIT_USAGE "unknown step '$step'" ;;
esac
