#!/usr/bin/env bash
# ci/downstream/check.sh <torchplace build dir> <scratch dir>: the package from a user's side.
# Installs torchplace from <build dir> and moves the prefix to <scratch>/prefix (it must be
# relocatable); checks that the exported targets name no absolute library path and that each
# installed header compiles alone against the prefix (~1.5-3 min); builds the README's "Adding a
# scenario" snippets verbatim as a project and runs its run/refresh/gate commands; builds this
# example project against the installed package, runs its CTest tests and (LD_PRELOAD of the
# installed libtorchplace_sim_cuda.so) its production toy_train's cuda path; runs and gates its
# scenarios with the installed `torchplace` command and the example's own expectations, then
# removes both fixes from the model in a copy and expects that gate to fail (exit 2) naming both
# fixed cells; adds one .item() to the training step in another copy and expects its transfer
# budget (toy/budget.cpp, on sim:0) to fail naming _local_scalar_dense, and the gate to exit 2;
# finally configures the example with torchplace taken by FetchContent from this source tree
# and builds its production target.
# Exit: 0 all held; 1 a step failed (named on stderr).
set -euo pipefail
build=$(cd "$1" && pwd)
scratch=$2
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
prefix=$scratch/prefix
fail() { echo "downstream: FAIL: $*" >&2; exit 1; }
step() { echo "downstream: $*" >&2; }

rm -rf "$scratch" && mkdir -p "$scratch"
step "cmake --install into $scratch/installed, then moved to $prefix: everything below uses the moved prefix"
cmake --install "$build" --prefix "$scratch/installed" >"$scratch/install.log" ||
  fail "install (see $scratch/install.log)"
mv "$scratch/installed" "$prefix"

# probe_config <prefix> <name> <find_package arguments> [cmake args...]: configures a project
# that only calls find_package(torchplace REQUIRED <arguments>); its log is <name>.log.
probe_config() {
  local probe_prefix=$1 name=$2 find_args=$3
  shift 3
  mkdir -p "$scratch/$name-src"
  cat >"$scratch/$name-src/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.25)
project(probe LANGUAGES CXX)
find_package(torchplace REQUIRED $find_args)
message(STATUS "probe: fixes=\${torchplace_fixes_FOUND} harness=\${torchplace_harness_FOUND}")
CMAKE
  cmake -S "$scratch/$name-src" -B "$scratch/$name" -DCMAKE_PREFIX_PATH="$probe_prefix" \
    ${torch_dir:+-DTorch_DIR="$torch_dir"} "$@" >"$scratch/$name.log" 2>&1
}

# build_example <source> <build> [target...]: configure against the installed package only, then
# build (the targets given, else all).
# The LibTorch the package was built with (a Torch_DIR given to that build) goes along; the
# generator is fixed because the link-line check below reads Unix Makefiles' link.txt.
torch_dir=$(sed -n 's/^Torch_DIR:PATH=//p' "$build/CMakeCache.txt")
build_example() {
  cmake -S "$1" -B "$2" -G "Unix Makefiles" -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" \
    ${torch_dir:+-DTorch_DIR="$torch_dir"} >"$2.log" 2>&1 ||
    fail "configure $1 against the installed package (see $2.log)"
  local source=$1 dir=$2 target targets=()
  shift 2
  for target in "$@"; do targets+=(--target "$target"); done
  cmake --build "$dir" -j "$(nproc)" "${targets[@]}" >>"$dir.log" 2>&1 || fail "build $source (see $dir.log)"
}

step "the exported targets name no library by this machine's path (a relocatable prefix)"
targets=("$prefix"/lib*/cmake/torchplace/torchplace*Targets.cmake)
[[ -s "${targets[0]}" ]] || fail "no exported targets under $prefix (see $scratch/install.log)"
if grep -H 'INTERFACE_LINK_LIBRARIES.*"[^"]*/[^"]*\.so' "${targets[@]}"; then
  fail "an exported target links a library by absolute path (above): export LibTorch through torchplaceConfig.cmake"
fi

