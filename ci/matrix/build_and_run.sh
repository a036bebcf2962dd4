#!/usr/bin/env bash
# One column of the version matrix: configure, build and run the suite against the LibTorch found
# here (the host's, or a Debian root's when run inside it by chroot). Writes into OUT:
#   status         ok | build_failed | run_failed (| compiled, with TP_MATRIX_COMPILE_ONLY=1)
#   build.log      configure + build output (its first "error:" line becomes the column's first_error)
#   results.json   the scenario results (--torchplace_results)
#   bench.json     a short benchmark pass, when torchplace_bench exists
#   messages.json  the message probe's observations (torchplace_message_probe)
#   run.log        the scenario and benchmark output
#   timings.env    build= run= seconds, scenarios_exit=, bench=ran|absent|failed
# usage: build_and_run.sh <source dir> <build dir> <out dir>
# Environment: TP_MATRIX_COMPILE_ONLY=1 stops after the build; TP_MATRIX_CMAKE_ARGS adds -D options;
# TP_MATRIX_TARGETS limits the build to those targets (default: the whole suite).
set -uo pipefail
source_dir=$1 build_dir=$2 out=$3
mkdir -p "$out" || exit 3
: >"$out/timings.env"
note() { echo "$1" >>"$out/timings.env"; }

start=$SECONDS
unset Torch_DIR CMAKE_PREFIX_PATH # the distribution's LibTorch, nothing else
read -r -a extra_args <<<"${TP_MATRIX_CMAKE_ARGS:-}"
# The targets that exist of TP_MATRIX_TARGETS (default: all of them).
build_targets() {
  local target known
  [[ -n "${TP_MATRIX_TARGETS:-}" ]] || return 0
  known=$(cmake --build "$build_dir" --target help)
  for target in $TP_MATRIX_TARGETS; do
    grep -qw "$target" <<<"$known" && echo "--target $target"
  done
}
{
  cmake -S "$source_dir" --preset ci -B "$build_dir" "${extra_args[@]}" &&
    cmake --build "$build_dir" -j "$(nproc)" $(build_targets)
} >"$out/build.log" 2>&1
build_status=$?
note "build=$((SECONDS - start))"
if ((build_status != 0)); then
  echo build_failed >"$out/status"
  exit 0
fi
if [[ "${TP_MATRIX_COMPILE_ONLY:-0}" == 1 ]]; then
  echo compiled >"$out/status"
  exit 0
fi

start=$SECONDS
scenarios=$build_dir/scenarios/torchplace_scenarios
"$scenarios" --torchplace_results="$out/results.json" --gtest_output="xml:$out/scenarios-junit.xml" \
  >"$out/run.log" 2>&1
note "scenarios_exit=$?"

# The raw messages of the CPU-observable mistakes (ci/matrix/message_probe.cpp).
probe=$build_dir/ci/torchplace_message_probe
if [[ -x "$probe" ]]; then
  "$probe" "$out/messages.json" >>"$out/run.log" 2>&1
  note "probe_exit=$?"
fi

# A short benchmark pass: one repetition, ~10 ms per benchmark. Google Benchmark < 1.8 takes a
# bare number of seconds for --benchmark_min_time, 1.8+ wants a unit.
bench=$(find "$build_dir" -name torchplace_bench -type f -perm -u+x | head -n 1)
if [[ -z "$bench" ]]; then
  note "bench=absent"
else
  min_time=0.01s
  grep -Eq 'Google Benchmark 1\.[0-7]\.' "$out/build.log" && min_time=0.01
  if "$bench" --benchmark_min_time=$min_time --benchmark_repetitions=1 \
    --benchmark_format=json --benchmark_out="$out/bench.json" >>"$out/run.log" 2>&1; then
    note "bench=ran"
  else
    note "bench=failed"
  fi
fi
note "run=$((SECONDS - start))"

# The scenario binary exits 1 when a cell fails: that is a result, not a failed run. No results
# file (a crash, a missing binary) is a failed run.
if [[ -s "$out/results.json" ]]; then echo ok >"$out/status"; else echo run_failed >"$out/status"; fi
