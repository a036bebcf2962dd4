#!/usr/bin/env bash
# ci/matrix/column.sh VERSION|cuda OUT: makes one column of the version matrix into OUT/<version>/
# (cuda: the compile-only CUDA column, OUT/cuda-2.6.0/): the host's or a cached Debian root's
# LibTorch (debootstrap, apt, chroot: roots.sh, columns.sh). `ci/torchplace matrix` runs it once a
# column (reports/torchplace/command/matrix.py). Root and install problems exit 3 naming the
# version; a column that fails to build or run is the column's result (exit 0).
# Environment: TORCHPLACE_ROOTS, TORCHPLACE_MATRIX_FRESH, TORCHPLACE_MATRIX_NO_HOST, TORCHPLACE_MIRROR.
# Also: ci/matrix/column.sh --versions prints "VERSION SUITE" a line, oldest first.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/common.sh
source "$here/../lib/common.sh"
# shellcheck source=roots.sh
source "$here/roots.sh"
# shellcheck source=columns.sh
source "$here/columns.sh"

if [[ "${1:-}" == --versions ]]; then
  for version in $TP_MATRIX_VERSIONS; do echo "$version ${TP_MATRIX_SUITES[$version]}"; done
  exit 0
fi
(($# == 2)) || tp_die "$TP_EXIT_USAGE" "usage: ci/matrix/column.sh VERSION|cuda OUT | --versions"
trap tp_matrix_release_sources EXIT
if [[ "$1" == cuda ]]; then
  tp_matrix_cuda_column "$2"
else
  [[ -n "${TP_MATRIX_SUITES[$1]:-}" ]] ||
    tp_die "$TP_EXIT_ENV" "matrix: unknown LibTorch version '$1' (known: $TP_MATRIX_VERSIONS)"
  tp_matrix_column "$1" "$2"
fi
