#!/usr/bin/env bash
# ci/downstream/package_only.sh <source> <build dir> [Torch_DIR]: the package-only
# configuration the README's install step makes (preset "package": TORCHPLACE_PACKAGE_ONLY=ON),
# configured in <build dir>. It must define the package's targets and none of the suite's tests,
# scenarios or benchmarks, and its default build must not make the sim's Python extension. It is
# not compiled here: its sources are the suite build's, compiled and installed by
# downstream.package (a second compile of the same files took 453 s on a loaded 2-core VM).
# Configured with Unix Makefiles whatever the suite's generator: the default targets are read
# from its Makefile2.
# Exit: 0 held; 1 a step failed or a target outside the package was defined (named on stderr).
set -euo pipefail
source=$1 build=$2 torch_dir=${3:-}
fail() { echo "package_only: FAIL: $*" >&2; exit 1; }
# Every target of the package (cmake/TorchplaceInstall.cmake installs all but the Python sim).
allowed="torchplace_classify torchplace_harness torchplace_harness_bench torchplace_harness_bench_main
torchplace_harness_gtest_main torchplace_sim torchplace_sim_cuda torchplace_sim_python"

rm -rf "$build"
cmake -S "$source" -B "$build" -G "Unix Makefiles" -DCMAKE_BUILD_TYPE=Release \
  -DTORCHPLACE_PACKAGE_ONLY=ON ${torch_dir:+-DTorch_DIR="$torch_dir"} >"$build.log" 2>&1 ||
  fail "configure (see $build.log)"
defined=$(cmake --build "$build" --target help | grep -oE '\btorchplace_[a-z_]+\b' | sort -u)
grep -qx torchplace_harness <<<"$defined" || fail "no torchplace_harness in the target list: $defined"
extra=$(comm -23 <(echo "$defined") <(tr ' ' '\n' <<<"$allowed" | sort -u))
[[ -z $extra ]] || fail "the package-only build defines targets outside the package:" $extra
# What the default build makes: the targets under "all" in Makefile2 (a dry run stops at the
# precompiled header, which it does not make).
in_all=$(grep -oE '^[a-z/]*all: [a-zA-Z/]*CMakeFiles/torchplace_[a-z_]+\.dir/all' \
  "$build/CMakeFiles/Makefile2" | grep -oE 'torchplace_[a-z_]+' | sort -u)
grep -qx torchplace_harness <<<"$in_all" || fail "torchplace_harness is not built by default: $in_all"
! grep -qx torchplace_sim_python <<<"$in_all" ||
  fail "the default build makes the sim's Python extension: it is not part of the package"
echo "package_only: the package's targets only, the Python extension not among them" >&2
