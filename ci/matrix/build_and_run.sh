#!/usr/bin/env bash
# One column of the version matrix: configure and build the suite (CMake preset "ci") against the
# LibTorch found here (the host's, or a Debian root's when run inside it by chroot), then run it
# the one way the suite is run: `ci/torchplace run --suite ... --bench ... --out OUT`. Writes
# into OUT:
#   run.json       what each step did (torchplace.run/1): build (ok | failed | compiled, seconds),
#                  scenarios (ok | cells_failed | crashed | no_results, exit, seconds), bench,
#                  report, probe; the matrix merge reads only this and results.json
#   build.log      configure + build output (its first "error:" line becomes the column's first_error)
#   results.json, scenarios-junit.xml, bench.json, index.html, summary.md   as `run` writes them
#   messages.json  the message probe's observations (torchplace_message_probe)
#   unit.json, unit.log   the harness unit tests' gtest report and output
#   run.log        the output of the run and the probe
# usage: build_and_run.sh <source dir> <build dir> <out dir>
# Environment: TP_MATRIX_COMPILE_ONLY=1 stops after the build; TP_MATRIX_CMAKE_ARGS adds -D options;
# TP_MATRIX_TARGETS limits the build to those targets (default: the whole suite).
set -uo pipefail
source_dir=$1 build_dir=$2 out=$3
# shellcheck source=../lib/common.sh
source "$source_dir/ci/lib/common.sh" || exit 3
mkdir -p "$out" || exit 3
rm -f "$out/run.json"
record=$out/run.json

start=$SECONDS
unset Torch_DIR CMAKE_PREFIX_PATH # the distribution's LibTorch, nothing else
read -r -a extra_args <<<"${TP_MATRIX_CMAKE_ARGS:-}"
# The targets that exist of TP_MATRIX_TARGETS (default: all of them).
build_targets() {
  local target known
  [[ -n "${TP_MATRIX_TARGETS:-}" ]] || return 0
  known=$(cmake --build "$build_dir" --target help)
  for target in $TP_MATRIX_TARGETS; do
    grep -qw "$target" <<<"$known" && printf '%s\n' --target "$target"
  done
}
targets=()
{
  cmake -S "$source_dir" --preset ci -B "$build_dir" "${extra_args[@]}" &&
    mapfile -t targets < <(build_targets) &&
    cmake --build "$build_dir" -j "$(nproc)" "${targets[@]}"
} >"$out/build.log" 2>&1
build_status=$?
build_seconds=$((SECONDS - start))
if ((build_status != 0)); then
  tp_record "$record" build status=failed seconds=$build_seconds
  exit 0
fi
if [[ "${TP_MATRIX_COMPILE_ONLY:-0}" == 1 ]]; then
  tp_record "$record" build status=compiled seconds=$build_seconds
  exit 0
fi

# A short benchmark pass: one repetition, ~10 ms per benchmark (bench_main spells the seconds as
# the linked Google Benchmark wants them).
bench=$build_dir/scenarios/torchplace_bench
bench_args=()
[[ -x "$bench" ]] && bench_args=(--bench "$bench")
# `run` starts a fresh run.json; the build step is added after it. Its exit (1: a cell failed) is
# in run.json's steps, which the merge judges.
TORCHPLACE_BENCH_REPETITIONS=1 TORCHPLACE_BENCH_MIN_TIME=0.01 TORCHPLACE_NO_INSTALL=1 \
  "$source_dir/ci/torchplace" run --suite "$build_dir/scenarios/torchplace_scenarios" \
  "${bench_args[@]}" --out "$out" >"$out/run.log" 2>&1
tp_record "$record" build status=ok seconds=$build_seconds
((${#bench_args[@]})) || tp_record "$record" bench status=absent \
  note="torchplace_bench not built in this tree: benchmark pass skipped"

# The harness's own unit tests (the sim, the fixes, the judge, the runner) on this LibTorch: the
# scenarios alone never run them (a sim rule that holds on 1.13.1 and not on 2.14.1 showed only
# here). Their gtest report is unit.json; the merge fails the column when one failed or none ran.
unit=$build_dir/harness/torchplace_harness_tests
if [[ -x "$unit" ]]; then
  unit_status=0
  rm -f "$out/unit.json" # an earlier run's report must not stand for this one
  # every test, whatever GTEST_FILTER or GTEST_SHARD_* the caller's environment holds
  (unset "${!GTEST_@}" && timeout -k 30 900 "$unit" --gtest_filter='*' \
    --gtest_output="json:$out/unit.json" >"$out/unit.log" 2>&1) || unit_status=$?
  tp_record "$record" unit status="$( ((unit_status == 0)) && echo ok || echo failed)" \
    exit=$unit_status
else
  tp_record "$record" unit status=absent note="torchplace_harness_tests not built in this tree"
fi

# The raw messages of the CPU-observable mistakes (ci/matrix/message_probe.cpp): built here, as
# a plain build leaves it out (its build output goes to build.log); a tree without the target (an
# older checkout) has no probe step.
if grep -qw torchplace_message_probe <<<"$(cmake --build "$build_dir" --target help)"; then
  probe_status=0
  { cmake --build "$build_dir" --target torchplace_message_probe >>"$out/build.log" 2>&1 &&
      "$build_dir/ci/torchplace_message_probe" "$out/messages.json" >>"$out/run.log" 2>&1; } ||
    probe_status=$?
  tp_record "$record" probe status="$( ((probe_status == 0)) && echo ok || echo failed)" \
    exit=$probe_status
fi
exit 0