step "find_package: harness optional without GoogleTest, required by default; another LibTorch refused"
optional="COMPONENTS fixes OPTIONAL_COMPONENTS harness"
! probe_config "$prefix" probe-default "" -DCMAKE_DISABLE_FIND_PACKAGE_GTest=ON ||
  fail "find_package(torchplace) without components was found without GoogleTest (see $scratch/probe-default.log)"
grep -q "find_package for module GTest called with REQUIRED" "$scratch/probe-default.log" ||
  fail "find_package(torchplace) failed, but not because it required GoogleTest (see $scratch/probe-default.log)"
probe_config "$prefix" probe-optional "$optional" -DCMAKE_DISABLE_FIND_PACKAGE_GTest=ON ||
  fail "fixes alone must be found when GoogleTest is absent and harness optional (see $scratch/probe-optional.log)"
grep -q "probe: fixes=TRUE harness=FALSE" "$scratch/probe-optional.log" ||
  fail "harness reported found without GoogleTest (see $scratch/probe-optional.log)"
cp -a "$prefix" "$scratch/prefix-other-torch"  # as if built against another LibTorch
other_config=$(find "$scratch/prefix-other-torch" -name torchplaceConfig.cmake)
sed -i 's/^set(TORCHPLACE_TORCH_VERSION [^)]*)/set(TORCHPLACE_TORCH_VERSION 0.0.1)/' "$other_config"
grep -q "TORCHPLACE_TORCH_VERSION 0.0.1" "$other_config" ||
  fail "the version line no longer applies to torchplaceConfig.cmake; update check.sh"
! probe_config "$scratch/prefix-other-torch" probe-version "$optional" ||
  fail "a package built against LibTorch 0.0.1 was accepted (see $scratch/probe-version.log)"
grep -q "built against LibTorch 0.0.1" "$scratch/probe-version.log" ||
  fail "the refusal does not name the versions (see $scratch/probe-version.log)"
rm -rf "$scratch/prefix-other-torch"

