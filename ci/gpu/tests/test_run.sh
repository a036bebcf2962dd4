#!/usr/bin/env bash
# ci/gpu/run.sh (`ci/torchplace run --gpu`) without a GPU or a build: a fake python3 on PATH (a
# CUDA pip torch; the command itself runs on /usr/bin/python3), fake nvcc toolkits and a fake step
# runner (TORCHPLACE_GPU_STEP) stand in. Checks the toolkit check (exit 3 on another CUDA
# release), the budget (steps cut or never started are named, exit 5), the step outcomes, run.json
# (each step and the outcome), and the CTest step's mapping of a CTest failure (8) to 1
# (torchplace.command.gpu.ctest_step). Prints "N passed, N failed"; exits 1 on any failure.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
run_sh=$here/../run.sh
# shellcheck source=../../lib/checks.sh
source "$here/../../lib/checks.sh" # work, check, checks_summary
: "${work:?checks.sh sets work}"

# fakes: python3 answers as a pip torch built for CUDA $TORCH_CUDA (its wheels' headers and
# libnvrtc: $TORCH_INCLUDE, $TORCH_NVRTC); nvcc-X.Y says release X.Y, in a toolkit ($work) that
# has neither;
# the step runner sleeps $STEP_SLEEP s and exits $STEP_EXIT for step $FAIL_STEP (else 0).
mkdir -p "$work/bin" "$work/cuda"
cat >"$work/bin/python3" <<'PY'
#!/usr/bin/env bash
case "$*" in
  "-m torchplace.torch_info cuda") echo "$TORCH_CUDA" ;;
  "-m torchplace.torch_info cmake_prefix_path") echo /fake/torch/share/cmake ;;
  "-m torchplace.torch_info cuda_include") echo "${TORCH_INCLUDE:-}" ;;
  "-m torchplace.torch_info nvrtc") echo "${TORCH_NVRTC:-}" ;;
  *) exit 1 ;;
esac
PY
for release in 12.4 13.0; do
  printf '#!/bin/sh\necho "Cuda compilation tools, release %s, V%s.99"\n' "$release" "$release" \
    >"$work/cuda/nvcc-$release"
done
cat >"$work/step" <<'STEP'
#!/usr/bin/env bash
echo "$1" >>"$STEP_LOG"
env | grep -E '^(CPATH|TORCHPLACE_CMAKE_ARGS)=' >"$STEP_LOG.env"
sleep "${STEP_SLEEP:-0}"
[[ "$1" == "${FAIL_STEP:-}" ]] && exit "${STEP_EXIT:-1}"
exit 0
STEP
chmod +x "$work/bin/python3" "$work/cuda"/nvcc-* "$work/step"

# run_gpu <out> <args...>: run.sh with the fakes; its exit code in $work/rc, output in $work/log.
run_gpu() {
  local out=$1
  shift
  rm -rf "$out" "$work/steps.log"
  (export PATH="$work/bin:$PATH" TORCH_CUDA=${TORCH_CUDA:-13.0} TORCHPLACE_GPU_STEP=$work/step \
    STEP_LOG=$work/steps.log
   unset Torch_DIR CMAKE_PREFIX_PATH
   "$run_sh" "$out" "$@") >"$work/log" 2>&1
  echo $? >"$work/rc"
  sed -n 's/^== steps (\([0-9]*\)s.*/\1/p' "$work/log" >"$work/elapsed"
}
rc_is() { [[ $(cat "$work/rc") == "$1" ]] || { echo "exit $(cat "$work/rc"), wanted $1:" >&2; cat "$work/log" >&2; false; }; }
log_has() { grep -q -- "$1" "$work/log" || { echo "no '$1' in:" >&2; cat "$work/log" >&2; false; }; }
file_has() { grep -q -- "$2" "$1" || { echo "no '$2' in $1:" >&2; cat "$1" >&2; false; }; }

CUDACXX=$work/cuda/nvcc-12.4 run_gpu "$work/out"
check "a 12.4 nvcc beside a CUDA 13.0 torch exits 3" rc_is 3
check "... and names both releases" log_has "CUDACXX=.*nvcc-12.4 is CUDA 12.4, but python3's torch is built for CUDA 13.0"
check "... before any step ran" test ! -f "$work/steps.log"

CUDACXX=$work/cuda/nvcc-13.0 run_gpu "$work/out"
check "a matching nvcc runs every step and exits 0" rc_is 0
check "... the steps in their order" test "$(tr '\n' ' ' <"$work/steps.log")" = \
  "build scenarios cuda_tests probe bench report bench_rest tests "
check "... run.json records the outcome" sh -c "grep -A2 '\"outcome\"' '$work/out/run.json' | grep -q passed"
check "... not_run.txt says every step ran" file_has "$work/out/not_run.txt" "every step ran"
check "... and the pack holds the step logs" sh -c "tar -tzf '$work/out/run.tar.gz' | grep -q logs/tests.log"

