#!/usr/bin/env bash
# ci/downstream/package_only.sh <source> <build dir> <generator> [Torch_DIR]: the package-only
# build the README's install step makes (preset "package": TORCHPLACE_PACKAGE_ONLY=ON), configured
# and built in <build dir>. It must define the package's targets and none of the suite's tests,
# scenarios or benchmarks. downstream.package then installs from it (CTest fixture package_only).
# Exit: 0 built; 1 a step failed or a target outside the package was defined (named on stderr).
set -euo pipefail
source=$1 build=$2 generator=$3 torch_dir=${4:-}
fail() { echo "package_only: FAIL: $*" >&2; exit 1; }
# Every target of the package (cmake/TorchplaceInstall.cmake installs all but the Python sim).
allowed="torchplace_classify torchplace_harness torchplace_harness_bench torchplace_harness_bench_main
torchplace_harness_gtest_main torchplace_sim torchplace_sim_python"

rm -rf "$build"
cmake -S "$source" -B "$build" -G "$generator" -DCMAKE_BUILD_TYPE=Release \
  -DTORCHPLACE_PACKAGE_ONLY=ON ${torch_dir:+-DTorch_DIR="$torch_dir"} >"$build.log" 2>&1 ||
  fail "configure (see $build.log)"
defined=$(cmake --build "$build" --target help | grep -oE '\btorchplace_[a-z_]+\b' | sort -u)
grep -qx torchplace_harness <<<"$defined" || fail "no torchplace_harness in the target list: $defined"
extra=$(comm -23 <(echo "$defined") <(tr ' ' '\n' <<<"$allowed" | sort -u))
[[ -z $extra ]] || fail "the package-only build defines targets outside the package:" $extra
echo "package_only: the package's targets only; building" >&2
cmake --build "$build" -j "$(nproc)" >>"$build.log" 2>&1 || fail "build (see $build.log)"
[[ ! -e $build/harness/sim/libtorchplace_sim_python.so ]] ||
  fail "the sim's Python extension was built: it is not part of the package"
