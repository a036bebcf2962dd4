#!/usr/bin/env bash
# The whole suite on a GPU machine with a CUDA LibTorch and no package manager (a self-hosted
# runner, or the lent H200): build, CTest, the scenario matrix, the benchmarks and the report,
# installing nothing.
#
#   ci/gpu/run.sh OUT_DIR
#
# LibTorch: Torch_DIR or CMAKE_PREFIX_PATH if set, else the pip torch of `python3`
# (torch.utils.cmake_prefix_path). GoogleTest, Google Benchmark and nlohmann-json: a prefix in
# CMAKE_PREFIX_PATH, or .deps/usr made by ci/gpu/prepare-deps.sh. Writes OUT_DIR/run/ (results,
# benchmarks, report), OUT_DIR/ctest.log, OUT_DIR/junit.xml, and OUT_DIR/run.tar.gz of it all.
set -uo pipefail
out=${1:?usage: ci/gpu/run.sh OUT_DIR}
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
mkdir -p "$out" && out=$(cd "$out" && pwd)
export TORCHPLACE_NO_INSTALL=1
export TORCHPLACE_BUILD_DIR=${TORCHPLACE_BUILD_DIR:-/tmp/torchplace-build}
if [[ -z "${Torch_DIR:-}" && -z "${CMAKE_PREFIX_PATH:-}" ]]; then
  CMAKE_PREFIX_PATH=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)') ||
    { echo "no LibTorch: set Torch_DIR or CMAKE_PREFIX_PATH, or install a pip torch" >&2; exit 3; }
fi
[[ -d .deps/usr ]] && CMAKE_PREFIX_PATH="${CMAKE_PREFIX_PATH:+$CMAKE_PREFIX_PATH;}$PWD/.deps/usr"
export CMAKE_PREFIX_PATH
if [[ -x /usr/local/cuda/bin/nvcc ]]; then
  export TORCHPLACE_CMAKE_ARGS="${TORCHPLACE_CMAKE_ARGS:-} -DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc"
fi
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee "$out/gpu.csv"

ci/torchplace test --no-install >"$out/ctest.log" 2>&1
test_status=$?
cp "$TORCHPLACE_BUILD_DIR/junit.xml" "$out/junit.xml" 2>/dev/null
tail -n 25 "$out/ctest.log"
ci/torchplace run --no-install --out "$out/run" 2>&1 | tail -n 20
run_status=${PIPESTATUS[0]}
tar -czf "$out/run.tar.gz" -C "$out" run
echo "ctest exit $test_status, run exit $run_status"
exit $((test_status != 0 ? test_status : run_status))
