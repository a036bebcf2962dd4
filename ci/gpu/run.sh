#!/usr/bin/env bash
# The GPU machine's run, kept as the one prepared script to copy along with the tree (and .deps/):
#
#   ci/gpu/run.sh OUT_DIR [--budget SECONDS]
#
# is `ci/torchplace run --gpu --out OUT_DIR [--budget-s SECONDS]`, the same runner as every run
# (reports/torchplace/command/gpu.py says what it does; ci/gpu/README.md). Installs nothing; builds
# against Torch_DIR / CMAKE_PREFIX_PATH or the pip torch of `python3`.
set -euo pipefail
usage="usage: ci/gpu/run.sh OUT_DIR [--budget SECONDS]"
(($#)) && [[ "$1" != -* ]] || { echo "ci/gpu/run.sh: $usage" >&2; exit 64; }
out=$1
shift
args=(run --gpu --out "$out")
while (($#)); do
  case "$1" in
    --budget) args+=(--budget-s "${2:-}"); (($# >= 2)) && shift ;;
    *) echo "ci/gpu/run.sh: unknown argument '$1' ($usage)" >&2; exit 64 ;;
  esac
  shift
done
exec "$(dirname "$0")/../torchplace" "${args[@]}"
