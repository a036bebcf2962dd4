#!/usr/bin/env bash
# The whole suite on a GPU machine with a CUDA LibTorch and no package manager (a self-hosted
# runner, or the lent H200), installing nothing, within a time budget:
#
#   ci/gpu/run.sh OUT_DIR [--budget SECONDS]
#
# Steps, most valuable first (ci/gpu/step.sh says what each writes): build, cells (every scenario
# cell), cuda_tests (CTest's "cuda" label), message_probe, bench_reduced (the headline
# benchmarks), report, bench_rest (every other benchmark), tests (the rest of CTest). A step
# starts only with time left and runs under what is left (timeout); the first step cut by the
# budget ends the run, and so does a failed build. OUT_DIR/logs/STEP.log holds each step's
# output, OUT_DIR/steps.txt each step's outcome and seconds, OUT_DIR/not_run.txt the steps cut or
# never started (both also printed). OUT_DIR/run.tar.gz packs
# everything, repacked every minute and after each step, so that a run killed from outside still
# returns what it had finished. Default budget: none (every step runs to its end).
#
# LibTorch: Torch_DIR or CMAKE_PREFIX_PATH if set, else the pip torch of `python3`
# (torch.utils.cmake_prefix_path, asked through python3 -m torchplace.torch_info). GoogleTest, Google Benchmark and nlohmann-json: a prefix in
# CMAKE_PREFIX_PATH, or .deps/usr made by ci/gpu/prepare-deps.sh. A CUDA LibTorch's CMake config
# needs the CUDA toolkit: nvcc from CUDACXX, /usr/local/cuda or PATH, of the CUDA release
# (major.minor) python3's torch was built for, when that torch is the LibTorch used.
# TORCHPLACE_BENCH_REPETITIONS and TORCHPLACE_BENCH_MIN_TIME are passed on to the benchmarks.
# Then the behaviour gate, requiring TORCHPLACE_REQUIRE_GPUS CUDA devices (default 1) in the run's
# fingerprint: a run that saw fewer exits 3 rather than passing with its CUDA cells skipped.
# Exit: 0 every step ran and passed; 1 a cell, benchmark or test failed; 2 the
# behaviour gate found a regression; 3 no LibTorch, no CUDA
# toolkit or one of another CUDA release than the torch, a .deps/ built for a newer libstdc++
# than this machine's, or a failed configure; 4 the build failed; 5 the budget ran out (what ran
# passed; not_run.txt names the rest); 64 bad arguments.
set -uo pipefail
usage="usage: ci/gpu/run.sh OUT_DIR [--budget SECONDS]"
die() { echo "ci/gpu/run.sh: ${*:2}" >&2; exit "$1"; }
(($#)) && [[ "$1" != -* ]] || die 64 "$usage"
out=$1 budget=""
shift
while (($#)); do
  case "$1" in
    --budget) [[ "${2:-}" =~ ^[1-9][0-9]*$ ]] || die 64 "--budget needs whole seconds >= 1, got '${2:-}' ($usage)"
      budget=$2; shift ;;
    *) die 64 "unknown argument '$1' ($usage)" ;;
  esac
  shift
done
SECONDS=0 # the budget counts from here
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 3
# shellcheck source=../lib/common.sh
source "$top/ci/lib/common.sh" # PYTHONPATH for python3 -m torchplace.*
mkdir -p "$out" && out=$(cd "$out" && pwd) || die 3 "cannot create $out"
export TORCHPLACE_NO_INSTALL=1
export TORCHPLACE_BUILD_DIR=${TORCHPLACE_BUILD_DIR:-/tmp/torchplace-build}
step_runner=${TORCHPLACE_GPU_STEP:-$top/ci/gpu/step.sh} # tests put a fake in its place

# The pip torch's CMake prefix, unless the caller named a LibTorch.
find_libtorch() {
  [[ -n "${Torch_DIR:-}" || -n "${CMAKE_PREFIX_PATH:-}" ]] && return 0
  CMAKE_PREFIX_PATH=$(python3 -m torchplace.torch_info cmake_prefix_path 2>/dev/null) ||
    die 3 "no LibTorch: set Torch_DIR or CMAKE_PREFIX_PATH, or install a pip torch for python3"
}

# major.minor of a version text ("13.0", "release 12.4, V12.4.131"), or nothing.
major_minor() { grep -oE '[0-9]+\.[0-9]+' <<<"$1" | head -n 1; }

# A CUDA pip torch needs nvcc at configure time, of the CUDA release that torch was built for:
# another one (a 12.x toolkit beside a 13.x wheel) links a second CUDA runtime. Say so before
# CMake fails obscurely or builds a mix.
find_nvcc() {
  local cuda nvcc release prefix seen=""
  cuda=$(python3 -m torchplace.torch_info cuda 2>/dev/null) || cuda=""
  prefix=$(python3 -m torchplace.torch_info cmake_prefix_path 2>/dev/null) || prefix=""
  if [[ -n "$cuda" && "${Torch_DIR:-};${CMAKE_PREFIX_PATH:-}" != *"$prefix"* ]]; then
    echo "nvcc: the LibTorch used is not python3's torch: its CUDA release is not compared"
    cuda=""
  fi
  for nvcc in "${CUDACXX:-}" /usr/local/cuda/bin/nvcc "$(command -v nvcc)"; do
    [[ -n "$nvcc" && -x "$nvcc" ]] || continue
    release=$(major_minor "$("$nvcc" --version 2>/dev/null | grep -i release)")
    if [[ -n "$cuda" && "$release" != "$(major_minor "$cuda")" ]]; then
      seen+=" $nvcc (CUDA ${release:-unknown})"
      [[ "$nvcc" != "${CUDACXX:-}" ]] && continue
      die 3 "CUDACXX=$nvcc is CUDA ${release:-of an unknown release}, but python3's torch is" \
        "built for CUDA $cuda: a second CUDA runtime would be linked; point CUDACXX at a $cuda toolkit"
    fi
    export TORCHPLACE_CMAKE_ARGS="${TORCHPLACE_CMAKE_ARGS:-} -DCMAKE_CUDA_COMPILER=$nvcc"
    echo "nvcc: $nvcc, CUDA ${release:-unknown} (python3's torch: CUDA ${cuda:-none or absent})"
    return 0
  done
  [[ -z "$seen" ]] || die 3 "python3's torch is built for CUDA $cuda, and no nvcc of that" \
    "release was found:$seen; set CUDACXX to a CUDA $cuda nvcc"
  [[ -z "$cuda" ]] || die 3 "this torch is built for CUDA $cuda and its CMake config needs the" \
    "CUDA toolkit: no nvcc in CUDACXX, /usr/local/cuda/bin or PATH"
}

# .deps holds Debian 12's Google Benchmark, built against the libstdc++ of gcc 12: a machine whose
# libstdc++ is older cannot load it. Say so now, not after the build.
check_deps_runtime() {
  local lib needed libstdcxx
  lib=$(ls .deps/usr/lib/*/libbenchmark.so.*.* 2>/dev/null | head -n 1)
  [[ -n "$lib" ]] || return 0
  needed=$(grep -ao 'GLIBCXX_[0-9.]*[0-9]' "$lib" | sort -uV | tail -n 1)
  libstdcxx=$(c++ -print-file-name=libstdc++.so.6 2>/dev/null)
  [[ -n "$needed" && -f "$libstdcxx" ]] || return 0
  grep -aq "$needed" "$libstdcxx" || die 3 "$lib needs $needed, which this machine's" \
    "$libstdcxx lacks: run ci/gpu/prepare-deps.sh on a distribution no newer than this one"
}

pack() { # written beside, then moved in: the folder must not change while tar reads it
  local packed
  packed=$(mktemp) && chmod 644 "$packed" && tar -czf "$packed" -C "$out" --exclude=run.tar.gz . &&
    mv -f "$packed" "$out/run.tar.gz"
}

find_libtorch
[[ -d .deps/usr ]] && CMAKE_PREFIX_PATH="${CMAKE_PREFIX_PATH:+$CMAKE_PREFIX_PATH;}$PWD/.deps/usr"
export CMAKE_PREFIX_PATH
find_nvcc
check_deps_runtime
command -v nvidia-smi >/dev/null &&
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee "$out/gpu.csv"

# The steps, most valuable first (ci/gpu/step.sh).
readonly STEPS="build cells cuda_tests message_probe bench_reduced report bench_rest tests"
readonly MIN_STEP_S=5 # a step is not started with less left

# run_steps: each step under what is left of the budget; records steps.txt and not_run.txt, and
# sets `status` (the run's exit code).
run_steps() {
  local step left code seconds cut="" failed=0 started
  status=0
  for step in $STEPS; do
    if [[ -n "$cut" ]]; then
      echo "$step: not run ($cut)" >>"$out/not_run.txt"
      continue
    fi
    left=$(( ${budget:-0} > 0 ? budget - SECONDS : 86400 ))
    if ((left < MIN_STEP_S)); then
      cut="the ${budget} s budget ran out before it"
      echo "$step: not run ($cut)" >>"$out/not_run.txt"
      continue
    fi
    started=$SECONDS
    echo "== $step (${left} s left)"
    timeout --kill-after=10 "$left" "$step_runner" "$step" "$out" >"$out/logs/$step.log" 2>&1
    code=$? seconds=$((SECONDS - started))
    tail -n "$( ((code == 0)) && echo 3 || echo 25)" "$out/logs/$step.log"
    pack
    if ((code == 124 || code == 137)); then
      cut="the ${budget} s budget ran out during $step"
      printf '%-14s cut by the budget after %ss\n' "$step" "$seconds" >>"$out/steps.txt"
      echo "$step: cut by the budget after ${seconds}s (what it wrote is kept)" >>"$out/not_run.txt"
      continue
    fi
    printf '%-14s %s %ss\n' "$step" "$( ((code == 0)) && echo passed || echo "failed (exit $code)")" \
      "$seconds" >>"$out/steps.txt"
    if [[ "$step" == build ]] && ((code != 0)); then # no build: nothing else can run
      status=$(( code == 3 ? 3 : 4 )) cut="$step failed (exit $code)"
      continue
    fi
    ((code == 0)) || failed=1
  done
  ((status != 0)) && return
  ((failed)) && status=1 && return
  [[ -n "$cut" ]] && status=5
  return 0
}

rm -rf "$out/steps.txt" "$out/not_run.txt" "$out/logs" && mkdir -p "$out/logs"
(while sleep 60; do pack; done) &
packer=$!
run_steps
kill "$packer" 2>/dev/null
wait "$packer" 2>/dev/null
[[ -f "$out/not_run.txt" ]] || echo "every step ran" >"$out/not_run.txt"
pack
# The behaviour gate needs only the standard library: any python3 will do.
if [[ -f "$out/run/results.json" ]]; then
  gate_status=0
  python3 -m torchplace.gate --results "$out/run" --require-devices "cuda=${TORCHPLACE_REQUIRE_GPUS:-1}" \
    --out "$out/gate" >"$out/gate.log" 2>&1 || gate_status=$?
  head -n 3 "$out/gate.log"
  pack
  # A build or environment failure outranks the gate; the gate outranks a failed or cut step.
  ((status == 3 || status == 4 || gate_status == 0)) || status=$gate_status
fi
echo "== steps (${SECONDS}s${budget:+ of a ${budget} s budget}):"
cat "$out/steps.txt" 2>/dev/null
echo "== not run:"
cat "$out/not_run.txt"
echo "run: exit $status"
exit $status