step "every installed header compiles on its own against the prefix (one file each)"
mkdir -p "$scratch/headers-src"
cat >"$scratch/headers-src/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.25)
project(headers LANGUAGES CXX)
find_package(torchplace REQUIRED)
get_target_property(_include torchplace::fixes INTERFACE_INCLUDE_DIRECTORIES)
file(GLOB_RECURSE _headers RELATIVE ${_include} ${_include}/torchplace/*.h)
if(NOT _headers)
  message(FATAL_ERROR "no headers under ${_include}/torchplace")
endif()
foreach(_header IN LISTS _headers)
  string(MAKE_C_IDENTIFIER ${_header} _name)
  file(WRITE ${CMAKE_BINARY_DIR}/${_name}.cpp "#include <${_header}>\n")
  list(APPEND _sources ${CMAKE_BINARY_DIR}/${_name}.cpp)
endforeach()
add_library(headers OBJECT ${_sources})
target_link_libraries(headers PRIVATE torchplace::harness torchplace::bench)
# Nothing before each header (no precompiled <torch/torch.h> to hide a missing include); parsed
# and checked, no code generated (~6-11 s a header).
target_compile_options(headers PRIVATE -fsyntax-only)
CMAKE
cmake -S "$scratch/headers-src" -B "$scratch/headers" -DCMAKE_PREFIX_PATH="$prefix" \
  ${torch_dir:+-DTorch_DIR="$torch_dir"} >"$scratch/headers.log" 2>&1 &&
  cmake --build "$scratch/headers" -j "$(nproc)" >>"$scratch/headers.log" 2>&1 ||
  fail "an installed header does not compile on its own against the prefix (see $scratch/headers.log)"

step "building the example against the installed package"
build_example "$here" "$scratch/build"
link="$scratch/build/CMakeFiles/toy_train.dir/link.txt"
[[ -s "$link" ]] || fail "no link line to check: $link is missing or empty"
if grep -Eo 'gtest|gmock|benchmark|nlohmann' "$link" | sort -u | grep .; then
  fail "the production target toy_train links more than LibTorch and torchplace::fixes: $link"
fi
ctest --test-dir "$scratch/build" --output-on-failure --no-tests=error >&2 ||
  fail "the example's own CTest tests"

step "the installed sim as CUDA: toy_train's cuda path, unmodified, runs under LD_PRELOAD only"
sim_cuda=$(find "$prefix" -name libtorchplace_sim_cuda.so | head -1)
[[ -n $sim_cuda ]] || fail "no libtorchplace_sim_cuda.so installed under $prefix"
! "$scratch/build/toy_train" cuda >"$scratch/as-cuda-plain.log" 2>&1 ||
  fail "toy_train cuda ran without the sim on this CPU-only LibTorch: the check below proves nothing"
LD_PRELOAD=$sim_cuda "$scratch/build/toy_train" cuda >"$scratch/as-cuda.log" 2>&1 ||
  fail "toy_train cuda under LD_PRELOAD=$sim_cuda (see $scratch/as-cuda.log)"
grep -q " on cuda$" "$scratch/as-cuda.log" || fail "toy_train did not train on cuda: $(cat "$scratch/as-cuda.log")"

tp="$prefix/bin/torchplace"
step "the installed explain: its classifier names a real message's class"
# (the message as posted in github.com/syuu1987/geekTime-semantic-segmentation/issues/1)
explained=$(printf '%s\n' 'RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!' |
  env -u PYTHONPATH -u TORCHPLACE_CLASSIFY "$tp" explain --json 2>&1) &&
  grep -q '"class": "DeviceMismatch"' <<<"$explained" ||
  fail "the installed 'torchplace explain' did not classify a real message: $explained"
# snippet <name>: the code block under README.md's marker "<!-- snippet: downstream <name> -->",
# its 3-space list indent removed (ci/lint/docs.py checks that each such marker is built here).
snippet() {
  awk -v marker="<!-- snippet: downstream $1 -->" 'index($0, marker) { armed = 1; next }
    grab && /^ *```/ { exit }
    grab { print; next }
    armed && /^ *```/ { grab = 1 }' "$here/../../README.md" | sed 's/^   //'
}
step "the README's \"Adding a scenario\" snippets, verbatim, as a project of one's own"
readme_project=$scratch/readme-project
mkdir -p "$readme_project"
snippet my_scenarios.cpp >"$readme_project/my_scenarios.cpp"
snippet commands.sh >"$scratch/readme-commands.sh"
{ printf 'cmake_minimum_required(VERSION 3.25)\nproject(mine LANGUAGES CXX)\n'
  printf 'add_library(my_model INTERFACE)  # the project'"'"'s own model and trainer\n'
  printf 'add_executable(my_trainer trainer.cpp)\n'; snippet CMakeLists.txt; } >"$readme_project/CMakeLists.txt"
echo 'int main() { return 0; }' >"$readme_project/trainer.cpp"
grep -q 'namespace scenarios::my_mistake {' "$readme_project/my_scenarios.cpp" &&
  grep -q torchplace_add_suite "$readme_project/CMakeLists.txt" &&
  grep -q 'torchplace gate' "$scratch/readme-commands.sh" ||
  fail "the README's snippets were not found under their <!-- snippet: downstream ... --> markers"
build_example "$readme_project" "$readme_project/build"
(cd "$readme_project" && PATH="$prefix/bin:$PATH" bash -euo pipefail "$scratch/readme-commands.sh" >&2) ||
  fail "the README's run, refresh and gate commands on its own snippet (above)"

step "torchplace run + gate with the example's expectations"
"$tp" run --suite "$scratch/build/toy_scenarios" --out "$scratch/out" >&2 || fail "torchplace run"
"$tp" gate --results "$scratch/out" --expectations "$here/expectations.json" --out "$scratch/gate" >&2 ||
  fail "the gate on the unmodified example"

step "mutant: both fixes removed from toy/model.h; the gate must fail"
cp -r "$here" "$scratch/mutant-src"
model="$scratch/mutant-src/toy/model.h"
sed -i -e 's/? tp::fixes::to_device(batch, device)/? Batch{batch.data.to(device), batch.target}/' \
  -e 's/if (register_weights) class_weights = /if ((false)) class_weights = /' "$model"
[[ $(grep -c 'Batch{batch.data.to(device), batch.target}\|if ((false))' "$model") == 3 ]] ||
  fail "the mutation no longer applies to toy/model.h; update check.sh"
build_example "$scratch/mutant-src" "$scratch/mutant" toy_scenarios
status=0
"$tp" run --suite "$scratch/mutant/toy_scenarios" --out "$scratch/mutant-out" >&2 || true
"$tp" gate --results "$scratch/mutant-out" --expectations "$here/expectations.json" \
  --out "$scratch/mutant-gate" >"$scratch/mutant-gate.log" 2>&1 || status=$?
cat "$scratch/mutant-gate.log" >&2
((status == 2)) || fail "the gate exited $status on the mutant, not 2 (behaviour regression)"
for cell in mistake=forgotten_label/variant=fixed/device=sim:0 \
            mistake=unregistered_buffer/variant=fixed/device=sim:0; do
  grep -q "toy_model/$cell\` | started_failing" "$scratch/mutant-gate.log" ||
    fail "the gate did not report toy_model/$cell as started_failing"
done

step "mutant: one more .item() in toy::train_step; toy_budget must go over budget naming _local_scalar_dense, the gate exit 2"
cp -r "$here" "$scratch/item-src"
model="$scratch/item-src/toy/model.h"
sed -i 's|^  loss.backward();$|  (void)loss.item<double>();  // one more read of the loss\n  loss.backward();|' "$model"
[[ $(grep -c '(void)loss.item<double>();' "$model") == 1 ]] ||
  fail "the .item() mutation no longer applies to toy/model.h; update check.sh"
build_example "$scratch/item-src" "$scratch/item" toy_scenarios
! "$scratch/item/toy_scenarios" --gtest_filter='toy_budget.*sim0*' >"$scratch/item-cell.log" 2>&1 ||
  fail "toy_budget passed with one more .item() in the step (see $scratch/item-cell.log)"
grep -q "over budget: .*_local_scalar_dense" "$scratch/item-cell.log" ||
  fail "the over-budget failure does not name _local_scalar_dense (see $scratch/item-cell.log)"
status=0
"$tp" run --suite "$scratch/item/toy_scenarios" --out "$scratch/item-out" >&2 || true
"$tp" gate --results "$scratch/item-out" --expectations "$here/expectations.json" \
  --out "$scratch/item-gate" >"$scratch/item-gate.log" 2>&1 || status=$?
cat "$scratch/item-gate.log" >&2
((status == 2)) || fail "the gate exited $status on the .item() mutant, not 2 (behaviour regression)"
grep -q "toy_budget/device=sim:0" "$scratch/item-gate/gate.json" &&
  grep -q "_local_scalar_dense" "$scratch/item-gate/gate.json" ||
  fail "the gate did not report toy_budget/device=sim:0 naming _local_scalar_dense (see $scratch/item-gate/gate.json)"

# FetchContent: the same example with torchplace taken from this source tree as a subproject:
# configured (only the package's targets come with it, no harness tests), and its production
# target built and run (the fixes are headers; the harness's sources are the ones installed above).
step "FetchContent: the example with torchplace as a subproject"
root=$(cd "$here/../.." && pwd)
cmake -S "$here" -B "$scratch/fetch" -G "Unix Makefiles" -DCMAKE_BUILD_TYPE=Release \
  -DTOY_TORCHPLACE_SOURCE="$root" ${torch_dir:+-DTorch_DIR="$torch_dir"} >"$scratch/fetch.log" 2>&1 ||
  fail "configure with FetchContent (see $scratch/fetch.log)"
fetch_targets=$(cmake --build "$scratch/fetch" --target help)
grep -qw toy_scenarios <<<"$fetch_targets" && grep -qw torchplace_harness <<<"$fetch_targets" ||
  fail "FetchContent did not define toy_scenarios and torchplace_harness"
! grep -qw torchplace_harness_tests <<<"$fetch_targets" ||
  fail "FetchContent brought the harness's own tests into the example"
cmake --build "$scratch/fetch" -j "$(nproc)" --target toy_train >>"$scratch/fetch.log" 2>&1 ||
  fail "build toy_train with FetchContent (see $scratch/fetch.log)"
"$scratch/fetch/toy_train" cpu >&2 || fail "toy_train built with FetchContent"
step "ok: installed package builds the example, its gate passes, and fails without the fixes; FetchContent builds it too"
