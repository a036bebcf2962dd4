#!/usr/bin/env bash
# The whole suite on a GPU machine with a CUDA LibTorch and no package manager (a self-hosted
# runner, or the lent H200), installing nothing: build, the scenarios on every device, the
# benchmarks with repetitions, the report, then CTest.
#
#   ci/gpu/run.sh OUT_DIR
#
# LibTorch: Torch_DIR or CMAKE_PREFIX_PATH if set, else the pip torch of `python3`
# (torch.utils.cmake_prefix_path). GoogleTest, Google Benchmark and nlohmann-json: a prefix in
# CMAKE_PREFIX_PATH, or .deps/usr made by ci/gpu/prepare-deps.sh. A CUDA LibTorch's CMake config
# needs the CUDA toolkit: nvcc from CUDACXX, /usr/local/cuda or PATH.
# Writes OUT_DIR/run/ (results.json, bench.json, report), OUT_DIR/ctest.log, OUT_DIR/junit.xml and
# OUT_DIR/run.tar.gz of them all, repacked every minute during the run and after each step, so
# that a run cut short by a time limit still returns what it had finished. TORCHPLACE_BENCH_REPETITIONS, TORCHPLACE_BENCH_MIN_TIME
# and TORCHPLACE_BENCH_FILTER are passed on to `ci/torchplace run`.
# Then the behaviour gate, requiring TORCHPLACE_REQUIRE_GPUS CUDA devices (default 1) in the run's
# fingerprint: a run that saw fewer exits 3 rather than passing with its CUDA cells skipped.
# Exit: 0 all passed; 1 a cell, benchmark or test failed; 2 the behaviour gate found a regression;
# 3 no LibTorch, no CUDA toolkit, a .deps/ built for a newer libstdc++ than this machine's, or
# fewer GPUs than required; 4 the build failed.
set -uo pipefail
out=${1:?usage: ci/gpu/run.sh OUT_DIR}
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
mkdir -p "$out" && out=$(cd "$out" && pwd)
export TORCHPLACE_NO_INSTALL=1
export TORCHPLACE_BUILD_DIR=${TORCHPLACE_BUILD_DIR:-/tmp/torchplace-build}

die() { echo "ci/gpu/run.sh: ${*:2}" >&2; exit "$1"; }

# The pip torch's CMake prefix, unless the caller named a LibTorch.
find_libtorch() {
  [[ -n "${Torch_DIR:-}" || -n "${CMAKE_PREFIX_PATH:-}" ]] && return 0
  CMAKE_PREFIX_PATH=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)' 2>/dev/null) ||
    die 3 "no LibTorch: set Torch_DIR or CMAKE_PREFIX_PATH, or install a pip torch for python3"
}

# A CUDA pip torch needs nvcc at configure time; say so before CMake fails obscurely.
find_nvcc() {
  local cuda nvcc
  cuda=$(python3 -c 'import torch; print(torch.version.cuda or "")' 2>/dev/null) || cuda=""
  for nvcc in "${CUDACXX:-}" /usr/local/cuda/bin/nvcc "$(command -v nvcc)"; do
    [[ -n "$nvcc" && -x "$nvcc" ]] || continue
    export TORCHPLACE_CMAKE_ARGS="${TORCHPLACE_CMAKE_ARGS:-} -DCMAKE_CUDA_COMPILER=$nvcc"
    echo "nvcc: $nvcc (python3's torch: CUDA ${cuda:-none or absent})"
    return 0
  done
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

SECONDS=0
(while sleep 60; do pack; done) &
packer=$!
ci/torchplace run --no-install --out "$out/run" 2>&1 | tee "$out/run.log" | tail -n 20
run_status=${PIPESTATUS[0]}
kill "$packer" 2>/dev/null
wait "$packer" 2>/dev/null
echo "run: exit $run_status after ${SECONDS}s"
pack
((run_status == 4)) && die 4 "the build failed: see $out/run.log"

# CTest without the benchmark smoke run (the run above timed every benchmark already).
ctest --test-dir "$TORCHPLACE_BUILD_DIR" -LE bench -j "$(nproc)" --output-junit "$out/junit.xml" \
  >"$out/ctest.log" 2>&1
test_status=$?
grep -E "tests passed|\(Failed\)|Not Run" "$out/ctest.log" | tail -n 15
echo "ctest: exit $test_status after ${SECONDS}s"
# The behaviour gate needs only the standard library: any python3 will do.
python3 ci/gate/gate.py --results "$out/run" --require-devices "cuda=${TORCHPLACE_REQUIRE_GPUS:-1}" \
  --out "$out/gate" >"$out/gate.log" 2>&1
gate_status=$?
head -n 3 "$out/gate.log"
pack
((gate_status == 3)) && exit 3
exit $((run_status != 0 ? run_status : test_status != 0 ? test_status : gate_status))