TORCH_INCLUDE=/fake/nvidia/include TORCH_NVRTC=/fake/nvidia/lib/libnvrtc.so.13 \
  CUDACXX=$work/cuda/nvcc-13.0 run_gpu "$work/out"
check "a toolkit without cusparse.h: the torch wheels' headers in CPATH" \
  file_has "$work/steps.log.env" "^CPATH=.*/fake/nvidia/include"
check "... without libnvrtc: the wheels' one" \
  file_has "$work/steps.log.env" "CUDA_nvrtc_LIBRARY=/fake/nvidia/lib/libnvrtc.so.13"
check "... and CMake is told nvcc's own toolkit" \
  file_has "$work/steps.log.env" "CUDA_TOOLKIT_ROOT_DIR=$work\\( \\|$\\)"
mkdir -p "${work:?}/include" "${work:?}/lib64" && touch "$work/include/cusparse.h" "$work/lib64/libnvrtc.so"
TORCH_INCLUDE=/fake/nvidia/include TORCH_NVRTC=/fake/nvidia/lib/libnvrtc.so.13 \
  CUDACXX=$work/cuda/nvcc-13.0 run_gpu "$work/out"
check "a toolkit with both: neither is taken from the wheels" sh -c \
  "! grep -q fake/nvidia '$work/steps.log.env'"
rm -rf "${work:?}/include" "${work:?}/lib64"

CUDACXX=$work/cuda/nvcc-13.0 FAIL_STEP=cuda_tests run_gpu "$work/out"
check "a failed step: exit 1, the later steps still run" rc_is 1
check "... steps.txt names it" file_has "$work/out/steps.txt" "cuda_tests *failed (exit 1)"
check "... and tests ran" file_has "$work/steps.log" "^tests$"

CUDACXX=$work/cuda/nvcc-13.0 FAIL_STEP=report STEP_EXIT=3 run_gpu "$work/out"
check "a step's 3 after the build: exit 1, the later steps still run" rc_is 1
check "... and tests ran" file_has "$work/steps.log" "^tests$"

CUDACXX=$work/cuda/nvcc-13.0 FAIL_STEP=build STEP_EXIT=4 run_gpu "$work/out"
check "a failed build: exit 4, nothing after it" rc_is 4
check "... the rest listed as not run" file_has "$work/out/not_run.txt" "tests: not run (build failed (exit 4))"

# 4 s a step, 11 s: build and cells run, then under 5 s are left: no step starts.
CUDACXX=$work/cuda/nvcc-13.0 STEP_SLEEP=4 run_gpu "$work/out" --budget 11
check "a budget spent between steps: exit 5" rc_is 5
check "... the steps not started are named" file_has "$work/out/not_run.txt" \
  "cuda_tests: not run (the 11 s budget ran out before it)"
check "... and printed" log_has "bench_rest: not run"
check "... what finished is in steps.txt" file_has "$work/out/steps.txt" "scenarios *passed"
check "... and run.json names the steps not run" file_has "$work/out/run.json" '"not_run"' 

# 10 s a step, 27 s: cuda_tests starts with ~7 s left (2 s of slack for a loaded machine) and is cut.
CUDACXX=$work/cuda/nvcc-13.0 STEP_SLEEP=10 run_gpu "$work/out" --budget 27
check "a budget cut mid-step: exit 5" rc_is 5
check "... the step under way is cut and named" file_has "$work/out/not_run.txt" \
  "cuda_tests: cut by the budget"
check "... the later steps are named as not run" file_has "$work/out/not_run.txt" \
  "tests: not run (the 27 s budget ran out during cuda_tests)"
check "... the run stops at the budget" test "$(cat "$work/elapsed")" -le 29

run_gpu "$work/out" --budget 0
check "--budget 0 is a bad argument (64)" rc_is 64
run_gpu "$work/out" --budget
check "--budget without seconds is a bad argument (64)" rc_is 64

# The CTest step: CTest's failure exit (8) is the step's 1.
printf '#!/bin/sh\necho "50%% tests passed, 1 tests failed out of 2"\nexit 8\n' >"$work/bin/ctest"
chmod +x "$work/bin/ctest"
mkdir -p "$work/ctest-out"
PATH="$work/bin:$PATH" TORCHPLACE_BUILD_DIR=$work/build PYTHONPATH="$here/../../../reports" \
  /usr/bin/python3 -c 'import sys; from pathlib import Path; from torchplace.command import gpu
sys.exit(gpu.ctest_step(Path(sys.argv[1]), "ctest-cuda", ["-L", "cuda"], None))' \
  "$work/ctest-out" >/dev/null 2>&1
code=$?
check "the CTest step maps CTest's 8 to 1 (got $code)" test "$code" = 1

checks_summary
